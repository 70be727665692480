"""Make steps: targets that run a module rather than a notebook (``make attention-gap``) record what they cost.

A step's record (``reports/<run>/steps/<name>.json``) holds its wall time, start, the ``make`` run and whether that
started cold, the machine and how many cells it computed; :mod:`xaibench.bench.make_all` counts it beside the
notebooks of its paper.  The ``make`` run is what the Makefile exports once per invocation (:func:`make_run`)."""
from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import io, paths
from .device import machine_info


def make_run() -> dict[str, Any] | None:
    """The ``make`` invocation running this process, as the Makefile sets it once per invocation
    (``XAIBENCH_MAKE_RUN``: its start time and process id; ``XAIBENCH_MAKE_COLD``: ``yes`` when it started
    with nothing in the profile's ``data/models``, ``data/results`` and ``data/studies`` and nothing computed
    in ``data/cache``); None outside ``make``."""
    run_id = os.environ.get("XAIBENCH_MAKE_RUN", "").strip()
    if not run_id:
        return None
    return {"id": run_id, "cold_start": os.environ.get("XAIBENCH_MAKE_COLD", "").strip() == "yes"}


#: the folder below a run's reports folder that holds its step records (``reports/<run>/steps/<name>.json``, read by
#: :mod:`xaibench.bench.make_all` beside the notebooks)
STEPS_DIR = "steps"


def now_iso() -> str:
    """The current UTC time as papermill writes a start time (ISO 8601, microseconds)."""
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def steps_dir() -> Path:
    """Where the active run's step records go: ``reports/full/steps`` in the full profile, else below the run's
    folder of :func:`xaibench.paths.run_dir` (``reports/quick/steps``, ``reports/levers-bf16/steps``)."""
    return paths.project_root() / "reports" / (paths.run_dir() or "full") / STEPS_DIR


def record_step(name: str, seconds: float, computed: int, started: str, parameters: dict | None = None) -> Path | None:
    """Record what a make step (a target running a module, like ``attention-gap``) cost: its wall ``seconds``,
    its start (ISO time), the make run and whether that started cold, the machine, and how many cells it
    ``computed``.  A step that computed nothing (every cell read from its store) leaves the earlier record as it
    is, as a report that is not stale is not run again; returns the record's path, or None when nothing was
    written."""
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):
        raise ValueError(f"step name {name!r}: use lower-case letters, digits and '-' (a make target's name)")
    if seconds < 0 or computed < 0:
        raise ValueError(f"step {name!r}: seconds={seconds!r} and computed={computed!r} must be >= 0")
    if computed == 0:
        return None
    run = make_run() or {}
    record = {"step": name, "wall_seconds": round(float(seconds), 1), "started": started, "computed": int(computed),
              "parameters": parameters or {}, "make_run": run.get("id", ""), "cold_start": run.get("cold_start"),
              "machine": machine_info()}
    return io.write_json(steps_dir() / f"{name}.json", record, indent=1, sort_keys=True)


class StepTimer:
    """What :func:`timed_step` yields: set :attr:`computed` to the number of cells the step computed."""

    def __init__(self) -> None:
        self.computed = 0


@contextlib.contextmanager
def timed_step(name: str, parameters: dict | None = None) -> Iterator[StepTimer]:
    """Time the body as make step ``name`` and record it (:func:`record_step`) when the body finishes; the body
    sets ``.computed`` on what this yields.  A body that raises records nothing."""
    t0, started, timer = time.time(), now_iso(), StepTimer()
    yield timer
    record_step(name, time.time() - t0, timer.computed, started, parameters)


def read_steps(folder: str | os.PathLike) -> list[dict]:
    """The step records of ``folder`` (a run's reports folder), each checked; a damaged or incomplete record is
    reported by name and skipped (the next run of its step writes it again)."""
    out = []
    for p in sorted((Path(folder) / STEPS_DIR).glob("*.json")):
        try:
            rec = json.loads(p.read_text())
            float(rec["wall_seconds"]), str(rec["step"]), dict(rec["machine"])
        except (ValueError, KeyError, TypeError) as e:
            print(f"skipping {p}: not a step record ({type(e).__name__}: {e}); `make {p.stem}` writes it again")
            continue
        out.append(rec)
    return out
