"""What every benchmark shares: the machine columns of a row and the writer of a bench table."""
from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from .. import paths
from ..io import write_csv, write_text

# the machine columns (xaibench.device.machine_info) a timing row carries
MACHINE_KEYS = ("cpus", "cpu_model", "gpu", "xaibench_device")


def write_bench_table(df: pd.DataFrame, name: str, out_dir: str | os.PathLike | None = None) -> Path:
    """Write ``figures/tables/<name>`` (CSV) and a Markdown rendering beside it, both atomically.
    Bench tables are measurements, not paper comparisons, so they have no ``ours``/``paper`` columns."""
    dest = Path(out_dir or paths.tables_dir()) / name
    write_csv(dest, df)
    title = f"# {dest.stem}\n\nWritten by `python -m xaibench.bench {dest.stem.removeprefix('bench_')}`.\n\n"
    write_text(dest.with_suffix(".md"), title + df.to_markdown(index=False) + "\n")
    return dest


def machine_context() -> dict:
    """The machine a benchmark row was measured on, its torch thread count and the 1-minute load average at
    that moment (so that timings taken under load can be recognised)."""
    import torch

    from ..device import load_average, machine_info

    info = machine_info()
    return {"cpus": info["cpus"], "cpu_model": info["cpu_model"], "torch_threads": torch.get_num_threads(),
            "load_avg_1min": load_average()}


#: the speed probe's workload, run by a fresh interpreter on one thread: float64 matrix products (numpy's BLAS) and
#: a pure-Python loop, each timed ``repeats`` times; it prints the two best times
_PROBE = """
import sys, time
import numpy as np
repeats = int(sys.argv[1])
a = np.random.default_rng(0).standard_normal((256, 256))
def blas():
    b = a
    for _ in range(200):
        b = np.tanh(b @ a / 16.0)
def python():
    s = 0
    for i in range(5_000_000):
        s += i * i % 7
best = {}
for name, fn in (("blas", blas), ("python", python)):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter(); fn(); times.append(time.perf_counter() - t0)
    best[name] = min(times)
print(best["blas"], best["python"])
"""

#: the thread variables the probe's interpreter runs with (one core, whatever the caller's settings)
_ONE_THREAD = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


def speed_probe(repeats: int = 5, timeout: float = 120.0) -> float:
    """Seconds a fixed one-core workload takes (:data:`_PROBE`: 200 products of 256x256 float64 matrices and a
    5-million-step Python loop, the best of ``repeats`` runs of each, added), in a fresh interpreter; NaN when the
    probe cannot run (a timing run does not fail for it).

    Timed before and after a long measurement (``bench make_test``, ``bench make_paper``), it shows how fast the
    CPU's arithmetic and the interpreter ran then (memory bandwidth is not part of it): the same workload on one kind
    of CPU takes about the same time, so a row whose probe took clearly longer than another row's of the same kind
    was measured while that CPU ran slower, whatever the cause (other load on shared cores, a lower clock)."""
    repeats = int(repeats)
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    try:
        out = subprocess.run([sys.executable, "-c", _PROBE, str(repeats)], capture_output=True, text=True,
                             timeout=timeout, env={**os.environ, **_ONE_THREAD})
        blas, python = (float(x) for x in out.stdout.split())
    except (OSError, ValueError, subprocess.SubprocessError):
        return math.nan
    return round(blas + python, 3)


def fastest_of(ways: dict, repeats: int) -> tuple[dict, dict]:
    """Each way's fastest wall seconds over ``repeats`` calls (a ways's value is a function of no argument) and what
    its last call returned: ``(seconds, results)``, both keyed by way.  The ways run one after the other, in order."""
    import time

    seconds, results = {}, {}
    for way, fn in ways.items():
        best = float("inf")
        for _ in range(max(1, int(repeats))):
            t0 = time.perf_counter()
            results[way] = fn()
            best = min(best, time.perf_counter() - t0)
        seconds[way] = best
    return seconds, results


def train_epoch(model, opt, x, y, perm, batch_size: int) -> None:
    """One epoch of a classifier on the rows of ``x``/``y`` in the order ``perm``, in batches of ``batch_size``
    (cross-entropy, ``opt`` stepped after every batch): the training step of the image benches."""
    import torch

    for i in range(0, len(perm), batch_size):
        b = perm[i:i + batch_size]
        loss = torch.nn.functional.cross_entropy(model(x[b]), y[b])
        opt.zero_grad()
        loss.backward()
        opt.step()



# benchmark -> help line; each writes figures/tables/bench_<name>.csv
BENCHMARKS: dict[str, str] = {
    "training": "one fine-tuning run per model and task",
    "cebab": "8 concept explainers on one trained 5-way MiniLM, cold cache",
    "causalm_staging": "CausaLM from the explained model vs from the pretrained LM (App. E.2), stored encoders reused",
    "attribution": "every local explainer on the CNN and MiniLM",
    "faithfulness": "Ge et al.: seconds per explanation and per counterfactual search",
    "attribution_gt": "Zhou et al. 2022: attention/rationale training, explainer time",
    "manipulations": "Zhou et al. 2022: seconds per image of each image manipulation (HSV ones: ours vs matplotlib's)",
    "augmentation": "Zhou et al. 2022: an epoch's training images of a species-group run, prepared now vs before (maps per image, arithmetic per pixel): seconds, bit-identity",
    "augmentation_overlap": "Zhou et al. 2022: species-group runs with each epoch's training images prepared in the loop vs the next epoch's in a thread while this one trains, one cell and two side by side: seconds per epoch, throughput, bit-identity",
    "editors": "seconds and predictor calls per edit step of each counterfactual editor",
    "infillers": "MiCE's bigram and two-sided infillers of a dataset trained one after the other, each tokenising its texts vs sharing them: seconds, bit-identity",
    "optimizer": "Adam's per-parameter loop vs its multi-tensor (foreach) step in the image runs and CausaLM: ms per step, bit-identity, seconds saved per unit of the full runs",
    "scorecard": "notebook 30's bootstrap interval of the rank agreement, replicates as arrays vs looked up by explainer name: seconds, bit-identity",
    "textfooler_deletions": "TextFooler's word-importance deletions scored by the tf-idf model from the text's n-gram counts vs featurising every deleted text: seconds, bit-identity",
    "cnn_encode": "the 1D CNN's input encoding of LIME-like perturbations, one array per batch vs a tensor row at a time: seconds, bit-identity",
    "chain_parts": "editor chains in worker processes, one cell per run vs long runs split into parts: wall seconds, bit-identity",
    "training_pool": "notebook 02's classifiers, each part's seeds a map of their own vs all parts in one map: wall seconds, bit-identity",
    "cores": "seconds and throughput of one cell of each heavy kind per thread count, cells at once and OpenMP wait policy",
    "precision": "ms per training step in float32, channels-last and bfloat16 autocast, and how far each moves the logits",
    "make_steps": "what every make invocation costs before any notebook runs: the parameter check, one stamp process per report, dry runs; with and without bytecode",
    "make_paper": "one paper's make targets run cold in a fresh clone: wall time of each notebook and make step and per paper, one measurement per paper and kind of CPU",
    "make_all": "wall time of every executed notebook of the last full run",
    "make_test": "fresh-clone `make test` (as CI runs it): wall time, pytest's time, the set-up, outcome counts",
}
