"""``python -m xaibench.bench precision``: the speed levers that change results -> ``figures/tables/bench_precision.csv``.

The project trains in float32 with torch's default (contiguous) memory layout.  Two levers would make the
heavy cell kinds faster on a CPU but change every result: bfloat16 autocast (fast on CPUs with AMX or
AVX512-BF16 units) and, for the image ResNet, the channels-last layout (other convolution kernels).  Per
workload and mode the table gives the milliseconds of one training step (forward, backward, Adam) at the
project's torch threads (``XAIBENCH_THREADS``), the speed-up over float32, and how far the model's logits
on a fixed batch move: from the same initial weights before training (``max_abs_logit_diff_init``) and after
the timed steps on the same batches (``max_abs_logit_diff_trained``).  A mode whose logits differ at all
would change every stored result, so none is used; the table says what they would buy.

Workloads (one training step of the real module at the real sizes, fixed synthetic batches):
``image``: the species-group ResNet (notebook 25: 112 px, four stages, batch 32); ``minilm``: MiniLM
fine-tuning (CEBaB: batch 16 of 96 tokens, 5 classes); ``bilstm``: the attention BiLSTM (notebook 13:
batch 32 of 40 tokens, 64 hidden units per direction, its
word vocabulary 2,000 synthetic words).
"""
from __future__ import annotations

import functools
import statistics
import time
from typing import Callable

import pandas as pd

#: workload -> the modes measured (the first, float32, is the reference)
#: the workloads with recurrent layers (no bfloat16 autocast on a CPU without bfloat16 instructions:
#: :func:`xaibench.levers.cpu_bf16_recurrent_supported`; their row then says ``supported`` False)
RECURRENT = ("bilstm",)
MODES: dict[str, tuple[str, ...]] = {"image": ("fp32", "channels_last", "bf16_autocast"),
                                     "minilm": ("fp32", "bf16_autocast"),
                                     "bilstm": ("fp32", "bf16_autocast")}

#: workload -> what one step is
WORKLOADS: dict[str, str] = {
    "image": "species-group ResNet (16-32-64-128), batch 32 of 112 px",
    "minilm": "MiniLM-L6 fine-tuning, batch 16 of 96 tokens, 5 classes",
    "bilstm": "attention BiLSTM (GloVe-sized 50-d embeddings, 64 hidden), batch 32 of 40 tokens",
}


@functools.lru_cache(maxsize=None)
def training_workload(name: str, small: bool) -> tuple[Callable, tuple, Callable]:
    """``(build, batch, logits)``: a module builder (seeded by the caller), one fixed batch ``(inputs, labels)``
    and ``logits(module, inputs)``.  ``small``: tiny sizes, for tests.  Made once per workload (the BiLSTM's
    vocabulary fit, the MiniLM tokenizer and classifier) and shared by its modes; ``build`` gives a fresh module."""
    import torch

    g = torch.Generator().manual_seed(0)
    if name == "image":
        from ..models.resnet_small import SmallResNet

        widths, side, batch = ((4, 8), 16, 4) if small else ((16, 32, 64, 128), 112, 32)
        x = torch.rand(batch, 3, side, side, generator=g)
        return (lambda: SmallResNet(2, widths)), (x, torch.randint(0, 2, (batch,), generator=g)), \
            (lambda m, x: m(x))
    if name == "minilm":
        from ..models.transformer import TransformerClassifier

        batch, length = (2, 8) if small else (16, 96)
        ids = torch.randint(1000, 20000, (batch, length), generator=g)
        clf = TransformerClassifier(5, seed=0, cache=False, tiny=small)
        return (lambda: clf.pretrained_module().cpu()), \
            ((ids, torch.ones_like(ids)), torch.randint(0, 5, (batch,), generator=g)), (lambda m, x: m(*x))
    if name == "bilstm":
        import copy

        import numpy as np

        from ..models.attention_bilstm import AttentionBiLSTMClassifier

        batch, length, words, hidden = (4, 6, 50, 8) if small else (32, 40, 2000, 64)
        rng = np.random.default_rng(0)
        vocab = [f"w{i}" for i in range(words)]
        texts = [" ".join(rng.choice(vocab, length)) for _ in range(64)]
        labels = rng.integers(0, 2, len(texts))
        # the project's module with its vocabulary and embedding layer, built the way the model builds it
        clf = AttentionBiLSTMClassifier(hidden=hidden, max_epochs=1, seed=0, cache=False)
        clf.fit(texts, labels, texts[:8], labels[:8])
        base = clf.module.cpu()
        ids = torch.randint(1, len(clf.vocab), (batch, length), generator=g)
        return (lambda: copy.deepcopy(base)), \
            ((ids, torch.ones_like(ids)), torch.randint(0, 2, (batch,), generator=g)), (lambda m, x: m(*x))
    raise ValueError(f"unknown workload {name!r}; choose from {sorted(WORKLOADS)}")


def _measure(name: str, mode: str, steps: int, small: bool):
    """Train a fresh module (seed 0) for 2 warm-up + ``steps`` steps in ``mode`` on one fixed batch; the median
    milliseconds per timed step, and the float32 logits on the batch before and after training."""
    import torch

    from ..device import pin_threads

    pin_threads()
    build, (inputs, labels), logits = training_workload(name, small)
    torch.manual_seed(0)
    m = build()
    m.train()
    if mode == "channels_last":
        m = m.to(memory_format=torch.channels_last)
        inputs = inputs.contiguous(memory_format=torch.channels_last)
    autocast = mode == "bf16_autocast"

    def forward(train: bool):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            if train:
                return logits(m, inputs)
            m.eval()
            with torch.no_grad():
                out = logits(m, inputs)
            m.train()
            return out

    before = forward(False).float()
    opt = torch.optim.Adam(m.parameters(), 1e-4)
    times = []
    for i in range(2 + steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(forward(True).float(), labels)
        loss.backward()
        opt.step()
        if i >= 2:
            times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times), before, forward(False).float()


def _bf16_units() -> str:
    """The CPU's bfloat16 units named in /proc/cpuinfo (``amx_bf16``, ``avx512_bf16``), or ``none``."""
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return "unknown"
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return ", ".join(f for f in ("amx_bf16", "avx512_bf16") if f in flags) or "none"


def bench_precision(workloads=tuple(WORKLOADS), steps: int = 8, small: bool = False) -> pd.DataFrame:
    """Every workload under each of its :data:`MODES` (see the module docstring)."""
    from .. import levers
    from ..device import load_average, machine_info, thread_count

    info, units = machine_info(), _bf16_units()
    rows = []
    for name in workloads:
        if name not in WORKLOADS:
            raise ValueError(f"unknown workload {name!r}; choose from {sorted(WORKLOADS)}")
        ref = None
        for mode in MODES[name]:
            context = {"step": WORKLOADS[name], "torch_threads": thread_count(), "cpu_bf16_units": units,
                       "cpus": info["cpus"], "cpu_model": info["cpu_model"]}
            if ((mode == "bf16_autocast" and name in RECURRENT and not levers.cpu_bf16_recurrent_supported())
                    or (mode == "channels_last" and not levers.cpu_channels_last_safe(thread_count()))):
                # oneDNN's recurrent kernels have no bfloat16 on this CPU, or channels-last training would corrupt
                # the heap on one thread (levers.cpu_channels_last_safe): nothing to time
                nan = float("nan")
                rows.append({"workload": name, "mode": mode, "ms_per_step": nan, "speedup_vs_fp32": nan,
                             "max_abs_logit_diff_init": nan, "max_abs_logit_diff_trained": nan,
                             "results_identical": pd.NA, "supported": False, "steps_timed": 0, **context,
                             "load_avg_1min": load_average()})
            else:
                ms, before, after = _measure(name, mode, steps, small)
                if ref is None:
                    ref = (ms, before, after)
                rows.append({"workload": name, "mode": mode, "ms_per_step": round(ms, 1),
                             "speedup_vs_fp32": round(ref[0] / ms, 2),
                             "max_abs_logit_diff_init": float((before - ref[1]).abs().max()),
                             "max_abs_logit_diff_trained": float((after - ref[2]).abs().max()),
                             "results_identical": bool((before == ref[1]).all() and (after == ref[2]).all()),
                             "supported": True, "steps_timed": steps, **context,
                             "load_avg_1min": load_average()})  # after the measurement
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)
