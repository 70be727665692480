"""Per-feature explainers of :class:`~xaibench.models.embedding_lr.EmbeddingLR` (Ge et al.).

A *feature* is one input slot of the model: an Adult column or a Movie Reviews word position.
Every explainer here is a :class:`~xaibench.explainers.base.LocalExplainer` (``explain(texts)``
returns :class:`~xaibench.explainers.base.Attribution` objects whose ``tokens`` are the row's
non-padding slots, ``Feature=value`` or words) and also offers the id-level fast path
:meth:`FeatureExplainer.explain_ids` -> ``(n, M)`` scores (0 on padding) that the
counterfactual-faithfulness protocol uses.  Scores are signed towards the explained class; the
protocol ranks features by ``|score|`` (an explainer that selects features, like Anchor or
Decision Boundary, gives unselected features 0).
"""
from __future__ import annotations

import abc
import hashlib
from typing import Any, Sequence

import numpy as np

from ...data.feature_data import PAD_ID
from ..base import Attribution, LocalExplainer


def row_seed(seed: int, row: np.ndarray) -> int:
    """A per-row seed, so a row's explanation does not depend on its batch or position."""
    h = hashlib.sha1(f"{seed}:".encode() + np.asarray(row, dtype=np.int64).tobytes()).digest()
    return int.from_bytes(h[:4], "little")


class FeatureExplainer(LocalExplainer):
    """Base class: validates the model, converts texts <-> id rows, fills default targets."""

    name = "feature"
    paper_name = ""

    def __init__(self, seed: int = 42):
        self.seed = int(seed)
        self.model: Any = None
        self.train_X: np.ndarray | None = None

    def fit(self, model: Any, data: Any = None) -> "FeatureExplainer":
        """``model``: an :class:`EmbeddingLR`; ``data``: training id rows (LIME/Anchor sample from them)."""
        if not hasattr(model, "proba_ids") or not hasattr(model, "spec"):
            raise TypeError(f"{type(self).__name__} explains an EmbeddingLR-like model (with .spec and "
                            f".proba_ids); got {type(model).__name__}")
        self.model = model
        self.train_X = None if data is None else np.asarray(data, dtype=np.int64)
        return self

    def _check(self, X: np.ndarray, targets) -> tuple[np.ndarray, np.ndarray]:
        if self.model is None:
            raise RuntimeError(f"{type(self).__name__} is not fitted: call .fit(model, train_ids) first")
        from ...checks import check_targets

        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != self.model.spec.n_features:
            raise ValueError(f"expected id rows of shape (n, {self.model.spec.n_features}); got {X.shape}")
        if X.size and X.dtype.kind not in "iu":
            raise TypeError(f"X must hold integer feature-value ids; got dtype {X.dtype}")
        X = self.model.spec.check_ids(X.astype(np.int64))
        empty = np.flatnonzero((X == PAD_ID).all(1)) if X.size else np.zeros(0, dtype=np.int64)
        if len(empty):
            raise ValueError(f"row {int(empty[0])} has no feature (every slot is padding: an empty text); there is "
                             f"nothing to attribute, so {type(self).__name__} refuses it: drop such rows first "
                             f"({len(empty)} of {len(X)})")
        if targets is None:
            t = self.model.proba_ids(X).argmax(1)
        else:
            t = check_targets(targets, len(X), getattr(self.model, "n_classes", None), default="the predicted classes")
        return X, t

    def explain_ids(self, X: np.ndarray, targets: Sequence[int] | None = None) -> np.ndarray:
        """``(n, M)`` feature scores for id rows ``X`` (targets default to the predictions)."""
        X, t = self._check(X, targets)
        if not len(X):
            return np.zeros((0, self.model.spec.n_features))
        S = np.asarray(self._explain_rows(X, t), dtype=np.float64)
        S[X == PAD_ID] = 0.0
        return S

    @abc.abstractmethod
    def _explain_rows(self, X: np.ndarray, targets: np.ndarray) -> np.ndarray: ...

    def explain(self, texts: Sequence[str], targets: Sequence[int] | None = None) -> list[Attribution]:
        from ...checks import check_texts

        texts = check_texts(texts, nonempty=True)
        spec = self.model.spec if self.model is not None else None
        if spec is None:
            raise RuntimeError(f"{type(self).__name__} is not fitted: call .fit(model, train_ids) first")
        X = spec.from_texts(texts)
        X, t = self._check(X, targets)
        S = self.explain_ids(X, t)
        out = []
        for text, row, s, tgt in zip(texts, X, S, t):
            keep = row != PAD_ID
            toks = [tok for tok, k in zip(spec.tokens(row), keep) if k]
            # a sentence longer than the model's word slots is cut: record it as the local explainers do
            read = spec.chars_read(text)
            out.append(Attribution(text, toks, s[keep], int(tgt), meta={"method": self.name},
                                   truncated=read < len(text), chars_read=read))
        return out


def _rows_progress(n: int, desc: str):
    from ...progress import progress

    return progress(range(n), desc=desc, total=n, leave=False)


class PerRowExplainer(FeatureExplainer):
    """Explainers that treat one row at a time (LIME, Anchor, Decision Boundary)."""

    def _explain_rows(self, X, targets):
        S = np.zeros(X.shape, dtype=np.float64)
        for i in _rows_progress(len(X), self.name):
            S[i] = self._explain_one(X[i], int(targets[i]))
        return S

    @abc.abstractmethod
    def _explain_one(self, row: np.ndarray, target: int) -> np.ndarray: ...


class TextExplainerAdapter(FeatureExplainer):
    """Runs one of the project's text-level local explainers (IG, Gradient x Input, SHAP, ...) on
    the model through its text rendering and maps the token scores back to feature slots (the
    explained tokens are exactly the non-padding slots, in order)."""

    def __init__(self, inner: Any, seed: int = 42):
        super().__init__(seed=seed)
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)
        self.paper_name = getattr(inner, "paper_name", self.name)

    def fit(self, model, data=None):
        super().fit(model, data)
        self.inner.fit(model)
        return self

    def _explain_rows(self, X, targets):
        spec = self.model.spec
        attrs = self.inner.explain([spec.to_text(r) for r in X], [int(t) for t in targets])
        S = np.zeros(X.shape, dtype=np.float64)
        for i, (row, a) in enumerate(zip(X, attrs)):
            pos = np.flatnonzero(row != PAD_ID)
            if len(a.scores) != len(pos):
                raise RuntimeError(f"{self.name} returned {len(a.scores)} scores for {len(pos)} features")
            S[i, pos] = a.scores
        return S
