"""Rank agreement between our results and the paper's: one implementation for every protocol.

Per group of rows (e.g. task x dataset x subset, or task x model x metric), the items (methods,
explainers) are ranked by ``ours`` and by ``paper``; we report Spearman's rho and Kendall's tau
(tau-b, scipy's default, which handles ties) with their p-values, and the best item by each
ranking.  "Best" follows the metric's direction: the smallest value when ``lower_is_better``,
else the largest (:func:`best_position`, the one rule a starred bar or a "best method" column uses).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd


def _direction(g: pd.DataFrame, lower_is_better: bool | str, where: str) -> bool:
    if isinstance(lower_is_better, str):
        if lower_is_better not in g.columns:
            raise KeyError(f"lower_is_better={lower_is_better!r} names no column of the table; pass True/False "
                           f"or the name of a column that says each metric's direction")
        vals = g[lower_is_better].dropna().astype(bool).unique()
        if len(vals) != 1:
            raise ValueError(f"group {where} mixes metrics of both directions ({lower_is_better!r} = "
                             f"{sorted(vals.tolist())}); group by the metric as well")
        return bool(vals[0])
    return bool(lower_is_better)


def best_position(values: Sequence[float], lower_is_better: bool = True) -> int | None:
    """Position of the best finite value -- the lowest when ``lower_is_better``, else the highest
    (the first on a tie); ``None`` when no value is finite."""
    v = np.asarray(values, dtype=float)
    if not np.isfinite(v).any():
        return None
    v = np.where(np.isfinite(v), v, np.nan)
    return int(np.nanargmin(v) if lower_is_better else np.nanargmax(v))


def rank_agreement(table: pd.DataFrame, by: Sequence[str], item: str = "method", ours: str = "ours",
                   paper: str = "paper", lower_is_better: bool | str = False, min_items: int = 3) -> pd.DataFrame:
    """Spearman rho and Kendall tau between ``ours`` and ``paper`` over the items of each group.

    ``by``: the grouping columns; ``item``: the column naming what is ranked (methods, explainers);
    ``lower_is_better``: the metric's direction, a bool or the name of a column holding it per row
    (one direction per group).  Rows where ``ours`` or ``paper`` is missing are left out.  A group
    with fewer than ``min_items`` items, or where either column is constant, gets NaN correlations.

    Returns one row per group: the ``by`` columns, ``n_<item>s``, ``spearman``, ``spearman_p``,
    ``kendall``, ``kendall_p``, ``best_ours``, ``best_paper`` and ``same_best``.
    """
    from scipy.stats import kendalltau, spearmanr

    by = list(by)
    missing = [c for c in [*by, ours, paper] if c not in table.columns]
    if missing:
        raise KeyError(f"rank_agreement needs column(s) {missing}; the table has {list(table.columns)}")
    n_col = f"n_{item}s"
    cols = [*by, n_col, "spearman", "spearman_p", "kendall", "kendall_p", "best_ours", "best_paper", "same_best"]
    rows = []
    for key, g in table.dropna(subset=[ours, paper]).groupby(by, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row: dict = dict(zip(by, key))
        row[n_col] = len(g)
        if len(g) >= min_items and g[ours].nunique() > 1 and g[paper].nunique() > 1:
            rho, tau = spearmanr(g[ours], g[paper]), kendalltau(g[ours], g[paper])
            row.update(spearman=float(rho.statistic), spearman_p=float(rho.pvalue),
                       kendall=float(tau.statistic), kendall_p=float(tau.pvalue))
        else:
            row.update(spearman=np.nan, spearman_p=np.nan, kendall=np.nan, kendall_p=np.nan)
        if item in g.columns:
            low = _direction(g, lower_is_better, str(key))
            row["best_ours"] = g[item].iloc[best_position(g[ours].to_numpy(), low)]
            row["best_paper"] = g[item].iloc[best_position(g[paper].to_numpy(), low)]
            row["same_best"] = bool(row["best_ours"] == row["best_paper"])
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)


__all__ = ["best_position", "rank_agreement"]
