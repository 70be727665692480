"""The white box (LR), Random and Omission explainers of Ge et al. (Sec. 4.3)."""
from __future__ import annotations

import numpy as np

from ...data.feature_data import PAD_ID
from ...models.embedding_lr import REFERENCES
from ._base import FeatureExplainer, row_seed


def _toward(targets: np.ndarray) -> np.ndarray:
    """+1 for class 1, -1 for class 0: the sign that turns a logit share into support for the target."""
    return np.where(np.asarray(targets) == 1, 1.0, -1.0)[:, None]


class LogisticRegressionExplainer(FeatureExplainer):
    """The model's own explanation: feature ``j`` scores its effect on the logit, ``w_j . e(x_j)`` minus the
    share of its reference value (Molnar Sec. 4.2; ``reference``, see
    :meth:`~xaibench.models.embedding_lr.EmbeddingLR.reference_shares`: ``reference`` (default) = a
    categorical feature's first value, 0 for a word; ``zero`` = the zero embedding; ``train_mean`` = the
    slot's training-mean embedding, from the rows passed to :meth:`fit`), signed towards the explained
    class.  The ground truth of the protocol selects by the same effects."""

    name = "logistic_regression"
    paper_name = "LR"

    def __init__(self, seed: int = 42, reference: str = "reference"):
        super().__init__(seed=seed)
        if reference not in REFERENCES:
            raise ValueError(f"reference must be one of {', '.join(map(repr, REFERENCES))}; got {reference!r}")
        self.reference = reference

    def _explain_rows(self, X, targets):
        if self.reference == "train_mean" and self.train_X is None:
            raise RuntimeError("LR with reference='train_mean' needs the training rows: fit(model, train_ids)")
        return self.model.effects(X, self.reference, self.train_X) * _toward(targets)


class RandomExplainer(FeatureExplainer):
    """Uniform random scores in (0, 1) on the non-padding features (seeded per row)."""

    name = "random"
    paper_name = "Random"

    def _explain_rows(self, X, targets):
        return np.stack([np.random.default_rng(row_seed(self.seed, r)).uniform(1e-6, 1.0, X.shape[1]) for r in X])


#: how Omission removes a feature: ``delete`` (default: a tabular feature's embedding zeroed, the embedding
#: form of an all-zero one-hot block; a word taken out of the sentence, the later words moving up one
#: position), ``zero`` (the zero embedding in place, text too: the erasure metrics' operation) or
#: ``train_mean`` (the slot's mean embedding over the training rows)
OMISSION_REMOVALS = ("delete", "zero", "train_mean")


def delete_words(X: np.ndarray) -> np.ndarray:
    """``(n * M, M)``: for each row of ``X`` and each position ``j`` (row-major), the row with word ``j`` taken
    out: the words after it move up one position and padding fills the last one."""
    X = np.asarray(X)
    n, M = X.shape
    out = np.repeat(X, M, axis=0).reshape(n, M, M)            # [i, j, :] = row i, word j to delete
    keep = ~np.eye(M, dtype=bool)                               # [j, :]: every position but j
    shifted = np.full((n, M, M), PAD_ID, dtype=X.dtype)
    shifted[:, :, : M - 1] = out[:, keep].reshape(n, M, M - 1)
    return shifted.reshape(n * M, M)


class OmissionExplainer(FeatureExplainer):
    """Leave-one-out: ``p(t | x) - p(t | x with feature j removed)`` (Robnik-Sikonja & Kononenko 2008).

    ``removal`` (:data:`OMISSION_REMOVALS`): ``delete`` (default) removes a word from the sentence (the
    later words move up, so on a per-position model the change is not the word's own share) and zeroes a
    tabular feature's embedding; ``zero`` zeroes the embedding in place (on a linear model this ranks by the
    feature's share ``w_j . e(x_j)``, the ground truth's ``zero`` reading); ``train_mean`` replaces the
    embedding by the slot's mean over the training rows passed to :meth:`fit` (non-padding slots only)."""

    name = "omission"
    paper_name = "Omission"

    def __init__(self, seed: int = 42, removal: str = "delete"):
        super().__init__(seed=seed)
        if removal not in OMISSION_REMOVALS:
            raise ValueError(f"removal must be one of {', '.join(map(repr, OMISSION_REMOVALS))}; got {removal!r}")
        self.removal = removal

    def _explain_rows(self, X, targets):
        n, M = X.shape
        p0 = self.model.proba_ids(X)[np.arange(n), targets]
        if self.removal == "zero" or (self.removal == "delete" and self.model.spec.kind != "text"):
            rep = np.repeat(X, M, axis=0)
            rep[np.arange(n * M), np.tile(np.arange(M), n)] = PAD_ID
        elif self.removal == "delete":
            rep = delete_words(X)
        else:
            if self.train_X is None:
                raise RuntimeError("Omission with removal='train_mean' needs the training rows: fit(model, train_ids)")
            # the model's logit in float64 (as proba_ids): z = b + sum_j w_j . e_j; slot j's share swapped
            z = (self.model.logit_z(X)[:, None] - self.model.contributions(X)
                 + self.model.reference_shares("train_mean", self.train_X)[None, :])
            p1 = 1.0 / (1.0 + np.exp(-z))
            return p0[:, None] - np.where(np.asarray(targets)[:, None] == 1, p1, 1.0 - p1)
        p = self.model.proba_ids(rep)[np.arange(n * M), np.repeat(targets, M)].reshape(n, M)
        out = p0[:, None] - p
        return np.where(X != PAD_ID, out, 0.0)
