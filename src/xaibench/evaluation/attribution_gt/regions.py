"""Effective regions (Sec. 4): the features a manipulation may modify.

An ER is a boolean mask over input features (pixels ``(H, W)``, tokens ``(L,)``).  The blank
manipulation has an empty ER; the joint ER of a set of manipulations is the union of theirs --
the region an attribution must cover, because a model may legitimately use the *absence* of a
manipulation (the paper's Remark).
"""
from __future__ import annotations

from typing import Iterable

import numpy as np


def joint_er(masks: Iterable[np.ndarray]) -> np.ndarray:
    """Union of the ERs of all manipulations (blank ones included: they add nothing)."""
    masks = [np.asarray(m, dtype=bool) for m in masks]
    if not masks:
        raise ValueError("joint_er needs at least one mask")
    shape = masks[0].shape
    for m in masks:
        if m.shape != shape:
            raise ValueError(f"ER masks differ in shape: {shape} vs {m.shape}")
    return np.logical_or.reduce(masks)


def changed_mask(original: np.ndarray, manipulated: np.ndarray, atol: float = 0.0) -> np.ndarray:
    """Feature positions where ``manipulated`` differs from ``original``.

    Images ``(H, W, C)`` are reduced over channels to an ``(H, W)`` mask; sequences compare
    element-wise (token strings or ids).
    """
    a, b = np.asarray(original), np.asarray(manipulated)
    if a.shape != b.shape:
        raise ValueError(f"original and manipulated inputs differ in shape: {a.shape} vs {b.shape}")
    if a.dtype.kind in "OUS":
        diff = a != b
    else:
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64)) > atol
    return diff.any(-1) if diff.ndim == 3 else diff


def check_inside_er(original: np.ndarray, manipulated: np.ndarray, er: np.ndarray, atol: float = 0.0) -> None:
    """Raise if the manipulation changed any feature outside its effective region."""
    ch = changed_mask(original, manipulated, atol)
    er = np.asarray(er, dtype=bool)
    if ch.shape != er.shape:
        raise ValueError(f"ER mask shape {er.shape} does not match the input's feature shape {ch.shape}")
    outside = ch & ~er
    if outside.any():
        idx = np.argwhere(outside)[:3].tolist()
        raise AssertionError(f"{int(outside.sum())} feature(s) changed outside the ER, e.g. at {idx}")
