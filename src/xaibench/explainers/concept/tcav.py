"""TCAV adapted to ICaCE (Eq. 9, Appendix G)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...data.cebab import ASPECTS
from ._common import FittedConceptExplainer, check_data, check_queries, embed, fit_cavs, module_device, \
    module_dtype


def head_sensitivities(head: Any, features: np.ndarray, direction: np.ndarray, batch_size: int = 256) -> np.ndarray:
    """``(grad_phi N_k(phi) . v)`` for every class ``k`` (logits ``N_k``), shape ``(n, K)``."""
    import torch

    device, dtype = module_device(head), module_dtype(head)
    v = torch.as_tensor(np.asarray(direction), dtype=dtype, device=device)
    was = head.training
    head.eval()
    out = []
    try:
        for i in range(0, len(features), batch_size):
            phi = torch.as_tensor(np.asarray(features[i:i + batch_size]), dtype=dtype, device=device)
            phi.requires_grad_(True)
            logits = head(phi)
            cols = []
            for k in range(logits.shape[1]):
                (g,) = torch.autograd.grad(logits[:, k].sum(), phi, retain_graph=k < logits.shape[1] - 1)
                cols.append((g @ v).float())
            out.append(torch.stack(cols, 1).detach().cpu().numpy())
    finally:
        head.train(was)
    return np.concatenate(out, 0).astype(np.float64)


class TCAVExplainer(FittedConceptExplainer):
    """TCAV (Eq. 9): ``tanh(grad N_k(phi(x)) . v_C)`` for each class ``k``.

    ``v_C`` (one per aspect) is the unit normal of a linear SVM (SGD, alpha=0.01, tol=1e-3,
    max_iter=1000) separating, in phi-space, fit texts where the aspect is expressed (majority
    Positive or Negative) from those where it is ``unknown``; texts without a majority are dropped
    (App. G.2).  The CAV is oriented towards *concept present*.  As in the paper the estimate ignores
    the base and target values ``c, c'`` (only the aspect is used), so it cannot follow the sign of
    an intervention.  ``cav_accuracy_`` holds each SVM's training accuracy.
    """

    name = "tcav"

    def __init__(self, seed: int = 42, **svm_params: Any):
        self.seed = int(seed)
        self.svm_params = svm_params

    def fit(self, model: Any, data: pd.DataFrame) -> "TCAVExplainer":
        self.model = model
        data = check_data(data)
        self.cavs_, self.cav_accuracy_ = fit_cavs(model, data, self.seed, **self.svm_params)
        self._fitted = True
        return self

    def explain(self, queries: pd.DataFrame) -> np.ndarray:
        self._require_fit()
        q = check_queries(queries, need=("text", "aspect"))
        feats = embed(self.model, q["text"].tolist())
        out = np.zeros((len(q), int(self.model.n_classes)))
        for a in ASPECTS:
            m = (q["aspect"] == a).to_numpy()
            if m.any():
                out[m] = np.tanh(head_sensitivities(self.model.head, feats[m], self.cavs_[a]))
        return out
