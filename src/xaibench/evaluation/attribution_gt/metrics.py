"""Metrics of the ground-truth protocol, each with its direction.

* ``attr_pct``: Attr% = sum_{i in ER} |s_i| / sum_i |s_i| (Sec. 5): share of attribution mass
  on the effective region; for a (near-)perfect model trained with r = 0.5 it should be ~1.
* ``precision`` / ``recall`` of a selected feature set (top-k or rationale) against the ER (Sec. 3).
* :func:`shapley_manipulation_range`: the normalised Shapley value of the manipulated features
  that the Shapley axioms allow (Sec. 5.4 / App. B.6).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..base import Metric


def attr_pct(scores: np.ndarray, er: np.ndarray, allow_empty: bool = False) -> float:
    """``sum_{i in ER} |s_i| / sum_i |s_i|``; NaN when every score is 0 (nothing to share).

    An empty ``er`` is refused (its Attr% of 0 would read as a result) unless ``allow_empty``: the
    share of a region that may legitimately be empty (non-correlating articles of a review) is 0."""
    from ...checks import check_nonempty_mask

    s = np.abs(np.asarray(scores, dtype=np.float64))
    er = np.asarray(er, dtype=bool)
    if not allow_empty:
        check_nonempty_mask(er, "er (the effective region)")
    if s.shape != er.shape:
        raise ValueError(f"scores shape {s.shape} does not match the ER mask shape {er.shape}")
    total = s.sum()
    return float(s[er].sum() / total) if total > 0 else float("nan")


def precision_recall(selected: np.ndarray, er: np.ndarray) -> tuple[float, float]:
    """Precision ``|S ∩ ER| / |S|`` and recall ``|S ∩ ER| / |ER|`` (NaN for empty S / ER)."""
    sel = np.asarray(selected, dtype=bool)
    er = np.asarray(er, dtype=bool)
    if sel.shape != er.shape:
        raise ValueError(f"selection shape {sel.shape} does not match the ER mask shape {er.shape}")
    hit = float((sel & er).sum())
    prec = hit / sel.sum() if sel.sum() else float("nan")
    rec = hit / er.sum() if er.sum() else float("nan")
    return float(prec), float(rec)


def precision(selected: np.ndarray, er: np.ndarray) -> float:
    return precision_recall(selected, er)[0]


def recall(selected: np.ndarray, er: np.ndarray) -> float:
    return precision_recall(selected, er)[1]


def shapley_two_player(v_none: float, v_m: float, v_o: float, v_both: float) -> tuple[float, float]:
    """Shapley values ``(s_M, s_O)`` of the two-player game (manipulated vs original features)
    on accuracy: ``s_M = ((v_M - v_0) + (v_MO - v_O)) / 2`` and symmetrically for O."""
    s_m = 0.5 * ((v_m - v_none) + (v_both - v_o))
    s_o = 0.5 * ((v_o - v_none) + (v_both - v_m))
    return s_m, s_o


def shapley_manipulation_range(r: float, p: float) -> tuple[float, float]:
    """Range of the normalised Shapley value ``s_M / (s_M + s_O)`` for a classifier of accuracy
    ``p`` trained with keep-probability ``r`` (balanced binary labels).

    App. B.6: ``v(none) = 0.5``, ``v(M) = p`` (each manipulation value fixes the label),
    ``v(O) in [0.5, max(r, 1-r)]``; hence ``s_M in [(2p - 0.5 - r') / (2p - 1), 1]`` with
    ``r' = max(r, 1 - r)`` (clipped to ``[0, 1]`` when ``p < r'``).
    """
    r, p = float(r), float(p)
    if not 0 <= r <= 1:
        raise ValueError(f"r must lie in [0, 1], got {r}")
    if not 0.5 < p <= 1:
        raise ValueError(f"accuracy p must lie in (0.5, 1] for a normalised Shapley value, got {p}")
    rr = max(r, 1 - r)
    lo = (2 * p - 0.5 - rr) / (2 * p - 1)
    return float(min(max(lo, 0.0), 1.0)), 1.0


METRICS: dict[str, Metric] = {
    "attr_pct": Metric("attr_pct", False, fn=attr_pct, description=
                       "share of absolute attribution on the (joint) effective region; ideal ~1 at r = 0.5"),
    "precision": Metric("precision", False, fn=precision, description="share of selected features inside the ER"),
    "recall": Metric("recall", False, fn=recall, description="share of ER features that are selected"),
}
