"""``python -m xaibench.bench make_steps``: what every make invocation costs before any notebook runs ->
``figures/tables/bench_make_steps.csv``.

Each make run (``make -n`` too) checks every parameter once (``python -m xaibench.reports check``) and refreshes
the parameter stamp of every report it considers, one process per report (``python -m xaibench.paramstamp``).
Timed here: those two steps alone, what importing the package's report module costs (the import a stamp process
would pay without :mod:`xaibench.paramstamp`), and whole dry runs (``make -n quick``, ``make -n all``); each with
the project's sources compiled to bytecode (as ``make env`` and ``make test`` leave them) and without, with
``PYTHONDONTWRITEBYTECODE`` set, as it is where every process compiles what it imports.  ``processes`` counts
the stamp processes of a dry run.  The median of ``repeats`` runs.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

#: the parameter check make runs, with the Makefile's defaults of the parameters that import most
CHECK = ["-m", "xaibench.reports", "check", "PROFILE=full", "SEEDS=42 43 44", "MODEL=minilm", "MODELS=minilm lstm",
         "TASKS=binary ternary 5-way", "EXPLAINERS=", "XAIBENCH_DEVICE=", "XAIBENCH_LEVERS="]


def _pycache(root: Path, compiled: bool) -> None:
    """The project's sources and tests compiled (as ``make env`` leaves them), or with no bytecode at all."""
    if compiled:
        subprocess.run([sys.executable, "-m", "compileall", "-q", "-j0", "src", "tests"], cwd=root, check=True,
                       stdout=subprocess.DEVNULL)
    else:
        for d in [*(root / "src").rglob("__pycache__"), *(root / "tests").rglob("__pycache__")]:
            shutil.rmtree(d, ignore_errors=True)


def _median_seconds(cmd: list[str], root: Path, env: dict, repeats: int) -> float:
    secs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=root, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        secs.append(time.perf_counter() - t0)
    return statistics.median(secs)


def bench_make_steps(repeats: int = 9) -> pd.DataFrame:
    from .. import paths
    from .common import machine_context

    root = paths.project_root()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    report = root / "reports" / "full" / "23_counterfactual_faithfulness.ipynb"
    stamp = root / "data" / "cache" / "params" / "bench" / "23_counterfactual_faithfulness.params"
    steps = {
        "parameter stamp: python -m xaibench.paramstamp": [sys.executable, "-m", "xaibench.paramstamp", str(report),
                                                           str(stamp), "-p", "profile", "full", "-p", "seeds",
                                                           "42 43 44 45 46 47 48 49 50 51"],
        "import xaibench.reports (the package path)": [sys.executable, "-c", "import xaibench.reports"],
        "parameter check: python -m xaibench.reports check": [sys.executable, *CHECK],
        "make -n quick": ["make", "--no-print-directory", "-n", "quick"],
        "make -n all": ["make", "--no-print-directory", "-n", "all"],
    }
    n_stamps = {f"make -n {goal}": subprocess.run(["make", "--no-print-directory", "-n", goal], cwd=root, env=env,
                                                   capture_output=True, text=True, check=True).stdout
                .count("-m xaibench.paramstamp ") for goal in ("quick", "all")}
    rows = []
    try:
        for compiled in (False, True):
            _pycache(root, compiled)
            for step, cmd in steps.items():
                rows.append({"step": step, "bytecode": compiled, "repeats": repeats,
                             "seconds": _median_seconds(cmd, root, env, repeats),
                             "processes": n_stamps.get(step, 1)})
    finally:
        _pycache(root, True)
        shutil.rmtree(stamp.parent, ignore_errors=True)
    out = pd.DataFrame(rows)
    base = out[~out.bytecode].set_index("step")["seconds"]
    out["speedup_vs_no_bytecode"] = [base[s] / v for s, v in zip(out.step, out.seconds)]
    return out.assign(**machine_context())
