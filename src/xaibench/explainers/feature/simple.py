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


class OmissionExplainer(FeatureExplainer):
    """Leave-one-out: ``p(t | x) - p(t | x with feature j deleted)`` (zero embedding; Robnik-Sikonja
    & Kononenko 2008)."""

    name = "omission"
    paper_name = "Omission"

    def _explain_rows(self, X, targets):
        n, M = X.shape
        p0 = self.model.proba_ids(X)[np.arange(n), targets]
        rep = np.repeat(X, M, axis=0)
        rep[np.arange(n * M), np.tile(np.arange(M), n)] = PAD_ID
        p = self.model.proba_ids(rep)[np.arange(n * M), np.repeat(targets, M)].reshape(n, M)
        return p0[:, None] - p
