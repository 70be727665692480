"""ERASER comprehensiveness (DeYoung et al., ACL 2020, Sec. 4.2), as AOPC over token bins.

For a text ``x`` explained for class ``y`` and the top ``k %`` of its tokens by relevance ``r_k``:
``comp = mean_k [ p(y | x) - p(y | x \\ r_k) ]``.  Removing what the explainer found relevant should
lower the probability: **higher is better**.
"""
from __future__ import annotations

import numpy as np

from ..base import Metric


def comprehensiveness(p_full: np.ndarray, p_removed: np.ndarray) -> np.ndarray:
    """Per text: ``p_full`` ``(n,)`` = p(y|x); ``p_removed`` ``(n, B)`` = p(y|x without the top tokens)
    at each of ``B`` bins -> ``(n,)`` mean drop (AOPC)."""
    p_full, p_removed = np.asarray(p_full, dtype=float), np.asarray(p_removed, dtype=float)
    if p_removed.ndim != 2 or p_removed.shape[0] != p_full.shape[0]:
        raise ValueError(f"p_removed must have shape (n, bins) with n = len(p_full) = {len(p_full)}; "
                         f"got {p_removed.shape}")
    return (p_full[:, None] - p_removed).mean(axis=1)


METRIC = Metric("comprehensiveness", False, fn=comprehensiveness, label="Comprehensiveness (AOPC)",
                description="mean over bins of p(y|x) - p(y|x without the top-k% tokens); higher is better")
