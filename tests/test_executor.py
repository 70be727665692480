"""XAIBENCH_SCHEDULER: serial, local processes and Dask give the same results, in input order."""
from __future__ import annotations

import functools
import os

import numpy as np
import pandas as pd
import pytest

from xaibench import executor


def seeded_cell(seed: int, scale: float = 1.0) -> dict:
    """A cell whose result depends on seeded numpy and torch draws and on a torch reduction."""
    import torch

    from xaibench.utils import set_seed

    set_seed(seed)
    x = torch.randn(64, 32) * scale
    w = torch.nn.Linear(32, 8)(x).sum(0).detach()
    return {"seed": seed, "numpy": np.random.default_rng(seed).normal(size=5) + np.random.rand(5), "torch": w,
            "threads": torch.get_num_threads(), "pid": os.getpid()}


def failing_cell(seed: int) -> int:
    if seed == 2:
        raise ArithmeticError(f"cell {seed} failed")
    return seed


def run_time_class_cell(seed: int):
    """A cell whose result is an instance of a class built at run time, as the models' torch modules are
    (``_build_module``): :mod:`pickle` cannot pickle it, cloudpickle can."""
    import torch

    class Module(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.tensor([float(seed)]))

        def forward(self, x):
            return x * self.scale

    return {"seed": seed, "module": Module(), "pid": os.getpid()}


SEEDS = [5, 3, 11, 0, 7]


@pytest.fixture(scope="module", autouse=True)
def one_thread_per_worker():
    """Two workers on a two-core machine: one torch thread each (the Dask cluster is shared by the module)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XAIBENCH_THREADS", "1")
        yield
    executor.close_clients()


@pytest.fixture(scope="module")
def serial(one_thread_per_worker):
    return executor.get_executor("serial").map(functools.partial(seeded_cell, scale=2.0), SEEDS)


def _same(a: list[dict], b: list[dict]) -> None:
    assert [r["seed"] for r in a] == [r["seed"] for r in b] == SEEDS          # input order
    for x, y in zip(a, b):
        assert np.array_equal(x["numpy"], y["numpy"]) and x["torch"].dtype == y["torch"].dtype
        assert (x["torch"] == y["torch"]).all()                                # bit-identical
        assert x["threads"] == y["threads"]                                    # the driver's XAIBENCH_THREADS


def test_serial_is_a_plain_loop_in_this_process(serial):
    assert {r["pid"] for r in serial} == {os.getpid()}
    seen = []
    got = executor.get_executor("").map(functools.partial(seeded_cell, scale=2.0), SEEDS,
                                        on_result=lambda i, r: seen.append((i, r["seed"])))
    assert seen == list(enumerate(SEEDS))  # saved as each cell finishes, in order
    _same(got, serial)


def test_processes_give_the_serial_results_in_input_order(serial):
    seen = {}
    got = executor.get_executor("processes:2").map(functools.partial(seeded_cell, scale=2.0), SEEDS,
                                                    on_result=lambda i, r: seen.setdefault(i, r["seed"]))
    assert os.getpid() not in {r["pid"] for r in got}
    assert seen == dict(enumerate(SEEDS))
    _same(got, serial)
    with pytest.raises(ArithmeticError, match="cell 2 failed"):   # a cell's error is raised in the driver
        executor.get_executor("processes:2").map(failing_cell, [1, 2, 3])


@pytest.mark.parametrize("scheduler", ["processes:1", "dask-local:2"])  # one worker process is enough (and cheaper)
def test_results_may_hold_classes_built_at_run_time_and_cells_may_be_closures(scheduler):
    """A runner's cell may return a fitted model (Zhou et al.'s first attention run does): its module's class
    is built at run time, which :mod:`pickle` refuses ("Can't pickle local object"), so a cold notebook 13 failed
    under the default ``processes`` scheduler while Dask, which cloudpickles, passed."""
    import torch

    offset = 1.0
    got = executor.get_executor(scheduler).map(lambda s: {**run_time_class_cell(s), "offset": offset}, [2, 3])
    assert os.getpid() not in {r["pid"] for r in got}
    assert [r["module"](torch.ones(1)).item() + r["offset"] for r in got] == [3.0, 4.0]


class _Unloadable:
    """Pickles, but fails to unpickle (as a class of a module the workers cannot import does)."""

    def __reduce__(self):
        return (_refuse, ())


def _refuse():
    raise ModuleNotFoundError("No module named 'somewhere_only_the_driver_has'")


def test_a_cell_function_the_workers_cannot_load_is_named_not_a_dead_worker():
    with pytest.raises(RuntimeError, match=r"could not unpickle the cell function \(ModuleNotFoundError: No module "
                                           r"named 'somewhere_only_the_driver_has'\)"):
        executor.get_executor("processes:1").map(functools.partial(_with_payload, payload=_Unloadable()), [1, 3])


def _with_payload(seed: int, payload) -> int:
    return seed


def test_dask_local_gives_the_serial_results_in_input_order(serial):
    got = executor.get_executor("dask-local:2").map(functools.partial(seeded_cell, scale=2.0), SEEDS)
    assert os.getpid() not in {r["pid"] for r in got}
    assert len({r["pid"] for r in got}) <= 2
    _same(got, serial)
    with pytest.raises(ArithmeticError, match="cell 2 failed"):
        executor.get_executor("dask-local:2").map(failing_cell, [1, 2, 3])


def test_the_environment_variable_chooses_the_backend(monkeypatch):
    monkeypatch.delenv("XAIBENCH_SCHEDULER", raising=False)
    assert executor.get_executor().kind == "serial"
    monkeypatch.setenv("XAIBENCH_SCHEDULER", " Processes:3 ")
    assert (executor.get_executor().kind, executor.get_executor().arg) == ("processes", 3)
    monkeypatch.setenv("XAIBENCH_SCHEDULER", "dask-local:4")
    assert (executor.get_executor().kind, executor.get_executor().arg) == ("dask-local", 4)
    monkeypatch.setenv("XAIBENCH_SCHEDULER", "tcp://10.0.0.5:8786")
    assert (executor.get_executor().kind, executor.get_executor().arg) == ("dask", "tcp://10.0.0.5:8786")
    assert executor.get_executor("processes").arg is None
    assert executor.get_executor("").kind == executor.get_executor(" serial ").kind == "serial"


@pytest.mark.parametrize("value", ["dask", "processes:0", "processes:two", "dask-local", "dask-local:0",
                                   "threads:2", "10.0.0.5:8786", "tcp://"])
def test_a_bad_scheduler_is_named_with_its_value_and_the_allowed_forms(monkeypatch, value):
    monkeypatch.setenv("XAIBENCH_SCHEDULER", value)
    with pytest.raises(ValueError) as e:
        executor.get_executor()
    msg = str(e.value)
    assert msg.startswith(f"XAIBENCH_SCHEDULER={value!r}")
    assert "serial" in msg and "processes:N" in msg and "dask-local:N" in msg and "tcp://host:port" in msg


def test_workers_run_with_the_drivers_threads_and_project_root(monkeypatch):
    from xaibench.paths import project_root

    monkeypatch.setenv("XAIBENCH_THREADS", "3")
    monkeypatch.setenv("XAIBENCH_SCHEDULER", "dask-local:1")
    monkeypatch.delenv("XAIBENCH_HOME", raising=False)
    env = executor.worker_env()
    assert env["XAIBENCH_THREADS"] == "3" and "XAIBENCH_SCHEDULER" not in env
    assert env["XAIBENCH_HOME"] == str(project_root())


def test_workers_take_the_drivers_progress_mode(monkeypatch):
    # a worker is no kernel (its progress would be a tqdm bar), but its stderr reaches the notebook's cell
    from xaibench import progress

    monkeypatch.delenv("XAIBENCH_PROGRESS", raising=False)
    monkeypatch.delenv("XAIBENCH_QUIET", raising=False)
    monkeypatch.setattr(progress, "in_kernel", lambda: True)
    assert executor.worker_env()["XAIBENCH_PROGRESS"] == "text"
    monkeypatch.setattr(progress, "in_kernel", lambda: False)
    assert executor.worker_env()["XAIBENCH_PROGRESS"] == "bar"
    monkeypatch.setenv("XAIBENCH_PROGRESS", "off")  # an explicit choice is passed on as it is
    assert executor.worker_env()["XAIBENCH_PROGRESS"] == "off"


def test_processes_fit_the_cores_and_more_workers_than_fit_are_warned_about(monkeypatch):
    monkeypatch.setattr(executor.os, "cpu_count", lambda: 8)
    monkeypatch.setenv("XAIBENCH_THREADS", "2")
    assert executor.get_executor("processes").n_workers() == 4
    with pytest.warns(RuntimeWarning, match=r"5 workers x 2 threads per cell exceed the 8 cores.*at most 4"):
        assert executor.get_executor("processes:5").n_workers() == 5
    with pytest.warns(RuntimeWarning, match=r"dask-local:9: 9 workers"):
        assert executor.get_executor("dask-local:9").n_workers() == 9


def test_cells_that_keep_one_thread_busy_get_a_worker_per_core(monkeypatch):
    # cell_threads=1 (a mostly single-threaded cell, e.g. an editor chain): as many workers as cores, no
    # warning, while the workers keep XAIBENCH_THREADS torch threads (the results do not change)
    import warnings

    monkeypatch.setattr(executor.os, "cpu_count", lambda: 2)
    monkeypatch.setenv("XAIBENCH_THREADS", "2")
    ex = executor.get_executor("processes")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ex.n_workers(cell_threads=1) == 2
    assert executor.worker_env()["XAIBENCH_THREADS"] == "2"
    with pytest.warns(RuntimeWarning, match=r"3 workers x 1 threads per cell exceed the 2 cores.*at most 2"):
        assert executor.get_executor("processes:3").n_workers(cell_threads=1) == 3


def test_slots_say_how_many_cells_run_at_once_without_warning(monkeypatch):
    # what a runner reads to split its work across the workers (the editor chains: runner.chain_parts)
    import warnings

    monkeypatch.setattr(executor.os, "cpu_count", lambda: 8)
    monkeypatch.setenv("XAIBENCH_THREADS", "2")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert executor.get_executor("serial").slots(cell_threads=1) == 1
        assert executor.get_executor("processes").slots() == 4
        assert executor.get_executor("processes").slots(cell_threads=1) == 8
        assert executor.get_executor("processes:16").slots(cell_threads=1) == 16  # map() warns, once
        assert executor.get_executor("dask-local:3").slots() == 3


def env_cell(i: int) -> tuple[int, str | None]:
    return i, os.environ.get("OMP_WAIT_POLICY")


def test_two_cores_run_two_cells_side_by_side_and_their_threads_wait_without_spinning(monkeypatch):
    # bench_cores: two cells of 2 torch threads on 2 cores finish 1.15-1.23x as many cells as one at a time when
    # their threads sleep while waiting (OMP_WAIT_POLICY=PASSIVE), 0.52x when they spin (OpenMP's default)
    import warnings

    monkeypatch.setattr(executor.os, "cpu_count", lambda: 2)
    monkeypatch.setenv("XAIBENCH_THREADS", "2")
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert executor.get_executor("processes").n_workers() == 2
        assert executor.get_executor("processes:2").n_workers() == 2
    with pytest.warns(RuntimeWarning, match=r"3 workers x 2 threads per cell exceed the 2 cores.*at most 2"):
        executor.get_executor("processes:3").n_workers()
    assert executor.wait_policy(2) == "PASSIVE"               # 4 busy threads on 2 cores
    assert executor.wait_policy(1) is None                    # 2 on 2: OpenMP's default is faster (0.86x passive)
    assert executor.wait_policy(2, cell_threads=1) is None    # the editor chains: one busy core each
    monkeypatch.setattr(executor.os, "cpu_count", lambda: 8)
    assert executor.wait_policy(4) is None and executor.get_executor("processes").n_workers() == 4
    monkeypatch.setattr(executor.os, "cpu_count", lambda: 1)
    assert executor.get_executor("processes").n_workers() == 1
    monkeypatch.setattr(executor.os, "cpu_count", lambda: 2)
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")           # a value the user set is kept
    assert executor.wait_policy(2) is None
    # the spawned workers start with it (OpenMP reads it when torch loads); the driver's environment is unchanged
    monkeypatch.delenv("OMP_WAIT_POLICY")
    assert executor.get_executor("processes").map(env_cell, [0, 1]) == [(0, "PASSIVE"), (1, "PASSIVE")]
    assert "OMP_WAIT_POLICY" not in os.environ
    assert executor.get_executor("processes:1").map(env_cell, [0, 1]) == [(0, None), (1, None)]


def test_a_local_dask_clusters_workers_start_with_the_wait_policy(monkeypatch):
    monkeypatch.setattr(executor.os, "cpu_count", lambda: 2)
    monkeypatch.setenv("XAIBENCH_THREADS", "2")
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    executor.close_clients()  # a cluster started by an earlier test (one thread per cell) would be reused
    try:
        assert executor.get_executor("dask-local:2").map(env_cell, [0, 1]) == [(0, "PASSIVE"), (1, "PASSIVE")]
        assert "OMP_WAIT_POLICY" not in os.environ
    finally:
        executor.close_clients()


def test_processes_backend_passes_cell_threads_on(monkeypatch):
    seen = []
    monkeypatch.setattr(executor.Executor, "n_workers", lambda self, cell_threads=None: seen.append(cell_threads) or 1)
    out = executor.get_executor("processes").map(failing_cell, [1, 3, 4], cell_threads=1)
    assert out == [1, 3, 4] and seen == [1]


_DRIVER = """
import os, sys, time
from xaibench import executor

def cell(i):
    open(os.path.join(sys.argv[1], f"{os.getpid()}.pid"), "w").close()
    time.sleep(300)
    return i

if __name__ == "__main__":
    executor.Executor("processes:2").map(cell, [0, 1])
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return "\tZ" not in next(li for li in fh if li.startswith("State:"))  # a zombie has ended
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_workers_end_when_their_driver_is_killed(tmp_path):
    """kill -9 of a notebook's kernel left its `processes` workers running (about 0.8 GB each) for minutes."""
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)
    pids = tmp_path / "pids"
    pids.mkdir()
    env = {**os.environ, "XAIBENCH_PROGRESS": "off", "XAIBENCH_THREADS": "1"}
    driver = subprocess.Popen([sys.executable, str(script), str(pids)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        t0 = time.time()
        while len(list(pids.iterdir())) < 2 and time.time() - t0 < 60:
            time.sleep(0.1)
        workers = [int(p.stem) for p in pids.iterdir()]
        assert len(workers) == 2, "the workers did not start"
        driver.send_signal(signal.SIGKILL)
        driver.wait(10)
        t0 = time.time()
        while any(map(_alive, workers)) and time.time() - t0 < 10:
            time.sleep(0.1)
        assert not any(map(_alive, workers)), "a worker outlived its killed driver by 10 s"
    finally:
        driver.kill()
        for pid in [int(p.stem) for p in pids.iterdir()]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------------------------------------
# one real runner: Ge et al.'s seeds (a tiny Adult configuration), serial vs Dask
# ---------------------------------------------------------------------------------------------
TIMING = {"train_seconds", "seconds_per_explanation", "seconds_per_search"}


def _ge_run(monkeypatch, tmp_path, scheduler: str) -> pd.DataFrame:
    from xaibench.evaluation.cf_faithfulness import runner

    monkeypatch.setattr(runner.paths, "results_dir", lambda: tmp_path / scheduler)
    monkeypatch.setenv("XAIBENCH_SCHEDULER", scheduler)
    if scheduler != "serial":  # the seeds must run in the workers (a fresh import there), not here
        def in_driver(*args, **kw):
            raise AssertionError("run_seed ran in the driver")

        monkeypatch.setattr(runner, "run_seed", in_driver)
    saved = []
    real_save = runner.ResultStore.save

    def save(self, key, tables):  # the driver saves every seed
        saved.append((os.getpid(), key["seed"]))
        return real_save(self, key, tables)

    monkeypatch.setattr(runner.ResultStore, "save", save)
    cfg = runner.RunConfig(n_explain=3, ks=(1,), epochs=1, cont_steps=5, explainers=("random", "omission"),
                           selections=("absolute",))
    out = runner.run(["adult"], [1, 2], cfg)
    assert sorted(saved) == [(os.getpid(), 1), (os.getpid(), 2)]
    return out[~out["metric"].isin(TIMING)].reset_index(drop=True)


def test_ge_et_al_seeds_are_identical_serial_and_on_dask(monkeypatch, tmp_path):
    serial = _ge_run(monkeypatch, tmp_path, "serial")
    dask = _ge_run(monkeypatch, tmp_path, "dask-local:2")
    assert list(serial["seed"].unique()) == [1, 2] and len(serial) > 10
    pd.testing.assert_frame_equal(dask, serial, check_exact=True)


# ---------------------------------------------------------------------------------------------
# Zhou et al.'s text runs: (dataset, run) cells, the first run's model saved by the driver
# ---------------------------------------------------------------------------------------------
def _text_run(monkeypatch, tmp_path, scheduler: str):
    from xaibench.evaluation.attribution_gt import text_runner as tr

    from tests.test_attribution_gt_text import _df

    monkeypatch.setattr(tr.paths, "models_dir", lambda: tmp_path / scheduler)
    monkeypatch.setenv("XAIBENCH_SCHEDULER", scheduler)
    cfg = tr.TextConfig(n_train=60, n_val=10, n_test=12, seeds=(0, 1), kinds=("article", "cn"), hidden=4,
                        max_epochs=1, explainers=("random_words", "grad_x_input"), n_explain=2, n_probe=4)
    with monkeypatch.context() as mp:
        if scheduler != "serial":  # the cells must run in the workers (a fresh import there), not here
            mp.setattr(tr, "article_dataset", lambda *a: (_ for _ in ()).throw(AssertionError("ran in the driver")))
        table, keep = tr.run_attention(_df(), cfg)
    saved = {k: tr.load_attention(_df(), k, cfg)[0] for k in cfg.kinds}   # written by the driver
    return table.drop(columns=["seconds", "train_seconds", "epoch_history"]), keep, saved


@pytest.mark.slow  # ~20 s on 2 busy CPU cores (a Dask cluster of its own)
@pytest.mark.parametrize("scheduler", ["dask-local:2", "processes:2"])
def test_text_runs_are_identical_serial_and_in_parallel(monkeypatch, tmp_path, scheduler):
    import torch

    serial, keep_s, saved_s = _text_run(monkeypatch, tmp_path, "serial")
    dask, keep_d, saved_d = _text_run(monkeypatch, tmp_path, scheduler)
    assert list(serial["run"].unique()) == [0, 1] and set(serial["method"]) == {"attention", "random_words",
                                                                                  "grad_x_input"}
    pd.testing.assert_frame_equal(dask, serial, check_exact=True)
    assert list(keep_d) == list(keep_s) == ["article", "cn"]
    for kind in keep_s:
        for a, b, c in zip(keep_s[kind]["model"].module.state_dict().values(),
                           keep_d[kind]["model"].module.state_dict().values(),
                           saved_d[kind].module.state_dict().values()):
            assert torch.equal(a, b) and torch.equal(a, c)


# ---------------------------------------------------------------------------------------------
# Zhou et al.'s image runs: the jobs of _run_jobs (tiny synthetic species)
# ---------------------------------------------------------------------------------------------
def _image_jobs(monkeypatch, scheduler: str):
    from xaibench.evaluation.attribution_gt import image_runner as ir
    from xaibench.evaluation.attribution_gt import manipulations as mp

    rng = np.random.default_rng(0)
    images = {c: [rng.integers(0, 255, (20, 20, 3), dtype=np.uint8) for _ in range(6)] for c in ("a", "b", "c")}
    cfg = ir.ImageConfig(canvas=16, widths=(4,), epochs=2, batch_size=4, n_train=3, n_val=1, n_explain=2,
                         methods=("gradient", "cam"), track_methods=("gradient",))
    manip = mp.Manipulation("brightness", {"radius": 56, "shift": -0.3})
    jobs = [("er", ("a", "b"), manip, 1.0, True), ("r", ("a", "c"), manip, 0.5, False), ("er", ("b", "c"), manip, 1.0, False)]
    monkeypatch.setenv("XAIBENCH_SCHEDULER", scheduler)
    with monkeypatch.context() as mp_:
        if scheduler != "serial":  # the jobs must run in the workers (a fresh import there), not here
            mp_.setattr(ir, "run_one", lambda *a, **k: (_ for _ in ()).throw(AssertionError("ran in the driver")))
        runs, attr, track = ir._run_jobs(images, jobs, cfg, 3, "key", "image runs")
    timing = ["train_seconds", "seconds_per_image"]
    return tuple(t.drop(columns=timing, errors="ignore") for t in (runs, attr, track))


def test_image_jobs_are_identical_serial_and_on_dask(monkeypatch):
    serial = _image_jobs(monkeypatch, "serial")
    dask = _image_jobs(monkeypatch, "dask-local:2")
    assert serial[0]["seed"].tolist() == [3, 4, 5] and serial[0]["experiment"].tolist() == ["er", "r", "er"]
    assert len(serial[2]) and set(serial[1]["run"]) == {0, 1, 2}
    for s, d in zip(serial, dask):
        pd.testing.assert_frame_equal(d, s, check_exact=True)


# ---------------------------------------------------------------------------------------------
# CEBaB: (model, task, seed) cells of run_all, a scratch project with the quick profile
# ---------------------------------------------------------------------------------------------
def _cebab_run(monkeypatch, root, scheduler: str) -> pd.DataFrame:
    from xaibench.evaluation.cebab import runner

    (root / "data" / "processed").mkdir(parents=True)
    (root / "data" / "processed" / "cebab.parquet").symlink_to(
        runner.paths.processed_dir() / "cebab.parquet")
    monkeypatch.setenv("XAIBENCH_HOME", str(root))
    monkeypatch.setenv("XAIBENCH_PROFILE", "quick")
    monkeypatch.setenv("XAIBENCH_SCHEDULER", scheduler)
    saved = []
    real_save = runner.save_result

    def save_result(per, model, task, seed, name, **kw):
        saved.append((os.getpid(), seed, name))
        return real_save(per, model, task, seed, name, **kw)

    with monkeypatch.context() as mp:
        mp.setattr(runner, "save_result", save_result)
        if scheduler != "serial":  # the explainers must run in the workers (a fresh import there), not here
            mp.setattr(runner, "evaluate_one", lambda *a, **k: (_ for _ in ()).throw(AssertionError("in the driver")))
        out = runner.run_all(["logreg"], ["5-way"], [0, 1], ["random", "conexp"], profile="quick", absa_model=None)
    assert sorted(saved) == [(os.getpid(), s, e) for s in (0, 1) for e in ("conexp", "random")]  # the driver saves
    assert sorted(p.name for p in root.rglob("*.parquet") if "results" in str(p)) == ["conexp.parquet"] * 2 + [
        "random.parquet"] * 2
    return out.drop(columns=["seconds", "forward_passes"])


def test_cebab_cells_are_identical_serial_and_on_dask(monkeypatch, tmp_path):
    serial = _cebab_run(monkeypatch, tmp_path / "serial", "serial")
    dask = _cebab_run(monkeypatch, tmp_path / "dask", "dask-local:2")
    assert list(serial["seed"].unique()) == [0, 1] and set(serial["explainer"]) == {"random", "conexp"}
    assert len(serial) > 20
    pd.testing.assert_frame_equal(dask, serial, check_exact=True)


# ---------------------------------------------------------------------------------------------
# CEBaB classifiers (notebook 02): the seeds of one (model, task), fitted in workers, saved here
# ---------------------------------------------------------------------------------------------
def _cebab_training_run(monkeypatch, root, scheduler: str, cebab_parquet) -> list[dict]:
    from xaibench.models import cebab_training as ct

    (root / "data" / "processed").mkdir(parents=True)
    (root / "data" / "processed" / "cebab.parquet").symlink_to(cebab_parquet)
    monkeypatch.setenv("XAIBENCH_HOME", str(root))
    monkeypatch.setenv("XAIBENCH_SCHEDULER", scheduler)
    written = []
    real_store = ct._store_files

    def store_files(files, metrics):  # the driver writes every seed's model
        written.append((os.getpid(), metrics["seed"], sorted(files)))
        return real_store(files, metrics)

    with monkeypatch.context() as mp:
        mp.setattr(ct, "_store_files", store_files)
        if scheduler != "serial":  # the seeds must be fitted in the workers (a fresh import there), not here
            mp.setattr(ct, "_fit", lambda *a, **k: (_ for _ in ()).throw(AssertionError("fitted in the driver")))
        out = ct.train_cebab_seeds("lstm", "5-way", "exclusive", [1, 0, 1], profile="quick")
        again = ct.train_cebab_seeds("lstm", "5-way", "exclusive", [0, 1], profile="quick")  # stored: nothing runs
    if scheduler != "serial":
        assert sorted(written) == [(os.getpid(), s, ["config.json", "vocab.json", "weights.pt"]) for s in (0, 1)]
    assert [r.metrics["seed"] for r in out] == [1, 0] and [r.metrics["seed"] for r in again] == [0, 1]
    for r in out:  # the saved model is the one the metrics describe
        assert r.model.fingerprint() == r.metrics["fingerprint"] and (r.folder / "metrics.json").exists()
    return [{k: v for k, v in r.metrics.items() if k not in ("train_seconds", "history")} for r in out]


def test_cebab_seeds_train_identically_serial_and_on_dask(monkeypatch, tmp_path):
    from xaibench import paths

    cebab_parquet = paths.processed_dir() / "cebab.parquet"  # the project's, before XAIBENCH_HOME moves
    serial = _cebab_training_run(monkeypatch, tmp_path / "serial", "serial", cebab_parquet)
    dask = _cebab_training_run(monkeypatch, tmp_path / "dask", "dask-local:2", cebab_parquet)
    assert dask == serial and len({m["fingerprint"] for m in serial}) == 2


PARTS = [("lstm", "binary", "exclusive", [0, 1]), ("lstm", "5-way", "inclusive", [0]), ("lstm", "ternary", "exclusive", [1])]


def _cebab_parts_run(monkeypatch, root, pooled: bool, cebab_parquet) -> dict:
    """Notebook 02's parts trained as they are (a map of their own per part: train_cebab_seeds; a part of one seed
    in this process) or as the cells of one map (train_cebab_cells), with two worker processes; per cell what
    was trained: metrics, the weights' fingerprint and the dev-set probabilities."""
    from xaibench.models import cebab_training as ct

    (root / "data" / "processed").mkdir(parents=True)
    (root / "data" / "processed" / "cebab.parquet").symlink_to(cebab_parquet)
    monkeypatch.setenv("XAIBENCH_HOME", str(root))
    monkeypatch.setenv("XAIBENCH_SCHEDULER", "processes:2")
    maps = []
    real_get = executor.get_executor

    def recording(spec=None):
        ex = real_get(spec)
        real_map = ex.map
        ex.map = lambda fn, items, *a, **k: maps.append(list(items)) or real_map(fn, maps[-1], *a, **k)
        return ex

    with monkeypatch.context() as mp:
        mp.setattr(executor, "get_executor", recording)
        if pooled:
            out = ct.train_cebab_cells([(m, t, sp, s) for m, t, sp, ss in PARTS for s in ss], profile="quick")
        else:
            out = [r for m, t, sp, ss in PARTS for r in ct.train_cebab_seeds(m, t, sp, ss, profile="quick")]
    assert [len(items) for items in maps] == ([4] if pooled else [2])
    dev = ct.task_frames("binary", "exclusive", ct.get_profile("quick"))[1]["text"].tolist()
    got = {}
    for r in out:
        m = r.metrics
        assert r.model.fingerprint() == m["fingerprint"] and (r.folder / "metrics.json").exists()
        got[(m["task"], m["split"], m["seed"])] = (
            {k: v for k, v in m.items() if k not in ("train_seconds", "history")},
            [{k: v for k, v in e.items() if "second" not in k} for e in (m["history"] or {}).get("epochs", [])],
            r.model.predict_proba(dev).tobytes())
    return got


def test_notebook_02_parts_train_identically_in_one_pool_and_each_in_its_own(monkeypatch, tmp_path):
    """The classifiers of several notebook-02 parts trained as the cells of one map of the executor are bit for bit
    those each part trains with its own map (a single-seed part: in the driver)."""
    from xaibench import paths

    cebab_parquet = paths.processed_dir() / "cebab.parquet"  # the project's, before XAIBENCH_HOME moves
    parts = _cebab_parts_run(monkeypatch, tmp_path / "parts", False, cebab_parquet)
    pooled = _cebab_parts_run(monkeypatch, tmp_path / "pooled", True, cebab_parquet)
    assert list(parts) == list(pooled) == [("binary", "exclusive", 0), ("binary", "exclusive", 1),
                                           ("5-way", "inclusive", 0), ("ternary", "exclusive", 1)]
    assert pooled == parts
    assert len({m["fingerprint"] for m, _, _ in parts.values()}) == 4


def test_train_cebab_cells_hands_out_the_longest_cells_first(monkeypatch):
    from xaibench.models import cebab_training as ct

    sent = []

    class FakeExecutor:
        parallel = True

        def map(self, fn, items, desc=None, on_result=None, cell_threads=None):
            sent.extend(items)

    monkeypatch.setattr(executor, "get_executor", lambda spec=None: FakeExecutor())
    monkeypatch.setattr(ct, "_load_stored", lambda *a, **k: None)
    monkeypatch.setattr(ct, "train_cebab", lambda *a, **k: None)
    cells = [("lstm", "binary", "exclusive", 42), ("minilm", "binary", "exclusive", 42),
             ("minilm", "5-way", "inclusive", 42), ("minilm", "absa", "exclusive", 42),
             ("minilm", "binary", "exclusive", 43), ("minilm", "binary", "exclusive", 42)]
    ct.train_cebab_cells(cells, profile="quick")
    assert sent == [("minilm", "absa", "exclusive", 42), ("minilm", "5-way", "inclusive", 42),
                    ("minilm", "binary", "exclusive", 42), ("minilm", "binary", "exclusive", 43),
                    ("lstm", "binary", "exclusive", 42)]
    with pytest.raises(ValueError, match="split must be"):
        ct.train_cebab_cells([("lstm", "binary", "both", 1)])


def test_models_pool_cli_trains_every_parts_cells_in_one_call(monkeypatch, capsys, tmp_path):
    """`make models-pool` passes each notebook-02 report as --part MODEL TASK SPLIT "SEEDS" (here without
    --reports: every part), and records itself as make step models-pool with the number of cells it had to train (none stored: all three; one stored: two)."""
    import json

    from xaibench.models import cebab_training as ct

    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    monkeypatch.delenv("XAIBENCH_LEVERS", raising=False)

    got = []

    def fake_cells(cells, profile="full", **kw):
        got.append((list(cells), profile.name))
        return [ct.TrainedModel(None, {"model": m, "task": t, "split": sp, "seed": s, "dev_macro_f1": 0.5,
                                       "test_macro_f1": 0.25, "train_seconds": 3.0}, None) for m, t, sp, s in cells]

    monkeypatch.setattr(ct, "train_cebab_cells", fake_cells)
    monkeypatch.setenv("XAIBENCH_PROFILE", "quick")
    ct.main(["--profile", "quick", "--part", "lstm", "binary", "exclusive", "42 43", "--part", "minilm", "absa",
             "exclusive", "42"])
    assert got == [([("lstm", "binary", "exclusive", 42), ("lstm", "binary", "exclusive", 43),
                     ("minilm", "absa", "exclusive", 42)], "quick")]
    assert "minilm absa exclusive seed 42: dev macro-F1 0.500" in capsys.readouterr().out
    record = tmp_path / "reports" / "quick" / "steps" / "models-pool.json"
    rec = json.loads(record.read_text())
    assert rec["step"] == "models-pool" and rec["computed"] == 3
    assert rec["parameters"] == {"parts": ["lstm binary exclusive: 42 43", "minilm absa exclusive: 42"]}
    stored = {("lstm", "binary", "exclusive", 43)}
    monkeypatch.setattr(ct, "_load_stored", lambda m, t, sp, s, *a, **k: object() if (m, t, sp, s) in stored else None)
    ct.main(["--profile", "quick", "--part", "lstm", "binary", "exclusive", "42 43", "--part", "minilm", "absa",
             "exclusive", "42"])
    assert json.loads(record.read_text())["computed"] == 2
    stored |= {("lstm", "binary", "exclusive", 42), ("minilm", "absa", "exclusive", 42)}
    record.write_text(json.dumps({**json.loads(record.read_text()), "wall_seconds": 99.0}))
    ct.main(["--profile", "quick", "--part", "lstm", "binary", "exclusive", "42 43", "--part", "minilm", "absa",
             "exclusive", "42"])
    assert json.loads(record.read_text())["wall_seconds"] == 99.0  # nothing trained: the earlier record stays


# ---------------------------------------------------------------------------------------------
# Human-grounded questions (notebook 21): (dataset, CNN, method) cells, the saved CNNs in workers
# ---------------------------------------------------------------------------------------------
def _hg_run(monkeypatch, root, scheduler: str, processed) -> tuple[list, pd.DataFrame]:
    import cloudpickle

    from xaibench.evaluation import human_grounded as hg
    from xaibench.evaluation.human_grounded import pipeline

    (root / "data").mkdir(parents=True)
    (root / "data" / "processed").symlink_to(processed)
    monkeypatch.setenv("XAIBENCH_HOME", str(root))
    monkeypatch.setenv("XAIBENCH_PROFILE", "quick")
    monkeypatch.setenv("XAIBENCH_SCHEDULER", scheduler)
    setups = hg.prepare(["arxiv"], 0, quick=True)
    selections = hg.select_questions(setups, 4, 0)
    sent = []  # (cell function, cells) as the executor receives them
    real_get = executor.get_executor

    def recording(spec=None):
        ex = real_get(spec)
        real_map = ex.map
        ex.map = lambda fn, items, *a, **k: sent.append((fn, list(items))) or real_map(fn, sent[-1][1], *a, **k)
        return ex

    with monkeypatch.context() as mp:
        mp.setattr(executor, "get_executor", recording)
        if scheduler != "serial":  # the explainers must run in the workers (a fresh import there), not here
            mp.setattr(pipeline, "make_paper_explainer", lambda *a, **k: (_ for _ in ()).throw(AssertionError("driver")))
        questions, report, timings = hg.build_questions(setups, selections, ["random_w", "lime", "lrp_n", "dt"], 0, 20)
    assert list(timings["method"].unique()) == ["lime", "random_w", "lrp_n", "dt"]  # LIME's cells first
    assert timings.groupby(["dataset", "model"]).size().to_dict() == {("arxiv", "well"): 4, ("arxiv", "worse"): 4}
    # the dataset's fit texts travel once, with the cell function, not in each of the 8 cells (in the full profile
    # they made a 34 MiB Dask graph)
    (fn, cells), = sent
    fit = list(setups["arxiv"].fit_texts)
    assert fn.keywords["fit_texts"] == {"arxiv": fit} and len(cells) == 8
    assert max(len(cloudpickle.dumps(c)) for c in cells) * 10 < len(cloudpickle.dumps(fit))
    return questions, report.frame()


def test_human_grounded_questions_are_identical_serial_and_on_dask(monkeypatch, tmp_path):
    from xaibench import paths

    processed = paths.processed_dir()  # the project's, before XAIBENCH_HOME moves
    serial, dropped_s = _hg_run(monkeypatch, tmp_path / "serial", "serial", processed)
    dask, dropped_d = _hg_run(monkeypatch, tmp_path / "dask", "dask-local:2", processed)
    assert len(serial) > 8 and {q.method for q in serial} >= {"lime", "lrp_n"}
    assert dask == serial
    pd.testing.assert_frame_equal(dropped_d, dropped_s)


def test_stale_parts_are_the_reports_make_is_about_to_run(tmp_path):
    """The pool trains only the parts whose notebook-02 report make will rerun: missing, or older than its
    parameter stamp or a shared prerequisite (a missing prerequisite does not make it stale)."""
    import os

    from xaibench.models import cebab_training as ct

    reports, stamps = tmp_path / "reports", tmp_path / "stamps"
    reports.mkdir(), stamps.mkdir()
    nb = tmp_path / "02.ipynb"
    parts = [["lstm", "binary", "exclusive", "42"], ["minilm", "binary", "exclusive", "42 43"],
             ["minilm", "absa", "exclusive", "42"], ["lstm", "5-way", "inclusive", "42"]]

    def touch(p, t):
        p.write_text("x")
        os.utime(p, ns=(t, t))

    t0 = 1_700_000_000_000_000_000
    touch(nb, t0)
    for i, (m, t, sp, _) in enumerate(parts):
        name = ct.report_name(m, t, sp)
        touch(stamps / f"{name}.params", t0 + 10)
        if i != 0:  # the first report is missing
            touch(reports / f"{name}.ipynb", t0 + (5 if i == 1 else 20))  # the second is older than its stamp
    assert ct.report_name("lstm", "binary", "exclusive") == "02_train_classifier-lstm-binary-exclusive"
    got = ct.stale_parts(parts, reports, stamps, [nb, tmp_path / "absent"])
    assert got == parts[:2]
    touch(nb, t0 + 30)  # a newer notebook 02: every report reruns
    assert ct.stale_parts(parts, reports, stamps, [nb]) == parts


def test_models_pool_cli_with_reports_trains_only_the_stale_parts(monkeypatch, tmp_path):
    """`make models-pool` (before any notebook-02 report) passes --reports: the cells of the reports make is about
    to run train; when none is, nothing trains and the step record stays."""
    import json

    from xaibench.models import cebab_training as ct

    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    monkeypatch.delenv("XAIBENCH_LEVERS", raising=False)
    monkeypatch.setenv("XAIBENCH_PROFILE", "quick")
    got = []
    monkeypatch.setattr(ct, "train_cebab_cells", lambda cells, profile="full", **kw: got.append(list(cells)) or [])
    reports = tmp_path / "r"
    reports.mkdir()
    (reports / "02_train_classifier-lstm-binary-exclusive.ipynb").write_text("{}")
    argv = ["--profile", "quick", "--reports", str(reports), "--part", "lstm", "binary", "exclusive", "42 43",
            "--part", "minilm", "absa", "exclusive", "42"]
    ct.main(argv)
    assert got == [[("minilm", "absa", "exclusive", 42)]]
    record = tmp_path / "reports" / "quick" / "steps" / "models-pool.json"
    first = record.read_text()
    assert json.loads(first)["computed"] == 1
    (reports / "02_train_classifier-minilm-absa-exclusive.ipynb").write_text("{}")
    ct.main(argv)
    assert len(got) == 1, "every report is up to date: nothing to train"
    assert record.read_text() == first, "nothing trained: the record stays"


@pytest.mark.parametrize("parallel", [True, False])
def test_train_cebab_cells_without_load_reads_only_the_stored_metrics(monkeypatch, parallel):
    """load=False (the pool of `make models-pool`): the cells trained in the map are not loaded back, only their
    metrics read; serially, a cell not yet stored trains (train_cebab) and its result is returned as it is."""
    from xaibench.models import cebab_training as ct

    stored, trained = set(), []

    class FakeExecutor:
        def __init__(self):
            self.parallel = parallel

        def map(self, fn, items, desc=None, on_result=None, cell_threads=None):
            stored.update(items)

    def fake_stored(m, t, sp, s, prof, overrides, load=True):
        assert not load, "load=False must not load a classifier"
        return ct.TrainedModel(None, {"seed": s, "from": "store"}, None) if (m, t, sp, s) in stored else None

    def fake_train(m, t, sp, s, profile=None, **kw):
        trained.append((m, t, sp, s))
        stored.add((m, t, sp, s))
        return ct.TrainedModel(object(), {"seed": s, "from": "trained"}, None)

    monkeypatch.setattr(executor, "get_executor", lambda spec=None: FakeExecutor())
    monkeypatch.setattr(ct, "_load_stored", fake_stored)
    monkeypatch.setattr(ct, "train_cebab", fake_train)
    cells = [("lstm", "binary", "exclusive", 42), ("lstm", "binary", "exclusive", 43)]
    out = ct.train_cebab_cells(cells, profile="quick", load=False)
    assert [r.metrics["seed"] for r in out] == [42, 43]
    if parallel:
        assert not trained and all(r.model is None and r.metrics["from"] == "store" for r in out)
    else:
        assert trained == cells and all(r.metrics["from"] == "trained" for r in out)
