"""Aspect-based sentiment (ABSA) model of CEBaB App. C.4.

A classifier over the auxiliary-sentence input ``"text [SEP] aspect"`` with three labels
(Negative / Positive / unknown).  ``predict_aspects`` labels all four aspects of each text; the
Approx and S-Learner explainers use it to obtain *predicted* aspect labels.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ..data.cebab import ABSA_LABELS, ASPECTS
from .base import Classifier
from .registry import load_model


class AspectSentimentModel:
    """Wraps any :class:`Classifier` with 3 classes trained on auxiliary sentences."""

    def __init__(self, classifier: Classifier):
        if classifier.n_classes != 3:
            raise ValueError(f"the ABSA classifier needs 3 classes {ABSA_LABELS}, got {classifier.n_classes}")
        self.classifier = classifier

    @property
    def sep(self) -> str:
        tok = getattr(self.classifier, "tokenizer", None)
        return f" {tok.sep_token} " if tok is not None and tok.sep_token else " | "

    def format(self, texts: Sequence[str], aspects: Sequence[str]) -> list[str]:
        return [f"{t}{self.sep}{a}" for t, a in zip(texts, aspects)]

    def fit(self, frame: pd.DataFrame, dev: pd.DataFrame | None = None) -> "AspectSentimentModel":
        """``frame``/``dev``: columns ``text, aspect, label`` (label indexes ``ABSA_LABELS``)."""
        self.classifier.fit(self.format(frame["text"], frame["aspect"]), frame["label"].to_numpy(),
                            None if dev is None else self.format(dev["text"], dev["aspect"]),
                            None if dev is None else dev["label"].to_numpy())
        return self

    def predict_proba(self, texts: Sequence[str], aspects: Sequence[str]) -> np.ndarray:
        return self.classifier.predict_proba(self.format(texts, aspects))

    def predict_aspects(self, texts: Sequence[str]) -> pd.DataFrame:
        """One column per aspect with the predicted label (``Negative``/``Positive``/``unknown``)."""
        texts = list(texts)
        labels = np.array(ABSA_LABELS)
        out = {}
        for a in ASPECTS:
            out[a] = labels[self.predict_proba(texts, [a] * len(texts)).argmax(1)]
        return pd.DataFrame(out)

    def save(self, folder: str | Path) -> Path:
        return self.classifier.save(folder)

    @classmethod
    def load(cls, folder: str | Path, cache=True) -> "AspectSentimentModel":
        return cls(load_model(folder, cache=cache))
