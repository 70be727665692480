"""Grad-CAM-Text (Lertvittayakumjorn & Toni, 2019): Grad-CAM on the conv maps of a 1D CNN.

For filter ``k`` of width ``w`` with post-ReLU map ``A_k(t)`` (one value per window starting at
``t``) and max-pooled feature ``f_k = max_t A_k(t)``, its weight is the gradient of the target
logit ``y_c`` w.r.t. the pooled feature, ``alpha_k = dy_c / df_k`` (Grad-CAM's global-average of
``dy_c / dA_k(t)`` is ``alpha_k / T`` under max-pooling, the same up to a constant).  Window scores:

* ``positions="max"`` (default, the authors' code): the filter's relevance ``alpha_k * f_k`` goes to
  the window where the max was attained; a window's score is the sum over the filters that
  selected it.
* ``positions="all"`` (Grad-CAM proper): every window gets ``sum_k alpha_k * A_k(t)`` over the
  filters of its width.

``Attribution.ngrams`` lists the scored windows ``(start, end, score)`` (end clipped to the text);
a word's score is the sum of the scores of the windows covering it (the authors' heat map,
before their min-max normalisation).  Positive scores are evidence for the target class,
negative ones (filters whose gradient is negative) counter-evidence, as in the authors' code.
"""
from __future__ import annotations

import numpy as np

from ..base import Attribution
from ._common import BaseLocalExplainer, explained_positions, row_tokens


class GradCAMText(BaseLocalExplainer):
    name = "gradcam_text"
    paper_name = "Grad-CAM-T (N)"
    granularity = "ngrams"
    needs_torch = True

    def __init__(self, positions: str = "max", batch_size: int = 32, seed: int = 42):
        super().__init__(batch_size=batch_size, seed=seed)
        if positions not in ("max", "all"):
            raise ValueError(f"positions must be 'max' (the authors' code) or 'all' (Grad-CAM proper); got {positions!r}")
        self.positions = positions

    def fit(self, model, data=None):
        super().fit(model, data)
        if not hasattr(model.module, "feature_maps") or not hasattr(model, "filter_widths"):
            raise TypeError(f"Grad-CAM-Text needs a 1D CNN exposing module.feature_maps and filter_widths; "
                            f"got {type(model).__name__}")
        return self

    def _explain_batch(self, texts, targets):
        import torch

        model = self.model
        ids, mask = model.encode(texts)
        model.n_forward += len(texts)
        module = model.module
        module.eval()
        with torch.enable_grad():
            maps = [m.detach() for m in module.feature_maps(ids, mask)]
            pooled = torch.cat([m.amax(dim=2) for m in maps], dim=1).requires_grad_(True)
            logits = module.head(pooled)
            sel = logits[torch.arange(len(texts)), torch.as_tensor(targets)]
            (alpha,) = torch.autograd.grad(sel.sum(), pooled)
        alpha = alpha.cpu().numpy()
        pooled_np = pooled.detach().cpu().numpy()
        maps_np = [m.cpu().numpy() for m in maps]
        keep = explained_positions(model, ids, mask)
        widths = model.filter_widths
        F = maps_np[0].shape[1]
        out = []
        for i, (text, tgt) in enumerate(zip(texts, targets)):
            n = int(keep[i].sum())
            toks = row_tokens(model, text, keep[i])
            windows: dict[tuple[int, int], float] = {}
            for g, (w, M) in enumerate(zip(widths, maps_np)):
                a = alpha[i, g * F : (g + 1) * F]
                A = M[i]  # (F, T)
                n_valid = max(n - w, 0) + 1 if n > 0 else 0
                if n_valid == 0:
                    continue
                A = A[:, :n_valid]
                if self.positions == "max":
                    starts = A.argmax(axis=1)
                    vals = a * pooled_np[i, g * F : (g + 1) * F]
                    for t, v in zip(starts, vals):
                        key = (int(t), min(int(t) + w, n))
                        windows[key] = windows.get(key, 0.0) + float(v)
                else:
                    per_t = (a[:, None] * A).sum(axis=0)
                    for t, v in enumerate(per_t):
                        key = (t, min(t + w, n))
                        windows[key] = windows.get(key, 0.0) + float(v)
            scores = np.zeros(n)
            for (s, e), v in windows.items():
                scores[s:e] += v
            ngrams = [(s, e, v) for (s, e), v in sorted(windows.items()) if v != 0.0]
            out.append(Attribution(text, toks, scores, tgt, ngrams=ngrams,
                                   meta={"method": self.name, "positions": self.positions}))
        return out
