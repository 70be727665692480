"""INLP adapted to ICaCE (Ravfogel et al., 2020; Appendix F)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...data.cebab import ASPECTS, CONCEPT_VALUES
from ._common import (FittedConceptExplainer, SVM_PARAMS, check_data, check_queries, copy_head, embed, head_proba,
                      proba_lookup, task_targets, train_on_features)


@dataclass
class INLPResult:
    """The projection ``P`` (d x d, applied as ``X @ P``) and per-iteration probe accuracies.

    ``train_accuracy[i]`` / ``dev_accuracy[i]``: accuracy of the i-th linear probe on the
    representation after ``i`` projections (entry 0 = the original representation);
    ``final_*``: a fresh probe after all projections; ``chance``: majority-class rate.
    """

    P: np.ndarray
    train_accuracy: list[float] = field(default_factory=list)
    dev_accuracy: list[float] = field(default_factory=list)
    final_train_accuracy: float = float("nan")
    final_dev_accuracy: float = float("nan")
    chance: float = float("nan")
    rank_removed: int = 0


def _nullspace_projection(W: np.ndarray, d: int, tol: float = 1e-10) -> tuple[np.ndarray, int]:
    """``I - Q Q^T`` with ``Q`` an orthonormal basis of the row space of ``W``."""
    if W.size == 0:
        return np.eye(d), 0
    _, s, vt = np.linalg.svd(W, full_matrices=False)
    r = int((s > tol * max(1.0, s.max())).sum())
    Q = vt[:r].T
    return np.eye(d) - Q @ Q.T, r


def inlp_projection(X: np.ndarray, y: np.ndarray, n_iter: int = 10, seed: int = 42,
                    X_dev: np.ndarray | None = None, y_dev: np.ndarray | None = None, **svm: Any) -> INLPResult:
    """Iterative nullspace projection: ``n_iter`` times, train a linear SVM (SGD, alpha=0.01, tol=1e-3,
    max_iter=1000) to predict ``y`` from ``X @ P`` and add its weight rows to the removed subspace;
    ``P`` projects onto the orthogonal complement of all removed directions."""
    from sklearn.linear_model import SGDClassifier

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if len(np.unique(y)) < 2:
        raise ValueError("INLP needs at least two concept classes in the fit data")
    d = X.shape[1]
    params = {**SVM_PARAMS, **svm}
    res = INLPResult(P=np.eye(d))
    _, counts = np.unique(y, return_counts=True)
    res.chance = float(counts.max() / counts.sum())
    Ws: list[np.ndarray] = []

    def probe(i: int):
        clf = SGDClassifier(**params, random_state=seed + i).fit(X @ res.P, y)
        tr = float((clf.predict(X @ res.P) == y).mean())
        dv = float((clf.predict(X_dev @ res.P) == y_dev).mean()) if X_dev is not None and len(X_dev) else float("nan")
        return clf, tr, dv

    for i in range(n_iter):
        clf, tr, dv = probe(i)
        res.train_accuracy.append(tr)
        res.dev_accuracy.append(dv)
        Ws.append(np.atleast_2d(clf.coef_))
        res.P, res.rank_removed = _nullspace_projection(np.concatenate(Ws, 0), d)
    _, res.final_train_accuracy, res.final_dev_accuracy = probe(n_iter)
    return res


class INLPExplainer(FittedConceptExplainer):
    """INLP (App. F): per aspect, ``n_iter`` = 10 linear-SVM nullspace projections of phi(x) remove the
    aspect's 3-way label (Negative / unknown / Positive); a copy of the model's head is then trained
    on the projected representations of that aspect's labelled fit rows -- the rows the projection
    was learned from, as the paper's procedure implies -- with their gold task labels (Adam lr 2e-5,
    5 epochs), and the estimate is ``N'(P phi(x)) - N(phi(x))``.

    Like the paper it ignores ``c'`` (it can only estimate ``c' = unknown``).  A stratified
    ``probe_holdout`` share of the aspect-labelled rows is held out to measure probe accuracy
    (``results_[aspect].dev_accuracy``); the projection is learned on the rest.
    """

    name = "inlp"

    def __init__(self, seed: int = 42, n_iter: int = 10, lr: float = 2e-5, epochs: int = 5, batch_size: int = 32,
                 probe_holdout: float = 0.2, **svm_params: Any):
        self.seed = int(seed)
        self.n_iter = int(n_iter)
        self.lr = float(lr)
        self.epochs = int(epochs)
        self.batch_size = int(batch_size)
        self.probe_holdout = float(probe_holdout)
        self.svm_params = svm_params

    def fit(self, model: Any, data: pd.DataFrame) -> "INLPExplainer":
        self.model = model
        data = check_data(data)
        y_task = task_targets(model, data)
        task_rows = y_task >= 0
        if task_rows.sum() < 2:
            raise ValueError("INLP needs gold task labels for at least two fit rows")
        phi_all = embed(model, data["text"].tolist()).astype(np.float64)
        rng = np.random.default_rng(self.seed)
        self.results_: dict[str, INLPResult] = {}
        self.heads_: dict[str, Any] = {}
        self.head_history_: dict[str, Any] = {}
        for a in ASPECTS:
            lab = data[f"{a}_majority"]
            rows = np.nonzero(lab.isin(CONCEPT_VALUES).to_numpy())[0]
            y = lab.iloc[rows].map({v: i for i, v in enumerate(CONCEPT_VALUES)}).to_numpy(dtype=np.int64)
            dev = np.zeros(len(rows), dtype=bool)
            if self.probe_holdout > 0:
                for c in np.unique(y):  # stratified hold-out
                    idx = np.nonzero(y == c)[0]
                    k = int(round(self.probe_holdout * len(idx)))
                    if 0 < k < len(idx):
                        dev[rng.choice(idx, size=k, replace=False)] = True
            X = phi_all[rows]
            res = inlp_projection(X[~dev], y[~dev], n_iter=self.n_iter, seed=self.seed,
                                  X_dev=X[dev], y_dev=y[dev], **self.svm_params)
            self.results_[a] = res
            head = copy_head(model)
            head_rows = task_rows & lab.isin(CONCEPT_VALUES).to_numpy()  # this aspect's labelled rows
            self.head_history_[a] = train_on_features(
                head, (phi_all[head_rows] @ res.P).astype(np.float32), y_task[head_rows], lr=self.lr,
                epochs=self.epochs, batch_size=self.batch_size, seed=self.seed, desc=f"INLP head {a}")
            self.heads_[a] = head
        self._fitted = True
        return self

    @property
    def probe_accuracy_(self) -> pd.DataFrame:
        """Long table: aspect, iteration, train_accuracy, dev_accuracy, chance."""
        self._require_fit()
        rows = []
        for a, r in self.results_.items():
            for i, (tr, dv) in enumerate(zip(r.train_accuracy + [r.final_train_accuracy],
                                             r.dev_accuracy + [r.final_dev_accuracy])):
                rows.append({"aspect": a, "iteration": i, "train_accuracy": tr, "dev_accuracy": dv,
                             "chance": r.chance})
        return pd.DataFrame(rows)

    def explain(self, queries: pd.DataFrame) -> np.ndarray:
        self._require_fit()
        q = check_queries(queries, need=("text", "aspect"))
        texts = q["text"].tolist()
        phi = embed(self.model, texts).astype(np.float64)
        p = proba_lookup(self.model, texts)
        out = np.zeros_like(p)
        for a in ASPECTS:
            m = (q["aspect"] == a).to_numpy()
            if m.any():
                out[m] = head_proba(self.heads_[a], (phi[m] @ self.results_[a].P).astype(np.float32)) - p[m]
        return out
