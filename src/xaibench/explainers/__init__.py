"""Explanation methods (see :mod:`xaibench.explainers.base` for the interface).

:func:`load_builtins` imports the packages that register the built-in explainers in
:mod:`xaibench.registry` (:data:`BUILTIN_MODULES`).
"""
from __future__ import annotations

import importlib

#: the packages that register the built-in explainers when imported
BUILTIN_MODULES = (
    "xaibench.explainers.local", "xaibench.explainers.feature", "xaibench.explainers.concept",
    "xaibench.explainers.counterfactual", "xaibench.explainers.saliency",
)


def load_builtins() -> None:
    """Import every package of :data:`BUILTIN_MODULES`, so that the registry holds every built-in explainer."""
    for m in BUILTIN_MODULES:
        importlib.import_module(m)


__all__ = ["BUILTIN_MODULES", "load_builtins"]
