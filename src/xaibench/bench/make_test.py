"""What ``make test`` costs from a fresh clone: the README's second set-up command, timed as CI runs it.

The committed ``HEAD`` is cloned into a temporary folder (uncommitted changes are not part of it), the raw-data
mirror the project uses is linked beside the clone as ``../shared/data`` (the default mirror), and ``make test`` runs
there: it creates ``.venv``, copies and checks the data, then runs the suite with its notebook smoke runs.  One row:
the wall time of the whole command, pytest's own time (from its summary line), the rest (the environment, the data
and make's start-up), the CPU time of all processes, the pytest outcome counts, and whether the run stayed within
the 10-minute target, the node ids of the tests that failed (pytest's short summary), and the seconds of the speed
probe (:func:`~xaibench.bench.common.speed_probe`, a fixed one-core workload) just before and just after the run.
``repeats=N`` runs the whole command N times, one fresh clone after another, one row each (``run`` 1 .. N): the
suite's time on one kind of CPU moves from run to run, so one run says little about whether it stays within a target
near it.  The table keeps one measurement per kind of CPU: the measuring machine's rows replace its kind's earlier
ones.  Each clone is removed after its run (``keep=True`` keeps them and prints where); the log of a run that did not
pass is kept in ``data/cache/bench/`` and named.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import pandas as pd

from .. import paths
from .common import speed_probe

#: the fresh-clone ``make test`` target, seconds
TARGET_SECONDS = 600

_SUMMARY = re.compile(r"^=+ (?P<body>.*?) in (?P<secs>[0-9.]+)s(?: \([0-9:]+\))? =+$", re.M)
_FAILED = re.compile(r"^(?:FAILED|ERROR) (?P<test>.+?)(?: - .*)?$", re.M)
_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)")


def parse_pytest_summary(log: str) -> dict:
    """Outcome counts and seconds of pytest's last summary line (``=== 3 failed, 950 passed, 2 warnings in
    401.17s (0:06:41) ===``); ``{}`` when the log has none (pytest did not get to run)."""
    found = list(_SUMMARY.finditer(log))
    if not found:
        return {}
    last = found[-1]
    out = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "pytest_seconds": float(last["secs"])}
    for n, kind in _COUNT.findall(last["body"]):
        key = {"error": "errors", "warning": "warnings"}.get(kind, kind)
        if key in out:
            out[key] = int(n)
    return out


def failed_tests(log: str) -> list[str]:
    """The node ids pytest's short test summary names (``FAILED tests/x.py::test_y - AssertionError`` and ``ERROR``
    lines, each once, in order); a test's own progress line (``[gw0] [ 85%] FAILED ...``) is not a summary line."""
    return list(dict.fromkeys(m["test"] for m in _FAILED.finditer(log)))


def keep_log(log: str, commit: str) -> Path:
    """Write ``log`` to ``data/cache/bench/make_test-<commit>.log`` (atomically) and return the path."""
    from ..io import write_text

    dest = paths.cache_dir() / "bench" / f"make_test-{commit}.log"
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_text(dest, log)
    return dest


def clone_head(dest: Path) -> str:
    """Clone the project's committed HEAD into ``dest/x`` with the data mirror linked at ``dest/shared``;
    returns the commit."""
    root = paths.project_root()
    subprocess.run(["git", "clone", "--quiet", str(root), str(dest / "x")], check=True)
    mirror = paths.data_mirror()
    if mirror is not None:  # ../shared/data from the clone, as CI lays it out
        (dest / "shared").mkdir()
        (dest / "shared" / "data").symlink_to(mirror)
    return subprocess.run(["git", "-C", str(dest / "x"), "rev-parse", "--short", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def clean_env() -> dict[str, str]:
    """This process's environment without the project's switches (``XAIBENCH_*``), an active virtual environment,
    pytest's variables or the calling make's (``make bench``) job server: what a fresh clone's make runs with."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("XAIBENCH_", "VIRTUAL_ENV", "PYTEST", "MAKE", "MFLAGS"))}


def _make_test(clone: Path, log_path: Path) -> tuple[int, float, float]:
    """Run ``make test`` in ``clone``; returns the exit status, the wall seconds and the CPU seconds (user +
    system) of every process it started."""
    env = clean_env()
    before = os.times()
    t0 = time.perf_counter()
    with open(log_path, "w") as log:
        rc = subprocess.run(["make", "test"], cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    wall = time.perf_counter() - t0
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return rc, wall, cpu


def with_other_cpus(new: pd.DataFrame, previous: pd.DataFrame | None) -> pd.DataFrame:
    """``new`` (the measuring machine's rows) first, then the latest measurement of every other kind of CPU in
    ``previous`` (the table as it was: the rows of the first-listed commit of that CPU, all its runs): a suite's
    time depends on the CPU, so each kind keeps its own last measurement."""
    if previous is None or not len(previous) or "cpu_model" not in previous.columns:
        return new.reset_index(drop=True)
    others = previous[~previous["cpu_model"].isin(set(new["cpu_model"]))]
    if "commit" in others.columns:
        latest = others.drop_duplicates("cpu_model").set_index("cpu_model")["commit"]
        others = others[others["commit"].astype(str) == others["cpu_model"].map(latest).astype(str)]
    else:
        others = others.drop_duplicates("cpu_model")
    return pd.concat([new, others], ignore_index=True)


def _previous() -> pd.DataFrame | None:
    """The committed ``bench_make_test.csv``, or None (missing or unreadable)."""
    path = paths.tables_dir() / "bench_make_test.csv"
    try:
        return pd.read_csv(path, dtype={"commit": str})
    except (OSError, ValueError):
        return None


def bench_make_test(keep: bool = False, run: Callable[[Path, Path], tuple[int, float, float]] = _make_test,
                    clone: Callable[[Path], str] = clone_head,
                    previous: Callable[[], pd.DataFrame | None] = _previous,
                    probe: Callable[[], float] | None = None, repeats: int = 1) -> pd.DataFrame:
    """Time ``make test`` in ``repeats`` fresh clones of ``HEAD``, one after another (see the module docstring): the
    measuring machine's rows first (``run`` 1 .. ``repeats``), then the latest rows of each other kind of CPU
    already in the table (:func:`with_other_cpus`)."""
    from ..device import machine_info, load_average

    if int(repeats) < 1:
        raise ValueError(f"repeats must be at least 1 (got {repeats!r}): the number of fresh-clone runs of make test")
    probe = probe or speed_probe
    info = machine_info()
    rows = []
    for i in range(1, int(repeats) + 1):
        row = _one_run(keep, run, clone, probe, load_average)
        rows.append({**row, "run": i, "runs": int(repeats), "cpus": info["cpus"], "cpu_model": info["cpu_model"]})
    new = pd.DataFrame(rows)
    rest = [c for c in new.columns if c not in ("commit", "run", "runs", "cpus", "cpu_model")]
    at = rest.index("load_avg_1min_at_start")
    new = new[["commit", "run", "runs", *rest[:at], "cpus", "cpu_model", *rest[at:]]]
    return with_other_cpus(new, previous())


def _one_run(keep: bool, run, clone, probe, load_average) -> dict:
    """One fresh clone, ``make test`` in it with the speed probe right before and right after; its row."""
    tmp = Path(tempfile.mkdtemp(prefix="xaibench-make-test-"))
    try:
        commit = clone(tmp)
        log_path = tmp / "make_test.log"
        probe0, load0 = probe(), load_average()
        rc, wall, cpu = run(tmp / "x", log_path)
        probe1 = probe()
        log = log_path.read_text(errors="replace") if log_path.exists() else ""
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    summary = parse_pytest_summary(log)
    if not summary:
        tail = "\n".join(log.splitlines()[-15:])
        raise RuntimeError(f"make test (exit status {rc}) printed no pytest summary (its log is kept in "
                           f"{keep_log(log, commit)}); the end of its output:\n{tail}")
    failed = failed_tests(log)
    if rc != 0 or failed:
        print(f"make test did not pass (exit status {rc}); its log is kept in {keep_log(log, commit)}", file=sys.stderr)
    if keep:
        print(f"the clone and its make_test.log are kept in {tmp}", file=sys.stderr)
    pytest_s = summary["pytest_seconds"]
    return {"commit": commit, "exit_status": rc, "wall_seconds": round(wall, 1), "wall_minutes": round(wall / 60, 2),
            "pytest_seconds": pytest_s, "setup_seconds": round(wall - pytest_s, 1), "cpu_seconds": round(cpu, 1),
            **{k: summary[k] for k in ("passed", "failed", "errors", "skipped")},
            "target_seconds": TARGET_SECONDS, "within_target": bool(rc == 0 and wall <= TARGET_SECONDS),
            "failed_tests": "; ".join(failed), "load_avg_1min_at_start": load0,
            "speed_probe_seconds_start": probe0, "speed_probe_seconds_end": probe1}


__all__ = ["bench_make_test", "clean_env", "clone_head", "failed_tests", "keep_log", "parse_pytest_summary",
           "with_other_cpus", "TARGET_SECONDS"]
