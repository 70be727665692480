"""The benchmark entry point: one package (xaibench.bench), one CLI (`python -m xaibench.bench <name>`),
one module per benchmark; `make bench` runs every benchmark but make_all (run by `make all`) and make_paper (a paper's
cold run from a fresh clone, run by hand per paper)."""
import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xaibench import levers
from xaibench.bench.__main__ import BENCHMARKS, main, parser

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "xaibench" / "bench"


@pytest.fixture(autouse=True)
def _fake_speed_probe(monkeypatch):
    """The fresh-clone benches time the speed probe before and after their run: here a stand-in returning 0.5, so
    that no test starts the real probe's interpreter unless it asks for it."""
    from xaibench.bench import make_paper, make_test

    for mod in (make_paper, make_test):
        monkeypatch.setattr(mod, "speed_probe", lambda: 0.5)


def test_every_benchmark_has_its_module_and_function():
    # timings measures nothing: it writes docs/timings.md and the README's timing table from the bench tables
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__", "common", "timings"}
    assert modules == set(BENCHMARKS), "one module per benchmark, named as its CLI command"
    for name in BENCHMARKS:
        mod = importlib.import_module(f"xaibench.bench.{name}")
        assert callable(getattr(mod, f"bench_{name}")), f"xaibench.bench.{name} has no bench_{name}()"


def test_no_bench_module_is_left_outside_the_package():
    strays = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src" / "xaibench").rglob("bench*.py")
                    if PACKAGE not in p.parents)
    assert not strays, f"benchmark modules outside xaibench.bench: {strays}"


def test_cli_parses_every_benchmark_and_its_options():
    for name in BENCHMARKS:
        assert parser().parse_args([name] + (["--targets", "human"] if name == "make_paper" else [])).cmd == name
    assert parser().parse_args(["make_paper", "--targets", "foundation", "cebab"]).targets == ["foundation", "cebab"]
    with pytest.raises(SystemExit):
        parser().parse_args(["make_paper"])  # a paper's targets are required
    a = parser().parse_args(["training", "--models", "lstm", "--tasks", "5-way", "binary"])
    assert (a.models, a.tasks) == (["lstm"], ["5-way", "binary"])
    assert parser().parse_args(["training"]).models == ["minilm", "lstm"]
    assert parser().parse_args(["make_all", "--reports", "x"]).reports == "x"
    assert parser().parse_args(["_train_one", "minilm", "5-way", "out.json"]).out == "out.json"
    assert parser().parse_args(["timings"]).cmd == "timings"
    with pytest.raises(SystemExit):
        parser().parse_args(["nonsense"])
    with pytest.raises(SystemExit):
        parser().parse_args([])


def test_cli_writes_bench_name_csv_and_markdown(tmp_path, monkeypatch):
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    seen = []

    def fake_run(name, args):
        seen.append((name, args.models))
        return pd.DataFrame({"model": ["m"], "seconds": [1.5]})

    main(["training", "--models", "m"], run=fake_run)
    assert seen == [("training", ["m"])]
    out = tmp_path / "figures" / "tables"
    assert pd.read_csv(out / "bench_training.csv").to_dict("list") == {"model": ["m"], "seconds": [1.5]}
    assert (out / "bench_training.md").read_text().startswith(
        "# bench_training\n\nWritten by `python -m xaibench.bench training`.")


def test_python_dash_m_runs_the_package():
    out = subprocess.run([sys.executable, "-m", "xaibench.bench", "--help"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    for name in BENCHMARKS:
        assert name in out.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_make_bench_runs_every_benchmark_but_make_all_and_make_paper_then_writes_the_timings():
    text = subprocess.run(["make", "--no-print-directory", "-n", "-B", "bench"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120).stdout
    ran = re.findall(r"-m xaibench\.bench (\w+)", text)
    assert ran[-1] == "timings", ran  # after every table it reads is written
    assert sorted(ran[:-1]) == sorted(set(BENCHMARKS) - {"make_all", "make_paper"}), ran


def test_cores_bench_compares_every_mode_with_one_cell_of_two_threads(monkeypatch):
    """Throughput: cells at once / seconds of the slowest of them, relative to the first mode's; bit-identical:
    every concurrent cell's output digest equals the first mode's."""
    from xaibench.bench import cores

    fake = {(2, 1, ""): [(20.0, "a")], (2, 2, "PASSIVE"): [(30.0, "a"), (32.0, "a")],
            (1, 2, ""): [(25.0, "b"), (25.0, "b")], (2, 2, ""): [(80.0, "a"), (40.0, "x")]}
    monkeypatch.setattr(cores, "_run_mode", lambda name, t, c, w: [{"seconds": s, "digest": d}
                                                                  for s, d in fake[(t, c, w)]])
    df = cores.bench_cores(("image",), modes=tuple(fake))
    assert df.throughput_vs_reference.tolist() == [1.0, 1.25, 1.6, 0.5]   # 1/20; 2/32; 2/25; 2/80
    assert df.seconds_per_cell.tolist() == [20.0, 31.0, 25.0, 60.0]
    assert df.bit_identical_to_reference.tolist() == [True, True, False, False]
    assert df.omp_wait_policy.tolist() == ["unset (spin)", "PASSIVE", "unset (spin)", "unset (spin)"]
    with pytest.raises(ValueError, match="unknown workload 'gpu'"):
        cores.bench_cores(("gpu",))


def test_chain_parts_bench_times_one_cell_per_run_then_the_split_and_compares_the_chains(monkeypatch):
    """Per configuration: the path before (parts=1) first, then run_experiments' own split (parts=None); speedup:
    the path before's wall seconds over each path's; bit-identical: the chains but their measured seconds."""
    from xaibench.bench import chain_parts as cp

    calls = []

    def fake_timed(runs, parts, scratch):
        calls.append((len(runs), parts))
        n = 1 if parts == 1 else 2
        out = [(pd.DataFrame({"text_id": [0], "seconds": [float(n)], "text": ["b" if parts == 7 else "a"]}),
                {"dataset": r["dataset"], "editor": r["editor"], "seconds": 5.0,
                 **({"n_parts": n} if n > 1 else {})}) for r in runs]
        return (40.0 if parts == 1 else 20.0), out

    monkeypatch.setattr(cp, "_timed", fake_timed)
    df = cp.bench_chain_parts(quick_models=True)
    assert calls == [(6, 1), (6, None), (2, 1), (2, None)]  # notebook 22's six runs, then one editor's two
    assert df.speedup_vs_before.tolist() == [1.0, 2.0, 1.0, 2.0]
    assert df.bit_identical_to_before.all() and df.cells.tolist() == [6, 12, 2, 4]
    assert df.texts.tolist()[2:] == ["imdb 60, newsgroups 120"] * 2 and {"cpus", "cpu_model"} <= set(df.columns)
    assert not cp.bench_chain_parts(parts=7, quick_models=True).bit_identical_to_before.tolist()[1]


def test_training_pool_bench_times_each_part_then_one_pool_and_compares_the_models(monkeypatch):
    from xaibench.bench import training_pool as tp

    seen = []

    def fake_train(parts, pooled, home):
        seen.append((pooled, [p[0] for p in parts], (home / "data" / "processed" / "cebab.parquet").exists()))
        digests = {(m, t, sp, s): f"{m}{t}{s}" for m, t, sp, ss in parts for s in ss}
        return (30.0 if pooled else 45.0), (1 if pooled else 1), digests, 40.0

    monkeypatch.setattr(tp, "_train", fake_train)
    df = tp.bench_training_pool(model="lstm")
    assert seen == [(False, ["lstm"] * 3, True), (True, ["lstm"] * 3, True)]
    assert df.speedup_vs_before.tolist() == [1.0, 1.5] and df.bit_identical_to_before.all()
    assert df.cells.tolist() == [5, 5] and {"cpus", "cpu_model"} <= set(df.columns)


def test_precision_bench_compares_each_mode_with_float32(monkeypatch):
    """Speed-up: float32's ms / the mode's; the logit differences and `results_identical` against float32's
    logits before and after training; channels-last is measured for the image ResNet only."""
    import torch

    from xaibench.bench import precision

    logits = {"fp32": (40.0, [0.5, -0.5], [1.0, -1.0]), "channels_last": (32.0, [0.5, -0.5], [1.0, -0.75]),
              "bf16_autocast": (20.0, [0.25, -0.5], [1.5, -1.0])}
    monkeypatch.setattr(precision, "_measure", lambda name, mode, steps, small: (
        logits[mode][0], torch.tensor(logits[mode][1]), torch.tensor(logits[mode][2])))
    df = precision.bench_precision(("image", "bilstm"))
    assert df["mode"].tolist() == ["fp32", "channels_last", "bf16_autocast", "fp32", "bf16_autocast"]
    image = df[df.workload == "image"]
    assert image.speedup_vs_fp32.tolist() == [1.0, 1.25, 2.0]
    assert image.max_abs_logit_diff_init.tolist() == [0.0, 0.0, 0.25]
    assert image.max_abs_logit_diff_trained.tolist() == [0.0, 0.25, 0.5]
    assert image.results_identical.tolist() == [True, False, False]
    with pytest.raises(ValueError, match="unknown workload 'gpu'"):
        precision.bench_precision(("gpu",))


@pytest.mark.parametrize("workload", ["image", "minilm", "bilstm"])
def test_precision_bench_trains_the_real_modules_and_float32_is_its_own_reference(workload):
    """A tiny real run: every mode trains (finite times), float32 matches itself exactly, and
    bfloat16 autocast moves the logits (it rounds the matrix products' inputs)."""
    from xaibench.bench import precision

    df = precision.bench_precision((workload,), steps=1, small=True)
    assert df["mode"].tolist() == list(precision.MODES[workload])
    assert (df[df.supported].ms_per_step > 0).all()
    ref = df.iloc[0]
    assert ref.speedup_vs_fp32 == 1.0 and ref.results_identical and ref.max_abs_logit_diff_trained == 0.0
    bf16 = df[df["mode"] == "bf16_autocast"].iloc[0]
    if workload in precision.RECURRENT and not levers.cpu_bf16_recurrent_supported():
        assert not bf16.supported and np.isnan(bf16.ms_per_step)  # no bfloat16 LSTM kernels on this CPU
    else:
        assert bf16.supported and not bf16.results_identical and bf16.max_abs_logit_diff_trained > 0


def test_precision_bench_records_channels_last_as_unsupported_where_it_would_corrupt_the_heap(monkeypatch):
    from xaibench.bench import precision

    seen = []
    monkeypatch.setattr(levers, "cpu_channels_last_safe", lambda threads=None: seen.append(threads) or False)
    df = precision.bench_precision(("image",), steps=1, small=True).set_index("mode")
    assert seen and df.loc["fp32", "supported"] and df.loc["bf16_autocast", "supported"]
    assert not df.loc["channels_last", "supported"] and np.isnan(df.loc["channels_last", "ms_per_step"])


def test_precision_bench_records_bf16_on_recurrent_layers_as_unsupported_where_the_cpu_lacks_it(monkeypatch):
    from xaibench.bench import precision

    monkeypatch.setattr(levers, "cpu_bf16_recurrent_supported", lambda: False)
    df = precision.bench_precision(("bilstm",), steps=1, small=True).set_index("mode")
    assert df.loc["fp32", "supported"] and df.loc["fp32", "results_identical"]
    assert not df.loc["bf16_autocast", "supported"] and df.loc["bf16_autocast", "steps_timed"] == 0


def test_optimizer_bench_prices_the_foreach_step_per_unit_against_the_per_parameter_loop(monkeypatch):
    """seconds_saved_per_unit = (the loop's ms - the step's ms) x steps per unit / 1000; `identical` compares the
    trained weights with the loop's, bit for bit."""
    import torch

    from xaibench.bench import optimizer

    weights = {"per-parameter loop": [torch.tensor([1.0, 2.0])], "foreach": [torch.tensor([1.0, 2.0])]}
    ms = {"per-parameter loop": (10.0, 100.0), "foreach": (6.0, 97.0)}
    monkeypatch.setattr(optimizer, "_units", lambda w, small: (f"a unit of {w}", 250))
    monkeypatch.setattr(optimizer, "_train", lambda w, step, steps, small: (*ms[step], weights[step]))
    df = optimizer.bench_optimizer(("image",))
    assert df.step.tolist() == ["per-parameter loop", "foreach"] and df.identical.tolist() == [True, True]
    assert df.seconds_saved_per_unit.tolist() == [0.0, 1.0] and set(df.steps_per_unit) == {250}
    weights["foreach"] = [torch.tensor([1.0, torch.nextafter(torch.tensor(2.0), torch.tensor(3.0)).item()])]
    assert optimizer.bench_optimizer(("minilm",)).identical.tolist() == [True, False]  # one ulp apart
    with pytest.raises(ValueError, match="unknown workload 'gpu'"):
        optimizer.bench_optimizer(("gpu",))


def test_optimizer_bench_trains_the_real_modules_to_the_same_weights_both_ways():
    from xaibench.bench import optimizer

    df = optimizer.bench_optimizer(steps=1, small=True)
    assert df.workload.tolist() == ["image", "image", "minilm", "minilm"]
    assert df.identical.all() and (df.optimizer_ms > 0).all() and (df.training_step_ms >= df.optimizer_ms).all()
    units = df.drop_duplicates("workload").set_index("workload").steps_per_unit
    assert units["image"] == 63 and units["minilm"] == 3 * 2  # 2,000 images in 32s; 3 epochs of 64 texts in 48s


def test_scorecard_bench_compares_the_agreement_intervals_of_both_ways():
    from xaibench.bench import scorecard

    rng = np.random.default_rng(0)
    rows = pd.DataFrame([{"protocol": p, "metric": "m", "lower_is_better": False, "explainer": e, "model": "x",
                          "dataset": d, "seed": 42, "value": rng.normal(), "source": "computed", "paper": False}
                         for p in ("p", "q") for e in "abcd" for d in ("d1", "d2", "d3")])
    out = scorecard.bench_scorecard(rows, n_boot=20, repeats=1).set_index("way")
    assert out.identical.all() and set(out.pairs) == {4} and set(out.protocols) == {2} and set(out.rows) == {24}
    assert out.loc["by name (before)", "speedup_vs_before"] == 1.0 and (out.seconds > 0).all()


def test_textfooler_deletions_bench_scores_each_texts_deletions_both_ways(monkeypatch):
    from xaibench.bench import textfooler_deletions as tfd
    from xaibench.data import cf_data
    from xaibench.models import cf_predictors

    from tests.helpers.toy_text import TEXTS, sentiment_logreg

    clf = sentiment_logreg()
    monkeypatch.setattr(cf_predictors, "get_predictor", lambda d, model, seed=42, max_train=None: clf)
    monkeypatch.setattr(cf_data, "sample_test", lambda d, n, seed=42, max_words=None: pd.DataFrame({"text": TEXTS[:n]}))
    out = tfd.bench_textfooler_deletions({"imdb": 2}, repeats=1).set_index("way")
    assert out.identical.all() and set(out.n_texts) == {2} and out.loc["before", "speedup_vs_before"] == 1.0
    # the content words of the two texts: film, great, acting, wonderful / hated, awful, terrible, movie
    assert set(out.deletions_per_text) == {4.0} and (out.seconds > 0).all()


def test_fastest_of_keeps_each_ways_fastest_call_and_its_last_result(monkeypatch):
    import time

    from xaibench.bench.common import fastest_of

    clock = iter([0.0, 5.0, 10.0, 12.0, 20.0, 24.0, 30.0, 31.0])  # a: 5 s then 2 s; b: 4 s then 1 s
    monkeypatch.setattr(time, "perf_counter", lambda: next(clock))
    calls = []
    seconds, results = fastest_of({"a": lambda: calls.append("a") or len(calls), "b": lambda: calls.append("b") or 0},
                                  repeats=2)
    assert seconds == {"a": 2.0, "b": 1.0} and results == {"a": 2, "b": 0} and calls == ["a", "a", "b", "b"]


def test_cnn_encode_bench_encodes_each_perturbation_both_ways(monkeypatch):
    from xaibench.bench import cnn_encode
    from xaibench.data import loaders

    from tests.helpers.toy_text import NEG, POS

    frame = pd.DataFrame({"text": POS + NEG, "label": [1, 1, 1, 0, 0, 0], "split": "test"})
    monkeypatch.setattr(loaders, "load", lambda name: frame)
    out = cnn_encode.bench_cnn_encode({"toy": 2}, per_text=5, n_train=6, repeats=1).set_index("way")
    assert out.identical.all() and set(out.texts_encoded) == {10} and out.loc["before", "speedup_vs_before"] == 1.0
    words = cnn_encode.perturbations(["a b c d"], 50, np.random.default_rng(0))
    assert len(words) == 50 and all(set(w.split()) <= set("abcd") for w in words) and len(set(words)) > 5


# ---------------------------------------------------------------------------------------------
# make_test: a fresh clone's `make test`, timed (the real run takes minutes: here a faked one)
# ---------------------------------------------------------------------------------------------
def test_pytest_summary_lines_are_parsed_to_counts_and_seconds():
    from xaibench.bench.make_test import parse_pytest_summary

    ok = ("[gw1] PASSED tests/test_x.py::test_y\n============================= slowest 15 durations "
          "=============================\n335.59s call     tests/test_notebooks.py::test_a\n"
          "================= 955 passed, 22 warnings in 401.17s (0:06:41) =================\n")
    assert parse_pytest_summary(ok) == {"passed": 955, "failed": 0, "errors": 0, "skipped": 0,
                                        "pytest_seconds": 401.17}
    bad = "== 1 failed in 2.00s ==\n=== 3 failed, 950 passed, 1 error, 2 skipped, 9 deselected in 500.50s ===\n"
    assert parse_pytest_summary(bad) == {"passed": 950, "failed": 3, "errors": 1, "skipped": 2,
                                         "pytest_seconds": 500.5}  # the last summary line
    assert parse_pytest_summary("make: *** [Makefile:9: .venv/.installed] Error 1\n") == {}


def _fake_make_test(log_text: str, rc: int, wall: float, cpu: float = 900.0):
    seen = {}

    def clone(tmp):
        seen["tmp"] = tmp
        (tmp / "x").mkdir()
        return "abc1234"

    def run(clone_dir, log_path):
        seen["clone"] = clone_dir
        log_path.write_text(log_text)
        return rc, wall, cpu

    return clone, run, seen


def test_make_test_bench_row_from_a_faked_run(monkeypatch, tmp_path):
    from xaibench.bench.make_test import bench_make_test

    monkeypatch.setenv("XAIBENCH_CACHE_DIR", str(tmp_path / "cache"))

    clone, run, seen = _fake_make_test("===== 955 passed, 22 warnings in 401.17s (0:06:41) =====\n", 0, 493.4)
    row = bench_make_test(run=run, clone=clone).iloc[0]
    assert seen["clone"] == seen["tmp"] / "x" and not seen["tmp"].exists()  # the clone is removed
    assert (row.commit, row.exit_status, row.wall_seconds, row.pytest_seconds) == ("abc1234", 0, 493.4, 401.17)
    assert row.setup_seconds == pytest.approx(92.2) and row.wall_minutes == pytest.approx(8.22)
    assert (row.passed, row.failed, row.errors, row.cpu_seconds, row.target_seconds) == (955, 0, 0, 900.0, 600)
    assert row.within_target and "clone" not in row.index  # a temporary path means nothing to a reader
    # over the target, or a failing suite, is not within it
    clone, run, _ = _fake_make_test("===== 955 passed in 560.00s =====\n", 0, 655.0)
    assert not bench_make_test(run=run, clone=clone).iloc[0].within_target
    assert row.failed_tests == "" and not (tmp_path / "cache").exists()  # a passing run's log is not kept
    log = ("[gw0] [ 85%] FAILED tests/test_reports.py::test_sources[12_x] \n"
           "=========================== short test summary info ============================\n"
           "FAILED tests/test_reports.py::test_sources[12_x] - AssertionError: 12_x.ipynb is stale\n"
           "===== 1 failed, 954 passed in 400.00s =====\n")
    clone, run, _ = _fake_make_test(log, 2, 490.0)
    row = bench_make_test(run=run, clone=clone).iloc[0]
    assert (row.failed, row.exit_status, row.within_target) == (1, 2, False)
    assert row.failed_tests == "tests/test_reports.py::test_sources[12_x]"
    assert (tmp_path / "cache" / "bench" / "make_test-abc1234.log").read_text() == log  # kept: the clone is gone


def test_make_test_bench_times_the_speed_probe_right_before_and_right_after_the_run():
    from xaibench.bench.make_test import bench_make_test

    order = []
    clone, run, _ = _fake_make_test("===== 955 passed in 400.00s =====\n", 0, 480.0)

    def logged_run(clone_dir, log_path):
        order.append("make test")
        return run(clone_dir, log_path)

    def probe():
        order.append("probe")
        return {1: 0.71, 3: 0.93}[len(order)]

    row = bench_make_test(run=logged_run, clone=clone, previous=lambda: None, probe=probe).iloc[0]
    assert order == ["probe", "make test", "probe"]
    assert (row.speed_probe_seconds_start, row.speed_probe_seconds_end) == (0.71, 0.93)
    # the default: the module's probe (the stand-in of this file's fixture)
    assert bench_make_test(run=run, clone=clone, previous=lambda: None).iloc[0].speed_probe_seconds_end == 0.5


def test_speed_probe_times_its_workload_on_one_core_and_is_nan_when_it_cannot_run(monkeypatch):
    import math

    from xaibench.bench import common

    seconds = common.speed_probe(repeats=1)
    assert 0 < seconds < 60 and seconds == round(seconds, 3)
    # the interpreter runs with one BLAS/OpenMP thread whatever the caller's settings
    assert common._ONE_THREAD == {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    monkeypatch.setattr(common.sys, "executable", "/nonexistent/python")
    assert math.isnan(common.speed_probe(repeats=1))  # a timing run does not fail for its probe
    with pytest.raises(ValueError, match="repeats must be at least 1"):
        common.speed_probe(repeats=0)


def test_probe_cells_show_start_and_end_or_say_not_recorded():
    from xaibench.bench.timings import probe_cell

    assert probe_cell(pd.Series({"speed_probe_seconds_start": 0.7149, "speed_probe_seconds_end": 0.9})) == "0.71 / 0.90"
    assert probe_cell(pd.Series({"speed_probe_seconds_start": 0.7, "speed_probe_seconds_end": ""})) == "0.70 / ?"
    assert probe_cell(pd.Series({"speed_probe_seconds_start": float("nan"),
                                 "speed_probe_seconds_end": float("nan")})) == "not recorded"
    assert probe_cell(pd.Series({"load_avg_1min_at_start": 0.1})) == "not recorded"  # a row from before the probe


def test_failed_tests_are_read_from_the_short_summary_only():
    from xaibench.bench.make_test import failed_tests

    log = ("[gw1] [ 40%] FAILED tests/a.py::test_one \n"
           "[gw0] [ 41%] ERROR tests/b.py::test_two \n"
           "FAILED tests/a.py::test_one - assert 1 == 2\n"
           "FAILED tests/c.py::test_dry_run[make cebab MODEL=nb] - RuntimeError: no\n"
           "ERROR tests/b.py::test_two - fixture 'x' not found\n"
           "FAILED tests/a.py::test_one - assert 1 == 2\n"
           "FAILED tests/d.py::test_three\n")
    assert failed_tests(log) == ["tests/a.py::test_one", "tests/c.py::test_dry_run[make cebab MODEL=nb]",
                                 "tests/b.py::test_two", "tests/d.py::test_three"]
    assert failed_tests("===== 955 passed in 401.17s =====\n") == []


def test_make_test_bench_names_a_run_without_a_pytest_summary_and_keeps_the_clone_when_asked(capsys, monkeypatch,
                                                                                              tmp_path):
    from xaibench.bench.make_test import bench_make_test

    monkeypatch.setenv("XAIBENCH_CACHE_DIR", str(tmp_path / "cache"))
    clone, run, seen = _fake_make_test("uv: no such file\nmake: *** [Makefile:107: .venv/.installed] Error 1\n",
                                       2, 12.0)
    with pytest.raises(RuntimeError, match=r"exit status 2\) printed no pytest summary(.|\n)*Makefile:107"):
        bench_make_test(run=run, clone=clone)
    assert not seen["tmp"].exists()
    assert "Makefile:107" in (tmp_path / "cache" / "bench" / "make_test-abc1234.log").read_text()  # the log is kept
    clone, run, seen = _fake_make_test("===== 955 passed in 400.00s =====\n", 0, 480.0)
    bench_make_test(keep=True, run=run, clone=clone)
    assert (seen["tmp"] / "make_test.log").exists() and str(seen["tmp"]) in capsys.readouterr().err
    shutil.rmtree(seen["tmp"])


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs git and a git checkout")
def test_make_test_bench_clones_head_with_the_data_mirror_beside_it(tmp_path, monkeypatch):
    from xaibench.bench import make_test

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", str(mirror))
    dest = tmp_path / "bench"
    dest.mkdir()
    commit = make_test.clone_head(dest)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    assert commit == head and (dest / "x" / "Makefile").exists()
    assert (dest / "shared" / "data").resolve() == mirror.resolve()  # ../shared/data from the clone


def test_a_report_rerun_on_stored_results_counts_the_cold_runs_time():
    """make_all_cold_times replaces a listed report's warm rerun time with the cold run's, marked cold; others stay."""
    import pandas as pd

    from xaibench.bench.make_all import one_cold_run, with_cold_times

    df = pd.DataFrame({"notebook": ["10_x", "20_y"], "wall_seconds": [300.0, 20.8], "make_run": ["A", "B"],
                       "cold_start": [True, False], "cpus": [2, 2], "cpu_model": ["m", "m"]})
    cold = pd.DataFrame({"notebook": ["20_y", "99_absent"], "wall_seconds": [2900.0, 1.0], "make_run": ["A", "C"],
                         "cpus": [2, 2], "cpu_model": ["m", "m"], "note": ["stopped at its last cell", "x"]})
    out = with_cold_times(df, cold)
    assert out["wall_seconds"].tolist() == [300.0, 2900.0] and out["make_run"].tolist() == ["A", "A"]
    assert out["time_from"].tolist() == ["report", "make_all_cold_times: stopped at its last cell"]
    assert one_cold_run(out) and not one_cold_run(df)


def test_make_test_bench_keeps_the_last_row_of_every_other_cpu(monkeypatch):
    from xaibench.bench.make_test import bench_make_test

    old = pd.DataFrame([{"commit": "aaa", "wall_minutes": 7.6, "cpu_model": "CPU B"},
                        {"commit": "bbb", "wall_minutes": 9.9, "cpu_model": "CPU A"},
                        {"commit": "ccc", "wall_minutes": 8.1, "cpu_model": "CPU B"}])
    import xaibench.device as device

    monkeypatch.setattr(device, "machine_info", lambda: {"cpus": 2, "cpu_model": "CPU A"})
    clone, run, _ = _fake_make_test("===== 955 passed in 400.00s =====\n", 0, 480.0)
    df = bench_make_test(run=run, clone=clone, previous=lambda: old)
    # the measuring CPU's row first (it replaces CPU A's), then the first-listed (latest) row of CPU B
    assert df["cpu_model"].tolist() == ["CPU A", "CPU B"] and df["commit"].tolist() == ["abc1234", "aaa"]
    assert bench_make_test(run=run, clone=clone, previous=lambda: None)["cpu_model"].tolist() == ["CPU A"]


def test_make_test_sentence_names_each_cpu_and_a_run_above_the_target():
    from xaibench.bench.timings import make_test_sentence

    rows = pd.DataFrame([{"commit": "abc1234", "wall_minutes": 13.8, "passed": 9, "failed": 0, "errors": 0,
                          "skipped": 2, "within_target": "False", "cpus": 2, "cpu_model": "AMD EPYC (family 25 model 1)"},
                         {"commit": "def5678", "wall_minutes": 7.6, "passed": 9, "failed": 0, "errors": 0,
                          "skipped": 0, "within_target": "True", "cpus": 2, "cpu_model": "AMD EPYC (family 26 model 2)"}])
    assert make_test_sentence(rows) == (
        "`make test` from a fresh clone, set-up included: 13.8 min for `abc1234` on an AMD EPYC "
        "(family 25 model 1), 2 cores (9 passed, 2 skipped; above the 10-min target); 7.6 min for `def5678` on an "
        "AMD EPYC (family 26 model 2), 2 cores (9 passed).")


def test_make_test_bench_repeats_run_one_fresh_clone_after_another(monkeypatch):
    from xaibench.bench.make_test import bench_make_test

    order, tmps = [], []
    walls = iter([540.0, 600.0, 660.0])

    def clone(tmp):
        order.append("clone")
        tmps.append(tmp)
        (tmp / "x").mkdir()
        return "abc1234"

    def run(clone_dir, log_path):
        assert not any(t.exists() for t in tmps[:-1])  # the earlier clones are gone before the next run starts
        order.append("make test")
        log_path.write_text("===== 955 passed in 400.00s =====\n")
        return 0, next(walls), 900.0

    def probe():
        order.append("probe")
        return 0.5

    df = bench_make_test(run=run, clone=clone, previous=lambda: None, probe=probe, repeats=3)
    assert order == ["clone", "probe", "make test", "probe"] * 3 and len(set(tmps)) == 3
    assert df["run"].tolist() == [1, 2, 3] and df["runs"].tolist() == [3, 3, 3]
    assert df["wall_minutes"].tolist() == [9.0, 10.0, 11.0]
    assert df["within_target"].tolist() == [True, True, False]  # 600 s is within the 10-min target, 660 s is not
    assert list(df.columns[:3]) == ["commit", "run", "runs"]
    with pytest.raises(ValueError, match="repeats must be at least 1"):
        bench_make_test(run=run, clone=clone, previous=lambda: None, repeats=0)


def test_make_test_bench_keeps_every_run_of_the_latest_commit_of_another_cpu(monkeypatch):
    from xaibench.bench.make_test import bench_make_test

    old = pd.DataFrame([{"commit": "ccc", "run": 1, "wall_minutes": 7.6, "cpu_model": "CPU B"},
                        {"commit": "ccc", "run": 2, "wall_minutes": 7.9, "cpu_model": "CPU B"},
                        {"commit": "bbb", "run": 1, "wall_minutes": 9.9, "cpu_model": "CPU A"},
                        {"commit": "aaa", "run": 1, "wall_minutes": 8.1, "cpu_model": "CPU B"}])
    import xaibench.device as device

    monkeypatch.setattr(device, "machine_info", lambda: {"cpus": 2, "cpu_model": "CPU A"})
    clone, run, _ = _fake_make_test("===== 955 passed in 400.00s =====\n", 0, 480.0)
    df = bench_make_test(run=run, clone=clone, previous=lambda: old)
    assert df["commit"].tolist() == ["abc1234", "ccc", "ccc"] and df["wall_minutes"].tolist()[1:] == [7.6, 7.9]


def _runs_of(commit, cpu, minutes, within, passed=None, failed=None):
    n = len(minutes)
    return [{"commit": commit, "run": i + 1, "runs": n, "wall_minutes": m, "passed": (passed or [9] * n)[i],
             "failed": (failed or [0] * n)[i], "errors": 0, "skipped": 0, "within_target": str(w), "cpus": 2,
             "cpu_model": cpu} for i, (m, w) in enumerate(zip(minutes, within))]


def test_make_test_sentence_gives_the_median_and_range_of_repeated_runs():
    from xaibench.bench.timings import make_test_groups, make_test_sentence

    a, b = "AMD EPYC (family 25 model 1)", "AMD EPYC (family 26 model 2)"
    rows = pd.DataFrame(_runs_of("abc1234", a, [11.0, 9.0, 10.0], [False, True, True])
                        + [{"commit": "def5678", "run": "", "runs": "", "wall_minutes": 7.6, "passed": 9, "failed": 0,
                            "errors": 0, "skipped": 0, "within_target": "True", "cpus": 2, "cpu_model": b}])
    assert [len(g) for g in make_test_groups(rows)] == [3, 1]
    assert make_test_sentence(rows) == (
        "`make test` from a fresh clone, set-up included: 10.0 min (median of 3 runs, 9.0-11.0) for "
        "`abc1234` on an AMD EPYC (family 25 model 1), 2 cores (9 passed each; 1 of 3 above the 10-min target); "
        "7.6 min for `def5678` on an AMD EPYC (family 26 model 2), 2 cores (9 passed).")
    # every run above the target, and runs whose outcomes differ, are said so; a single measurement names no commit
    one = pd.DataFrame(_runs_of("abc1234", a, [10.5, 12.0], [False, False], passed=[9, 8], failed=[0, 1]))
    assert make_test_sentence(one) == (
        "`make test` from a fresh clone, set-up included: 11.2 min (median of 2 runs, 10.5-12.0) on an "
        "AMD EPYC (family 25 model 1), 2 cores (run 1: 9 passed; run 2: 8 passed, 1 failed; all above the 10-min "
        "target).")
    # two measurements of one commit on one CPU (two invocations) stay two: each starts at run 1
    twice = pd.DataFrame(_runs_of("abc1234", a, [9.0], [True]) + _runs_of("abc1234", a, [9.5], [True]))
    assert [len(g) for g in make_test_groups(twice)] == [1, 1]
    # rows from before run numbers (a missing run, read as NaN or as an empty cell) are one measurement each
    for missing in (float("nan"), ""):
        old = pd.DataFrame(_runs_of("abc1234", a, [9.0, 9.5], [True, True])).assign(run=[missing, missing])
        assert [len(g) for g in make_test_groups(old)] == [1, 1]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_make_steps_bench_times_each_step_both_ways_and_counts_the_stamps(monkeypatch):
    """Each step is timed without and with bytecode (the sources compiled again at the end); the speed-up is the
    no-bytecode time over the row's; a dry run's processes are its stamp processes, one per report."""
    from xaibench.bench import make_steps

    state, calls = {"compiled": True}, []
    monkeypatch.setattr(make_steps, "_pycache", lambda root, compiled: (calls.append(compiled),
                                                                        state.update(compiled=compiled)))
    monkeypatch.setattr(make_steps, "_median_seconds", lambda cmd, root, env, repeats:
                        (1.0 if state["compiled"] else 4.0) * (2 if cmd[0] == "make" else 1))
    out = make_steps.bench_make_steps(repeats=1)
    assert calls == [False, True, True] and len(out) == 10
    assert set(out.loc[out.bytecode, "speedup_vs_no_bytecode"]) == {4.0}
    assert set(out.loc[~out.bytecode, "speedup_vs_no_bytecode"]) == {1.0}
    stamps = out.set_index(["step", "bytecode"])["processes"]
    # every notebook's report (notebook 02: one per classifier part) gets its stamp
    assert stamps[("make -n quick", True)] >= len(list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    assert stamps[("parameter stamp: python -m xaibench.paramstamp", True)] == 1


def test_infillers_bench_trains_both_kinds_each_way_and_compares_the_models(monkeypatch):
    """The separate way tokenises the training set once per kind, the shared way once; the models of both ways are
    compared byte for byte (here the same toy texts, so identical)."""
    from xaibench.bench import infillers
    from xaibench.data import cf_data
    from xaibench.models import cf_predictors

    from tests.helpers.toy_text import TEXTS, count_tokenizer_pipes

    frame = pd.DataFrame({"text": list(TEXTS) * 3, "label": [0, 1] * 3, "split": "train"})
    monkeypatch.setattr(cf_data, "load_cf_dataset", lambda name: frame.copy())
    piped = count_tokenizer_pipes(monkeypatch)

    class Clf:
        def fingerprint(self):
            return "toy"

        def predict(self, xs):
            return np.array([len(x) % 2 for x in xs])

    monkeypatch.setattr(cf_predictors, "get_predictor", lambda d, model, seed=42: Clf())
    out = infillers.bench_infillers(datasets=("imdb",), max_texts=4)
    assert piped == [4, 4, 4]  # separate: each kind; shared: once
    [row] = out.to_dict("records")
    assert row["n_texts"] == 4 and row["identical"] is True and row["predictor"] == "logreg"
    assert row["seconds_saved"] == pytest.approx(row["seconds_separate"] - row["seconds_shared"], abs=0.11)


def test_augmentation_overlap_bench_compares_each_repeat_with_the_in_loop_run_beside_it(monkeypatch):
    """Throughput: cells at once / the slowest cell's seconds after the first epoch; each repeat's ratio against the
    in-loop run of the same repeat, their mean, smallest and largest; identical: every cell's weights digest equals
    the in-loop cell's of the same repeat."""
    from xaibench.bench import augmentation_overlap as ao

    assert ao.throughput([{"epoch_seconds": [5.0, 2.0, 3.0]}, {"epoch_seconds": [1.0, 4.0, 4.0]}]) == 2 / 8
    # per (cells, ahead): the later-epoch seconds of each repeat's cells and their digests
    fake = {(1, False): [[10.0], [10.0]], (1, True): [[8.0], [12.5]],
            (2, False): [[20.0, 16.0], [20.0, 18.0]], (2, True): [[16.0, 10.0], [19.0, 20.0]]}
    calls = {k: 0 for k in fake}

    def run_cells(kinds, ahead, n_epochs):
        key = (len(kinds), ahead)
        secs = fake[key][calls[key]]
        calls[key] += 1
        return [{"epoch_seconds": [99.0, s], "wait_seconds": [3.0, 0.0 if ahead else 1.0],
                 "digest": "x" if (key == (2, True) and i == 1) else "d", "torch_threads": 2}
                for i, s in enumerate(secs)]

    monkeypatch.setattr(ao, "_run_cells", run_cells)
    df = ao.bench_augmentation_overlap(n_epochs=2, repeats=2)
    assert df.way.tolist() == ["in the loop (now)", "next epoch ahead in a thread"] * 2
    assert df.throughput_vs_in_loop.tolist() == [1.0, round((10 / 8 + 10 / 12.5) / 2, 3), 1.0,
                                                 round((20 / 16 + 20 / 20) / 2, 3)]
    assert df.throughput_min.tolist() == [1.0, 0.8, 1.0, 1.0] and df.throughput_max.tolist() == [1.0, 1.25, 1.0, 1.25]
    assert df.faster_in_every_repeat.tolist() == [False, False, False, False]
    assert df.identical_weights.tolist() == [True, True, True, False]
    assert df.waited_seconds_per_later_epoch.tolist() == [1.0, 0.0, 1.0, 0.0]   # the first epoch left out
    assert df.omp_wait_policy.tolist() == ["unset (spin)"] * 2 + ["PASSIVE"] * 2
    with pytest.raises(ValueError, match="n_epochs must be at least 2"):
        ao.bench_augmentation_overlap(n_epochs=1)


def test_augmentation_overlap_prepares_ahead_with_the_same_draws_and_trains_the_same_weights(monkeypatch):
    """The bench's loop with the next epoch's images prepared in a thread trains the weights of preparing them in the
    loop, bit for bit (the digest depends on the draws: another seed gives another)."""
    from xaibench.bench import augmentation_overlap as ao

    rng = np.random.default_rng(0)
    species = [f"s{i:02d}" for i in range(12)]
    images = {s: [rng.integers(0, 255, (24, 24, 3), dtype=np.uint8) for _ in range(40)] for s in species}
    monkeypatch.setattr("xaibench.data.birds.all_classes", lambda: list(species))
    monkeypatch.setattr("xaibench.data.birds.load_classes", lambda names, size=None: {n: images[n] for n in names})
    loop = ao.train_cell("noise", False, 3, profile="quick")
    ahead = ao.train_cell("noise", True, 3, profile="quick")
    assert ahead["digest"] == loop["digest"] and len(ahead["epoch_seconds"]) == 3
    assert ao.train_cell("noise", True, 3, seed=1, profile="quick")["digest"] != loop["digest"]


# make_paper: one paper's make targets cold in a fresh clone (the real run takes minutes to hours: here faked)
def _report(folder, stem: str, seconds: float, started: str, make_run: str, cold: bool = True) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["papermill"] = {"duration": seconds, "start_time": started, "parameters": {"seeds": "42 43"}}
    nb.metadata["xaibench"] = {"make_run": {"id": make_run, "cold_start": cold},
                               "machine": {"cpus": 2, "cpu_model": "CPU X", "gpu": "none", "xaibench_device": "auto"}}
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(folder / f"{stem}.ipynb"))


def test_make_paper_rows_are_the_reports_of_its_own_run_with_a_total_per_paper(tmp_path):
    from datetime import datetime, timezone

    from xaibench.bench import make_paper as mp

    folder = tmp_path / "reports" / "full"
    _report(folder, "23_counterfactual_faithfulness", 300.0, "2026-01-02T10:00:00+00:00", "run-b")
    _report(folder, "11_local_explainers", 60.0, "2026-01-02T10:05:00+00:00", "run-b")
    _report(folder, "21_human_grounded_evaluation", 900.0, "2026-01-02T10:06:00+00:00", "run-b")
    _report(folder, "25_attribution_gt_saliency", 4500.0, "2025-12-01T00:00:00+00:00", "run-a")  # a committed one
    run = mp.run_rows(folder, datetime(2026, 1, 2, 9, 59, tzinfo=timezone.utc))
    assert sorted(run["notebook"]) == ["11_local_explainers", "21_human_grounded_evaluation",
                                       "23_counterfactual_faithfulness"]
    ctx = {"targets": "human faithfulness", "commit": "abc1234", "make_seconds": 1300.0, "setup_seconds": 80.0,
           "cpus": 2, "cpu_model": "CPU X", "load_avg_1min_at_start": 0.1, "speed_probe_seconds_start": 0.7,
           "speed_probe_seconds_end": 0.9}
    hg, ge = "Human-grounded (Lertvittayakumjorn & Toni 2019)", "Counterfactual evaluation (Ge et al.)"
    df = mp.paper_rows(run, [hg, ge], ctx)
    assert df.columns.tolist() == mp.COLUMNS and set(df["other_papers_seconds"]) == {0.0}
    totals = df[df["notebook"].str.startswith("TOTAL")].set_index("paper")
    assert totals.loc["Human-grounded (Lertvittayakumjorn & Toni 2019)", "wall_seconds"] == 960.0
    assert totals.loc["Human-grounded (Lertvittayakumjorn & Toni 2019)", "notebook"] == "TOTAL (2 notebooks)"
    assert totals.loc["Counterfactual evaluation (Ge et al.)", "wall_seconds"] == 300.0
    assert totals["cold_start"].tolist() == [True, True] and set(df["commit"]) == {"abc1234"}
    assert df.loc[df["notebook"] == "21_human_grounded_evaluation", "wall_minutes"].item() == 15.0
    # a report of another make run in the same paper: the total is not one cold run
    mixed = run.assign(make_run=["run-b", "run-c", "run-b"])
    assert not mp.paper_rows(mixed, [hg, ge], ctx).query("notebook.str.startswith('TOTAL')",
                                                         engine="python")["cold_start"].all()
    # another paper's notebooks the targets ran first are not rows of this one: their seconds are said
    only_hg = mp.paper_rows(run, [hg], ctx)
    assert set(only_hg["paper"]) == {hg} and set(only_hg["other_papers_seconds"]) == {300.0}
    with pytest.raises(ValueError, match="no notebook or step of Scorecard"):
        mp.paper_rows(run, ["Scorecard (every protocol)"], ctx)


def test_make_paper_keeps_one_measurement_per_paper_and_kind_of_cpu():
    from xaibench.bench.make_paper import with_earlier

    prev = pd.DataFrame({"paper": ["A", "A", "B", "A"], "notebook": ["n1", "TOTAL", "TOTAL", "TOTAL"],
                         "cpu_model": ["X", "X", "X", "Y"], "wall_seconds": [1.0, 1.0, 2.0, 3.0]})
    new = pd.DataFrame({"paper": ["A"], "notebook": ["TOTAL"], "cpu_model": ["X"], "wall_seconds": [9.0]})
    out = with_earlier(new, prev)
    assert list(zip(out["paper"], out["cpu_model"], out["wall_seconds"])) == [("A", "X", 9.0), ("B", "X", 2.0),
                                                                             ("A", "Y", 3.0)]
    assert with_earlier(new, None).equals(new)


def test_make_paper_bench_sets_the_clone_up_then_times_the_targets_and_keeps_a_failed_clone(tmp_path, capsys):
    from datetime import datetime, timezone

    from xaibench.bench import make_paper as mp

    calls = []

    def clone(dest):
        _report(dest / "x" / "reports" / "full", "25_attribution_gt_saliency", 4500.0, "2025-12-01T00:00:00+00:00",
                "old")
        return "abc1234"

    def make(clone_dir, targets, log_path, rc=0):
        calls.append(list(targets))
        if targets != ["env", "data"]:
            now = datetime.now(timezone.utc).isoformat()
            _report(clone_dir / "reports" / "full", "23_counterfactual_faithfulness", 320.0, now, "new")
        return rc, (40.0 if targets == ["env", "data"] else 330.0)

    def probe():
        calls.append("probe")
        return 0.6 + 0.1 * calls.count("probe")

    df = mp.bench_make_paper(["faithfulness"], make=make, clone=clone, previous=lambda: None, probe=probe)
    # the probe runs right before and right after the paper's targets, not around the set-up
    assert calls == [["env", "data"], "probe", ["faithfulness"], "probe"]
    assert set(df["speed_probe_seconds_start"]) == {0.7} and set(df["speed_probe_seconds_end"]) == {0.8}
    assert df["notebook"].tolist() == ["23_counterfactual_faithfulness", "TOTAL (1 notebook)"]
    assert df["setup_seconds"].tolist() == [40.0, 40.0] and df["make_seconds"].tolist() == [330.0, 330.0]
    assert df["commit"].unique().tolist() == ["abc1234"] and df["cold_start"].all()
    with pytest.raises(RuntimeError, match="make faithfulness failed in the clone .exit status 2.; the clone and "):
        mp.bench_make_paper(["faithfulness"], make=lambda c, t, lp: make(c, t, lp, rc=0 if t == ["env", "data"] else 2),
                            clone=clone, previous=lambda: None)
    assert "are kept in" in capsys.readouterr().err
    assert mp.target_papers()["human"] == "Human-grounded (Lertvittayakumjorn & Toni 2019)"
    for bad in (["all"], ["test"], [], ["faithfulness", "PROFILE=quick"]):
        with pytest.raises(ValueError, match="make_paper"):
            mp.bench_make_paper(bad, make=make, clone=clone)


def test_timings_list_each_papers_fresh_clone_run_and_what_a_cpu_still_lacks(tmp_path):
    from xaibench.bench.make_all import PAPERS
    from xaibench.bench.timings import paper_runs_section

    assert paper_runs_section(tmp_path) == []  # no table, no section
    hg, ge = "Human-grounded (Lertvittayakumjorn & Toni 2019)", "Counterfactual evaluation (Ge et al.)"
    rows = [(hg, "21_human_grounded_evaluation", 900.0, "X"), (hg, "TOTAL (2 notebooks)", 960.0, "X"),
            (ge, "TOTAL (1 notebook)", 300.0, "X"), (ge, "TOTAL (1 notebook)", 240.0, "Y")]
    df = pd.DataFrame([{"paper": p, "notebook": n, "wall_seconds": s, "wall_minutes": round(s / 60, 1),
                        "targets": "t", "commit": "abc1234", "make_seconds": s + 60, "setup_seconds": 90.0,
                        "other_papers_seconds": 120.0 if p == hg else 0.0, "make_run": "r", "cold_start": True,
                        "cpus": 2, "cpu_model": f"AMD EPYC (family {c}, avx2)", "load_avg_1min_at_start": 0.1}
                       for p, n, s, c in rows])
    df.to_csv(tmp_path / "bench_make_paper.csv", index=False)
    text = "\n".join(paper_runs_section(tmp_path))
    assert f"| {hg} | 16.0 | AMD EPYC (family X), 2 cores | `abc1234` | yes | 17.0 | 1.5 | 2.0 | not recorded |" in text
    assert "21_human_grounded_evaluation" not in text  # TOTAL rows only
    missing_x = sorted(set(PAPERS.values()) - {hg, ge})
    assert f"AMD EPYC (family X): 2 papers, 21.0 min; not yet measured: {', '.join(missing_x)}." in text
    assert "AMD EPYC (family Y): 1 paper, 4.0 min; not yet measured:" in text


def test_run_children_names_the_cells_that_failed_with_their_exit_codes():
    """The child processes of the cores and augmentation_overlap benches: an unknown subcommand exits 2 (argparse)."""
    import os

    from xaibench.bench.cores import run_children

    with pytest.raises(RuntimeError, match=r"the nonsense cells failed with exit codes \[2, 2\]"):
        run_children([["nonsense"], ["nonsense"]], dict(os.environ), "the nonsense cells")
