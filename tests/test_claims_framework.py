"""The claims framework (xaibench.evaluation.claims) and the report sync that refreshes claims cells."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from xaibench import reports
from xaibench.evaluation import claims as C


# ------------------------------------------------------------------ claims
def _claim(check, id="a-claim"):
    return C.Claim(id, "X beats Y", "Table 1", 0.5, check)


def test_outcome_rejects_unknown_verdicts_and_multiline_reasons():
    with pytest.raises(ValueError, match="verdict"):
        C.Outcome(1.0, "mostly", "why")
    with pytest.raises(ValueError, match="one-line"):
        C.Outcome(1.0, "reproduced", "two\nlines")
    with pytest.raises(ValueError, match="one-line"):
        C.Outcome(1.0, "reproduced", "")


def test_missing_table_gives_not_comparable_naming_the_table(tmp_path):
    out = C.evaluate(_claim(lambda t: C.Outcome(float(t("nope")["ours"][0]), "reproduced", "ok")), C.Tables(tmp_path))
    assert out.verdict == "not comparable" and "nope.csv" in out.reason and out.ours is None


def test_check_reads_our_tables(tmp_path):
    pd.DataFrame({"explainer": ["x", "y"], "ours": [0.7, 0.4]}).to_csv(tmp_path / "t.csv", index=False)

    def check(t):
        d = t("t").set_index("explainer")["ours"]
        diff = d["x"] - d["y"]
        return C.Outcome(diff, "reproduced" if diff > 0 else "not reproduced", f"x - y = {diff:.2f}")

    assert C.evaluate(_claim(check), C.Tables(tmp_path)) == C.Outcome(pytest.approx(0.3), "reproduced", "x - y = 0.30")
    pd.DataFrame({"explainer": ["x", "y"], "ours": [0.1, 0.4]}).to_csv(tmp_path / "t.csv", index=False)
    assert C.evaluate(_claim(check), C.Tables(tmp_path)).verdict == "not reproduced"


def test_check_must_return_an_outcome(tmp_path):
    with pytest.raises(TypeError, match="Outcome"):
        C.evaluate(_claim(lambda t: 1.0), C.Tables(tmp_path))


def test_shared_rules_known_values():
    assert C.within(0.30, 0.25, 0.05) and not C.within(0.31, 0.25, 0.05)
    assert C.by_share(1.0, "cell").verdict == "reproduced"
    assert C.by_share(0.5, "cell").verdict == "partly" and "50%" in C.by_share(0.5, "cell").reason
    assert C.by_share(0.0, "cell").verdict == "not reproduced"
    with pytest.raises(ValueError):
        C.by_share(1.5, "cell")
    assert C.same_order(["a", "b", "c"], ["a", "c"]) and not C.same_order(["c", "a"], ["a", "b", "c"])


def test_claims_table_and_readme_status(tmp_path, monkeypatch):
    claims = [_claim(lambda t: C.Outcome(0.5, "reproduced", "same"), "first"),
              _claim(lambda t: C.Outcome("no", "not comparable", "other metric"), "second"),
              _claim(lambda t: C.Outcome(0.1, "not reproduced", "opposite"), "third")]
    monkeypatch.setattr(C, "paper_claims", lambda paper: ("Toy (2020)", claims))
    df = C.save_claims("toy", C.Tables(tmp_path), out_dir=tmp_path)
    assert list(df.columns) == C.COLUMNS and list(df["verdict"]) == ["reproduced", "not comparable", "not reproduced"]
    assert df.loc[0, "paper"] == "0.500" and df.loc[1, "ours"] == "no"
    assert (tmp_path / "toy_claims.md").read_text().startswith("# Claims of Toy (2020)")
    status = C.readme_status(["toy"], root=tmp_path)
    assert "| reproduced (1)" in status and "| not reproduced (1) | third" in status and "partly" not in status
    readme = f"intro\n{C.STATUS_BEGIN}\nold\n{C.STATUS_END}\nrest\n"
    new = C.replace_status(readme, status)
    assert new.startswith("intro\n") and new.endswith("rest\n") and "old" not in new and "third" in new
    with pytest.raises(ValueError, match="markers"):
        C.replace_status("no markers", status)


def test_every_paper_has_a_claims_module_with_8_to_15_claims():
    for paper in C.PAPERS:
        title, claims = C.paper_claims(paper)
        assert title and 8 <= len(claims) <= 15, (paper, len(claims))
        for c in claims:
            assert len(c.id) <= 30 and " " not in c.id, (paper, c.id)


@pytest.mark.parametrize("paper", C.PAPERS)
def test_committed_claims_tables_are_current(paper):
    """figures/tables/<paper>_claims.csv equals what the claims module computes from the committed tables."""
    root = Path(__file__).resolve().parents[1]
    committed = pd.read_csv(root / "figures" / "tables" / f"{paper}_claims.csv", dtype=str, keep_default_na=False)
    now = C.claims_table(paper, C.Tables(root / "figures" / "tables"))
    assert set(committed["verdict"]) <= set(C.VERDICTS)
    pd.testing.assert_frame_equal(committed, now.astype(str), check_dtype=False)


def test_readme_status_matches_the_claims_tables():
    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    want = C.readme_status(root=root / "figures" / "tables")
    assert C.replace_status(readme, want) == readme, "README status is stale: run `make claims`"


# ------------------------------------------------------------------ report sync
def _nb(cells):
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def _pair(tmp_path, nb_cells, rep_cells):
    (tmp_path / "notebooks").mkdir(exist_ok=True)
    nb, rep = tmp_path / "notebooks" / "99_toy.ipynb", tmp_path / "99_toy.ipynb"
    nbformat.write(_nb(nb_cells), nb)
    r = _nb(rep_cells)
    r.metadata["papermill"] = {"parameters": {"profile": "quick"}}
    nbformat.write(r, rep)
    return nb, rep


def _code(src, outputs=(), tags=()):
    c = nbformat.v4.new_code_cell(src)
    c.outputs = [nbformat.v4.new_output("stream", name="stdout", text=o) for o in outputs]
    if tags:
        c.metadata["tags"] = list(tags)
    return c


md = nbformat.v4.new_markdown_cell


def test_sync_carries_prose_and_import_only_edits_and_keeps_outputs(tmp_path):
    nb, rep = _pair(tmp_path,
                    [md("# New title"), _code("p = 1", tags=["parameters"]),
                     _code("from xaibench.evaluation.cebab import runner\nprint(p)")],
                    [md("# Old title"), _code("p = 1", tags=["parameters"]), _code("p = 2", tags=["injected-parameters"]),
                     _code("from xaibench.evaluation import cebab_runner as runner\nprint(p)", ["2\n"])])
    done = reports.sync(nb, rep)
    # code cells are counted without the injected one: the import-only edit is code cell 1
    assert done == {"markdown": True, "import_only_cells": [1], "claims_cells_executed": 0}
    got = nbformat.read(rep, as_version=4)
    assert [c.source for c in got.cells] == ["# New title", "p = 1", "p = 2",
                                             "from xaibench.evaluation.cebab import runner\nprint(p)"]
    assert got.cells[3].outputs[0]["text"] == "2\n"  # the run's output is kept
    assert got.metadata["xaibench"]["synced"]["import_only_cells"] == [1]


def test_sync_refuses_a_changed_computation(tmp_path):
    nb, rep = _pair(tmp_path, [_code("x = 2\nprint(x)")], [_code("x = 1\nprint(x)", ["1\n"])])
    before = rep.read_text()
    with pytest.raises(reports.StaleReport, match="code cell 0 .* rerun"):
        reports.sync(nb, rep)
    assert rep.read_text() == before  # nothing written on refusal
    nb, rep = _pair(tmp_path, [_code("x = 1"), _code("y = 2")], [_code("x = 1")])
    with pytest.raises(reports.StaleReport, match="2 code cells, the report 1"):
        reports.sync(nb, rep)


def test_sync_runs_claims_cells_alone_in_a_fresh_kernel(tmp_path):
    claims_src = "import os\nprint(40 + 2, os.environ['XAIBENCH_PROFILE'], os.path.basename(os.getcwd()))"
    nb, rep = _pair(tmp_path,
                    [_code("secret = 1", tags=["parameters"]), md("## Claims"), _code(claims_src, tags=["claims"])],
                    [_code("secret = 1", ["ran\n"], tags=["parameters"])])
    done = reports.sync(nb, rep)
    assert done["claims_cells_executed"] == 1 and done["markdown"] is True
    got = nbformat.read(rep, as_version=4)
    assert got.cells[1].source == "## Claims"
    # the claims cell ran in notebooks/ under the report's profile, without the experiment's state
    assert "".join(o.get("text", "") for o in got.cells[2].outputs) == "42 quick notebooks\n"
    assert json.loads(rep.read_text())["cells"][2]["metadata"]["tags"] == ["claims"]


def test_sync_keeps_the_reports_claims_cell_id(tmp_path):
    """A claims cell whose source the report already holds keeps its id through a sync (a rerun of
    `make claims` changes no cell id in the committed reports)."""
    claims = _code("print(1)", ["1\n"], tags=["claims"])
    nb, rep = _pair(tmp_path, [_code("x = 1"), _code("print(1)", tags=["claims"])], [_code("x = 1"), claims])
    reports.sync(nb, rep, execute=False)
    first = nbformat.read(rep, as_version=4).cells[1]
    assert first.id == claims.id and first.outputs[0]["text"] == "1\n"
    reports.sync(nb, rep, execute=False)
    assert nbformat.read(rep, as_version=4).cells[1].id == claims.id
