"""``python -m xaibench.bench optimizer``: Adam's per-parameter loop (torch's default step on a CPU) against its
multi-tensor step (``foreach=True``, what the project's training loops build) on the two loops that train with
Adam outside the shared classifier loop -> ``figures/tables/bench_optimizer.csv``.

Workloads (:func:`xaibench.bench.precision.training_workload`: the real module at the real sizes, one fixed synthetic
batch): ``image``, a species-group ResNet run of notebook 25 (Adam, lr 2e-3, weight decay 1e-4: the image runs'
settings); ``minilm``, CausaLM's adversarial fine-tuning of MiniLM (Adam, lr 2e-5: CausaLM's encoder learning rate).
Per workload and step a fresh module (seed 0) trains for 2 warm-up and ``steps`` timed steps at the project's torch
threads (``XAIBENCH_THREADS``); the table gives the median milliseconds of the optimiser step and of the whole
training step, whether the weights after the last step are bit for bit those of the per-parameter loop
(``identical``), and what the saving comes to per unit of the full runs (``unit``, ``steps_per_unit``):
an epoch of a species-group run, one CausaLM counterfactual encoder."""
from __future__ import annotations

import math
import statistics
import time

import pandas as pd

#: step -> the keywords Adam is built with
STEPS: dict[str, dict] = {"per-parameter loop": {}, "foreach": {"foreach": True}}

#: workload -> Adam's settings in that loop
SETTINGS: dict[str, dict] = {"image": {"lr": 2e-3, "weight_decay": 1e-4}, "minilm": {"lr": 2e-5}}


def _units(workload: str, small: bool) -> tuple[str, int]:
    """``(unit, steps_per_unit)`` of the full runs: the species-group runs' training images in batches (notebook
    25), or CausaLM's encoder epochs over the CEBaB fit rows in batches (notebook 20)."""
    if workload == "image":
        from ..evaluation.attribution_gt.image_runner import ImageConfig

        cfg = ImageConfig.groups("full")
        n = 2 * cfg.n_train
        return f"an epoch of a species-group run ({n:,} images, batch {cfg.batch_size})", math.ceil(n / cfg.batch_size)
    from ..config import get_profile
    from ..evaluation.cebab import runner
    from ..explainers.concept.causalm import CausaLMExplainer

    kw = runner.explainer_kwargs("causalm", 42)
    kw.pop("aspect_predictor", None)
    e = CausaLMExplainer(**kw)  # the settings notebook 20 fits CausaLM with
    n = 64 if small else len(runner.fit_data(get_profile("full"), 42, "5-way")[0])
    return (f"a CausaLM encoder ({e.epochs} epochs of {n:,} texts, batch {e.batch_size})",
            e.epochs * math.ceil(n / e.batch_size))


def _train(workload: str, step: str, steps: int, small: bool):
    """Median ms of the optimiser step and of the whole step, and the weights after 2 warm-up + ``steps`` steps."""
    import torch

    from ..device import pin_threads
    from .precision import training_workload

    pin_threads()
    build, (inputs, labels), logits = training_workload(workload, small)
    torch.manual_seed(0)
    m = build()
    m.train()
    opt = torch.optim.Adam(m.parameters(), **SETTINGS[workload], **STEPS[step])
    opt_ms, step_ms = [], []
    for i in range(2 + steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        torch.nn.functional.cross_entropy(logits(m, inputs), labels).backward()
        t1 = time.perf_counter()
        opt.step()
        t2 = time.perf_counter()
        if i >= 2:
            opt_ms.append(1000 * (t2 - t1))
            step_ms.append(1000 * (t2 - t0))
    return statistics.median(opt_ms), statistics.median(step_ms), [p.detach().clone() for p in m.parameters()]


def bench_optimizer(workloads: tuple[str, ...] = ("image", "minilm"), steps: int = 12,
                    small: bool = False) -> pd.DataFrame:
    """Each workload with each of :data:`STEPS` (see the module docstring)."""
    import torch

    from .common import machine_context

    rows = []
    for w in workloads:
        if w not in SETTINGS:
            raise ValueError(f"unknown workload {w!r}; choose from {sorted(SETTINGS)}")
        unit, per_unit = _units(w, small)
        ref = None
        for step in STEPS:
            opt_ms, step_ms, weights = _train(w, step, steps, small)
            if ref is None:
                ref = (opt_ms, weights)
            rows.append({"workload": w, "step": step, "optimizer_ms": round(opt_ms, 2),
                         "training_step_ms": round(step_ms, 1), "steps_timed": steps,
                         "identical": all(torch.equal(a, b) for a, b in zip(ref[1], weights)),
                         "unit": unit, "steps_per_unit": per_unit,
                         "seconds_saved_per_unit": round((ref[0] - opt_ms) * per_unit / 1000, 2),
                         **machine_context()})
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)
