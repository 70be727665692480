"""ConceptSHAP adapted to ICaCE (Eq. 24-25, Appendix H)."""
from __future__ import annotations

import itertools
from math import factorial
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from ...data.cebab import ASPECTS
from ._common import (FittedConceptExplainer, check_data, check_queries, embed, fit_cavs, head_proba,
                      module_device, module_dtype, task_targets, train_on_features)


def powerset(items: Sequence[Hashable]) -> list[frozenset]:
    return [frozenset(c) for r in range(len(items) + 1) for c in itertools.combinations(items, r)]


def shapley_values(eta: Mapping[frozenset, Any], players: Sequence[Hashable]) -> dict[Hashable, np.ndarray]:
    """Eq. 23/24: ``sum_{S subset of players minus C} (m-|S|-1)! |S|! / m! * (eta(S + C) - eta(S))``.

    ``eta`` maps every subset (``frozenset``) to a value (scalar or array, e.g. ``(n, K)``).
    """
    m = len(players)
    missing = [s for s in powerset(players) if s not in eta]
    if missing:
        raise ValueError(f"eta lacks {len(missing)} subset(s), e.g. {set(missing[0])}")
    out = {}
    for c in players:
        others = [p for p in players if p != c]
        total = 0.0
        for s in powerset(others):
            w = factorial(m - len(s) - 1) * factorial(len(s)) / factorial(m)
            total = total + w * (np.asarray(eta[s | {c}], dtype=np.float64) - np.asarray(eta[s], dtype=np.float64))
        out[c] = np.asarray(total)
    return out


def completeness_score(y: np.ndarray, model_pred: np.ndarray, concept_pred: np.ndarray, n_classes: int) -> float:
    """Eq. 25: ``(acc(concept model) - a_r) / (acc(model) - a_r)`` with ``a_r = 1 / n_classes``."""
    y = np.asarray(y)
    a_r = 1.0 / n_classes
    denom = float((np.asarray(model_pred) == y).mean()) - a_r
    if abs(denom) < 1e-12:
        return float("nan")
    return (float((np.asarray(concept_pred) == y).mean()) - a_r) / denom


def _make_g(m: int, hidden: int, out_dim: int):
    import torch

    class G(torch.nn.Module):
        """Concept scores (m) -> phi-space (out_dim): Linear-ReLU-Linear; a learned constant if m = 0."""

        def __init__(self):
            super().__init__()
            self.m = m
            if m > 0:
                self.net = torch.nn.Sequential(torch.nn.Linear(m, hidden), torch.nn.ReLU(),
                                               torch.nn.Linear(hidden, out_dim))
            else:
                self.const = torch.nn.Parameter(torch.zeros(out_dim))

        def forward(self, x):
            if self.m == 0:
                return self.const.expand(x.shape[0], -1)
            return self.net(x)

    return G()


class ConceptSHAPExplainer(FittedConceptExplainer):
    """ConceptSHAP (Eq. 24) with the TCAV CAVs of the four aspects as concept directions.

    For each subset ``S`` of concepts a map ``g_S`` (a two-layer perceptron with 500 hidden units, as
    App. H.3 prescribes: "we follow the original paper and set g to be a two-layer perceptron with
    500 hidden units, learned using Adam optimizer for 50 epochs, employing lr=1e-2 and
    batch_size=128"; the authors' released g is linear; a constant for ``S = {}``) from the concept scores ``V_S phi(x)`` back to phi-space is trained with the model's
    head frozen (Adam, lr 1e-2, 50 epochs, batch 128) to predict the gold task labels of the fit data
    -- the ``sup_g`` of Eq. 25.  ``eta_S(x) = softmax(N(g_S(V_S phi(x))))`` (class probabilities, as the
    paper's adaptation), and the estimate for aspect ``C`` is the Shapley value of ``C`` (a ``K``
    vector).  It ignores ``c, c'``.  ``completeness_`` is Eq. 25 for all four concepts on the fit data.
    """

    name = "conceptshap"

    def __init__(self, seed: int = 42, hidden: int = 500, lr: float = 1e-2, epochs: int = 50,
                 batch_size: int = 128, **svm_params: Any):
        self.seed = int(seed)
        self.hidden = int(hidden)
        self.lr = float(lr)
        self.epochs = int(epochs)
        self.batch_size = int(batch_size)
        self.svm_params = svm_params

    def fit(self, model: Any, data: pd.DataFrame) -> "ConceptSHAPExplainer":
        import torch

        from ...progress import progress

        self.model = model
        data = check_data(data)
        self.cavs_, self.cav_accuracy_ = fit_cavs(model, data, self.seed, **self.svm_params)
        self.V_ = np.stack([self.cavs_[a] for a in ASPECTS])  # (4, d)
        y = task_targets(model, data)
        keep = y >= 0
        if keep.sum() < 2:
            raise ValueError("ConceptSHAP needs gold task labels for at least two fit rows")
        phi = embed(model, data.loc[keep, "text"].tolist())
        y = y[keep]
        d = phi.shape[1]
        head = model.head
        device, dtype = module_device(head), module_dtype(head)
        self.gs_: dict[frozenset, Any] = {}
        self.g_history_: dict[frozenset, Any] = {}
        for S in progress(powerset(ASPECTS), desc="ConceptSHAP g_S", total=2 ** len(ASPECTS)):
            torch.manual_seed(self.seed)
            g = _make_g(len(S), self.hidden, d).to(device=device, dtype=dtype)
            scores = self._scores(phi, S)
            self.g_history_[S] = train_on_features(g, scores, y, lr=self.lr, epochs=self.epochs,
                                                   batch_size=self.batch_size, seed=self.seed, frozen_after=head,
                                                   desc=f"g_{'+'.join(sorted(S)) or 'empty'}")
            self.gs_[S] = g
        full = frozenset(ASPECTS)
        concept_pred = self._eta(phi, full).argmax(1)
        model_pred = head_proba(head, phi).argmax(1)
        self.completeness_ = completeness_score(y, model_pred, concept_pred, int(model.n_classes))
        self._fitted = True
        return self

    def _scores(self, phi: np.ndarray, S: frozenset) -> np.ndarray:
        rows = [ASPECTS.index(a) for a in ASPECTS if a in S]
        if not rows:
            return np.zeros((len(phi), 0), dtype=np.float32)
        return (phi @ self.V_[rows].T).astype(np.float32)

    def _eta(self, phi: np.ndarray, S: frozenset) -> np.ndarray:
        """softmax(N(g_S(V_S phi))) -- class probabilities from the concept subset ``S``."""
        import torch

        g = self.gs_[S]
        g.eval()
        device, dtype = module_device(g), module_dtype(g)
        with torch.inference_mode():
            z = g(torch.as_tensor(self._scores(phi, S), dtype=dtype, device=device))
        return head_proba(self.model.head, z.detach().float().cpu().numpy())

    def completeness(self, texts: Sequence[str], labels: Sequence[int]) -> float:
        """Eq. 25 on other labelled texts (task labels in the model's class space)."""
        self._require_fit()
        phi = embed(self.model, list(texts))
        y = np.asarray(labels)
        return completeness_score(y, head_proba(self.model.head, phi).argmax(1),
                                  self._eta(phi, frozenset(ASPECTS)).argmax(1), int(self.model.n_classes))

    def explain(self, queries: pd.DataFrame) -> np.ndarray:
        self._require_fit()
        q = check_queries(queries, need=("text", "aspect"))
        phi = embed(self.model, q["text"].tolist())
        eta = {S: self._eta(phi, S) for S in powerset(ASPECTS)}
        shap = shapley_values(eta, ASPECTS)
        out = np.zeros((len(q), int(self.model.n_classes)))
        for a in ASPECTS:
            m = (q["aspect"] == a).to_numpy()
            out[m] = shap[a][m]
        return out
