"""Model kinds by name, and loading a saved model of any kind.

``config.json`` of a saved model names its kind; :func:`load_model` builds that kind's class and
reads the weights.  This module sits above :mod:`.base` and the concrete models (which never
import it), so there is no import cycle.
"""
from __future__ import annotations

import importlib
import json
from pathlib import Path

from ..cache import OutputCache
from .base import Classifier

_KINDS = {
    "transformer": "xaibench.models.transformer:TransformerClassifier",
    "lstm_attention": "xaibench.models.lstm:LSTMAttentionClassifier",
    "cnn": "xaibench.models.cnn:CNNClassifier",
    "logreg": "xaibench.models.logreg:LogRegClassifier",
    "embedding_lr": "xaibench.models.embedding_lr:EmbeddingLR",
    "bilstm_additive_attention": "xaibench.models.attention_bilstm:AttentionBiLSTMClassifier",
}


def model_class(kind: str) -> type[Classifier]:
    if kind not in _KINDS:
        raise KeyError(f"unknown model kind {kind!r}; known kinds: {sorted(_KINDS)}")
    mod, name = _KINDS[kind].split(":")
    return getattr(importlib.import_module(mod), name)


def load_model(folder: str | Path, cache: OutputCache | None | bool = True) -> Classifier:
    """The model :meth:`Classifier.save` wrote to ``folder`` (any kind).  ``cache``: ``True`` = the
    default on-disk output cache, ``None``/``False`` = none, or an :class:`OutputCache`."""
    folder = Path(folder)
    cfg_path = folder / "config.json"
    if not cfg_path.exists():
        raise FileNotFoundError(f"no saved model at {folder} (missing config.json); train it first, "
                                "e.g. `make models`")
    meta = json.loads(cfg_path.read_text())
    klass = model_class(meta["kind"])
    obj = klass(n_classes=meta["n_classes"], seed=meta["seed"], cache=cache, **meta["config"])
    obj.load_weights(folder)
    obj.history = meta.get("history")
    return obj


__all__ = ["model_class", "load_model"]
