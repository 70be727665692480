"""Benchmarks (``make bench``): wall time and peak memory, written to ``figures/tables/bench_*.csv``.

``python -m xaibench.bench training [--models minilm lstm] [--tasks 5-way ...]`` runs one
fine-tuning run per (model, task) on train_exclusive in a fresh subprocess (so peak RSS is the
run's own) and records wall seconds, peak RSS and dev macro-F1.  Targets (issue #2): a 5-way
MiniLM run <= 300 s wall and <= 3 GB RSS on 2 cores.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

import pandas as pd

from . import paths
from .io import write_csv

TARGETS = {("minilm", "5-way"): {"max_seconds": 300.0, "max_rss_gb": 3.0}}


def _train_one(model: str, task: str, out: str) -> None:
    """Child process: train one model into a scratch folder, print metrics as JSON."""
    from .models.cebab_training import train_cebab

    t0 = time.time()
    res = train_cebab(model, task, "exclusive", seed=42, profile="full", force=True)
    m = res.metrics
    with open(out, "w") as fh:
        json.dump({"wall_seconds": time.time() - t0, "train_seconds": m["train_seconds"],
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
                rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024**2  # KiB -> GiB
                if proc.returncode != 0:
                    raise RuntimeError(f"benchmark run {model}/{task} failed (exit {proc.returncode})")
                m = json.load(open(out))
            tgt = TARGETS.get((model, task), {})
            rows.append({"model": model, "task": task, "split": "train_exclusive", "n_train": m["n_train"],
                         "epochs_run": m["epochs_run"], "wall_seconds": round(wall, 1),
                         "train_seconds": round(m["train_seconds"], 1),
                         "peak_rss_gb": round(rss, 2), "dev_macro_f1": round(m["dev_macro_f1"], 3),
                         "target_seconds": tgt.get("max_seconds"), "target_rss_gb": tgt.get("max_rss_gb"),
                         "cpus": os.cpu_count(), "machine": platform.machine()})
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m xaibench.bench")
    sub = ap.add_subparsers(dest="cmd", required=True)
    tr = sub.add_parser("training", help="one fine-tuning run per model and task")
    tr.add_argument("--models", nargs="+", default=["minilm", "lstm"])
    tr.add_argument("--tasks", nargs="+", default=["binary", "ternary", "5-way"])
    one = sub.add_parser("_train_one")
    one.add_argument("model"); one.add_argument("task"); one.add_argument("out")
    args = ap.parse_args(argv)
    if args.cmd == "_train_one":
        _train_one(args.model, args.task, args.out)
        return
    df = bench_training(args.models, args.tasks)
    dest = paths.project_root() / "figures" / "tables" / "bench_training.csv"
    write_csv(dest, df)
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
