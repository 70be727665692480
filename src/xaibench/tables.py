"""Tidy result tables and the papers' printed numbers.

A result table is a tidy DataFrame: one row per cell, the row/column keys as columns, then
``ours``, ``ours_std`` (``NaN`` when there is a single run), ``paper`` (``NaN`` when the paper
prints no number for that cell) and optional extras such as ``n_seeds``.  :func:`save_table`
writes it as ``figures/tables/<name>.csv`` plus a rendered ``<name>.md`` beside it.

The papers' numbers, transcribed by hand from the papers, ship inside the package under
``xaibench/resources`` (with a README on how each was read), so no table needs a file outside the package.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from . import io, paths

PAPER_FILES = {
    "cebab": "cebab.csv",
    "human_grounded": "human_grounded.csv",
    "cf_feedback": "cf_feedback.csv",
    "cf_faithfulness": "cf_faithfulness.csv",
    "attribution_gt": "attribution_gt.csv",
}

VALUE_COLUMNS = ("ours", "ours_std", "paper")


@functools.lru_cache(maxsize=None)
def _paper_values_cached(name: str) -> pd.DataFrame:
    if name not in PAPER_FILES:
        raise KeyError(f"unknown paper {name!r}; choose one of {sorted(PAPER_FILES)}")
    path = paths.resources_dir() / PAPER_FILES[name]
    # keep keys as strings; `value`/`std` numeric
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    for col in ("value", "std", "rank"):
        if col in df.columns:
            df[col] = pd.to_numeric(df[col].replace("", np.nan), errors="coerce")
    return df


def paper_values(name: str, **filters: str | Sequence[str]) -> pd.DataFrame:
    """Rows of a paper's printed numbers, filtered by exact key values.

    ``paper_values("cebab", paper_table="Table 10a", model="lstm")``; a list value matches any of
    its entries.  Unknown filter columns raise a ``KeyError`` naming the available columns.
    """
    df = _paper_values_cached(name)
    mask = np.ones(len(df), dtype=bool)
    for col, val in filters.items():
        if col not in df.columns:
            raise KeyError(f"{name} paper values have no column {col!r}; columns: {list(df.columns)}")
        vals = [val] if isinstance(val, str) else list(val)
        mask &= df[col].isin(vals).to_numpy()
    return df.loc[mask].copy()


def check_tidy(df: pd.DataFrame) -> None:
    missing = [c for c in VALUE_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(
            f"table is missing value column(s) {missing}; a tidy table needs {list(VALUE_COLUMNS)} "
            "(use NaN where a value does not exist)"
        )


def _fmt(x: float, digits: int) -> str:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return ""
    if isinstance(x, (int, np.integer)) or (abs(x) < 1e15 and float(x).is_integer() and abs(x) >= 10):
        return str(int(x))  # counts print as integers
    return f"{x:.{digits}f}"


def to_markdown(df: pd.DataFrame, digits: int = 3) -> str:
    """Render a tidy table as Markdown with ``ours ± std`` in one column."""
    keys = [c for c in df.columns if c not in VALUE_COLUMNS]
    out = df[keys].copy()
    ours = [
        _fmt(o, digits) + (f" ± {_fmt(s, digits)}" if not pd.isna(s) else "")
        for o, s in zip(df["ours"], df["ours_std"])
    ]
    out["ours"] = ours
    out["paper"] = [_fmt(p, digits) for p in df["paper"]]
    for c in keys:
        if pd.api.types.is_float_dtype(out[c]):
            out[c] = [_fmt(v, digits) for v in out[c]]
        else:
            out[c] = ["" if pd.isna(v) else str(v) for v in out[c]]
    return out.to_markdown(index=False, disable_numparse=True) + "\n"


def save_table(df: pd.DataFrame, name: str, digits: int = 3, title: str | None = None,
               out_dir: Path | None = None) -> Path:
    """Write ``<name>.csv`` and ``<name>.md`` under ``figures/tables`` (atomically)."""
    check_tidy(df)
    out_dir = Path(out_dir) if out_dir is not None else paths.tables_dir()
    csv_path = out_dir / f"{name}.csv"
    io.write_csv(csv_path, df)
    md = (f"# {title}\n\n" if title else "") + to_markdown(df, digits)
    io.write_text(out_dir / f"{name}.md", md)
    return csv_path


def aggregate_seeds(df: pd.DataFrame, keys: Iterable[str], value: str = "value",
                    seed_col: str = "seed", ddof: int = 1) -> pd.DataFrame:
    """Mean, std and ``n_seeds`` of ``value`` per key: ``ours``, ``ours_std``, ``n_seeds``.

    ``ddof=1`` (default): the sample std, NaN for a single seed; ``ddof=0``: the population std
    (0 for a single seed) -- the convention of papers that print ``mean ± std`` over their seeds
    that way (CEBaB).  The one implementation of "mean ± std over seeds" in the project.
    """
    keys = list(keys)
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 (population std) or 1 (sample std); got {ddof}")
    g = df.groupby(keys, dropna=False, sort=False)
    out = g[value].agg(ours="mean", ours_std=lambda s: s.std(ddof=ddof) if len(s) > ddof else np.nan)
    out["n_seeds"] = g[seed_col].nunique() if seed_col in df.columns else g[value].size()
    return out.reset_index()


def join_paper(ours: pd.DataFrame, paper: str, on: Sequence[str] | dict[str, str], *,
               value: str = "value", std: str | None = None, validate: str = "many_to_one",
               **filters: str | Sequence[str]) -> pd.DataFrame:
    """``ours`` with the paper's printed numbers joined as ``paper`` (and ``paper_std`` when ``std``).

    The one join of a result table with a paper's values.  ``on``: the key columns, or a mapping
    ``{our column: paper column}`` where names differ; ``filters`` select the paper's rows (as in
    :func:`paper_values`).  A cell the paper did not print stays ``NaN`` (never 0).  ``validate``
    is pandas' merge check: by default each of our rows matches at most one paper row.
    """
    mapping = dict(on) if isinstance(on, dict) else {c: c for c in on}
    pv = paper_values(paper, **filters)
    missing = [c for c in mapping.values() if c not in pv.columns]
    if missing:
        raise KeyError(f"{paper} paper values have no column(s) {missing}; columns: {list(pv.columns)}")
    absent = [c for c in mapping if c not in ours.columns]
    if absent:
        raise KeyError(f"result table has no column(s) {absent} to join the paper's values on; "
                       f"columns: {list(ours.columns)}")
    keep = list(mapping.values()) + [value] + ([std] if std else [])
    pv = pv[keep].rename(columns={v: k for k, v in mapping.items()})
    pv = pv.rename(columns={value: "paper", **({std: "paper_std"} if std else {})})
    dropped = [c for c in ("paper", "paper_std") if c in ours.columns and c in pv.columns]
    out = ours.drop(columns=dropped).merge(pv, on=list(mapping), how="left", validate=validate)
    return out
