"""``python -m xaibench.bench training [--models minilm lstm] [--tasks 5-way ...]``: one CEBaB
fine-tuning run per (model, task) on train_exclusive, each in a fresh subprocess that reports its
own peak RSS; records wall seconds, peak RSS and dev macro-F1 against the targets (a 5-way MiniLM
run <= 300 s wall and <= 3 GB RSS on 2 cores)."""
from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

import pandas as pd

from ..device import load_average

TARGETS = {("minilm", "5-way"): {"max_seconds": 300.0, "max_rss_gb": 3.0}}


def train_one(model: str, task: str, out: str) -> None:
    """Child process: train one model into a scratch folder, write its metrics as JSON to ``out``."""
    from ..models.cebab_training import train_cebab

    t0 = time.time()
    res = train_cebab(model, task, "exclusive", seed=42, profile="full", force=True)
    m = res.metrics
    with open(out, "w") as fh:
        json.dump({"wall_seconds": time.time() - t0,
                   "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2,  # KiB -> GiB
                   "train_seconds": m["train_seconds"],
                   "dev_macro_f1": m["dev_macro_f1"], "n_train": m["n_train"],
                   "epochs_run": len((m.get("history") or {}).get("epochs", [])) or None}, fh)


def bench_training(models: list[str], tasks: list[str]) -> pd.DataFrame:
    rows = []
    for model in models:
        for task in tasks:
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "m.json")
                env = dict(os.environ, XAIBENCH_PROFILE="bench", XAIBENCH_QUIET="1")
                # models land under reports/bench/... so the real ones are never overwritten
                t0 = time.time()
                proc = subprocess.run([sys.executable, "-m", "xaibench.bench", "_train_one", model, task, out],
                                      env=env)
                wall = time.time() - t0
                if proc.returncode != 0:
                    raise RuntimeError(f"benchmark run {model}/{task} failed (exit {proc.returncode})")
                with open(out) as fh:
                    m = json.load(fh)
            tgt = TARGETS.get((model, task), {})
            rows.append({"model": model, "task": task, "split": "train_exclusive", "n_train": m["n_train"],
                         "epochs_run": m["epochs_run"], "wall_seconds": round(wall, 1),
                         "train_seconds": round(m["train_seconds"], 1),
                         "peak_rss_gb": round(m["peak_rss_gb"], 2), "dev_macro_f1": round(m["dev_macro_f1"], 3),
                         "target_seconds": tgt.get("max_seconds"), "target_rss_gb": tgt.get("max_rss_gb"),
                         "cpus": os.cpu_count(), "machine": platform.machine(),
                         "load_avg_1min": load_average()})
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)
