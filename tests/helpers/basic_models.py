"""Tiny predictors with fixed, hand-set outputs (no torch): the known values tests assert against."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from xaibench.models.base import Classifier
from xaibench.text import word_tokenize


class TablePredictor:
    """Fixed class probabilities per text, looked up in ``table``; a text not in it gets ``prior``
    (without a prior it is an error).  Every text asked about is appended to ``calls``."""

    def __init__(self, table: dict[str, Sequence[float]], prior: Sequence[float] | None = None,
                 n_classes: int | None = None):
        self.table, self.prior = table, prior
        self.n_classes = n_classes or len(prior if prior is not None else next(iter(table.values())))
        self.calls: list[str] = []

    def predict_proba(self, texts):
        self.calls.extend(texts)
        if self.prior is None:
            return np.array([self.table[t] for t in texts], dtype=float)
        return np.array([self.table.get(t, self.prior) for t in texts], dtype=float)


class KeywordClassifier(Classifier):
    """A binary black box behind the :class:`Classifier` interface (uncached): p(class 1) = ``p_hit``
    iff the tokens of the text hold ``word`` (and not ``negator``, when given), else ``p_miss``."""

    kind = "keyword"

    def __init__(self, word: str = "good", negator: str | None = None, p_hit: float = 0.9, p_miss: float = 0.1,
                 tokenize: Callable[[str], list[str]] = word_tokenize):
        super().__init__(n_classes=2, cache=False)
        self.word, self.negator, self.p_hit, self.p_miss, self.tokenize = word, negator, p_hit, p_miss, tokenize

    def _hit(self, text: str) -> bool:
        tokens = self.tokenize(text)
        return self.word in tokens and (self.negator is None or self.negator not in tokens)

    def _predict_proba(self, texts):
        p = np.array([self.p_hit if self._hit(t) else self.p_miss for t in texts])
        return np.stack([1 - p, p], 1).astype(np.float32)

    def _fit(self, *a):  # pragma: no cover - not trained
        return {}

    def _embed(self, texts):  # pragma: no cover
        return self._predict_proba(texts)

    def config(self):
        return {}

    def _save_weights(self, folder):  # pragma: no cover
        pass

    def _load_weights(self, folder):  # pragma: no cover
        pass

    def _weights_digest(self):
        return f"keyword:{self.word}:{self.negator}:{self.p_hit}:{self.p_miss}"
