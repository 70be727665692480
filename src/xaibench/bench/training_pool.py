"""``python -m xaibench.bench training_pool``: notebook 02's CEBaB classifiers trained the way the reports train
them -- part by part (one model, task and split: one report), each part's seeds the cells of a map of their own
and a part of one seed in the driver, so a single-seed part and the last round of an odd number of seeds leave a
worker idle -- and the way ``make models-pool`` trains them, every part's cells in one map of the executor
(:func:`~xaibench.models.cebab_training.train_cebab_cells`) -> ``figures/tables/bench_training_pool.csv``.

The parts keep the shape of notebook 02's (an exclusive split of several seeds, an inclusive split and the ABSA
model of one seed each: :data:`PARTS`) on capped training sets (:data:`PROFILE`).  Per path: the wall seconds,
the cells' own training seconds summed, the maps, and whether every trained classifier is bit-identical to the
path before (its weights' fingerprint, its metrics but the seconds and its probabilities on the test texts).
Each path trains into a scratch project folder (the project's models are not touched).
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

import pandas as pd

from ..config import Profile

#: (model, task, split, seeds): the shape of notebook 02's reports, one of each kind
PARTS = (("minilm", "binary", "exclusive", (42, 43, 44)), ("minilm", "binary", "inclusive", (42,)),
         ("minilm", "absa", "exclusive", (42,)))
#: the full recipe on capped data: one epoch on 256 training texts, 128 dev and test texts
PROFILE = Profile("bench-pool", max_train=256, max_eval=128, max_epochs=1, patience=1)


def _digest(res) -> str:
    """What a trained classifier is: its weights' fingerprint, its stored metrics but the measured seconds, and its
    probabilities on the test texts."""
    from ..models.cebab_training import task_frames

    m = json.loads((res.folder / "metrics.json").read_text())
    m.pop("train_seconds")
    hist = m.get("history") or {}
    hist.pop("train_seconds", None)
    for e in hist.get("epochs", []):
        e.pop("seconds", None)
    test = task_frames(m["task"], m["split"], PROFILE)[2]
    proba = (res.model.predict_proba(test["text"], test["aspect"]) if m["task"] == "absa"
             else res.model.predict_proba(test["text"].tolist()))
    h = hashlib.sha256(json.dumps(m, sort_keys=True, default=str).encode())
    h.update(proba.tobytes())
    return m["fingerprint"] + h.hexdigest()[:16]


def _train(parts, pooled: bool, home: Path) -> tuple[float, int, dict, float]:
    """Wall seconds, executor maps, ``{cell: digest}`` and summed training seconds of one path in ``home``."""
    from .. import executor
    from ..models import cebab_training as ct

    maps = []
    real_get = executor.get_executor

    def counting(spec=None):
        ex = real_get(spec)
        real_map = ex.map
        ex.map = lambda fn, items, *a, **k: maps.append(1) or real_map(fn, items, *a, **k)
        return ex

    executor.get_executor = counting
    try:
        t0 = time.perf_counter()
        if pooled:
            out = ct.train_cebab_cells([(m, t, sp, s) for m, t, sp, ss in parts for s in ss], profile=PROFILE)
        else:  # as the reports do: one part after the other
            out = [r for m, t, sp, ss in parts for r in ct.train_cebab_seeds(m, t, sp, ss, profile=PROFILE)]
        wall = time.perf_counter() - t0
    finally:
        executor.get_executor = real_get
    digests = {(r.metrics["model"], r.metrics["task"], r.metrics["split"], r.metrics["seed"]): _digest(r) for r in out}
    return wall, len(maps), digests, sum(r.metrics["train_seconds"] for r in out)


def bench_training_pool(parts=PARTS, model: str | None = None, scheduler: str = "processes") -> pd.DataFrame:
    """Notebook 02's ``parts`` trained part by part, then as one pool, both under ``scheduler`` in scratch project
    folders.  ``model``: train every part with this model instead (``lstm``: a quick check that the bench runs)."""
    from .. import paths
    from ..device import load_average
    from ..executor import get_executor
    from .common import machine_context

    if model:
        parts = tuple((model, t, sp, ss) for _, t, sp, ss in parts)
    cebab = paths.processed_dir() / "cebab.parquet"
    saved = {k: os.environ.get(k) for k in ("XAIBENCH_HOME", "XAIBENCH_SCHEDULER")}
    rows, ref = [], None
    try:
        os.environ["XAIBENCH_SCHEDULER"] = scheduler
        workers = get_executor().slots()
        for label, pooled in (("each part its own map (before)", False), ("all parts in one map (models-pool)", True)):
            with tempfile.TemporaryDirectory(prefix="xaibench-bench-pool-") as tmp:
                (Path(tmp) / "data" / "processed").mkdir(parents=True)
                (Path(tmp) / "data" / "processed" / "cebab.parquet").symlink_to(cebab)
                os.environ["XAIBENCH_HOME"] = tmp
                load0 = load_average()
                wall, n_maps, digests, train_s = _train(parts, pooled, Path(tmp))
            if ref is None:
                ref = (wall, digests)
            rows.append({"path": label, "cells": len(digests), "executor_maps": n_maps,
                         "wall_seconds": round(wall, 1), "train_seconds": round(train_s, 1),
                         "speedup_vs_before": round(ref[0] / wall, 2),
                         "bit_identical_to_before": digests == ref[1],
                         "parts": " ".join(f"{m}/{t}/{sp}:{len(ss)}" for m, t, sp, ss in parts),
                         "profile": f"max_train {PROFILE.max_train}, max_eval {PROFILE.max_eval}, "
                                    f"{PROFILE.max_epochs} epoch",
                         "workers": workers, "scheduler": scheduler, **machine_context(), "load_avg_start": load0})
            print(rows[-1], flush=True)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return pd.DataFrame(rows)
