"""Which examples of the question pool become questions (the paper's selection rules).

Question selection (the paper's rules)
--------------------------------------
* Task 1: examples that the well-trained and the worse model put in the *same* class; balanced
  over the cells (predicted class x prediction correct) -- for a binary task exactly TP / TN / FP /
  FN (positive class = label 1), 25 each.  A cell with fewer examples contributes all it has.
* Task 2: well-trained model, ``max_c p_c > 0.9`` (:data:`TAU_HIGH`); top-3 evidence.
* Task 3: well-trained model, ``max_c p_c < 0.7`` (:data:`TAU_LOW`); top-3 evidence and top-3
  counter-evidence, predicted class and its probability.
  Tasks 2 and 3 are balanced over (prediction correct x predicted class), half correct / half
  incorrect (our choice; the poster does not give the counts).
* The same examples are used for every explanation method (a paired design): differences between
  methods are not differences between sampled examples.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

#: the paper's confidence thresholds of tasks 2 (above) and 3 (below)
TAU_HIGH = 0.9
TAU_LOW = 0.7


def cell_name(pred: int, correct: bool, n_classes: int, class_names: Sequence[str] | None = None) -> str:
    """TP / TN / FP / FN for a binary task (positive class = 1), else ``correct:<class>`` /
    ``incorrect:<class>``."""
    if n_classes == 2:
        return ("T" if correct else "F") + ("P" if pred == 1 else "N")
    name = class_names[pred] if class_names is not None else str(pred)
    return f"{'correct' if correct else 'incorrect'}:{name}"


def _balanced(cells: Sequence[str], n_per_cell: Mapping[str, int], seed: int) -> np.ndarray:
    """Indices: up to ``n_per_cell[c]`` rows of each cell, drawn without replacement (seeded)."""
    rng = np.random.default_rng(seed)
    cells = np.asarray(cells, dtype=object)
    chosen: list[int] = []
    for c in sorted(n_per_cell):
        idx = np.flatnonzero(cells == c)
        k = min(int(n_per_cell[c]), len(idx))
        if k:
            chosen.extend(rng.choice(idx, size=k, replace=False).tolist())
    return np.sort(np.asarray(chosen, dtype=int))


def _per_cell(n_total: int, cells: Sequence[str]) -> dict[str, int]:
    base, extra = divmod(int(n_total), len(cells))
    return {c: base + (1 if i < extra else 0) for i, c in enumerate(sorted(cells))}


def _check_arrays(y_true, *arrays) -> np.ndarray:
    y = np.asarray(y_true, dtype=int)
    for a in arrays:
        if len(a) != len(y):
            raise ValueError(f"all inputs need one entry per example: got {len(y)} labels and {len(a)} entries")
    return y


def select_task1(y_true: Sequence[int], pred_well: Sequence[int], pred_worse: Sequence[int],
                 n_total: int = 100, seed: int = 42, n_classes: int | None = None) -> pd.DataFrame:
    """Task 1: rows where both models predict the same class, balanced over the cells
    (predicted class x correct): 25 each of TP/TN/FP/FN for ``n_total=100`` and two classes.

    Returns ``pos`` (row of the input arrays), ``predicted``, ``correct``, ``cell``.
    """
    y = _check_arrays(y_true, pred_well, pred_worse)
    pw, ps = np.asarray(pred_well, dtype=int), np.asarray(pred_worse, dtype=int)
    k = int(n_classes or max(y.max(), pw.max(), ps.max()) + 1)
    agree = np.flatnonzero(pw == ps)
    correct = pw[agree] == y[agree]
    cells = [cell_name(int(p), bool(c), k) for p, c in zip(pw[agree], correct)]
    all_cells = [cell_name(p, c, k) for p in range(k) for c in (True, False)]
    pick = _balanced(cells, _per_cell(n_total, all_cells), seed)
    pos = agree[pick]
    return pd.DataFrame({"pos": pos, "predicted": pw[pos], "correct": pw[pos] == y[pos],
                         "cell": [cells[i] for i in pick]})


def _select_by_confidence(y_true, proba, keep: np.ndarray, n_total: int, seed: int) -> pd.DataFrame:
    y = _check_arrays(y_true, proba)
    p = np.asarray(proba, dtype=float)
    pred = p.argmax(1)
    k = p.shape[1]
    idx = np.flatnonzero(keep)
    correct = pred[idx] == y[idx]
    cells = [cell_name(int(a), bool(c), k) for a, c in zip(pred[idx], correct)]
    half = {True: (n_total + 1) // 2, False: n_total // 2}
    n_per: dict[str, int] = {}
    for ok in (True, False):
        n_per.update(_per_cell(half[ok], [cell_name(c, ok, k) for c in range(k)]))
    pick = _balanced(cells, n_per, seed)
    pos = idx[pick]
    return pd.DataFrame({"pos": pos, "predicted": pred[pos], "correct": pred[pos] == y[pos],
                         "confidence": p[pos].max(1), "cell": [cells[i] for i in pick]})


def select_task2(y_true: Sequence[int], proba: np.ndarray, n_total: int = 100, tau: float = TAU_HIGH,
                 seed: int = 42) -> pd.DataFrame:
    """Task 2: confident predictions (``max_c p_c > tau``), half correct / half incorrect, each
    half balanced over predicted classes.  Columns as :func:`select_task1` plus ``confidence``."""
    p = np.asarray(proba, dtype=float)
    return _select_by_confidence(y_true, p, p.max(1) > tau, n_total, seed)


def select_task3(y_true: Sequence[int], proba: np.ndarray, n_total: int = 100, tau: float = TAU_LOW,
                 seed: int = 42) -> pd.DataFrame:
    """Task 3: uncertain predictions (``max_c p_c < tau``), balanced as in :func:`select_task2`."""
    p = np.asarray(proba, dtype=float)
    return _select_by_confidence(y_true, p, p.max(1) < tau, n_total, seed)


__all__ = ["TAU_HIGH", "TAU_LOW", "cell_name", "select_task1", "select_task2", "select_task3"]
