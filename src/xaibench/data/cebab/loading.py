"""Reading the released CEBaB JSON into one tidy DataFrame (:func:`load_cebab`)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from ... import io, paths
from ..fetch import DataError
from .schema import (ASPECT_CANON, ASPECTS, COLUMNS, CONCEPT_VALUES, METADATA_FIELDS, NO_MAJORITY, REQUIRED_FIELDS,
                     REVIEW_VALUES, SPLITS)

# --------------------------------------------------------------------------------------------
# loading
# --------------------------------------------------------------------------------------------
def _split_dir(root: Path) -> Path:
    """``root`` may be the folder holding ``CEBaB-v1.1/`` or that folder itself."""
    root = Path(root)
    for cand in (root / "CEBaB-v1.1", root):
        if all((cand / f"{s}.json").exists() for s in SPLITS):
            return cand
    missing = [s for s in SPLITS if not (root / "CEBaB-v1.1" / f"{s}.json").exists()]
    raise DataError(
        f"no CEBaB split files under {root}: expected {root}/CEBaB-v1.1/<split>.json for splits "
        f"{list(SPLITS)} (missing: {missing}); pass root= the folder that ensure_raw('cebab') returns"
    )


def _canon_aspect(value: Any, where: str) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if not isinstance(value, str):
        raise DataError(f"{where}: aspect majority {value!r} is not a string")
    key = value.strip().lower()
    if key not in ASPECT_CANON:
        raise DataError(f"{where}: unknown aspect majority {value!r}; expected one of "
                        f"{list(CONCEPT_VALUES) + [NO_MAJORITY, '']}")
    return ASPECT_CANON[key]


def _canon_review(value: Any, where: str) -> str:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = str(int(value))
    if not isinstance(value, str) or value.strip().lower() not in REVIEW_VALUES:
        raise DataError(f"{where}: review_majority {value!r} is not one of {sorted(REVIEW_VALUES)}")
    return value.strip().lower()


def _opt_str(value: Any) -> str:
    return "" if value is None else str(value)


def _read_split(path: Path, split: str) -> list[dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as fh:
            records = json.load(fh)
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: not valid JSON ({e}); re-extract CEBaB-v1.1.zip") from e
    if not isinstance(records, list):
        raise DataError(f"{path}: expected a JSON list of records, got {type(records).__name__}")
    rows = []
    for i, rec in enumerate(records):
        rid = rec.get("id", f"<record #{i}>") if isinstance(rec, dict) else f"<record #{i}>"
        if not isinstance(rec, dict):
            raise DataError(f"{path.name}: record #{i} is a {type(rec).__name__}, not an object")
        for field in REQUIRED_FIELDS:
            if field not in rec:
                raise DataError(f"{path.name}: record {rid!r} (#{i}) is missing the required field "
                                f"{field!r}; every CEBaB record needs {list(REQUIRED_FIELDS)}")
        where = f"{path.name}: record {rid!r}"
        for field in ("id", "original_id", "edit_id"):
            if not isinstance(rec[field], str) or not rec[field]:
                raise DataError(f"{where}: field {field!r} must be a non-empty string, got {rec[field]!r}")
        if not isinstance(rec["description"], str) or not rec["description"].strip():
            raise DataError(f"{where}: field 'description' must be a non-empty string")
        review = _canon_review(rec["review_majority"], where)
        row: dict[str, Any] = {
            "id": rec["id"],
            "original_id": rec["original_id"],
            "edit_id": rec["edit_id"],
            "is_original": bool(rec["is_original"]),
            "edit_type": _opt_str(rec["edit_type"]),
            "edit_goal": _canon_aspect(rec["edit_goal"], where + " (edit_goal)"),
            "edit_worker": _opt_str(rec.get("edit_worker")),
            "text": rec["description"],
            "split": split,
            "review_majority": review,
            "label": -1 if review == NO_MAJORITY else int(review) - 1,
        }
        if row["edit_type"] and row["edit_type"] not in ASPECTS:
            raise DataError(f"{where}: edit_type {row['edit_type']!r} is not one of {list(ASPECTS)}")
        for a in ASPECTS:
            row[f"{a}_majority"] = _canon_aspect(rec[f"{a}_aspect_majority"], f"{where} ({a})")
        dist = rec.get("review_label_distribution")
        row["review_label_distribution"] = json.dumps(dist, sort_keys=True) if isinstance(dist, dict) else ""
        meta = rec.get("opentable_metadata") or {}
        if not isinstance(meta, dict):
            meta = {}
        for field in METADATA_FIELDS:
            row[field] = meta.get(field)
        rows.append(row)
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        dup = pd.Series(ids)[pd.Series(ids).duplicated()].iloc[0]
        raise DataError(f"{path.name}: record id {dup!r} occurs more than once")
    return rows


def _build_frame(split_dir: Path) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for split in SPLITS:
        rows.extend(_read_split(split_dir / f"{split}.json", split))
    df = pd.DataFrame(rows)
    str_cols = ["id", "original_id", "edit_id", "edit_type", "edit_goal", "edit_worker", "text",
                "split", "review_majority", *(f"{a}_majority" for a in ASPECTS),
                "review_label_distribution", "restaurant_name", "cuisine", "price_tier",
                "dining_style", "dress_code", "parking", "region"]
    for c in str_cols:
        df[c] = df[c].astype(object).where(df[c].notna(), None)
        df[c] = df[c].astype("string")
    for c in ("restaurant_id", "rating_overall", "rating_food", "rating_service", "rating_ambiance",
              "rating_noise"):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("Int64")
    df["label"] = df["label"].astype("int64")
    df["is_original"] = df["is_original"].astype(bool)
    return df[list(COLUMNS)]


_MEMO: dict[tuple[str, float], pd.DataFrame] = {}


def load_cebab(root: str | os.PathLike | None = None) -> pd.DataFrame:
    """All CEBaB records of the five splits, one row per (split, record).

    Columns: ``id, original_id, edit_id, is_original, edit_type, edit_goal, edit_worker, text,
    split, review_majority`` (``'1'``..``'5'`` or ``'no majority'``), ``label`` (5-way class
    ``stars - 1``; ``-1`` for no majority), ``{aspect}_majority`` for ``ASPECTS`` (``'Positive'``,
    ``'Negative'``, ``'unknown'``, ``'no majority'`` or ``''`` when the aspect was not
    annotated), ``review_label_distribution`` (JSON string), and the OpenTable metadata
    ``restaurant_id, restaurant_name, cuisine, price_tier, dining_style, dress_code, parking,
    region, rating_overall, rating_food, rating_service, rating_ambiance, rating_noise``.
    ``edit_type``/``edit_goal`` are ``''`` for originals (except in ``train_observational``,
    whose originals carry the goal they were later edited towards, as released).

    ``root=None`` reads the raw data from :func:`xaibench.data.fetch.ensure_raw` and caches the
    table as ``data/processed/cebab.parquet``; an explicit ``root`` (a folder holding
    ``CEBaB-v1.1/<split>.json``, e.g. a test fixture) is read directly and never cached.

    Raises :class:`DataError` naming the file, record id and field when a record lacks a
    required field or holds an invalid label.
    """
    if root is not None:
        return _build_frame(_split_dir(Path(root)))
    cache = paths.processed_dir() / "cebab.parquet"
    if cache.exists():
        key = (str(cache), cache.stat().st_mtime)
        if key not in _MEMO:
            df = io.read_parquet_cache(cache)  # None when unreadable (truncated): rebuilt below
            if df is not None and list(df.columns) == list(COLUMNS):
                _MEMO.clear()
                _MEMO[key] = df
        if key in _MEMO:
            return _MEMO[key].copy()
        # a cache written by an older version of this module: rebuild it below
    from ..fetch import ensure_raw

    df = _build_frame(_split_dir(Path(ensure_raw("cebab"))))
    io.write_parquet(cache, df)
    return df


def get_df(df: pd.DataFrame | None) -> pd.DataFrame:
    return load_cebab() if df is None else df


def check_split(split: str) -> str:
    if split not in SPLITS:
        raise ValueError(f"unknown CEBaB split {split!r}; use one of {list(SPLITS)}")
    return split


def splits_arg(splits: str | Iterable[str]) -> list[str]:
    out = [splits] if isinstance(splits, str) else list(splits)
    for s in out:
        check_split(s)
    if not out:
        raise ValueError(f"no split given; use some of {list(SPLITS)}")
    return out


__all__ = ["DataError", "load_cebab", "get_df", "check_split", "splits_arg"]
