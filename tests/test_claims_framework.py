"""The claims framework (xaibench.evaluation.claims) and the report sync that refreshes claims cells."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import numpy as np
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
        return C.judge(C.Interval(diff, diff - 0.1, diff + 0.1, "2 cells", "toy"), 0.0)

    out = C.evaluate(_claim(check), C.Tables(tmp_path))
    assert out.verdict == "reproduced" and out.ours == pytest.approx(0.3)
    pd.DataFrame({"explainer": ["x", "y"], "ours": [0.1, 0.4]}).to_csv(tmp_path / "t.csv", index=False)
    assert C.evaluate(_claim(check), C.Tables(tmp_path)).verdict == "not reproduced"


def test_check_must_return_an_outcome(tmp_path):
    with pytest.raises(TypeError, match="Outcome"):
        C.evaluate(_claim(lambda t: 1.0), C.Tables(tmp_path))


def test_same_order():
    assert C.same_order(["a", "b", "c"], ["a", "c"]) and not C.same_order(["c", "a"], ["a", "b", "c"])


# ------------------------------------------------------------------ intervals (known values by hand)
def test_t_interval_over_seeds_known_values():
    # mean 2, sd 1, n 3: t(0.975, 2) = 4.302653, half-width 4.302653 / sqrt(3) = 2.484138
    iv = C.t_interval([1.0, 2.0, 3.0])
    assert (iv.effect, iv.low, iv.high) == pytest.approx((2.0, -0.484138, 4.484138), abs=1e-6)
    assert iv.n == "3 seeds" and C.summary_interval(2.0, 1.0, 3).low == pytest.approx(iv.low)
    assert C.paired_interval([2.0, 3.0, 4.0], [1.0, 1.0, 1.0]).low == pytest.approx(-0.484138, abs=1e-6)
    one = C.t_interval([0.7])  # one seed: nothing to vary over, the interval decides nothing
    assert one.low == -np.inf and one.high == np.inf
    flat = C.t_interval([0.5, 0.5, 0.5])
    assert (flat.low, flat.high) == (0.5, 0.5)


def test_welch_se_share_and_bootstrap_intervals_known_values():
    # d = 1, se = sqrt(1/3 + 1/3) = 0.816497, Welch df = 4, t(0.975, 4) = 2.776445: half-width 2.266958
    iv = C.welch_interval(2.0, 1.0, 3, 1.0, 1.0, 3)
    assert (iv.effect, iv.low, iv.high) == pytest.approx((1.0, -1.266958, 3.266958), abs=1e-6)
    se = C.se_interval(0.5, 0.1, "5 readers")  # z(0.975) = 1.959964
    assert (se.low, se.high) == pytest.approx((0.304004, 0.695996), abs=1e-6)
    sh = C.share_interval(7, 10)  # Clopper-Pearson
    assert (sh.effect, sh.low, sh.high) == pytest.approx((0.7, 0.347547, 0.933260), abs=1e-6)
    with pytest.raises(ValueError):
        C.share_interval(11, 10)
    const = C.bootstrap_interval(np.full(20, 3.0), np.mean)
    assert (const.low, const.effect, const.high) == (3.0, 3.0, 3.0)
    x = np.arange(20.0)
    a, b = C.bootstrap_interval(x, np.mean), C.bootstrap_interval(x, np.mean)
    assert a == b and a.low < 9.5 < a.high and a.n == "20 examples"  # seeded: reruns agree


def _iv(low, high, effect=None):
    return C.Interval((low + high) / 2 if effect is None else effect, low, high, "5 seeds", "t over seeds")


def test_judge_each_side_and_inconclusive():
    assert C.judge(_iv(0.1, 0.3), 0.0).verdict == "reproduced"
    assert C.judge(_iv(-0.3, -0.1), 0.0).verdict == "not reproduced"
    out = C.judge(_iv(-0.1, 0.3), 0.0, more="more seeds")
    assert out.verdict == "inconclusive" and "more seeds" in out.reason and out.interval.low == -0.1
    # a claim that the quantity is below the threshold
    assert C.judge(_iv(0.1, 0.3), 0.5, above=False).verdict == "reproduced"
    assert C.judge(_iv(0.6, 0.9), 0.5, above=False).verdict == "not reproduced"
    assert C.judge(_iv(0.4, 0.6), 0.5, above=False).verdict == "inconclusive"


def test_judge_agrees_each_side_inconclusive_and_the_tolerance_guard():
    assert C.judge_agrees(_iv(0.48, 0.52), 0.5, 0.05).verdict == "reproduced"
    assert C.judge_agrees(_iv(0.60, 0.70), 0.5, 0.05).verdict == "not reproduced"
    assert C.judge_agrees(_iv(0.50, 0.60), 0.5, 0.05).verdict == "inconclusive"
    # a tolerance above half the paper's effect cannot tell the effect from none
    with pytest.raises(ValueError, match="half the claimed effect"):
        C.judge_agrees(_iv(0.2, 0.3), 0.33, 0.33, claimed_effect=0.33)
    assert C.judge_agrees(_iv(0.30, 0.35), 0.33, 0.1, claimed_effect=0.33).verdict == "reproduced"


def test_by_cells_known_values():
    allok = C.by_cells({"a": "holds", "b": "holds"})
    assert allok.verdict == "reproduced" and allok.ours == "2/2"
    assert C.by_cells({"a": "fails", "b": "fails"}).verdict == "not reproduced"
    mixed = C.by_cells({"a": "holds", "b": "fails", "c": "covers"})
    assert mixed.verdict == "partly" and "fails in 1 (b)" in mixed.reason and "undecided in 1 (c)" in mixed.reason
    # the interval of the share of cells that hold: decided for (1/3) to decided for or undecided (2/3)
    assert (mixed.interval.low, mixed.interval.high) == pytest.approx((1 / 3, 2 / 3))
    few = C.by_cells({"a": "holds", "b": "covers", "c": "covers"})  # most cells undecided
    assert few.verdict == "inconclusive" and (few.interval.low, few.interval.high) == pytest.approx((1 / 3, 1.0))
    assert C.by_cells({"a": "covers", "b": "covers"}).verdict == "inconclusive"  # no cell decided
    assert C.by_cells({"a": "holds", "b": "holds", "c": "covers"}).verdict == "reproduced"
    # undecided cells count for neither side, unless they are more than half the cells
    assert C.by_cells({"a": "holds", "b": "covers"}).verdict == "reproduced"
    assert C.by_cells({"a": "fails", "b": "covers", "c": "covers"}).verdict == "inconclusive"
    with pytest.raises(ValueError):
        C.by_cells({"a": "maybe"})


def test_outcomes_need_their_interval_and_preconditions_carry_no_verdict():
    with pytest.raises(ValueError, match="interval"):
        C.Outcome(0.5, "reproduced", "no evidence")
    with pytest.raises(ValueError, match="interval"):
        C.Outcome(0.5, "inconclusive", "no evidence")
    C.Outcome(None, "not comparable", "another metric")  # needs none
    pre = C.precondition(C.share_interval(7, 10), "7 of 10 runs learned")
    assert pre.verdict == C.PRECONDITION and pre.interval.effect == 0.7


def test_leave_one_seed_out_stability(tmp_path):
    """A claim read from per-seed rows is recomputed without each seed; one decided by a single seed flips."""
    pd.DataFrame({"seed": [1, 2, 3, 4], "ours": [0.30, 0.32, 0.31, 0.90]}).to_csv(tmp_path / "t.csv", index=False)
    pd.DataFrame({"ours": [0.5]}).to_csv(tmp_path / "agg.csv", index=False)

    def falls_back(t):  # a check that catches a missing per-seed table is recorded without it
        try:
            t("missing_seeds")
        except C.MissingTable:
            pass
        return C.judge(C.t_interval(t("t")["ours"]), 0.4)

    def mean_above(t):  # a rule that judges a raw mean without its interval: seed 4 decides it
        m = float(t("t")["ours"].mean())
        return C.Outcome(m, "reproduced" if m > 0.4 else "not reproduced", "raw mean", C.Interval(m, m, m, "seeds"))

    def honest(t):
        return C.judge(C.t_interval(t("t")["ours"]), 0.4)

    claims = [_claim(mean_above, "raw"), _claim(honest, "honest"), _claim(falls_back, "fallback"),
              _claim(lambda t: C.judge(_iv(0.6, 0.7), 0.5, ours=float(t("agg")["ours"][0])), "aggregated")]
    import xaibench.evaluation.claims as mod
    orig = mod.paper_claims
    try:
        mod.paper_claims = lambda paper: ("Toy", claims)
        st = C.stability("toy", root=tmp_path)
    finally:
        mod.paper_claims = orig
    assert set(st["claim"]) == {"raw", "honest", "fallback"}  # the aggregated claim reads no per-seed rows
    raw = st[st["claim"] == "raw"].set_index("left_out")
    assert raw.loc["4", "changed"] and not raw.loc["1", "changed"]
    # with seed 4 the honest rule is undecided: a change from inconclusive is evidence, not a defect
    honest = st[st["claim"] == "honest"]
    assert set(honest["verdict_all"]) == {"inconclusive"} and not honest["defect"].any()
    assert raw.loc["4", "defect"]


def test_claims_table_and_readme_status(tmp_path, monkeypatch):
    claims = [_claim(lambda t: C.judge(_iv(0.4, 0.6), 0.3), "first"),
              _claim(lambda t: C.Outcome("no", "not comparable", "other metric"), "second"),
              _claim(lambda t: C.judge(_iv(0.0, 0.2), 0.3), "third"),
              _claim(lambda t: C.precondition(C.share_interval(3, 4), "3 of 4 runs learned"), "fourth")]
    monkeypatch.setattr(C, "paper_claims", lambda paper: ("Toy (2020)", claims))
    df = C.save_claims("toy", C.Tables(tmp_path), out_dir=tmp_path)
    assert list(df.columns) == C.COLUMNS
    assert list(df["verdict"]) == ["reproduced", "not comparable", "not reproduced", C.PRECONDITION]
    assert df.loc[0, "paper"] == "0.500" and df.loc[1, "ours"] == "no"
    assert (df.loc[0, "effect"], df.loc[0, "ci_low"], df.loc[0, "ci_high"], df.loc[0, "n"]) == ("0.500", "0.400", "0.600", "5 seeds")
    assert df.loc[1, "ci_low"] == "" and df.loc[0, "confidence"] == "0.95"
    assert (tmp_path / "toy_claims.md").read_text().startswith("# Claims of Toy (2020)")
    status = C.readme_status(["toy"], root=tmp_path)
    assert "| reproduced (1)" in status and "| not reproduced (1) | third" in status and "| partly" not in status
    assert "| precondition (1) | fourth" in status and "3 claims, 0 inconclusive" in status
    assert "**inconclusive**" in status  # what each verdict means
    readme = f"intro\n{C.STATUS_BEGIN}\nstale text\n{C.STATUS_END}\nrest\n"
    new = C.replace_status(readme, status)
    assert new.startswith("intro\n") and new.endswith("rest\n") and "stale text" not in new and "third" in new
    with pytest.raises(ValueError, match="markers"):
        C.replace_status("no markers", status)


def test_every_paper_has_a_claims_module_with_8_to_15_claims():
    """8 to 15 headline claims per paper; preconditions (training yields) are rows of their own, not claims."""
    root = Path(__file__).resolve().parents[1] / "figures" / "tables"
    for paper in C.PAPERS:
        title, claims = C.paper_claims(paper)
        verdicts = C.claims_table(paper, C.Tables(root))["verdict"]
        n_claims = int((verdicts != C.PRECONDITION).sum())
        assert title and 8 <= n_claims <= 15 and len(claims) - n_claims <= 3, (paper, n_claims, len(claims))
        for c in claims:
            assert len(c.id) <= 30 and " " not in c.id, (paper, c.id)


@pytest.mark.parametrize("paper", C.PAPERS)
def test_committed_claims_tables_are_current(paper):
    """figures/tables/<paper>_claims.csv equals what the claims module computes from the committed tables."""
    root = Path(__file__).resolve().parents[1]
    committed = pd.read_csv(root / "figures" / "tables" / f"{paper}_claims.csv", dtype=str, keep_default_na=False)
    now = C.claims_table(paper, C.Tables(root / "figures" / "tables"))
    assert set(committed["verdict"]) <= set(C.VERDICTS) | {C.PRECONDITION}
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


# ------------------------------------------------------------------ stability between runs
def test_cross_run_compares_verdicts_from_another_runs_tables(tmp_path, monkeypatch):
    """Each claim is recomputed from the other run's tables (tables it did not write stay current); a decided
    verdict that changes is a defect, a change from or to inconclusive is not; a table without a column the
    rule reads is reported as such."""
    from xaibench.evaluation import claims_stability as S

    cur, old = tmp_path / "cur", tmp_path / "old"
    cur.mkdir(), old.mkdir()
    pd.DataFrame({"seed": [1, 2, 3], "ours": [0.50, 0.52, 0.51]}).to_csv(cur / "t.csv", index=False)
    pd.DataFrame({"ours": [0.9]}).to_csv(cur / "u.csv", index=False)
    pd.DataFrame({"seed": [1, 2, 3], "ours": [0.30, 0.31, 0.32]}).to_csv(old / "t.csv", index=False)
    pd.DataFrame({"other": [1]}).to_csv(old / "u.csv", index=False)
    claims = [_claim(lambda t: C.judge(C.t_interval(t("t")["ours"]), 0.4), "above"),
              _claim(lambda t: C.judge(C.t_interval(t("t")["ours"]), 0.0), "positive"),
              _claim(lambda t: C.judge(_iv(0.5, 1.5), 1.0, ours=len(t("t"))), "open"),
              _claim(lambda t: C.judge(_iv(0.8, 1.0), 0.5, ours=float(t("u")["ours"][0])), "format")]
    monkeypatch.setattr(C, "paper_claims", lambda paper: ("Toy", claims))
    other, _ = S.other_tables(cur, old, tmp_path / "mix")
    df = S.cross_run("toy", cur, other, "other CPU").set_index("claim")
    assert df.loc["above", "verdict_all"] == "reproduced" and df.loc["above", "verdict"] == "not reproduced"
    assert df.loc["above", "defect"] and not df.loc["positive", "changed"]
    assert df.loc["format", "verdict"] == "table format" and not df.loc["format", "defect"]
    assert "KeyError" in df.loc["format", "note"]
    s = S.summary(df.reset_index())
    assert s.loc[0, "defects"] == 1 and s.loc[0, "compared"] == 3


def test_cross_run_names_the_tables_only_this_run_wrote(tmp_path, monkeypatch):
    """A claim that reads a table the earlier run did not write says so; one that reads only such tables is no
    comparison between runs (``table format``, neither changed nor a defect)."""
    from xaibench.evaluation import claims_stability as S

    cur, old = tmp_path / "cur", tmp_path / "old"
    cur.mkdir(), old.mkdir()
    pd.DataFrame({"ours": [0.5]}).to_csv(cur / "t.csv", index=False)
    pd.DataFrame({"ours": [0.1]}).to_csv(old / "t.csv", index=False)
    pd.DataFrame({"ours": [0.9]}).to_csv(cur / "v.csv", index=False)
    claims = [_claim(lambda t: C.judge(_iv(0.8, 1.0), 0.5, ours=float(t("v")["ours"][0])), "newer"),
              _claim(lambda t: C.judge(_iv(0.8, 1.0), 0.5, ours=float(t("t")["ours"][0] + t("v")["ours"][0])),
                     "mixed"),
              _claim(lambda t: C.judge(_iv(0.8, 1.0), 0.5, ours=float(t("t")["ours"][0])), "earlier")]
    monkeypatch.setattr(C, "paper_claims", lambda paper: ("Toy", claims))
    other, _ = S.other_tables(cur, old, tmp_path / "mix")
    assert S.current_only(other) == {"v"}
    df = S.cross_run("toy", cur, other, "other CPU", "tables of x", current_only=S.current_only(other)).set_index("claim")
    assert df.loc["newer", "verdict"] == "table format" and not df.loc["newer", "defect"]
    assert "newer than the earlier run (v)" in df.loc["newer", "note"]
    assert df.loc["mixed", "verdict"] == "reproduced" and "also reads this run's v" in df.loc["mixed", "note"]
    assert df.loc["earlier", "note"] == "tables of x"


def test_the_earlier_cebab_tables_without_per_seed_rows_are_read_unpaired(tmp_path):
    """The earlier CEBaB run wrote no per-seed Table 10: the mixed folder drops the current one (the rules then fall
    back to Welch intervals from the earlier means and stds), says so, and does not count it as this run's."""
    from xaibench.evaluation import claims_stability as S

    cur, old = tmp_path / "cur", tmp_path / "old"
    cur.mkdir(), old.mkdir()
    for name in ("cebab_icace_error", "cebab_icace_error_per_seed"):
        pd.DataFrame({"ours": [0.5]}).to_csv(cur / f"{name}.csv", index=False)
    pd.DataFrame({"ours": [0.4]}).to_csv(old / "cebab_icace_error.csv", index=False)
    other, notes = S.other_tables(cur, old, tmp_path / "mix", S.OTHER_CPU["cebab"].adapt)
    assert sorted(p.name for p in other.glob("*.csv")) == ["cebab_icace_error.csv"]
    assert pd.read_csv(other / "cebab_icace_error.csv")["ours"].tolist() == [0.4]
    assert notes == ["no per-seed Table 10 in the earlier tables: their leads are unpaired (Welch over seeds)"]
    assert S.current_only(other) == frozenset()
    # an earlier run that wrote it keeps its own
    pd.DataFrame({"ours": [0.3]}).to_csv(old / "cebab_icace_error_per_seed.csv", index=False)
    other, notes = S.other_tables(cur, old, tmp_path / "mix2", S.OTHER_CPU["cebab"].adapt)
    assert pd.read_csv(other / "cebab_icace_error_per_seed.csv")["ours"].tolist() == [0.3] and notes == []


def test_committed_stability_table_meets_the_bar():
    """At least 95 % of the decided verdicts are unchanged under every leave-one-seed-out and between CPUs."""
    root = Path(__file__).resolve().parents[1] / "figures" / "tables"
    df = pd.read_csv(root / "claims_stability.csv", keep_default_na=False)
    decided = df[~df["verdict_all"].isin(["inconclusive", C.PRECONDITION, "not comparable"])]
    assert len(decided) and (decided["defect"].astype(str) == "True").mean() <= 0.05, \
        decided[decided["defect"].astype(str) == "True"][["paper", "claim", "kind", "left_out", "verdict_all", "verdict"]]
    assert set(df["paper"]) == set(C.PAPERS)
