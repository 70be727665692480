"""docs/timings.md and the README's timing table are generated from the committed bench tables
(``python -m xaibench.bench timings``), so they cannot drift from the measurements; the README stays a short
front page (at most 10,000 characters, its sections in a fixed order) whose details live in docs/."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from xaibench.bench import timings as T
from xaibench.evaluation import claims as C
from xaibench.evaluation import scorecard as sc

ROOT = Path(__file__).resolve().parents[1]
TABLES = ROOT / "figures" / "tables"
README_MAX_CHARS = 10_000
SECTIONS = ["Set-up and use", "Status: the papers' claims, ours beside them",
            "Scorecard: which explainer to trust, and do the protocols agree?", "Papers, notebooks and outputs",
            "Rerunning with other parameters", "Data", "Documentation"]


def _block(text: str, begin: str, end: str) -> str:
    assert text.count(begin) == 1 and text.count(end) == 1, (begin, end)
    return text.split(begin, 1)[1].split(end, 1)[0]


# ---- the committed files equal what the generator makes of the committed tables -------------
def test_docs_timings_md_is_generated_from_the_committed_bench_tables():
    committed = (ROOT / "docs" / "timings.md").read_text(encoding="utf-8")
    assert committed == T.timings_doc(TABLES), "docs/timings.md is stale: run `python -m xaibench.bench timings`"


def test_readme_timing_table_is_generated_from_the_committed_bench_tables():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    want = T.readme_block(*T.load(TABLES))
    assert _block(readme, T.BEGIN, T.END) == f"\n{want.rstrip()}\n", \
        "README timing table is stale: run `python -m xaibench.bench timings`"


# ---- the README --------------------------------------------------------------------------------
def test_readme_is_at_most_10000_characters():
    n = len((ROOT / "README.md").read_text(encoding="utf-8"))
    assert n <= README_MAX_CHARS, f"README.md has {n} characters (at most {README_MAX_CHARS}): move details to docs/"


def test_readme_stays_within_the_limit_when_its_generated_sections_are_regenerated():
    """`make claims` rewrites the status and scorecard sections from the committed tables: the README must still
    fit then."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    new = C.replace_status(readme, C.readme_status(root=TABLES))
    new = C.replace_between(new, sc.VERDICT_BEGIN, sc.VERDICT_END, sc.readme_verdict())
    assert len(new) <= README_MAX_CHARS, f"README.md would have {len(new)} characters after `make claims`"


def test_readme_sections_come_in_order_with_each_generated_block_in_its_section():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", readme, flags=re.M)
    assert headings == SECTIONS
    assert readme.startswith("# xaibench\n")
    sections = dict(zip(SECTIONS, re.split(r"^## .+$", readme, flags=re.M)[1:]))
    for section, marker in [("Set-up and use", T.BEGIN), ("Status: the papers' claims, ours beside them",
                                                         C.STATUS_BEGIN),
                            ("Scorecard: which explainer to trust, and do the protocols agree?", sc.VERDICT_BEGIN)]:
        assert marker in sections[section], (section, marker)
    assert "`make quick`" in sections["Set-up and use"]


def test_readme_links_resolve_and_name_the_docs_pages():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, f"README links to missing files: {missing}"
    for page in ("docs/running.md", "docs/timings.md", "docs/extending.md", "docs/survey.md"):
        assert page in local, page


def test_readme_and_docs_describe_the_present_not_earlier_runs():
    """Git keeps history: no page narrates earlier runs, superseded numbers or before/after comparisons."""
    rx = re.compile(r"\bearlier (?:run|one|commit|CPU|measurement)s?\b|\bthe run before\b|\bBefore:|\bpreviously\b"
                    r"|\bused to take\b|\bsuperseded\b", re.IGNORECASE)
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    bad = [f"{p.relative_to(ROOT)}: {m.group(0)!r}" for p in pages for m in rx.finditer(p.read_text(encoding="utf-8"))]
    assert not bad, bad
    assert rx.search("Before: 77 min for notebook 02")  # the pattern catches such a narrative


def test_the_data_layer_does_not_import_hugging_face_datasets():
    """The README says the data layer reads the verified local files with pandas and parquet, not `datasets`."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "does not depend on Hugging Face `datasets`" in " ".join(readme.split())
    importing = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "src" / "xaibench").rglob("*.py"))
                 if re.search(r"^\s*(?:import datasets\b|from datasets\b)", p.read_text(encoding="utf-8"), flags=re.M)]
    assert not importing, importing


# ---- the generator -----------------------------------------------------------------------------
def _row(paper, notebook, minutes, run, cold, cpu="Intel(R) Xeon(R) Processor (family 6 model 207, avx512f)"):
    return {"paper": paper, "notebook": notebook, "parameters": "", "wall_seconds": minutes * 60,
            "wall_minutes": minutes, "started": "", "make_run": run, "cold_start": cold, "cpus": 2,
            "cpu_model": cpu, "gpu": "none", "xaibench_device": "auto"}


def _make_all() -> pd.DataFrame:
    amd = "AMD EPYC (family 26 model 2, avx512f)"
    rows = [_row("A", "01_x", 10.0, "r1", "True"), _row("A", "02_y", 5.0, "r1", "True"),
            _row("B", "13_z", 20.0, "r2", "True", amd), _row("B", "25_w", 30.0, "r3", "True", amd),
            _row("S", "30_s", 0.5, "", "", amd),
            _row("A", "TOTAL (2 notebooks, one cold make run)", 15.0, "r1", "True"),
            _row("B", "TOTAL (2 notebooks, not one recorded cold run)", 50.0, "mixed", "False", amd),
            _row("S", "TOTAL (1 notebook, not one recorded cold run)", 0.5, "", "False", amd),
            _row("all papers", "TOTAL (5 notebooks, not one recorded cold run)", 65.5, "mixed", "False", "mixed")]
    return pd.DataFrame(rows).astype({"make_run": str, "cold_start": str})


def _make_test() -> pd.DataFrame:
    return pd.DataFrame([{"commit": "abc1234", "exit_status": 0, "wall_seconds": 343.9, "wall_minutes": 5.73,
                          "pytest_seconds": 287.9, "setup_seconds": 56.0, "cpu_seconds": 612.4, "passed": 965,
                          "failed": 0, "errors": 0, "skipped": 2, "target_seconds": 600, "within_target": "True",
                          "cpus": 2, "cpu_model": "AMD EPYC (family 26 model 2, avx512f)",
                          "load_avg_1min_at_start": 1.43}])


def test_short_cpu_keeps_vendor_family_and_model():
    assert T.short_cpu("Intel(R) Xeon(R) Processor (family 6 model 207, avx512f)") == "Intel Xeon (family 6 model 207)"
    assert T.short_cpu("AMD EPYC (family 26 model 2, avx512f)") == "AMD EPYC (family 26 model 2)"
    assert T.short_cpu("AMD EPYC") == "AMD EPYC"
    assert T.short_cpu("") == T.short_cpu(None) == "not recorded"


def test_one_row_per_paper_marking_what_is_not_one_cold_make_run():
    table = T.paper_table(_make_all())
    assert list(table["paper"]) == ["A", "B", "S"]  # no "all papers" row
    got = table.set_index("paper")
    assert got.loc["A", "notebooks"] == "01, 02" and got.loc["A", "note"] == ""
    assert got.loc["B", "note"] == "2 cold make runs, not one" and got.loc["B", "cpu"] == "AMD EPYC (family 26 model 2)"
    assert got.loc["S", "note"] == "no cold start recorded"
    block = T.readme_block(_make_all(), _make_test())
    assert "| A | 01, 02 | 15.0 | Intel Xeon (family 6 model 207) |" in block
    assert "| B | 13, 25 | 50.0 (2 cold make runs, not one) | AMD EPYC (family 26 model 2) |" in block
    assert "| paper | notebooks | minutes, cold | CPU (2 cores) |" in block
    assert "All 5 notebooks: 65.5 min (3 make runs, not one; 1 notebook with no cold start recorded; " \
           "2 kinds of CPU)" in block
    assert "5.7 min on an AMD EPYC (family 26 model 2), 2 cores (965 passed, 2 skipped)" in block


def test_make_steps_are_named_by_their_target_beside_the_notebooks():
    amd = "AMD EPYC (family 26 model 2, avx512f)"
    df = pd.DataFrame([_row("B", "13_z", 20.0, "r2", "True", amd), _row("B", "make attention-gap", 12.0, "r2", "True", amd),
                       _row("B", "TOTAL (1 notebook, 1 make step, one cold make run)", 32.0, "r2", "True", amd),
                       _row("all papers", "TOTAL (1 notebook, 1 make step, one cold make run)", 32.0, "r2", "True", amd)]
                      ).astype({"make_run": str, "cold_start": str})
    got = T.paper_table(df).set_index("paper")
    assert got.loc["B", "notebooks"] == "13, attention-gap" and got.loc["B", "note"] == ""
    block = T.readme_block(df, _make_test())
    assert "| B | 13, attention-gap | 32.0 | AMD EPYC (family 26 model 2) |" in block
    assert "All 1 notebook and 1 make step: 32.0 min (1 kind of CPU)" in block


def test_a_timing_note_is_shown_beside_its_notebook_and_counted_in_its_papers_row(tmp_path):
    df = _make_all().assign(note="")
    df.loc[df["notebook"] == "25_w", "note"] = "timed beside another job"
    got = T.paper_table(df).set_index("paper")
    assert got.loc["B", "note"] == "2 cold make runs, not one; 1 caveat in docs/timings.md"
    assert got.loc["A", "note"] == ""  # no note, one cold make run
    block = T.readme_block(df, _make_test())
    assert "1 caveat in docs/timings.md; 2 kinds of CPU" in block
    assert T.caveat_note(df.drop(columns=["note"])) == ""  # tables written before the column: no caveat
    df.to_csv(tmp_path / "bench_make_all.csv", index=False)
    _make_test().to_csv(tmp_path / "bench_make_test.csv", index=False)
    doc = T.timings_doc(tmp_path, descriptions={})
    assert "| 25_w |  | 30.0 | r3 | yes | AMD EPYC (family 26 model 2), 2 cores | timed beside another job |" in doc


def test_a_cold_start_missing_from_one_notebook_marks_its_paper():
    df = _make_all()
    df.loc[df["notebook"] == "02_y", "cold_start"] = "False"
    df.loc[df["notebook"].str.startswith("TOTAL") & (df["paper"] == "A"), "cold_start"] = "False"
    assert T.cold_note(df, "A") == "1 make run, not one; 1 notebook with no cold start recorded"


def test_cores_move_into_the_rows_when_they_differ():
    df = _make_all()
    df.loc[df["paper"] == "B", "cpus"] = 4
    block = T.readme_block(df, _make_test())
    assert "| paper | notebooks | minutes, cold | CPU |" in block
    assert "AMD EPYC (family 26 model 2), 4 cores |" in block and "Intel Xeon (family 6 model 207), 2 cores |" in block


def _project(tmp_path: Path) -> Path:
    (tmp_path / "figures" / "tables").mkdir(parents=True)
    for p in TABLES.glob("bench_*.csv"):
        shutil.copy(p, tmp_path / "figures" / "tables" / p.name)
    (tmp_path / "README.md").write_text(f"# x\n\nbefore\n\n{T.BEGIN}\nold table\n{T.END}\n\nafter\n", encoding="utf-8")
    return tmp_path


def test_write_timings_rewrites_only_the_block_and_follows_a_changed_measurement(tmp_path):
    root = _project(tmp_path)
    wrote = T.write_timings(root)
    assert {p.name for p in wrote} == {"timings.md", "README.md"}
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# x\n\nbefore\n\n") and readme.endswith(f"{T.END}\n\nafter\n")
    assert "old table" not in readme
    assert T.write_timings(root) == []  # current files are left alone

    csv = root / "figures" / "tables" / "bench_make_all.csv"
    df = pd.read_csv(csv, dtype={"make_run": str}, keep_default_na=False)
    first = df.index[df["notebook"].str.startswith("TOTAL")][0]
    df.loc[first, "wall_minutes"] = 999.9
    df.to_csv(csv, index=False)
    assert {p.name for p in T.write_timings(root)} == {"timings.md", "README.md"}
    assert "| 999.9" in (root / "README.md").read_text(encoding="utf-8")  # with a note where not one cold run
    assert "**999.9**" in (root / "docs" / "timings.md").read_text(encoding="utf-8")


def test_timings_doc_lists_every_other_bench_table_with_its_cpu_and_columns(tmp_path):
    root = _project(tmp_path)
    (root / "figures" / "tables" / "bench_newthing.csv").write_text(
        "workload,seconds,cpus,cpu_model\nx,1.0,2,\"AMD EPYC (family 26 model 2, avx512f)\"\n", encoding="utf-8")
    doc = T.timings_doc(root / "figures" / "tables", descriptions={"newthing": "seconds of x"})
    line = next(li for li in doc.splitlines() if li.startswith("- `bench_newthing.csv`"))
    assert line == ("- `bench_newthing.csv` (`python -m xaibench.bench newthing`): seconds of x; 1 row; "
                    "AMD EPYC (family 26 model 2), 2 cores. Columns: `workload`, `seconds`, `cpus`, `cpu_model`.")
    others = [p.stem.removeprefix("bench_") for p in (root / "figures" / "tables").glob("bench_*.csv")]
    for name in set(others) - {"make_all", "make_test", "make_paper"}:
        assert f"- `bench_{name}.csv`" in doc, name
    assert "- `bench_make_all.csv`" not in doc  # it has its own sections
    assert "- `bench_make_paper.csv`" not in doc  # and so has this one, when it exists
    assert ("## One paper at a time from a fresh clone" in doc) == ("make_paper" in others)


def test_the_timings_cli_writes_both_files(tmp_path, monkeypatch, capsys):
    from xaibench.bench.__main__ import main

    root = _project(tmp_path)
    monkeypatch.setenv("XAIBENCH_HOME", str(root))
    main(["timings"])
    assert (root / "docs" / "timings.md").read_text(encoding="utf-8") == T.timings_doc(root / "figures" / "tables")
    assert "wrote" in capsys.readouterr().out
    main(["timings"])
    assert "current" in capsys.readouterr().out


@pytest.mark.parametrize("page", ["running.md", "timings.md"])
def test_docs_pages_the_readme_points_to_exist_and_carry_what_left_the_readme(page):
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    if page == "running.md":  # the scheduler, device and thread parameters, the data sources
        for needle in ("XAIBENCH_SCHEDULER", "dask-local:N", "tcp://host:port", "XAIBENCH_DEVICE", "XAIBENCH_THREADS",
                       "OMP_WAIT_POLICY=PASSIVE", "RAW_SPECS", "GROUP_SWEEPS"):
            assert needle in text, needle
    else:
        assert text.startswith("# Timings\n\nGenerated by `python -m xaibench.bench timings`")


def test_a_new_make_all_table_rewrites_the_timings_docs(tmp_path, monkeypatch):
    """`make all` ends with `python -m xaibench.bench make_all`: the timing docs follow the table it writes."""
    from xaibench.bench.__main__ import main

    root = _project(tmp_path)
    monkeypatch.setenv("XAIBENCH_HOME", str(root))
    monkeypatch.setenv("XAIBENCH_PROFILE", "full")  # make all's profile (make test runs under another)
    table = pd.read_csv(root / "figures" / "tables" / "bench_make_all.csv", dtype={"make_run": str}, keep_default_na=False)
    first = table.index[table["notebook"].str.startswith("TOTAL")][0]
    table.loc[first, "wall_minutes"] = 888.8
    main(["make_all"], run=lambda name, args: table)
    assert "| 888.8" in (root / "README.md").read_text(encoding="utf-8")  # with a note where not one cold run
    assert (root / "docs" / "timings.md").read_text(encoding="utf-8") == T.timings_doc(root / "figures" / "tables")


def test_the_timings_doc_names_the_tests_a_measured_make_test_failed(tmp_path):
    _make_all().to_csv(tmp_path / "bench_make_all.csv", index=False)
    passing = _make_test().assign(failed_tests="")
    failing = _make_test().assign(commit="def5678", failed=2, exit_status=2, within_target="False",
                                  cpu_model="AMD EPYC (family 25 model 1, avx2)",
                                  failed_tests="tests/a.py::test_one; tests/c.py::test_dry_run[make cebab MODEL=nb]")
    pd.concat([failing, passing]).to_csv(tmp_path / "bench_make_test.csv", index=False)
    doc = T.timings_doc(tmp_path, descriptions={})
    assert "Failed in `def5678`: `tests/a.py::test_one`, `tests/c.py::test_dry_run[make cebab MODEL=nb]`." in doc
    assert "Failed in `abc1234`" not in doc
    passing.to_csv(tmp_path / "bench_make_test.csv", index=False)  # tables written before the column have none
    assert "Failed in" not in T.timings_doc(tmp_path, descriptions={})
    _make_test().to_csv(tmp_path / "bench_make_test.csv", index=False)
    assert "Failed in" not in T.timings_doc(tmp_path, descriptions={})
