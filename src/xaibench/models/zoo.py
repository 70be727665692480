"""Named model recipes and where trained models live.

``MODEL`` in the Makefile is one of :data:`RECIPES` (``minilm``, ``lstm``, ``cnn``, ``logreg``) or
any Hugging Face checkpoint name (``bert-base-uncased``, ``roberta-base``, ``gpt2``), which builds
a :class:`~xaibench.models.transformer.TransformerClassifier` from that checkpoint (online only).

Trained models are saved under ``data/models/<dataset>/<model>/<task>_<split>/seed<seed>/``.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .. import paths
from .base import Classifier
from .registry import model_class

RECIPES: dict[str, tuple[str, dict[str, Any]]] = {
    "minilm": ("transformer", {"checkpoint": "minilm"}),
    "lstm": ("lstm_attention", {}),
    "cnn": ("cnn", {}),
    "logreg": ("logreg", {}),
}


def slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", model)


def build(model: str, n_classes: int, seed: int, **overrides: Any) -> Classifier:
    """A fresh, untrained classifier for a recipe name or a hub checkpoint name."""
    kind, kw = RECIPES.get(model, ("transformer", {"checkpoint": model}))
    return model_class(kind)(n_classes=n_classes, seed=seed, **{**kw, **overrides})


def model_dir(dataset: str, model: str, task: str, split: str, seed: int) -> Path:
    return paths.models_dir() / dataset / slug(model) / f"{task}_{split}" / f"seed{seed}"

