"""Result-changing speed levers, off by default and admitted only by evidence.

``XAIBENCH_LEVERS`` (Make: ``LEVERS``) names zero or more of :data:`LEVERS`, separated by spaces or commas:

- ``bf16``: forward pass and loss of every training step under ``torch.autocast`` in bfloat16 (fast where the
  CPU has AMX or AVX-512 BF16 units, and on GPUs); the weights, the optimiser and all evaluation stay float32;
- ``channels_last``: image models and their training batches in the channels-last memory layout (a different
  convolution kernel, same arithmetic up to rounding);
- ``fused_adam``: Adam/AdamW's fused single-kernel step instead of the multi-tensor (``foreach``) step, which
  rounds differently.

Each lever moves the trained weights by rounding, so every number downstream moves a little; how far, against
the spread over seeds, and whether any verdict changes, is what :mod:`xaibench.evaluation.levers` measures
(``figures/tables/levers.csv``).  They act on the training loops that dominate the run time: the shared
classifier loop (:func:`xaibench.models.training.train_loop`: CEBaB's MiniLM and LSTM, the other text
classifiers trained through it), CausaLM's adversarial fine-tuning and Zhou et al.'s image runs.

A run with levers writes every output (models, stored results, figures, tables, executed reports) below
``reports/[<profile>/]levers-<names>/`` (:func:`xaibench.paths.profiled`), never over the float32 results.
"""
from __future__ import annotations

import contextlib
import os
import re
from typing import Any

#: lever name -> what it changes
LEVERS = {
    "bf16": "training forward pass and loss under bfloat16 autocast",
    "channels_last": "image models and batches in the channels-last memory layout",
    "fused_adam": "the fused single-kernel Adam/AdamW step",
}


def check_levers(raw: Any) -> tuple[str, ...]:
    """``raw`` (a value of ``XAIBENCH_LEVERS``; empty or ``None``: none) as the sorted tuple of lever names,
    else a ``ValueError`` naming the variable, the value and the levers there are."""
    text = "" if raw is None else str(raw)
    words = [w for w in re.split(r"[\s,]+", text.strip()) if w]
    bad = [w for w in words if w not in LEVERS]
    if bad:
        raise ValueError(f"XAIBENCH_LEVERS={text!r}: {', '.join(map(repr, bad))} is not a lever; use none (empty) "
                         f"or some of {', '.join(LEVERS)}, e.g. XAIBENCH_LEVERS=bf16")
    return tuple(sorted(set(words)))


def active() -> tuple[str, ...]:
    """The levers ``XAIBENCH_LEVERS`` switches on (none by default)."""
    return check_levers(os.environ.get("XAIBENCH_LEVERS"))


def tag(levers: tuple[str, ...] | None = None) -> str:
    """The output folder of a run with ``levers`` (default: the active ones): ``levers-bf16+channels_last``, or
    ``""`` without levers."""
    levers = active() if levers is None else tuple(sorted(levers))
    return "levers-" + "+".join(levers) if levers else ""


def cpu_bf16_recurrent_supported() -> bool:
    """Whether this CPU runs recurrent layers (LSTM, GRU) under bfloat16 autocast: oneDNN, which torch's CPU
    recurrent kernels use, has bfloat16 only on CPUs with bfloat16 instructions (avx512_bf16 or AMX); elsewhere
    such a layer fails with 'could not create a primitive descriptor'."""
    import torch

    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def autocast(device: Any, module: Any = None):
    """A context for one training step's forward pass and loss: bfloat16 autocast on ``device``'s type with the
    ``bf16`` lever, else a no-op.  ``module``: the model it runs, refused with a message on a CPU where its
    recurrent layers have no bfloat16 (:func:`cpu_bf16_recurrent_supported`)."""
    if "bf16" not in active():
        return contextlib.nullcontext()
    import torch

    kind = torch.device(device).type
    if (kind == "cpu" and module is not None and not cpu_bf16_recurrent_supported()
            and any(isinstance(m, torch.nn.RNNBase) for m in module.modules())):
        raise RuntimeError("the bf16 lever (XAIBENCH_LEVERS) cannot train this model here: it has recurrent layers, "
                           "and this CPU has no bfloat16 instructions (avx512_bf16 or AMX) for them; run without "
                           "bf16, or on a CPU or GPU that has them")
    return torch.autocast(device_type=kind, dtype=torch.bfloat16)


def optimizer_kwargs() -> dict[str, bool]:
    """Keyword arguments for Adam/AdamW: ``fused=True`` with the ``fused_adam`` lever, else ``foreach=True`` (the
    multi-tensor step: bit for bit the weights of the per-parameter loop torch takes on a CPU by default, in fewer,
    larger kernels)."""
    if "fused_adam" in active():
        return {"fused": True}
    return {"foreach": True}


def cpu_channels_last_safe(threads: int | None = None) -> bool:
    """Whether channels-last training is safe on the CPU with ``threads`` torch threads (default: torch's current
    count): torch 2.13's CPU backward of a channels-last 1x1 convolution with stride 2 (a residual block's shortcut)
    corrupts the heap on one thread on an AVX2 EPYC (glibc aborts: 'corrupted double-linked list', or a segfault),
    and runs correctly on two or more (tests/test_levers.py reproduces it in a subprocess where the CPU shows it).
    One thread is refused on every CPU: the kernels at fault are torch's, whichever CPU runs them."""
    if threads is None:
        import torch

        threads = torch.get_num_threads()
    return threads >= 2


def memory_format(x):
    """``x`` (an image model or a 4-d batch) in the channels-last layout with the ``channels_last`` lever, else
    unchanged.  Other tensors pass through.  A model on the CPU is refused, with a message, where
    :func:`cpu_channels_last_safe` says training it would corrupt the heap."""
    if "channels_last" not in active():
        return x
    import torch

    if isinstance(x, torch.nn.Module):
        on_cpu = all(p.device.type == "cpu" for p in x.parameters())
        if on_cpu and not cpu_channels_last_safe():
            raise RuntimeError("the channels_last lever (XAIBENCH_LEVERS) cannot train on one CPU thread: torch's "
                               "channels-last backward of a 1x1 stride-2 convolution corrupts memory there; set "
                               "XAIBENCH_THREADS=2 or more, or run without channels_last")
        return x.to(memory_format=torch.channels_last)
    if isinstance(x, torch.Tensor) and x.dim() == 4:
        return x.contiguous(memory_format=torch.channels_last)
    return x


__all__ = ["LEVERS", "check_levers", "active", "tag", "autocast", "optimizer_kwargs", "cpu_channels_last_safe",
           "memory_format"]
