"""``python -m xaibench.bench make_paper --targets <make targets>``: what one paper costs cold from a fresh clone,
on the measuring CPU, without touching the project's reports -> ``figures/tables/bench_make_paper.csv``.

The committed ``HEAD`` is cloned into a temporary folder with the raw-data mirror linked beside it (as
``bench make_test`` does), ``make env data`` sets it up (timed apart), then ``make <targets>`` runs the paper's
notebooks in the full profile with nothing stored: the clone has no trained model, stored result or cache.  The
reports and make steps that invocation wrote (read as ``bench make_all`` reads ``reports/full``) give one row per
notebook and a TOTAL row per paper, each with the seconds of the speed probe (a fixed one-core workload,
:func:`~xaibench.bench.common.speed_probe`) just before and just after ``make <targets>``: how fast the CPU ran.
The project's committed reports, and so ``bench_make_all``, stay as they are.

The table keeps, for each paper, one measurement per kind of CPU: a paper's new rows replace its earlier rows of the
measuring CPU's kind, and every other paper's or CPU's rows stay.  Once every paper has rows of one kind of CPU, their
TOTALs add up to a cold ``make all`` on that CPU.  The clone is removed afterwards (``keep=True`` keeps it)."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from .. import paths
from .common import speed_probe

#: the columns of a row, in order
COLUMNS = ["paper", "notebook", "wall_seconds", "wall_minutes", "targets", "commit", "make_seconds", "setup_seconds",
           "other_papers_seconds", "make_run", "cold_start", "cpus", "cpu_model", "load_avg_1min_at_start",
           "speed_probe_seconds_start", "speed_probe_seconds_end"]


def target_papers() -> dict[str, str]:
    """The paper of each make target this bench times (the Makefile's paper targets and their parts)."""
    from .make_all import ATTRIBUTION_GT, CEBAB, CF_FEEDBACK, FAITHFULNESS, HUMAN, SCORECARD

    return {"foundation": CEBAB, "stats": CEBAB, "models": CEBAB, "models-pool": CEBAB, "cebab": CEBAB,
            "human": HUMAN, "cf-feedback": CF_FEEDBACK, "faithfulness": FAITHFULNESS, "ge": FAITHFULNESS,
            "attribution-gt": ATTRIBUTION_GT, "attention-gap": ATTRIBUTION_GT, "attention-length": ATTRIBUTION_GT,
            "scorecard": SCORECARD}


def _make(clone: Path, targets: Sequence[str], log_path: Path) -> tuple[int, float]:
    """Run ``make <targets>`` in ``clone`` (appending to ``log_path``); its exit status and wall seconds."""
    from .make_test import clean_env

    t0 = time.perf_counter()
    with open(log_path, "a") as log:
        rc = subprocess.run(["make", *targets], cwd=clone, env=clean_env(), stdout=log,
                            stderr=subprocess.STDOUT).returncode
    return rc, time.perf_counter() - t0


def run_rows(folder: Path, since: datetime) -> pd.DataFrame:
    """The reports and make steps of ``folder`` (a ``reports/full``) that started at or after ``since``: one row per
    notebook or step (columns of :func:`~xaibench.bench.make_all.report_rows`)."""
    from .make_all import executed_rows

    df = pd.DataFrame(executed_rows(folder))
    started = pd.to_datetime(df["started"], utc=True, errors="coerce", format="ISO8601")
    return df[started >= pd.Timestamp(since)].reset_index(drop=True)


def paper_rows(run: pd.DataFrame, papers: Sequence[str], context: dict) -> pd.DataFrame:
    """``run`` (:func:`run_rows`) as the table's rows for ``papers`` (those the targets are for): each notebook, then
    a TOTAL per paper (the sum of its notebooks' and steps' wall seconds; cold when every row ran in one make run that
    started cold), each with ``context`` (targets, commit, make and set-up seconds, machine).  Notebooks of other
    papers the targets ran first (``make human`` trains notebook 02's 5-way classifiers when they are absent) are not
    rows: they count under their own paper, and ``other_papers_seconds`` says how long they took."""
    from .make_all import make_run_of, one_cold_run, what_it_sums

    mine = run["paper"].isin(list(papers))
    other_s = round(float(run.loc[~mine, "wall_seconds"].sum()), 1)
    out = []
    for paper, part in run[mine].groupby("paper", sort=False):
        for r in part.itertuples():
            out.append({"paper": paper, "notebook": r.notebook, "wall_seconds": float(r.wall_seconds),
                        "make_run": r.make_run, "cold_start": bool(r.cold_start) if r.cold_start is not None else None})
        out.append({"paper": paper, "notebook": f"TOTAL ({what_it_sums(part)})",
                    "wall_seconds": round(float(part["wall_seconds"].sum()), 1), "make_run": make_run_of(part),
                    "cold_start": one_cold_run(part)})
    if not out:
        raise ValueError(f"the run wrote no notebook or step of {', '.join(papers)}")
    df = pd.DataFrame(out).assign(**context, other_papers_seconds=other_s)
    df["wall_minutes"] = (df["wall_seconds"] / 60).round(1)
    return df[COLUMNS]


def with_earlier(new: pd.DataFrame, previous: pd.DataFrame | None) -> pd.DataFrame:
    """``new`` first, then every row of ``previous`` (the table as it was) but those of a paper ``new`` measured on
    the same kind of CPU: each paper keeps one measurement per kind of CPU."""
    if previous is None or not len(previous):
        return new.reset_index(drop=True)
    replaced = set(zip(new["paper"], new["cpu_model"]))
    keep = [(p, c) not in replaced for p, c in zip(previous["paper"], previous["cpu_model"])]
    return pd.concat([new, previous[keep]], ignore_index=True)


def _previous() -> pd.DataFrame | None:
    """The committed ``bench_make_paper.csv``, or None (missing or unreadable)."""
    try:
        return pd.read_csv(paths.tables_dir() / "bench_make_paper.csv", dtype={"commit": str})
    except (OSError, ValueError):
        return None


def bench_make_paper(targets: Sequence[str], keep: bool = False,
                     make: Callable[[Path, Sequence[str], Path], tuple[int, float]] = _make,
                     clone: Callable[[Path], str] | None = None,
                     previous: Callable[[], pd.DataFrame | None] = _previous,
                     probe: Callable[[], float] | None = None) -> pd.DataFrame:
    """Time ``make <targets>`` cold in a fresh clone of ``HEAD`` (see the module docstring); the speed probe
    (:func:`~xaibench.bench.common.speed_probe`) runs just before and just after ``make <targets>``."""
    from ..device import load_average, machine_info
    from .make_test import clone_head

    targets = [t for t in targets if t]
    known = target_papers()
    if not targets:
        raise ValueError("make_paper needs at least one make target, e.g. --targets faithfulness")
    bad = [t for t in targets if t not in known]
    if bad:
        raise ValueError(f"make_paper times a paper's make targets ({', '.join(known)}), not "
                         f"{', '.join(map(repr, bad))}")
    papers = list(dict.fromkeys(known[t] for t in targets))
    tmp = Path(tempfile.mkdtemp(prefix="xaibench-make-paper-"))
    try:
        commit = (clone or clone_head)(tmp)
        log_path = tmp / "make_paper.log"
        rc, setup_s = make(tmp / "x", ["env", "data"], log_path)
        if rc != 0:
            raise RuntimeError(f"make env data failed in the clone (exit status {rc}); see {log_path}")
        probe = probe or speed_probe
        probe0, load0 = probe(), load_average()
        since = datetime.now(timezone.utc)
        rc, make_s = make(tmp / "x", targets, log_path)
        probe1 = probe()
        if rc != 0:
            keep = True
            raise RuntimeError(f"make {' '.join(targets)} failed in the clone (exit status {rc}); the clone and its "
                               f"log are kept: {log_path}")
        run = run_rows(tmp / "x" / "reports" / "full", since)
    finally:
        if keep:
            print(f"the clone and its make_paper.log are kept in {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if not len(run):
        raise RuntimeError(f"make {' '.join(targets)} ran no notebook or step in the clone")
    info = machine_info()
    context = {"targets": " ".join(targets), "commit": commit, "make_seconds": round(make_s, 1),
               "setup_seconds": round(setup_s, 1), "cpus": info["cpus"], "cpu_model": info["cpu_model"],
               "load_avg_1min_at_start": load0, "speed_probe_seconds_start": probe0, "speed_probe_seconds_end": probe1}
    return with_earlier(paper_rows(run, papers, context), previous())


__all__ = ["bench_make_paper", "paper_rows", "run_rows", "target_papers", "with_earlier", "COLUMNS"]
