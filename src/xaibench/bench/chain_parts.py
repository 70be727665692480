"""``python -m xaibench.bench chain_parts``: Filandrianos et al.'s editor chains (notebook 22) in local worker
processes, the way they ran before -- one cell per (dataset, editor) run, so the longest run (TextFooler on
Newsgroups) is a floor -- and the way they run now, long runs split into parts, slices of their texts
(:func:`~xaibench.evaluation.cf_feedback.runner.chain_parts`) -> ``figures/tables/bench_chain_parts.csv``.

Two configurations, each at the full run's proportions (Newsgroups twice IMDb's texts, 9 edits, the full
profile's predictor and infillers: notebook 22's settings) at a fraction of its size (:data:`CONFIGS`):
notebook 22's six runs (three editors x two datasets; on 2 workers one cell per run is within a few percent of
an even share and :func:`chain_parts` leaves the runs whole: the split pays on more workers) and one editor's
two runs (the scorecard's run of an editor; the Newsgroups run is a floor even on 2 workers, which the split
removes).  Per configuration and path: the wall seconds of the whole map, the chains' own seconds summed over
the cells, the cells and how the runs were split, and whether the chains are bit-identical to the path before
(every column but the measured ``seconds``).  The chains go to a scratch result store (the project's is not
touched); the predictors and infillers are the project's (trained first where missing).
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pandas as pd

N_STEPS = 9
#: configuration -> its editors and texts per dataset (the full run's 500 IMDb / 1,000 Newsgroups texts, scaled down)
CONFIGS = {"notebook 22: 3 editors x 2 datasets": (("mice", "polyjuice", "textfooler"), {"imdb": 20, "newsgroups": 40}),
           "one editor x 2 datasets (scorecard)": (("textfooler",), {"imdb": 60, "newsgroups": 120})}


def _runs(editors, sample: dict[str, int], n_steps: int, quick_models: bool) -> list[dict]:
    from ..evaluation.cf_feedback.protocol import SETTINGS

    s = SETTINGS["quick" if quick_models else "full"]
    return [dict(dataset=d, editor=e, n_texts=n, n_steps=n_steps, predictor=s["predictor"], max_words=s["max_words"],
                 max_train=s["max_train"], lm_max_texts=s["lm_max_texts"],
                 infiller=s["mice_infiller"] if e == "mice" else "bigram")
            for d, n in sample.items() for e in editors]


def _timed(runs: list[dict], parts: int | None, scratch: str) -> tuple[float, list[tuple[pd.DataFrame, dict]]]:
    """Wall seconds and results of :func:`run_experiments` into the scratch store ``scratch``."""
    from .. import paths
    from ..evaluation.cf_feedback import runner as R

    real = paths.results_dir
    paths.results_dir = lambda: Path(scratch)
    try:
        t0 = time.perf_counter()
        out = R.run_experiments(runs, refresh=True, progress=False, parts=parts)
        return time.perf_counter() - t0, out
    finally:
        paths.results_dir = real


def bench_chain_parts(n_steps: int = N_STEPS, parts: int | None = None, quick_models: bool = False,
                      scheduler: str = "processes", configs: dict | None = None, scale: float = 1.0) -> pd.DataFrame:
    """The editor chains of every configuration (:data:`CONFIGS`, its texts times ``scale``) one cell per run,
    then split as ``run_experiments`` splits them (``parts``: None, its default; an integer forces that many parts
    per run), both under ``scheduler``.  ``quick_models``: the quick profile's small predictors and infillers (with
    a small ``scale``, ``n_steps`` and a forced ``parts``: a check that the bench runs, not a measurement)."""
    from ..device import load_average
    from ..executor import get_executor
    from .common import machine_context

    before = os.environ.get("XAIBENCH_SCHEDULER")
    os.environ["XAIBENCH_SCHEDULER"] = scheduler
    rows = []
    try:
        workers = get_executor().slots(cell_threads=1)
        for config, (editors, sample) in (configs or CONFIGS).items():
            sample = {d: max(1, round(n * scale)) for d, n in sample.items()}
            runs = _runs(editors, sample, n_steps, quick_models)
            ref = None
            for label, how in (("one cell per run (before)", 1), ("runs split into parts (now)", parts)):
                with tempfile.TemporaryDirectory(prefix="xaibench-bench-chains-") as tmp:
                    load0 = load_average()
                    wall, out = _timed(runs, how, tmp)
                chains = pd.concat([c.drop(columns="seconds") for c, _ in out], ignore_index=True)
                if ref is None:
                    ref = (wall, chains)
                split = {f"{s['dataset']}/{s['editor']}": s.get("n_parts", 1) for _, s in out}
                rows.append({"config": config, "path": label, "cells": sum(split.values()),
                             "parts_per_run": " ".join(f"{k}:{v}" for k, v in split.items()),
                             "wall_seconds": round(wall, 1),
                             "chain_seconds": round(sum(s["seconds"] for _, s in out), 1),
                             "speedup_vs_before": round(ref[0] / wall, 2),
                             "bit_identical_to_before": chains.equals(ref[1]),
                             "workers": workers, "scheduler": scheduler,
                             "texts": ", ".join(f"{d} {n}" for d, n in sample.items()), "n_steps": n_steps,
                             "models": "quick" if quick_models else "full",
                             **machine_context(), "load_avg_start": load0})
                print(rows[-1], flush=True)
    finally:
        if before is None:
            os.environ.pop("XAIBENCH_SCHEDULER", None)
        else:
            os.environ["XAIBENCH_SCHEDULER"] = before
    return pd.DataFrame(rows)
