"""``python -m xaibench.bench cores``: how a cell kind uses the cores -> ``figures/tables/bench_cores.csv``.

``make all`` spends its time in a few kinds of cell: image ResNet runs (Zhou et al.), MiniLM fine-tuning
(CEBaB classifiers and CausaLM) and BiLSTM training (Zhou et al. text).  Each workload below is one
real cell of that kind, cut short (fixed data, a fixed number of steps), and runs in a fresh process
under every *mode*: torch threads per cell (``XAIBENCH_THREADS``), cells at once (1 or 2 processes
side by side) and OpenMP's wait policy (``OMP_WAIT_POLICY``: unset, the spinning default, or
``PASSIVE``).  Per mode the table gives the seconds of one cell, the machine's throughput relative to
the project's setting (one cell at a time, 2 threads) and whether the cell's outputs are bit-identical
to that setting (a SHA-256 of the trained weights and the predictions), because results depend on the
thread count (:mod:`xaibench.device`) and a mode that changes them would invalidate every stored
result.  The seconds are the cell's own (imports and data loading excluded).
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd

#: (threads per cell, cells at once, OMP_WAIT_POLICY); the first is the project's setting, the reference
MODES: tuple[tuple[int, int, str], ...] = ((2, 1, ""), (2, 1, "PASSIVE"), (1, 1, ""), (2, 2, ""),
                                           (2, 2, "PASSIVE"), (1, 2, ""))

#: workload -> what one cell of it is
WORKLOADS: dict[str, str] = {
    "image": "one species-group ResNet run (notebook 25: 2,000 training images at 112 px, 4 stages), 2 epochs",
    "minilm": "MiniLM fine-tuning (CEBaB 5-way, 1,024 training texts, 1 epoch) and predictions on 256 texts",
    "bilstm": "attention BiLSTM (notebook 13: beer article dataset, 4,000 training texts), 2 epochs",
}


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes())
    return h.hexdigest()[:16]


def _image() -> tuple[float, str]:
    from dataclasses import replace

    from ..data.birds import all_classes, load_classes
    from ..evaluation.attribution_gt import image_runner as ir

    cfg = replace(ir.ImageConfig.groups("full"), epochs=2, stop_val_acc=0, methods=("gradient",),
                  track_methods=())
    plan = ir.ImagePlan.for_profile("full")
    _, pair, manip, r, _ = ir.group_jobs(all_classes(), plan.group_kinds, 1, cfg.group_size, 0)[0]
    images = load_classes(sorted({c for g in pair for c in g}), size=cfg.preresize or None)
    t0 = time.time()
    summary, final, _ = ir.run_one(images, pair, manip, r, 0, cfg)
    return time.time() - t0, _digest([summary["val_acc"], summary["test_acc"]], final["attr_pct"])


def _minilm() -> tuple[float, str]:
    from ..data.loaders import load
    from ..models.transformer import TransformerClassifier

    df = load("cebab")
    df = df[df["is_original"] & (df["label"] >= 0)].sort_values("id")
    train, test = df.iloc[:1024], df.iloc[1024:1280]
    t0 = time.time()
    m = TransformerClassifier(n_classes=5, seed=42, cache=False, epochs=1)
    m.fit(train["text"].tolist(), train["label"].astype(int).to_numpy())
    proba = m.predict_proba(test["text"].tolist())
    return time.time() - t0, _digest(proba) + m._weights_digest()  # the classifier's own hash of its weights


def _bilstm() -> tuple[float, str]:
    from dataclasses import replace

    from ..data.loaders import load
    from ..evaluation.attribution_gt.text_runner import TextConfig, article_dataset
    from ..models.attention_bilstm import AttentionBiLSTMClassifier

    cfg = replace(TextConfig.for_profile("full"), n_train=4000)
    ds = article_dataset(load("beer"), "article", 0, cfg)
    t0 = time.time()
    m = AttentionBiLSTMClassifier(hidden=cfg.hidden, max_epochs=2, stop_acc=1.01, seed=0, cache=False)
    m.fit(ds.train.texts, ds.train.labels, ds.val.texts, ds.val.labels)
    proba = m.predict_proba(ds.test.texts[:256])
    return time.time() - t0, _digest(proba) + m._weights_digest()  # the classifier's own hash of its weights


def run_workload(name: str, out: str) -> None:
    """Child process: run one cell of workload ``name``, write its seconds and output digest to ``out``."""
    from ..config import use_profile

    use_profile("full")
    seconds, digest = {"image": _image, "minilm": _minilm, "bilstm": _bilstm}[name]()
    import torch

    with open(out, "w") as fh:
        json.dump({"seconds": seconds, "digest": digest, "torch_threads": torch.get_num_threads()}, fh)



def run_children(cells: list[list[str]], env: dict[str, str], what: str) -> list[dict]:
    """Start one child process ``python -m xaibench.bench <cell...> <out>`` per entry of ``cells``, all together,
    with environment ``env``; wait for all and return the JSON each wrote to its ``out`` file (a ``RuntimeError``
    naming ``what`` and the exit codes when any failed).  The child processes of this bench and of
    ``augmentation_overlap``."""
    with tempfile.TemporaryDirectory() as tmp:
        outs = [os.path.join(tmp, f"{i}.json") for i in range(len(cells))]
        procs = [subprocess.Popen([sys.executable, "-m", "xaibench.bench", *cell, out], env=env)
                 for cell, out in zip(cells, outs)]
        codes = [p.wait() for p in procs]
        if any(codes):
            raise RuntimeError(f"{what} failed with exit codes {codes}")
        res = []
        for out in outs:
            with open(out) as fh:
                res.append(json.load(fh))
    return res


def _run_mode(name: str, threads: int, cells: int, wait: str) -> list[dict]:
    """``cells`` child processes of workload ``name`` started together; their JSON results."""
    env = dict(os.environ, XAIBENCH_THREADS=str(threads), XAIBENCH_QUIET="1", XAIBENCH_SCHEDULER="serial")
    env.pop("OMP_WAIT_POLICY", None)
    if wait:
        env["OMP_WAIT_POLICY"] = wait
    return run_children([["_cores_one", name]] * cells, env, f"benchmark cell {name} (threads={threads}, "
                        f"cells={cells}, OMP_WAIT_POLICY={wait or 'unset'})")


def bench_cores(workloads=tuple(WORKLOADS), modes=MODES) -> pd.DataFrame:
    """Every workload under every mode (see the module docstring); the first mode is the reference."""
    from ..device import load_average, machine_info

    info = machine_info()
    rows = []
    for name in workloads:
        if name not in WORKLOADS:
            raise ValueError(f"unknown workload {name!r}; choose from {sorted(WORKLOADS)}")
        ref = None
        for threads, cells, wait in modes:
            res = _run_mode(name, threads, cells, wait)
            seconds = float(np.mean([r["seconds"] for r in res]))
            # throughput: cells finished per second of the machine, the slowest of the concurrent cells deciding
            rate = cells / max(r["seconds"] for r in res)
            if ref is None:
                ref = {"rate": rate, "digest": res[0]["digest"]}
            rows.append({"workload": name, "threads_per_cell": threads, "cells_at_once": cells,
                         "omp_wait_policy": wait or "unset (spin)", "seconds_per_cell": round(seconds, 1),
                         "throughput_vs_reference": round(rate / ref["rate"], 2),
                         "bit_identical_to_reference": all(r["digest"] == ref["digest"] for r in res),
                         "cell": WORKLOADS[name], "cpus": info["cpus"], "cpu_model": info["cpu_model"],
                         "load_avg_1min": load_average()})
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)
