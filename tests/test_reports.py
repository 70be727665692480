"""Executed notebooks kept for readers (xaibench.reports) and the cost of `make all` (bench make_all)."""
import json
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from xaibench import reports, steps
from xaibench.bench.make_all import CEBAB, HUMAN, bench_make_all

MACHINE = {"cpus": 2, "cpu_model": "AMD EPYC", "gpu": "none", "xaibench_device": "auto"}


def _executed(path, duration, machine=MACHINE, outputs=(), params=None, run=None):
    """A notebook as papermill leaves it (timings per cell and for the whole run)."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print('hi')", execution_count=1, outputs=list(outputs))
    cell.metadata["execution"] = {"iopub.execute_input": "2026-11-22T20:47:18.545797Z"}
    cell.metadata["papermill"] = {"duration": 0.01, "start_time": "2026-11-22T20:47:18", "status": "completed"}
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell]
    nb.metadata["papermill"] = {"duration": duration, "start_time": "2026-11-22T20:00:00+00:00",
                                "end_time": "2026-11-22T20:10:00+00:00", "exception": None,
                                "environment_variables": {}, "input_path": "notebooks/x.ipynb",
                                "output_path": f"{path}.tmp.ipynb", "parameters": params or {"profile": "full"},
                                "version": "2.7.0"}
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    if machine is not None:
        nb.metadata["xaibench"] = {"machine": machine}
    if run is not None:
        nb.metadata.setdefault("xaibench", {})["make_run"] = run
    nbformat.write(nb, path)
    return path


def test_finalize_strips_volatile_metadata_and_terminal_noise(tmp_path, monkeypatch):
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    monkeypatch.delenv("XAIBENCH_MAKE_RUN", raising=False)
    outputs = [
        nbformat.v4.new_output("stream", name="stderr", text="\r  0%|   | 0/3\r\x1b[31m100%|###| 3/3\x1b[0m\n"),
        nbformat.v4.new_output("stream", name="stderr",
                               text=f"{tmp_path}/.venv/lib/python3.11/site-packages/x.py:1: Warning\n"
                                    "/tmp/ipykernel_123/456.py:2: UserWarning: careful\n"),
        nbformat.v4.new_output("display_data", data={"text/plain": "bar",
                                                     "application/vnd.jupyter.widget-view+json": {"model_id": "x"}}),
        nbformat.v4.new_output("display_data", data={"application/vnd.jupyter.widget-view+json": {"model_id": "y"}}),
        nbformat.v4.new_output("execute_result", execution_count=1,
                               data={"text/plain": f"PosixPath('{tmp_path}/figures/f.png')"}),
        nbformat.v4.new_output("error", ename="E", evalue="v", traceback=["\x1b[0;31mE\x1b[0m: v"]),
    ]
    (tmp_path / "reports" / "full").mkdir(parents=True)
    dest = tmp_path / "reports" / "full" / "01_x.ipynb"
    tmp = _executed(tmp_path / "reports" / "full" / "01_x.ipynb.tmp.ipynb", 12.5, machine=None, outputs=outputs)
    reports.finalize(tmp, dest)
    assert dest.exists() and not tmp.exists()
    nb = nbformat.read(dest, as_version=4)
    pm = nb["metadata"]["papermill"]
    assert pm["duration"] == 12.5 and pm["start_time"] and "environment_variables" not in pm
    assert pm["output_path"] == "reports/full/01_x.ipynb"
    assert "widgets" not in nb["metadata"]
    assert set(nb["metadata"]["xaibench"]["machine"]) == set(MACHINE)
    assert "make_run" not in nb["metadata"]["xaibench"]  # run outside make: nothing to record
    cell = nb["cells"][0]
    assert cell["metadata"] == {"tags": ["parameters"]} and cell["execution_count"] == 1
    outs = cell["outputs"]
    assert [o["output_type"] for o in outs] == ["stream", "display_data", "execute_result", "error"]  # one stderr block
    text = outs[0]["text"]
    assert text == ("100%|###| 3/3\nsite-packages/x.py:1: Warning\n<cell>:2: UserWarning: careful\n")
    assert outs[1]["data"] == {"text/plain": "bar"}
    assert outs[2]["data"] == {"text/plain": "PosixPath('figures/f.png')"}  # no machine path
    assert outs[3]["traceback"] == ["E: v"]
    nbformat.validate(nbformat.reads(dest.read_text(), as_version=4))


def test_bench_make_all_sums_notebooks_per_paper_and_in_total(tmp_path, capsys):
    _executed(tmp_path / "01_dataset_statistics.ipynb", 60.0)
    _executed(tmp_path / "02_train_classifier-lstm-5-way-exclusive.ipynb", 600.04,
              params={"profile": "full", "model": "lstm", "seeds": "42 43"})
    _executed(tmp_path / "21_human_grounded_evaluation.ipynb", 90.0, machine={**MACHINE, "cpus": 16})
    broken = _executed(tmp_path / "11_local_explainers.ipynb", None)  # not a finished papermill run
    _executed(tmp_path / "10_concept_explainers.ipynb.tmp.ipynb", 5.0)  # an unfinished run: ignored
    df = bench_make_all(tmp_path)
    assert f"skipping {broken.name}" in capsys.readouterr().out
    rows = df[~df["notebook"].str.startswith("TOTAL")].set_index("notebook")
    assert list(rows.index) == ["01_dataset_statistics", "02_train_classifier-lstm-5-way-exclusive",
                                "21_human_grounded_evaluation"]
    assert rows.loc["02_train_classifier-lstm-5-way-exclusive", "wall_seconds"] == 600.0
    assert json.loads(rows.loc["02_train_classifier-lstm-5-way-exclusive", "parameters"]) == \
        {"model": "lstm", "seeds": "42 43"}
    assert rows.loc["21_human_grounded_evaluation", "paper"] == HUMAN
    totals = df[df["notebook"].str.startswith("TOTAL")].set_index("paper")
    assert totals.loc[CEBAB, "wall_seconds"] == 660.0
    assert totals.loc[CEBAB, "notebook"] == "TOTAL (2 notebooks, not one recorded cold run)"  # no make run recorded
    assert totals.loc[CEBAB, "cpus"] == 2 and totals.loc[CEBAB, "gpu"] == "none"
    assert totals.loc[HUMAN, "notebook"] == "TOTAL (1 notebook, not one recorded cold run)"
    assert df["cold_start"].isna().sum() == 3 and not totals["cold_start"].any()
    assert totals.loc["all papers", "wall_seconds"] == 750.0
    assert totals.loc["all papers", "wall_minutes"] == 12.5
    assert totals.loc["all papers", "cpus"] == "mixed"  # 2 and 16 cores: not one machine


def test_record_step_writes_a_record_only_when_the_step_computed_something(tmp_path, monkeypatch):
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("XAIBENCH_MAKE_RUN", "2026-11-28T10:00:00Z-42")
    monkeypatch.setenv("XAIBENCH_MAKE_COLD", "yes")
    monkeypatch.delenv("XAIBENCH_LEVERS", raising=False)
    from xaibench.config import use_profile

    use_profile("full")
    path = steps.record_step("attention-gap", 754.04, 9, "2026-11-28T10:00:05+00:00", {"seeds": [0, 1, 2]})
    assert path == tmp_path / "reports" / "full" / "steps" / "attention-gap.json"
    rec = json.loads(path.read_text())
    assert rec["wall_seconds"] == 754.0 and rec["computed"] == 9 and rec["cold_start"] is True
    assert rec["make_run"] == "2026-11-28T10:00:00Z-42" and rec["parameters"] == {"seeds": [0, 1, 2]}
    # a rerun that read every cell from its store keeps the cold record
    assert steps.record_step("attention-gap", 3.0, 0, "2026-11-28T11:00:00+00:00") is None
    assert json.loads(path.read_text())["wall_seconds"] == 754.0
    with pytest.raises(ValueError, match="step name"):
        steps.record_step("Attention Gap", 1.0, 1, "")
    with pytest.raises(ValueError, match="must be >= 0"):
        steps.record_step("attention-gap", -1.0, 1, "")
    use_profile("quick")  # a smoke run records below its own folder
    try:
        assert steps.record_step("attention-gap", 1.0, 1, "").parent == tmp_path / "reports" / "quick" / "steps"
    finally:
        use_profile("full")


def test_timed_step_records_the_body_once_it_finishes(tmp_path, monkeypatch):
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("XAIBENCH_MAKE_RUN", "2026-11-28T10:00:00Z-42")
    monkeypatch.delenv("XAIBENCH_LEVERS", raising=False)
    clock = iter([100.0, 107.25])
    monkeypatch.setattr(steps.time, "time", lambda: next(clock))
    from xaibench.config import use_profile

    use_profile("full")
    path = tmp_path / "reports" / "full" / "steps" / "attention-length.json"
    with pytest.raises(RuntimeError):  # a body that fails records nothing
        with steps.timed_step("attention-length") as step:
            step.computed = 3
            raise RuntimeError("training failed")
    assert not path.exists()
    clock = iter([100.0, 107.25])
    with steps.timed_step("attention-length", {"concats": [1, 2, 4]}) as step:
        step.computed = 3
    rec = json.loads(path.read_text())
    assert rec["wall_seconds"] == 7.2 and rec["computed"] == 3 and rec["parameters"] == {"concats": [1, 2, 4]}
    clock = iter([200.0, 201.0])
    with steps.timed_step("attention-length"):  # computed stays 0: every cell came from the store
        pass
    assert json.loads(path.read_text())["wall_seconds"] == 7.2


def test_bench_make_all_counts_make_steps_beside_the_notebooks(tmp_path, capsys):
    from xaibench.bench.make_all import ATTRIBUTION_GT

    _executed(tmp_path / "13_attention_rationales.ipynb", 600.0, run={"id": "A", "cold_start": True})
    _executed(tmp_path / "25_attribution_gt_saliency.ipynb", 1200.0, run={"id": "A", "cold_start": True})
    steps = tmp_path / "steps"
    steps.mkdir()
    rec = {"step": "attention-gap", "wall_seconds": 300.0, "started": "2026-11-22T21:00:00+00:00", "computed": 9,
           "parameters": {"seeds": [0, 1, 2]}, "make_run": "A", "cold_start": True, "machine": MACHINE}
    (steps / "attention-gap.json").write_text(json.dumps(rec))
    (steps / "attention-length.json").write_text('{"step": "attention-length"')  # damaged: skipped, named
    df = bench_make_all(tmp_path)
    assert "skipping" in capsys.readouterr().out
    rows = df[~df["notebook"].str.startswith("TOTAL")].set_index("notebook")
    assert rows.loc["make attention-gap", "paper"] == ATTRIBUTION_GT
    assert rows.loc["make attention-gap", "wall_seconds"] == 300.0
    totals = df[df["notebook"].str.startswith("TOTAL")].set_index("paper")
    assert totals.loc[ATTRIBUTION_GT, "wall_seconds"] == 2100.0  # 600 + 1200 + 300
    assert totals.loc[ATTRIBUTION_GT, "notebook"] == "TOTAL (2 notebooks, 1 make step, one cold make run)"
    # a step from another make run: the paper's sum is no longer one cold run
    (steps / "attention-gap.json").write_text(json.dumps({**rec, "make_run": "B"}))
    totals = bench_make_all(tmp_path).query("notebook.str.startswith('TOTAL')").set_index("paper")
    assert totals.loc[ATTRIBUTION_GT, "notebook"].endswith("not one recorded cold run)")


@pytest.mark.parametrize("report_runs, counted", [
    (("A", "A"), True),    # the pool and the reports of one make run: the reports waited for its training
    (("A", "B"), True),    # one report still from the pool's run
    (("B", "B"), False),   # every report rerun later (e.g. forced after the models were deleted): its own training
])
def test_bench_make_all_counts_the_training_pool_only_beside_a_report_of_its_make_run(tmp_path, capsys, report_runs,
                                                                                       counted):
    for name, run in zip(("lstm-binary-exclusive", "minilm-binary-exclusive"), report_runs):
        _executed(tmp_path / f"02_train_classifier-{name}.ipynb", 30.0, run={"id": run, "cold_start": run == "A"})
    steps = tmp_path / "steps"
    steps.mkdir()
    rec = {"step": "models-pool", "wall_seconds": 600.0, "started": "2026-11-22T21:00:00+00:00", "computed": 10,
           "parameters": {}, "make_run": "A", "cold_start": True, "machine": MACHINE}
    (steps / "models-pool.json").write_text(json.dumps(rec))
    df = bench_make_all(tmp_path)
    total = df[df["notebook"].str.startswith("TOTAL")].set_index("paper").loc[CEBAB, "wall_seconds"]
    assert total == (660.0 if counted else 60.0)
    assert ("make models-pool" in set(df["notebook"])) is counted
    said = capsys.readouterr().out
    assert ("leaving out make models-pool (make run A)" in said) is (not counted)


def test_bench_make_all_carries_each_rows_timing_note(tmp_path, monkeypatch):
    from xaibench.bench import make_all as M

    _executed(tmp_path / "01_dataset_statistics.ipynb", 60.0)
    _executed(tmp_path / "21_human_grounded_evaluation.ipynb", 90.0)
    tables = tmp_path / "tables"
    tables.mkdir()
    pd.DataFrame({"notebook": ["21_human_grounded_evaluation", "99_gone"], "note": ["shared cores", "x"]}).to_csv(
        tables / "make_all_notes.csv", index=False)
    read = M.notes
    monkeypatch.setattr(M, "notes", lambda: read(tables))
    df = bench_make_all(tmp_path).set_index("notebook")
    assert df.loc["21_human_grounded_evaluation", "note"] == "shared cores"
    assert df.loc["01_dataset_statistics", "note"] == ""
    assert (df.loc[df.index.str.startswith("TOTAL"), "note"] == "").all()
    (tables / "make_all_notes.csv").write_text("notebook,why\n01_x,y\n")
    with pytest.raises(ValueError, match="columns \\['note'\\] missing"):
        read(tables)


@pytest.mark.parametrize("runs, one_cold", [
    ({"01": ("A", True), "02": ("A", True), "21": ("A", True)}, {CEBAB: True, HUMAN: True, "all papers": True}),
    # the human-grounded report was rerun later on the stored results: only CEBaB's sum is one cold run
    ({"01": ("A", True), "02": ("A", True), "21": ("B", False)}, {CEBAB: True, HUMAN: False, "all papers": False}),
    # one invocation that started with stored results is not cold
    ({"01": ("A", False), "02": ("A", False), "21": ("A", False)}, {CEBAB: False, HUMAN: False, "all papers": False}),
    # two cold invocations (e.g. two fresh clones): each paper's sum is one cold run, the whole is not
    ({"01": ("A", True), "02": ("A", True), "21": ("B", True)}, {CEBAB: True, HUMAN: True, "all papers": False}),
    # one report without a recorded run
    ({"01": ("A", True), "02": None, "21": ("A", True)}, {CEBAB: False, HUMAN: True, "all papers": False}),
])
def test_bench_make_all_says_which_totals_are_one_cold_run(tmp_path, runs, one_cold):
    names = {"01": "01_dataset_statistics", "02": "02_train_classifier-lstm-5-way-exclusive",
             "21": "21_human_grounded_evaluation"}
    for key, run in runs.items():
        _executed(tmp_path / f"{names[key]}.ipynb", 60.0,
                  run=None if run is None else {"id": run[0], "cold_start": run[1]})
    df = bench_make_all(tmp_path)
    totals = df[df["notebook"].str.startswith("TOTAL")].set_index("paper")
    for paper, expected in one_cold.items():
        assert bool(totals.loc[paper, "cold_start"]) is expected, paper
        label = "one cold make run" if expected else "not one recorded cold run"
        assert totals.loc[paper, "notebook"].endswith(f", {label})"), totals.loc[paper, "notebook"]
    rows = df[~df["notebook"].str.startswith("TOTAL")].set_index("notebook")
    assert rows.loc[names["01"], "make_run"] == "A"


def test_finalize_records_the_make_run_from_the_makefiles_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    (tmp_path / "reports" / "full").mkdir(parents=True)
    for cold, expected in (("yes", True), ("no", False)):
        monkeypatch.setenv("XAIBENCH_MAKE_RUN", "2026-11-26T23:52:09Z")
        monkeypatch.setenv("XAIBENCH_MAKE_COLD", cold)
        dest = tmp_path / "reports" / "full" / "01_x.ipynb"
        reports.finalize(_executed(tmp_path / "reports" / "full" / "01_x.ipynb.tmp.ipynb", 1.0), dest)
        run = nbformat.read(dest, as_version=4).metadata["xaibench"]["make_run"]
        assert run == {"id": "2026-11-26T23:52:09Z", "cold_start": expected}


def test_bench_make_all_without_reports_says_what_to_run(tmp_path):
    with pytest.raises(FileNotFoundError, match="run `make all` first"):
        bench_make_all(tmp_path)


def test_bench_make_all_cli_writes_the_table(tmp_path, monkeypatch):
    from xaibench.bench.__main__ import main as bench_cli

    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("XAIBENCH_PROFILE", "full")  # make all's profile (another test may have left quick set)
    (tmp_path / "reports" / "full").mkdir(parents=True)
    _executed(tmp_path / "reports" / "full" / "03_classifier_performance.ipynb", 30.0)
    bench_cli(["make_all"])
    out = (tmp_path / "figures" / "tables" / "bench_make_all.csv").read_text()
    assert out.splitlines()[0].startswith("paper,notebook,parameters,wall_seconds,wall_minutes,started,make_run,cold_start,cpus")
    assert "03_classifier_performance" in out and "all papers" in out
    md = (tmp_path / "figures" / "tables" / "bench_make_all.md").read_text()  # rendered beside the CSV
    assert md.startswith("# bench_make_all\n") and "python -m xaibench.bench make_all" in md
    n_rows = len(pd.read_csv(tmp_path / "figures" / "tables" / "bench_make_all.csv"))
    assert md.count("\n|") == n_rows + 2  # header, separator, one line per row


ROOT = Path(__file__).resolve().parents[1]
COMMITTED = sorted((ROOT / "reports" / "full").glob("*.ipynb"))


@pytest.mark.parametrize("report", COMMITTED, ids=lambda p: p.stem)
def test_committed_reports_show_the_current_notebook_sources(report):
    """A reader opens reports/full/ to see how each result is made: a report whose cells no longer
    match its notebook (code or prose) is stale and must be regenerated (`make <target>`)."""
    source = ROOT / "notebooks" / f"{report.stem.split('-')[0]}.ipynb"
    assert source.exists(), f"{report.name}: no notebook {source.name} (delete the report or restore it)"
    want = [c.source for c in nbformat.read(source, as_version=4).cells]
    got = [c.source for c in nbformat.read(report, as_version=4).cells
           if "injected-parameters" not in c.metadata.get("tags", [])]
    changed = [i for i, (a, b) in enumerate(zip(want, got)) if a != b]
    assert len(want) == len(got) and not changed, \
        f"{report.name} is stale: cells {changed or 'count'} differ from {source.name}; rerun it with make"


def test_the_make_time_parameter_stamps_import_only_the_standard_library(tmp_path):
    """make refreshes the stamp of every report it considers, one process each, on every invocation (make -n too):
    that process (`python -m xaibench.paramstamp`, as the Makefile runs it) imports the standard library and
    xaibench.paths only, not the registry, numpy or pandas; the stamp it writes is the one
    :func:`xaibench.reports.refresh_param_stamp` writes, and a report run with other parameters gets a newer stamp
    and a notice."""
    import subprocess
    import sys

    from xaibench import reports

    report = tmp_path / "01_x.ipynb"
    report.write_text(json.dumps({"cells": [], "metadata": {"papermill": {"parameters": {"profile": "quick",
                                                                                         "seeds": "42"}}},
                                  "nbformat": 4, "nbformat_minor": 5}))
    code = ("import sys, runpy; sys.argv = ['paramstamp', {nb!r}, {stamp!r}, '-p', 'profile', 'quick', '-p', 'seeds', "
            "{seeds!r}]\nrunpy.run_module('xaibench.paramstamp', run_name='__main__')\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('xaibench', 'pandas', 'numpy')))")
    for seeds, want in (("42", "same"), ("43", "changed")):
        stamp = tmp_path / f"01_x-{seeds}.params"
        out = subprocess.run([sys.executable, "-c", code.format(nb=str(report), stamp=str(stamp), seeds=seeds)],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip().splitlines()[-1] == str(["xaibench", "xaibench.paths", "xaibench.progress"])
        assert ("run with other parameters (seeds: '42' -> 43)" in out.stderr) == (want == "changed"), out.stderr
        assert (stamp.stat().st_mtime_ns > report.stat().st_mtime_ns) == (want == "changed")
        again = tmp_path / f"again-{seeds}.params"
        assert reports.refresh_param_stamp(report, again, {"profile": "quick", "seeds": seeds},
                                           notice=lambda m: None) == want
        assert stamp.read_text() == again.read_text()


@pytest.mark.parametrize("explainers, imports_registry", [("", False), ("all", False), ("lime", True)])
def test_make_checks_the_default_parameters_without_pandas(explainers, imports_registry):
    """make checks every parameter once per invocation: with the defaults (no explainer to look up) that process
    imports neither pandas nor the protocols; an explainer name is looked up in the registry, which imports them."""
    import subprocess
    import sys

    code = ("import sys, runpy; sys.argv = ['reports', 'check', 'PROFILE=quick', 'SEEDS=42 43', 'MODEL=lstm', "
            "'MODELS=minilm lstm', 'TASKS=binary ternary', 'EXPLAINERS={e}', 'XAIBENCH_DEVICE=', 'XAIBENCH_LEVERS=']\n"
            "runpy.run_module('xaibench.reports', run_name='__main__')\n"
            "print('pandas' in sys.modules, 'xaibench.evaluation.protocol' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code.format(e=explainers)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [str(imports_registry), str(imports_registry)]
