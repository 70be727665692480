"""Model kinds by name (used by :meth:`Classifier.load` and the notebooks' MODEL parameter)."""
from __future__ import annotations

import importlib

_KINDS = {
    "transformer": "xaibench.models.transformer:TransformerClassifier",
    "lstm_attention": "xaibench.models.lstm:LSTMAttentionClassifier",
    "cnn": "xaibench.models.cnn:CNNClassifier",
    "logreg": "xaibench.models.logreg:LogRegClassifier",
    "bilstm_additive_attention": "xaibench.models.attention_bilstm:AttentionBiLSTMClassifier",
}


def model_class(kind: str):
    if kind not in _KINDS:
        raise KeyError(f"unknown model kind {kind!r}; known kinds: {sorted(_KINDS)}")
    mod, name = _KINDS[kind].split(":")
    return getattr(importlib.import_module(mod), name)
