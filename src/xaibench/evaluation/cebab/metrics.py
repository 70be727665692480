"""CEBaB metrics (Abraham et al., 2022, Section 3 and Appendix A).

Notation: a model ``N(phi(x))`` outputs a probability vector over ``K`` classes.  An *edit pair*
``(x_u^{C=c}, x_u^{C=c'})`` holds a base text and its human-written counterfactual in which concept
(aspect) ``C`` changed from ``c`` to ``c'``.

* :func:`icace` -- Eq. 2, the empirical individual causal concept effect
  ``N(phi(x^{c'})) - N(phi(x^{c}))`` (one ``K``-vector per pair).
* :data:`METRICS` -- the three ``Dist`` choices of the ICaCE-Error (Eq. 3): ``l2`` (Euclidean
  distance), ``cosine`` (``1 - cos``; defined as 1 when either vector is zero) and ``normdiff``
  (``| ||a|| - ||b|| |``).  All are lower-is-better.  Convention (``rounding``), as the authors'
  ``metric_utils.py``: the *true* ICaCE (the first argument) is rounded to 4 decimals before any
  distance, the explainer's estimate is not, and a vector is zero (cosine distance 1) only when its
  norm is exactly 0 -- so a true effect below 5e-5 in every class is zero, a near-zero estimate is
  not.  ``rounding=4`` (:data:`PAPER_ROUNDING`) is the default; ``rounding=None`` leaves both
  unrounded; ``round_estimate=True`` also rounds the estimate (the convention this project used
  before, kept to compare: :func:`recompute_metrics`).  Each seed's mean is rounded to 4 decimals
  too (:func:`xaibench.evaluation.cebab.runner.icace_error_table`).
* :func:`icace_error` -- Eq. 3, the mean distance over pairs.
* :func:`cace` / :func:`cace_table` -- Eq. 4 (vector CaCE: mean ICaCE per aspect and direction);
  :func:`cace_scalar` the Table-4 scalar version, where ``N`` outputs the most probable class
  (``mode="argmax"``, the paper's footnote 4) -- the mean change of the predicted class index, in
  "stars" for the 5-way task -- or the expected class index (``mode="expected"``, an alternative).
* :func:`acace` -- Eq. 14/17: mean over unordered value pairs ``{c, c'}`` of ``|CaCE|``
  (element-wise absolute value, as in the authors' code).
* The empirical ATE (Definition 5; Tables 3d and 7) has one implementation,
  :func:`xaibench.data.cebab.empirical_ate`.
* :func:`evaluate_explainer` -> per-pair results; :func:`summarize` -> mean per metric.

Explainers never see the counterfactual text: :func:`make_queries` keeps only base-side columns and
the target value ``cf_value``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ...data.cebab import ASPECTS, CONCEPT_VALUES, PAPER_DIRECTIONS, direction_name, task_label
from ...explainers.concept import proba_lookup
from ..base import Metric

#: the paper's convention: the true ICaCE vector is rounded to 4 decimals before any distance is
#: taken (the authors' released ``metric_utils.py``), so a true effect below 5e-5 in every class
#: counts as zero; the explainer's estimate is used as it is
PAPER_ROUNDING = 4

#: pair columns that identify a pair in the per-pair results (those present are kept)
PAIR_KEYS: tuple[str, ...] = ("split", "original_id", "aspect", "pair_kind", "pair_type", "base_id", "cf_id",
                              "base_value", "cf_value", "direction")


# ----------------------------------------------------------------------------------------------
# distances (Dist in Eq. 3)
# ----------------------------------------------------------------------------------------------
def _pair_arrays(a: Any, b: Any, rounding: int | None,
                 round_estimate: bool = False) -> tuple[np.ndarray, np.ndarray, bool]:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"vectors must have the same shape; got {a.shape} and {b.shape}")
    single = a.ndim == 1
    if single:
        a, b = a[None], b[None]
    if a.ndim != 2:
        raise ValueError(f"expected a vector or an (n, K) matrix; got shape {a.shape}")
    if rounding is not None:
        a = np.round(a, int(rounding))
        if round_estimate:
            b = np.round(b, int(rounding))
    return a, b, single


def _ret(x: np.ndarray, single: bool):
    return float(x[0]) if single else x


def l2_distance(a: Any, b: Any, rounding: int | None = PAPER_ROUNDING, round_estimate: bool = False):
    """Euclidean distance ``||a - b||_2`` (row-wise for matrices) between the true ICaCE ``a``, rounded
    to ``rounding`` decimals (``None``: unrounded), and the estimate ``b`` (rounded too only with
    ``round_estimate``)."""
    a, b, single = _pair_arrays(a, b, rounding, round_estimate)
    return _ret(np.linalg.norm(a - b, axis=1), single)


def cosine_distance(a: Any, b: Any, rounding: int | None = PAPER_ROUNDING, eps: float = 1e-12,
                    round_estimate: bool = False):
    """``1 - cos(a, b)`` in ``[0, 2]``; 1 when either vector is zero.

    Conventions: ``rounding=4`` (the authors': the true ICaCE ``a`` is rounded to 4 decimals first,
    so a true effect whose entries are all below 5e-5 in magnitude *is* zero and gets distance 1; the
    estimate ``b`` is zero only when its norm is exactly 0), ``round_estimate=True`` (``b`` rounded
    too) and ``rounding=None`` (unrounded; a vector counts as zero when its norm is ``<= eps``).
    """
    a, b, single = _pair_arrays(a, b, rounding, round_estimate)
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    tol = 0.0 if rounding is not None else eps
    zero = (na <= tol) | (nb <= tol)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.einsum("ij,ij->i", a, b) / (na * nb)
    out = np.where(zero, 1.0, 1.0 - np.clip(cos, -1.0, 1.0))
    return _ret(out, single)


def normdiff_distance(a: Any, b: Any, rounding: int | None = PAPER_ROUNDING, round_estimate: bool = False):
    """``| ||a||_2 - ||b||_2 |`` -- compares magnitudes only (rounding as :func:`l2_distance`)."""
    a, b, single = _pair_arrays(a, b, rounding, round_estimate)
    return _ret(np.abs(np.linalg.norm(a, axis=1) - np.linalg.norm(b, axis=1)), single)


METRICS: dict[str, Metric] = {
    "l2": Metric("l2", True, fn=l2_distance, description="ICaCE-Error with Euclidean distance (direction and magnitude)"),
    "cosine": Metric("cosine", True, fn=cosine_distance, description=
                     "ICaCE-Error with cosine distance 1-cos (direction only; 1 if a vector is zero)"),
    "normdiff": Metric("normdiff", True, fn=normdiff_distance, description=
                       "ICaCE-Error with |norm difference| (magnitude only)"),
}


def _metric(name: str) -> Metric:
    if name not in METRICS:
        raise KeyError(f"unknown metric {name!r}; choose from {sorted(METRICS)}")
    return METRICS[name]


# ----------------------------------------------------------------------------------------------
# effects
# ----------------------------------------------------------------------------------------------
def icace(p_base: Any, p_cf: Any) -> np.ndarray:
    """Eq. 2: ``N(phi(x^{c'})) - N(phi(x^{c}))`` (row-wise)."""
    p_base = np.asarray(p_base, dtype=np.float64)
    p_cf = np.asarray(p_cf, dtype=np.float64)
    if p_base.shape != p_cf.shape:
        raise ValueError(f"base and counterfactual outputs differ in shape: {p_base.shape} vs {p_cf.shape}")
    return p_cf - p_base


def icace_error(true_icace: Any, estimates: Any, dist: str = "l2", rounding: int | None = PAPER_ROUNDING,
                round_estimate: bool = False) -> float:
    """Eq. 3: mean ``Dist(ICaCE, estimate)`` over pairs (the true ICaCE rounded to ``rounding``
    decimals first, ``None``: unrounded; the estimates too with ``round_estimate``)."""
    t = np.atleast_2d(np.asarray(true_icace, dtype=np.float64))
    e = np.atleast_2d(np.asarray(estimates, dtype=np.float64))
    if len(t) == 0:
        raise ValueError("icace_error needs at least one pair")
    return float(np.mean(_metric(dist).fn(t, e, rounding=rounding, round_estimate=round_estimate)))


def cace(icace_vectors: Any) -> np.ndarray:
    """Eq. 4: the mean ICaCE vector over the pairs of one aspect and direction."""
    v = np.atleast_2d(np.asarray(icace_vectors, dtype=np.float64))
    if len(v) == 0:
        raise ValueError("CaCE of an empty set of pairs is undefined")
    return v.mean(axis=0)


def class_score(p: Any, mode: str = "argmax") -> np.ndarray:
    """Collapse probability vectors to a scalar: the argmax class index or the expected index."""
    p = np.atleast_2d(np.asarray(p, dtype=np.float64))
    if mode == "argmax":
        return p.argmax(axis=1).astype(np.float64)
    if mode == "expected":
        return p @ np.arange(p.shape[1], dtype=np.float64)
    raise ValueError(f"mode must be 'argmax' (paper, Table 4) or 'expected'; got {mode!r}")


def cace_scalar(p_base: Any, p_cf: Any, mode: str = "argmax") -> float:
    """Table-4 CaCE: mean over pairs of ``score(N(x^{c'})) - score(N(x^{c}))`` with the score the
    predicted class index (``argmax``, the paper) or the expected class index (``expected``)."""
    d = class_score(p_cf, mode) - class_score(p_base, mode)
    if len(d) == 0:
        raise ValueError("CaCE of an empty set of pairs is undefined")
    return float(d.mean())


def acace(cace_by_direction: Mapping[tuple[str, str], Any]) -> np.ndarray:
    """Eq. 14/17: mean over unordered value pairs ``{c, c'}`` of the element-wise ``|CaCE(c -> c')|``.

    ``cace_by_direction`` maps ``(c, c')`` to a CaCE vector (or scalar).  When both orders of a value
    pair are present their absolute values are averaged (they are equal when the pair sets mirror each
    other, as in CEBaB, since ``CaCE(c', c) = -CaCE(c, c')``).
    """
    if not cace_by_direction:
        raise ValueError("ACaCE needs at least one direction")
    groups: dict[frozenset, list[np.ndarray]] = {}
    for (c, c2), v in cace_by_direction.items():
        if c == c2:
            raise ValueError(f"direction {c!r} -> {c2!r} does not change the concept")
        groups.setdefault(frozenset((c, c2)), []).append(np.abs(np.asarray(v, dtype=np.float64)))
    return np.mean([np.mean(vs, axis=0) for vs in groups.values()], axis=0)


def _check_columns(df: pd.DataFrame, cols: Iterable[str], what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{what} is missing column(s) {missing}; got columns {list(df.columns)} "
                         "(build pairs with xaibench.data.cebab.edit_pairs)")


def _sort_aspects(df: pd.DataFrame) -> pd.DataFrame:
    order = {a: i for i, a in enumerate(ASPECTS)}
    key = df["aspect"].map(lambda a: order.get(a, len(order)))
    return df.assign(_k=key).sort_values(["_k"] + [c for c in ("direction",) if c in df.columns],
                                         kind="stable").drop(columns="_k").reset_index(drop=True)


# ----------------------------------------------------------------------------------------------
# model outputs and explainer evaluation
# ----------------------------------------------------------------------------------------------
def true_icace(model: Any, pairs: pd.DataFrame) -> np.ndarray:
    """``model.predict_proba(cf_text) - model.predict_proba(base_text)``, shape ``(n_pairs, K)``."""
    _check_columns(pairs, ["base_text", "cf_text"], "pairs")
    n = len(pairs)
    p = proba_lookup(model, list(pairs["base_text"]) + list(pairs["cf_text"]))
    return icace(p[:n], p[n:])


def make_queries(pairs: pd.DataFrame) -> pd.DataFrame:
    """Base-side view of edit pairs for :meth:`ConceptExplainer.explain`.

    Drops every ``cf_*`` column except ``cf_value`` (the target concept value) and renames
    ``base_text`` to ``text``.  Everything else (ids, ``aspect``, ``base_value``, ``direction``,
    ``base_label``, ``base_{aspect}_majority``) is base-side information and kept.
    """
    _check_columns(pairs, ["base_text", "aspect", "base_value", "cf_value"], "pairs")
    keep = [c for c in pairs.columns if not c.startswith("cf_") or c == "cf_value"]
    q = pairs[keep].rename(columns={"base_text": "text"}).reset_index(drop=True)
    return q


def _as_estimates(est: Any, n: int, k: int, who: str) -> np.ndarray:
    arr = np.asarray(est, dtype=np.float64)
    if arr.shape != (n, k):
        raise ValueError(f"{who}.explain returned shape {arr.shape}; expected ({n}, {k}) = (queries, classes)")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{who}.explain returned non-finite values")
    return arr


def evaluate_explainer(model: Any, explainer: Any, pairs: pd.DataFrame,
                       metrics: Sequence[str] | None = None, rounding: int | None = PAPER_ROUNDING) -> pd.DataFrame:
    """Per-pair CEBaB results for a fitted concept explainer.

    Returns one row per pair: the pair keys present in ``pairs`` (:data:`PAIR_KEYS`), ``icace`` (the
    true effect vector, Eq. 2), ``estimate`` (the explainer's vector) and one column per metric
    (default: all of :data:`METRICS`), computed with the ``rounding`` convention (kept in the column
    ``rounding``; -1 = unrounded); ``icace`` and ``estimate`` are stored unrounded.
    """
    metrics = list(metrics) if metrics is not None else list(METRICS)
    for m in metrics:
        _metric(m)
    if len(pairs) == 0:
        raise ValueError("no pairs to evaluate")
    truth = true_icace(model, pairs)
    est = _as_estimates(explainer.explain(make_queries(pairs)), len(pairs), truth.shape[1],
                        type(explainer).__name__)
    out = pairs[[c for c in PAIR_KEYS if c in pairs.columns]].copy().reset_index(drop=True)
    if "direction" not in out.columns:
        out["direction"] = [direction_name(b, c) for b, c in zip(pairs["base_value"], pairs["cf_value"])]
    out["explainer"] = getattr(explainer, "name", type(explainer).__name__)
    out["icace"] = list(truth)
    out["estimate"] = list(est)
    for m in metrics:
        out[m] = METRICS[m].fn(truth, est, rounding=rounding)
    out["rounding"] = -1 if rounding is None else int(rounding)
    out["round_estimate"] = False
    return out


def recompute_metrics(per_pair: pd.DataFrame, rounding: int | None = PAPER_ROUNDING,
                      round_estimate: bool = False) -> pd.DataFrame:
    """A copy of per-pair results (:func:`evaluate_explainer`) whose metric columns are recomputed
    from the stored unrounded ``icace`` and ``estimate`` vectors under the given convention, so a
    change of convention never needs the explainers to run again (``rounding`` column: -1 =
    unrounded; ``round_estimate`` column says whether the estimate was rounded too)."""
    _check_columns(per_pair, ["icace", "estimate"], "per_pair")
    out = per_pair.copy()
    if out.empty:
        return out
    truth = [np.asarray(v, dtype=np.float64) for v in out["icace"]]
    est = [np.asarray(v, dtype=np.float64) for v in out["estimate"]]
    bad = [i for i, (a, b) in enumerate(zip(truth, est)) if a.shape != b.shape]
    if bad:
        raise ValueError(f"per_pair row {out.index[bad[0]]!r}: icace {truth[bad[0]].shape} and estimate "
                         f"{est[bad[0]].shape} differ in shape; the results are damaged, delete and recompute them")
    # rows of tasks with different numbers of classes (binary, ternary, 5-way) have vectors of different
    # lengths: compute each length's rows together
    sizes = np.array([a.size for a in truth])
    values = {m: np.empty(len(out)) for m in METRICS}
    for n in np.unique(sizes):
        rows = np.flatnonzero(sizes == n)
        t, e = np.stack([truth[i] for i in rows]), np.stack([est[i] for i in rows])
        for m, metric in METRICS.items():
            values[m][rows] = metric.fn(t, e, rounding=rounding, round_estimate=round_estimate)
    for m in METRICS:
        out[m] = values[m]
    out["rounding"] = -1 if rounding is None else int(rounding)
    out["round_estimate"] = bool(round_estimate)
    return out


def summarize(per_pair: pd.DataFrame, by: Sequence[str] = (), metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean of each metric column (ICaCE-Error, Eq. 3), optionally per group (e.g. ``by=["aspect"]``).

    Returns a long table ``[*by, metric, value, n_pairs, lower_is_better]``.
    """
    by = list(by)
    metrics = [m for m in (metrics if metrics is not None else METRICS) if m in per_pair.columns]
    if not metrics:
        raise ValueError(f"per_pair has none of the metric columns {sorted(METRICS)}; "
                         "pass the output of evaluate_explainer")
    _check_columns(per_pair, by, "per_pair")
    rows = []
    groups = per_pair.groupby(by, sort=False, dropna=False) if by else [((), per_pair)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            rows.append({**dict(zip(by, key)), "metric": m, "value": float(g[m].mean()),
                         "n_pairs": int(g[m].notna().sum()), "lower_is_better": METRICS[m].lower_is_better})
    return pd.DataFrame(rows)


def cace_table(per_pair: pd.DataFrame, value_col: str = "icace",
               directions: Sequence[str] | None = None) -> pd.DataFrame:
    """Vector CaCE (Eq. 4) per aspect and direction from per-pair vectors (``icace`` or ``estimate``).

    Returns ``aspect, direction, base_value, cf_value, cace (vector), n_pairs``.
    """
    _check_columns(per_pair, ["aspect", "base_value", "cf_value", value_col], "per_pair")
    df = per_pair.copy()
    if "direction" not in df.columns:
        df["direction"] = [direction_name(b, c) for b, c in zip(df["base_value"], df["cf_value"])]
    if directions is not None:
        df = df[df["direction"].isin(list(directions))]
    rows = []
    for (a, d, b, c), g in df.groupby(["aspect", "direction", "base_value", "cf_value"], sort=False):
        rows.append({"aspect": a, "direction": d, "base_value": b, "cf_value": c,
                     "cace": cace(np.stack(list(g[value_col]))), "n_pairs": len(g)})
    return _sort_aspects(pd.DataFrame(rows))


def cace_scalar_table(model: Any, pairs: pd.DataFrame, mode: str = "argmax",
                      directions: Sequence[str] | None = PAPER_DIRECTIONS) -> pd.DataFrame:
    """Table 4: scalar CaCE per aspect and direction (``mode`` as in :func:`cace_scalar`)."""
    _check_columns(pairs, ["aspect", "base_value", "cf_value", "base_text", "cf_text"], "pairs")
    n = len(pairs)
    p = proba_lookup(model, list(pairs["base_text"]) + list(pairs["cf_text"]))
    df = pairs[["aspect", "base_value", "cf_value"]].copy().reset_index(drop=True)
    df["direction"] = [direction_name(b, c) for b, c in zip(df["base_value"], df["cf_value"])]
    df["delta"] = class_score(p[n:], mode) - class_score(p[:n], mode)
    if directions is not None:
        df = df[df["direction"].isin(list(directions))]
    out = df.groupby(["aspect", "direction"], sort=False)["delta"].agg(cace="mean", n_pairs="size").reset_index()
    return _sort_aspects(out)


def acace_table(per_pair: pd.DataFrame, value_col: str = "icace") -> pd.DataFrame:
    """ACaCE (Eq. 17) per aspect from per-pair vectors: ``aspect, acace (vector), acace_mean``."""
    ct = cace_table(per_pair, value_col)
    rows = []
    for a, g in ct.groupby("aspect", sort=False):
        v = acace({(b, c): x for b, c, x in zip(g["base_value"], g["cf_value"], g["cace"])})
        rows.append({"aspect": a, "acace": v, "acace_mean": float(np.mean(v))})
    return _sort_aspects(pd.DataFrame(rows))


__all__ = [
    "ASPECTS", "CONCEPT_VALUES", "PAPER_DIRECTIONS", "PAIR_KEYS", "METRICS", "Metric",
    "direction_name", "l2_distance", "cosine_distance", "normdiff_distance", "icace", "icace_error",
    "cace", "class_score", "cace_scalar", "acace", "task_label", "proba_lookup", "PAPER_ROUNDING",
    "true_icace", "make_queries", "evaluate_explainer", "recompute_metrics", "summarize", "cace_table", "cace_scalar_table",
    "acace_table",
]
