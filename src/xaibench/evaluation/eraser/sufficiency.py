"""ERASER sufficiency (DeYoung et al., ACL 2020, Sec. 4.2), as AOPC over token bins.

``suff = mean_k [ p(y | x) - p(y | r_k) ]`` with ``r_k`` the top ``k %`` tokens alone: the relevant
tokens on their own should keep the prediction, so **lower is better** (it can be negative).
"""
from __future__ import annotations

import numpy as np

from ..base import Metric


def sufficiency(p_full: np.ndarray, p_kept: np.ndarray) -> np.ndarray:
    """Per text: ``p_full`` ``(n,)`` = p(y|x); ``p_kept`` ``(n, B)`` = p(y|only the top tokens) at each of
    ``B`` bins -> ``(n,)`` mean drop (AOPC)."""
    p_full, p_kept = np.asarray(p_full, dtype=float), np.asarray(p_kept, dtype=float)
    if p_kept.ndim != 2 or p_kept.shape[0] != p_full.shape[0]:
        raise ValueError(f"p_kept must have shape (n, bins) with n = len(p_full) = {len(p_full)}; got {p_kept.shape}")
    return (p_full[:, None] - p_kept).mean(axis=1)


METRIC = Metric("sufficiency", True, fn=sufficiency, label="Sufficiency (AOPC)",
                description="mean over bins of p(y|x) - p(y|only the top-k% tokens); lower is better")
