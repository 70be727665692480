"""Which torch device the project computes on.

``XAIBENCH_DEVICE`` chooses: ``auto`` (default: CUDA when a GPU is visible, else CPU), ``cpu`` or
``cuda``.  Every model, explainer and training loop asks :func:`torch_device` instead of deciding
for itself, so one variable moves the whole project.
"""
from __future__ import annotations

import os

CHOICES = ("auto", "cpu", "cuda")


def device_choice() -> str:
    choice = (os.environ.get("XAIBENCH_DEVICE") or "auto").strip().lower()
    if choice not in CHOICES:
        raise ValueError(f"XAIBENCH_DEVICE={choice!r} is not understood; use one of {', '.join(CHOICES)} "
                         "(e.g. XAIBENCH_DEVICE=cpu)")
    return choice


def torch_device():
    """The :class:`torch.device` selected by ``XAIBENCH_DEVICE``."""
    import torch

    choice = device_choice()
    if choice == "cpu":
        return torch.device("cpu")
    if torch.cuda.is_available():
        return torch.device("cuda")
    if choice == "cuda":
        raise RuntimeError("XAIBENCH_DEVICE=cuda but torch sees no CUDA device; unset it or use "
                           "XAIBENCH_DEVICE=cpu")
    return torch.device("cpu")


def place(module):
    """Move ``module`` (an ``nn.Module``) to :func:`torch_device` and return it."""
    return module.to(torch_device())


def module_device(module):
    """The device of ``module``'s first parameter (CPU for a module without parameters)."""
    import torch

    p = next(iter(module.parameters()), None) if module is not None else None
    return p.device if p is not None else torch.device("cpu")
