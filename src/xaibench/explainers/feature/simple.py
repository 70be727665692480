"""The white box (LR), Random and Omission explainers of Ge et al. (Sec. 4.3)."""
from __future__ import annotations

import numpy as np

from ...data.feature_data import PAD_ID
from ._base import FeatureExplainer, row_seed


def _toward(targets: np.ndarray) -> np.ndarray:
    """+1 for class 1, -1 for class 0: the sign that turns a logit share into support for the target."""
    return np.where(np.asarray(targets) == 1, 1.0, -1.0)[:, None]


class LogisticRegressionExplainer(FeatureExplainer):
    """The model's own explanation: feature ``j`` scores ``w_j . e(x_j)`` (its additive share of
    the logit, Molnar Sec. 4.2), signed towards the explained class.  Ranked by ``|score|`` this is
    the ground truth of the protocol."""

    name = "logistic_regression"
    paper_name = "LR"

    def _explain_rows(self, X, targets):
        return self.model.contributions(X) * _toward(targets)


class RandomExplainer(FeatureExplainer):
    """Uniform random scores in (0, 1) on the non-padding features (seeded per row)."""

    name = "random"
    paper_name = "Random"

    def _explain_rows(self, X, targets):
        return np.stack([np.random.default_rng(row_seed(self.seed, r)).uniform(1e-6, 1.0, X.shape[1]) for r in X])


#: how Omission removes a feature: the zero embedding (``zero``, the erasure metrics' and the ground
#: truth's own operation) or the feature's mean embedding over the training rows (``train_mean``)
OMISSION_REMOVALS = ("zero", "train_mean")


class OmissionExplainer(FeatureExplainer):
    """Leave-one-out: ``p(t | x) - p(t | x with feature j removed)`` (Robnik-Sikonja & Kononenko 2008).

    ``removal="zero"`` (default) deletes the feature with the zero embedding: the same operation as
    Comp./Suff./DFR (del.) and as the ground truth's logit shares, so on a linear model Omission ranks
    by the very quantity those metrics measure.  ``removal="train_mean"`` replaces the feature's
    embedding by its mean over the training rows passed to :meth:`fit` (non-padding slots only)."""

    name = "omission"
    paper_name = "Omission"

    def __init__(self, seed: int = 42, removal: str = "zero"):
        super().__init__(seed=seed)
        if removal not in OMISSION_REMOVALS:
            raise ValueError(f"removal must be one of {', '.join(map(repr, OMISSION_REMOVALS))}; got {removal!r}")
        self.removal = removal

    def _mean_embeddings(self) -> np.ndarray:
        """``(M, d)``: each slot's mean embedding over the training rows (zero for a slot never filled)."""
        if self.train_X is None:
            raise RuntimeError("Omission with removal='train_mean' needs the training rows: fit(model, train_ids)")
        E = self.model.embed_ids(self.train_X)
        real = (self.train_X != PAD_ID)[:, :, None]
        cnt = real.sum(0)
        return np.where(cnt > 0, (E * real).sum(0) / np.maximum(cnt, 1), 0.0)

    def _explain_rows(self, X, targets):
        n, M = X.shape
        p0 = self.model.proba_ids(X)[np.arange(n), targets]
        if self.removal == "zero":
            rep = np.repeat(X, M, axis=0)
            rep[np.arange(n * M), np.tile(np.arange(M), n)] = PAD_ID
            p = self.model.proba_ids(rep)[np.arange(n * M), np.repeat(targets, M)].reshape(n, M)
            return p0[:, None] - p
        # the model's logit in float64 (as proba_ids): z = b + sum_j w_j . e_j; slot j's embedding swapped
        W = self.model.weights
        z0 = self.model.logit_z(X)
        z = z0[:, None] - self.model.contributions(X) + (self._mean_embeddings() * W).sum(1)[None, :]
        p1 = 1.0 / (1.0 + np.exp(-z))
        p = np.where(np.asarray(targets)[:, None] == 1, p1, 1.0 - p1)
        return p0[:, None] - p
