"""Label reassignment (Sec. 4) and the accuracy bound without the manipulation.

Binary case: the original label is kept with probability ``r`` and flipped otherwise, so a
classifier that sees only the original features reaches at most ``max(r, 1 - r)`` in expectation
(``r = 0.5``: no original feature is informative).  k-class case: a row-stochastic matrix
``R[i, j] = P(new = j | original = i)``; the bound is ``sum_i P(orig = i) max_j R[i, j]``.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np


def _check_r(r: float) -> float:
    r = float(r)
    if not 0.0 <= r <= 1.0:
        raise ValueError(f"keep-probability r must lie in [0, 1], got {r}")
    return r


def binary_reassignment_matrix(r: float) -> np.ndarray:
    """``[[r, 1-r], [1-r, r]]`` -- the matrix the authors' scripts pass for the binary case."""
    r = _check_r(r)
    return np.array([[r, 1 - r], [1 - r, r]])


def _check_matrix(R: np.ndarray) -> np.ndarray:
    R = np.asarray(R, dtype=np.float64)
    if R.ndim != 2 or R.shape[0] != R.shape[1]:
        raise ValueError(f"reassignment matrix must be square (k x k), got shape {R.shape}")
    if (R < -1e-12).any() or not np.allclose(R.sum(1), 1.0, atol=1e-9):
        raise ValueError("reassignment matrix rows must be probability vectors (non-negative, summing to 1)")
    return R


def reassign_labels(labels: Sequence[int], R: np.ndarray, seed: int | np.random.Generator = 0) -> np.ndarray:
    """New label ``j`` for original label ``i`` with probability ``R[i, j]`` (independently per item)."""
    R = _check_matrix(R)
    labels = np.asarray(labels, dtype=np.int64)
    if labels.size and (labels.min() < 0 or labels.max() >= R.shape[0]):
        raise ValueError(f"labels must lie in [0, {R.shape[0] - 1}] for a {R.shape[0]}-class matrix")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    u = rng.random(len(labels))
    cdf = np.cumsum(R, axis=1)[labels]  # (n, k)
    return np.minimum((u[:, None] >= cdf).sum(1), R.shape[0] - 1).astype(np.int64)


def reassign_labels_binary(labels: Sequence[int], r: float, seed: int | np.random.Generator = 0) -> np.ndarray:
    """Keep each binary label with probability ``r``, flip it otherwise."""
    return reassign_labels(labels, binary_reassignment_matrix(r), seed)


def accuracy_bound_binary(r: float) -> float:
    """Expected accuracy reachable without the manipulation: ``max(r, 1 - r)``."""
    r = _check_r(r)
    return max(r, 1.0 - r)


def accuracy_bound(R: np.ndarray, prior: Sequence[float] | None = None) -> float:
    """``sum_i prior_i max_j R[i, j]``: the best expected accuracy of a classifier that knows the
    original label perfectly but not the manipulation (uniform prior by default)."""
    R = _check_matrix(R)
    p = np.full(R.shape[0], 1.0 / R.shape[0]) if prior is None else np.asarray(prior, dtype=np.float64)
    if p.shape != (R.shape[0],) or not np.isclose(p.sum(), 1.0):
        raise ValueError(f"prior must be a probability vector of length {R.shape[0]}")
    return float((p * R.max(1)).sum())


def finite_test_tail(n: int, bound: float, acc: float, exact: bool = False) -> float:
    """Probability that a classifier whose expected accuracy is at most ``bound`` reaches ``acc``
    or more on ``n`` i.i.d. test items.

    Default: the Hoeffding bound ``exp(-2 n (acc - bound)^2)`` (1 when ``acc <= bound``);
    ``exact=True``: the binomial tail ``P(Bin(n, bound) >= ceil(acc * n))``.
    """
    if n < 1:
        raise ValueError(f"test-set size n must be >= 1, got {n}")
    if not (0 <= bound <= 1 and 0 <= acc <= 1):
        raise ValueError("bound and acc must lie in [0, 1]")
    if not exact:
        return 1.0 if acc <= bound else math.exp(-2.0 * n * (acc - bound) ** 2)
    k0 = math.ceil(acc * n - 1e-12)
    return float(sum(math.comb(n, k) * bound**k * (1 - bound) ** (n - k) for k in range(k0, n + 1)))
