"""The CEBaB domain model: records, label schemes, classifier/ABSA datasets, edit pairs, statistics.

CEBaB (Abraham et al., NeurIPS 2022) starts from 2,299 OpenTable reviews ("originals").  Crowd
workers edited each original to change the sentiment of one aspect (food, service, ambiance,
noise) to a goal (Positive / Negative / unknown); five other workers then labelled every text for
each aspect and gave it a 1-5 star review rating.  A label is the *majority* (at least 3 of 5) or
``'no majority'``.

This module turns the released JSON (``CEBaB-v1.1/{train_exclusive, train_inclusive,
train_observational, dev, test}.json``) into one tidy DataFrame (:func:`load_cebab`) and derives
from it everything else the project uses:

* :func:`review_label` / :func:`task_frame` -- the binary / ternary / 5-way review-sentiment
  datasets of Appendix C.3;
* :func:`absa_frame` -- the aspect-based sentiment dataset of Appendix C.4;
* :func:`edit_pairs` -- the (base, counterfactual) edit pairs of Sections 3 and 5, built exactly as
  the authors' released pipeline builds them (``code/eval_pipeline/utils/data_utils.py``,
  ``get_intervention_pairs``);
* statistics for the paper's Tables 3, 5, 7 and Figure 5, and :func:`dataset_stats_table`, which
  puts them beside the paper's printed numbers.

Conventions: an absent aspect label is ``''`` (the raw files use ``""`` for aspects that were not
annotated); ``label`` is the 5-way class ``int(review_majority) - 1`` and ``-1`` for ``'no
majority'``.  "Combined" statistics use ``train_inclusive + dev + test`` (every text exactly once,
15,090 texts): ``train_exclusive`` and ``train_observational`` are re-samplings of
``train_inclusive`` texts.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from .. import io, paths

from .fetch import DataError


__all__ = [
    "ASPECTS", "TASKS", "SPLITS", "COMBINED_SPLITS", "TRAIN_SPLITS", "EVAL_SPLITS",
    "ASPECT_VALUES", "ABSA_LABELS", "DIRECTIONS", "PAIR_TYPES", "PAIR_KINDS", "NUM_CLASSES",
    "DataError", "COLUMNS", "load_cebab", "label_names", "review_label", "task_frame", "absa_frame", "edit_pairs",
    "aspect_label_counts", "review_rating_counts", "edit_pair_counts", "empirical_ate",
    "metadata_counts", "levenshtein", "normalized_edit_distance", "edit_distances",
    "dataset_stats_table",
]

ASPECTS: tuple[str, ...] = ("food", "service", "ambiance", "noise")
TASKS: tuple[str, ...] = ("binary", "ternary", "5-way")
SPLITS: tuple[str, ...] = ("train_exclusive", "train_inclusive", "train_observational", "dev", "test")
TRAIN_SPLITS: tuple[str, ...] = ("train_exclusive", "train_inclusive", "train_observational")
EVAL_SPLITS: tuple[str, ...] = ("dev", "test")
#: The splits that together hold every CEBaB text exactly once (the paper's "train/dev/test").
COMBINED_SPLITS: tuple[str, ...] = ("train_inclusive", "dev", "test")

NUM_CLASSES = {"binary": 2, "ternary": 3, "5-way": 5}
_TASK_ALIASES = {"2-way": "binary", "2-class": "binary", "3-way": "ternary", "3-class": "ternary",
                 "5-class": "5-way", "five-way": "5-way"}
_LABEL_MAPS = {
    "binary": {1: 0, 2: 0, 4: 1, 5: 1},          # 3 stars dropped (App. C.3)
    "ternary": {1: 0, 2: 0, 3: 1, 4: 2, 5: 2},
    "5-way": {1: 0, 2: 1, 3: 2, 4: 3, 5: 4},
}

NO_MAJORITY = "no majority"
#: Majority aspect labels that count as a concept value (the rest: 'no majority' and '' = absent).
ASPECT_VALUES: tuple[str, ...] = ("Positive", "Negative", "unknown")
#: Class order of the aspect-sentiment (ABSA) model of Appendix C.4.
ABSA_LABELS: tuple[str, ...] = ("Negative", "Positive", "unknown")
_SHORT = {"Positive": "pos", "Negative": "neg", "unknown": "unk"}
DIRECTIONS: tuple[str, ...] = ("neg_to_pos", "pos_to_neg", "neg_to_unk", "unk_to_neg", "pos_to_unk", "unk_to_pos")
#: The three directions the paper prints (the reverse of each is its negation).
PAPER_DIRECTIONS: tuple[str, ...] = ("neg_to_pos", "neg_to_unk", "pos_to_unk")
PAIR_TYPES: tuple[str, ...] = ("neg-pos", "neg-unk", "pos-unk")
PAIR_KINDS: tuple[str, ...] = ("original-edit", "edit-original", "edit-edit")

_REVIEW_VALUES = {"1", "2", "3", "4", "5", NO_MAJORITY}
_ASPECT_CANON = {"positive": "Positive", "negative": "Negative", "unknown": "unknown",
                 "unk": "unknown", "can't tell": "unknown", "no majority": NO_MAJORITY, "": ""}
REQUIRED_FIELDS: tuple[str, ...] = (
    "id", "original_id", "edit_id", "is_original", "edit_type", "edit_goal", "description",
    "review_majority", *(f"{a}_aspect_majority" for a in ASPECTS),
)
METADATA_FIELDS: tuple[str, ...] = (
    "restaurant_id", "restaurant_name", "cuisine", "price_tier", "dining_style", "dress_code",
    "parking", "region", "rating_overall", "rating_food", "rating_service", "rating_ambiance",
    "rating_noise",
)
#: Columns of :func:`load_cebab`, in order.
COLUMNS: tuple[str, ...] = (
    "id", "original_id", "edit_id", "is_original", "edit_type", "edit_goal", "edit_worker", "text",
    "split", "review_majority", "label", *(f"{a}_majority" for a in ASPECTS),
    "review_label_distribution", *METADATA_FIELDS,
)


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
    if key not in _ASPECT_CANON:
        raise DataError(f"{where}: unknown aspect majority {value!r}; expected one of "
                        f"{list(ASPECT_VALUES) + [NO_MAJORITY, '']}")
    return _ASPECT_CANON[key]


def _canon_review(value: Any, where: str) -> str:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = str(int(value))
    if not isinstance(value, str) or value.strip().lower() not in _REVIEW_VALUES:
        raise DataError(f"{where}: review_majority {value!r} is not one of {sorted(_REVIEW_VALUES)}")
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
    from .fetch import ensure_raw

    df = _build_frame(_split_dir(Path(ensure_raw("cebab"))))
    io.write_parquet(cache, df)
    return df


def _get_df(df: pd.DataFrame | None) -> pd.DataFrame:
    return load_cebab() if df is None else df


def _check_split(split: str) -> str:
    if split not in SPLITS:
        raise ValueError(f"unknown CEBaB split {split!r}; use one of {list(SPLITS)}")
    return split


def _splits_arg(splits: str | Iterable[str]) -> list[str]:
    out = [splits] if isinstance(splits, str) else list(splits)
    for s in out:
        _check_split(s)
    if not out:
        raise ValueError(f"no split given; use some of {list(SPLITS)}")
    return out


# --------------------------------------------------------------------------------------------
# label schemes and classifier datasets
# --------------------------------------------------------------------------------------------
def _check_task(task: str) -> str:
    task = _TASK_ALIASES.get(task, task)
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; use one of {list(TASKS)}")
    return task


def review_label(review_majority: str | int, task: str) -> int | None:
    """The class of a review rating for ``task`` (Appendix C.3), or ``None`` if it is dropped.

    ``binary``: 1-2 stars -> 0, 4-5 -> 1, 3 -> ``None`` (dropped); ``ternary``: 1-2 -> 0,
    3 -> 1, 4-5 -> 2; ``5-way``: ``stars - 1``.  ``'no majority'`` -> ``None`` for every task.
    ``review_majority`` is the raw string (``'1'``..``'5'``, ``'no majority'``) or an int 1..5.
    """
    task = _check_task(task)
    if isinstance(review_majority, str):
        v = review_majority.strip().lower()
        if v == NO_MAJORITY:
            return None
        if v not in _REVIEW_VALUES:
            raise ValueError(f"review_majority {review_majority!r} is not '1'..'5' or 'no majority'")
        stars = int(v)
    elif isinstance(review_majority, (int, np.integer)) and not isinstance(review_majority, bool):
        stars = int(review_majority)
        if not 1 <= stars <= 5:
            raise ValueError(f"review rating {stars} is outside 1..5")
    else:
        raise ValueError(f"review_majority {review_majority!r} is neither a string nor an int")
    return _LABEL_MAPS[task].get(stars)


def label_names(task: str = "5-way") -> list[str]:
    """Class names of ``task`` indexed by its label: binary ``negative, positive``; ternary
    ``negative, neutral, positive``; 5-way the star ratings ``'1'``..``'5'``."""
    task = _check_task(task)
    return {"binary": ["negative", "positive"], "ternary": ["negative", "neutral", "positive"],
            "5-way": ["1", "2", "3", "4", "5"]}[task]


def _task_labels(five_way: pd.Series, task: str) -> pd.Series:
    """Vectorised :func:`review_label` on 5-way ints (-1 = no majority); -1 where dropped."""
    m = {k - 1: v for k, v in _LABEL_MAPS[task].items()}
    return five_way.map(lambda x: m.get(int(x), -1)).astype("int64")


def task_frame(split: str, task: str, df: pd.DataFrame | None = None) -> pd.DataFrame:
    """The review-sentiment classification dataset of one split for ``task`` (Appendix C.3).

    Returns ``id, text, label`` (task class, see :func:`review_label`) plus ``original_id,
    is_original, edit_type, review_majority, split``, in file order.  Texts whose rating has no
    class in ``task`` are dropped: 3-star reviews for ``binary`` (in every split, as the authors'
    ``_encode_dataset`` does) and ``'no majority'`` reviews in the train splits.  Dev and test hold
    no ``'no majority'`` review by construction (Sec. 5: such groups were put in train); as in the
    authors' code, which would fail on one, such a record there raises :class:`DataError`.
    """
    task = _check_task(task)
    _check_split(split)
    df = _get_df(df)
    part = df[df["split"] == split]
    if split in EVAL_SPLITS and (part["review_majority"] == NO_MAJORITY).any():
        bad = part.loc[part["review_majority"] == NO_MAJORITY, "id"].iloc[0]
        raise DataError(f"{split}: record {bad!r} has review_majority 'no majority', which CEBaB's "
                        "dev/test splits never contain (Sec. 5); the data is not CEBaB v1.1")
    labels = _task_labels(part["label"], task)
    keep = labels >= 0
    out = part.loc[keep, ["id", "text", "original_id", "is_original", "edit_type", "review_majority",
                          "split"]].copy()
    out.insert(2, "label", labels[keep].to_numpy())
    return out.reset_index(drop=True)


def absa_frame(split: str, df: pd.DataFrame | None = None) -> pd.DataFrame:
    """The aspect-based sentiment dataset of one split (Appendix C.4).

    One row per (text, aspect) whose majority label is one of ``ABSA_LABELS``
    (Negative/Positive/unknown); ``'no majority'`` and absent (``''``) aspect labels are dropped.
    Columns ``id, text, aspect, label`` (index into ``ABSA_LABELS``), ``label_name``, ``split``;
    ordered by file order, then ``ASPECTS`` order.  The model input is "text [SEP] aspect"
    (Sun et al. 2019), built by the model code.
    """
    _check_split(split)
    df = _get_df(df)
    part = df[df["split"] == split].reset_index(drop=True)
    frames = []
    for k, a in enumerate(ASPECTS):
        vals = part[f"{a}_majority"]
        keep = vals.isin(ABSA_LABELS)
        f = pd.DataFrame({
            "id": part.loc[keep, "id"], "text": part.loc[keep, "text"], "aspect": a,
            "label": vals[keep].map({v: i for i, v in enumerate(ABSA_LABELS)}).astype("int64"),
            "label_name": vals[keep], "split": split,
        })
        f["_row"], f["_asp"] = f.index, k
        frames.append(f)
    out = pd.concat(frames).sort_values(["_row", "_asp"], kind="stable")
    return out.drop(columns=["_row", "_asp"]).reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# edit pairs
# --------------------------------------------------------------------------------------------
_PAIR_COLUMNS = (
    "split", "original_id", "aspect", "pair_kind", "base_id", "cf_id", "base_text", "cf_text",
    "base_value", "cf_value", "direction", "pair_type", "base_review_majority",
    "cf_review_majority", "base_label", "cf_label", *(f"base_{a}_majority" for a in ASPECTS),
)


def edit_pairs(split: str | Sequence[str], df: pd.DataFrame | None = None) -> pd.DataFrame:
    """All edit pairs of a split (Sections 3 and 5), as the authors' pipeline builds them.

    Within each group of texts sharing an ``original_id`` (and a split), ordered pairs
    (base, counterfactual) are formed as original->edit, edit->original, and edit->edit between
    two different edits of the same ``edit_type``.  The pair's aspect is the edit type; the pair is
    kept only if the two texts' majority labels for that aspect differ and both are concept values
    (Positive/Negative/unknown) -- equal labels (a failed or duplicate edit), ``'no majority'`` and
    absent labels give no pair.  Every pair appears in both directions.  Review ratings are not
    filtered: ``base_label``/``cf_label`` are 5-way classes or -1 (no majority); use
    :func:`empirical_ate` for effects.

    Columns: ``split, original_id, aspect, pair_kind, base_id, cf_id, base_text, cf_text,
    base_value, cf_value, direction`` (e.g. ``neg_to_pos``), ``pair_type`` (unordered,
    ``neg-pos``/``neg-unk``/``pos-unk``), ``base_review_majority, cf_review_majority, base_label,
    cf_label, base_{aspect}_majority`` (all four aspects of the base text).  Ordered by split (in
    ``SPLITS`` order), original_id, base_id, cf_id.  Single-text groups (``train_exclusive``,
    ``train_observational``) yield no pairs.
    """
    splits = _splits_arg(split)
    df = _get_df(df)
    part = df[df["split"].isin(splits)]
    cols = ["split", "original_id", "id", "is_original", "edit_type", "text", "review_majority",
            "label", *(f"{a}_majority" for a in ASPECTS)]
    part = part[cols]
    m = part.merge(part, on=["split", "original_id"], suffixes=("_b", "_c"))
    m = m[m["id_b"] != m["id_c"]]
    ob, oc = m["is_original_b"].to_numpy(bool), m["is_original_c"].to_numpy(bool)
    et_b, et_c = m["edit_type_b"].fillna("").to_numpy(object), m["edit_type_c"].fillna("").to_numpy(object)
    kind = np.select([ob & ~oc, ~ob & oc, ~ob & ~oc & (et_b == et_c)],
                     ["original-edit", "edit-original", "edit-edit"], default="")
    aspect = np.where(ob, et_c, et_b)
    keep = (kind != "") & np.isin(aspect, ASPECTS)
    m = m[keep].copy()
    m["pair_kind"], m["aspect"] = kind[keep], aspect[keep]
    base_val = np.empty(len(m), dtype=object)
    cf_val = np.empty(len(m), dtype=object)
    for a in ASPECTS:
        sel = (m["aspect"] == a).to_numpy()
        base_val[sel] = m.loc[sel, f"{a}_majority_b"].to_numpy(object)
        cf_val[sel] = m.loc[sel, f"{a}_majority_c"].to_numpy(object)
    ok = np.isin(base_val, ASPECT_VALUES) & np.isin(cf_val, ASPECT_VALUES) & (base_val != cf_val)
    m = m[ok].copy()
    m["base_value"], m["cf_value"] = base_val[ok], cf_val[ok]
    m["direction"] = [f"{_SHORT[b]}_to_{_SHORT[c]}" for b, c in zip(m["base_value"], m["cf_value"])]
    m["pair_type"] = ["-".join(sorted((_SHORT[b], _SHORT[c]))) for b, c in zip(m["base_value"], m["cf_value"])]
    out = pd.DataFrame({
        "split": m["split"], "original_id": m["original_id"], "aspect": m["aspect"],
        "pair_kind": m["pair_kind"], "base_id": m["id_b"], "cf_id": m["id_c"],
        "base_text": m["text_b"], "cf_text": m["text_c"], "base_value": m["base_value"],
        "cf_value": m["cf_value"], "direction": m["direction"], "pair_type": m["pair_type"],
        "base_review_majority": m["review_majority_b"], "cf_review_majority": m["review_majority_c"],
        "base_label": m["label_b"].astype("int64"), "cf_label": m["label_c"].astype("int64"),
        **{f"base_{a}_majority": m[f"{a}_majority_b"] for a in ASPECTS},
    })
    for c in ("aspect", "pair_kind", "base_value", "cf_value", "direction", "pair_type"):
        out[c] = out[c].astype("string")
    order = {s: i for i, s in enumerate(SPLITS)}
    out["_s"] = out["split"].map(order)
    out = out.sort_values(["_s", "original_id", "base_id", "cf_id"], kind="stable").drop(columns="_s")
    return out.reset_index(drop=True)[list(_PAIR_COLUMNS)]


# --------------------------------------------------------------------------------------------
# statistics (Tables 3, 5, 7; Figure 5)
# --------------------------------------------------------------------------------------------
def _combined(df: pd.DataFrame | None, splits: Iterable[str]) -> pd.DataFrame:
    df = _get_df(df)
    return df[df["split"].isin(_splits_arg(splits))]


def aspect_label_counts(df: pd.DataFrame | None = None,
                        splits: Iterable[str] = COMBINED_SPLITS) -> pd.DataFrame:
    """Table 3(a): majority aspect labels per aspect over ``splits`` (default: every text once).

    Tidy rows ``aspect, label`` (``positive, negative, unknown, no_majority, total``), ``count``,
    and ``proportion`` -- the paper's printed percentage, which is a *column share*: this
    aspect's share of all labels of that kind across the four aspects (NaN for ``total``).  Texts
    where the aspect is absent (``''``) are not counted, as in the paper's totals.
    """
    part = _combined(df, splits)
    names = {"Positive": "positive", "Negative": "negative", "unknown": "unknown", NO_MAJORITY: "no_majority"}
    rows = []
    for a in ASPECTS:
        vc = part[f"{a}_majority"].value_counts()
        for raw, name in names.items():
            rows.append({"aspect": a, "label": name, "count": int(vc.get(raw, 0))})
        rows.append({"aspect": a, "label": "total", "count": int(sum(vc.get(r, 0) for r in names))})
    out = pd.DataFrame(rows)
    col_tot = out[out["label"] != "total"].groupby("label")["count"].transform("sum")
    out["proportion"] = np.nan
    sel = out["label"] != "total"
    out.loc[sel, "proportion"] = out.loc[sel, "count"] / col_tot
    return out


def review_rating_counts(df: pd.DataFrame | None = None,
                         splits: Iterable[str] = COMBINED_SPLITS) -> pd.DataFrame:
    """Table 3(b): review-level majority ratings; rows ``label`` (``1_star``..``5_star``,
    ``no_majority``), ``count``, ``proportion`` (share of all texts in ``splits``)."""
    part = _combined(df, splits)
    vc = part["review_majority"].value_counts()
    rows = [{"label": f"{s}_star", "count": int(vc.get(str(s), 0))} for s in range(1, 6)]
    rows.append({"label": "no_majority", "count": int(vc.get(NO_MAJORITY, 0))})
    out = pd.DataFrame(rows)
    out["proportion"] = out["count"] / max(len(part), 1)
    return out


def _pairs_arg(pairs: pd.DataFrame | None, df: pd.DataFrame | None, splits: Iterable[str]) -> pd.DataFrame:
    return edit_pairs(list(_splits_arg(splits)), df=df) if pairs is None else pairs


def edit_pair_counts(pairs: pd.DataFrame | None = None, df: pd.DataFrame | None = None,
                     splits: Iterable[str] = COMBINED_SPLITS, by_kind: bool = False) -> pd.DataFrame:
    """Table 3(c): number of edit pairs per aspect and direction.

    Rows ``aspect, direction, pair_type, [pair_kind,] n`` with ``n`` the number of *ordered*
    pairs (every zero count included, in ``ASPECTS`` x ``DIRECTIONS`` order).  Each unordered
    pair is counted once per direction, so the unordered count of a ``pair_type`` is the sum of
    its two directions divided by 2.  ``pairs`` defaults to :func:`edit_pairs` of ``splits``.
    """
    pairs = _pairs_arg(pairs, df, splits)
    keys = ["aspect", "direction"] + (["pair_kind"] if by_kind else [])
    counts = pairs.groupby(keys, observed=True).size()
    idx = pd.MultiIndex.from_product([ASPECTS, DIRECTIONS] + ([list(PAIR_KINDS)] if by_kind else []), names=keys)
    out = counts.reindex(idx, fill_value=0).rename("n").reset_index()
    out.insert(2, "pair_type", ["-".join(sorted(d.split("_to_"))) for d in out["direction"]])
    out["n"] = out["n"].astype("int64")
    return out


def empirical_ate(pairs: pd.DataFrame | None = None, task: str = "5-way", df: pd.DataFrame | None = None,
                  splits: Iterable[str] = COMBINED_SPLITS) -> pd.DataFrame:
    """Empirical ATE of Sec. 3 (Def. 5): the mean over edit pairs of f(cf) - f(base).

    ``f`` is the review label under ``task`` (:func:`review_label`): the 5-way class (= star
    difference; Table 3(d)) or the binary class (Table 7).  Pairs where either text has no class
    (``'no majority'``, or 3 stars for ``binary``) are left out, like the authors' pipeline, which
    drops such texts before forming pairs.  Rows ``aspect, direction, ate, std`` (sample std of the
    individual effects), ``n`` (pairs used), for every aspect and all six directions (the reverse
    direction is exactly the negation, since every pair appears both ways).
    """
    task = _check_task(task)
    pairs = _pairs_arg(pairs, df, splits)
    b = _task_labels(pairs["base_label"], task)
    c = _task_labels(pairs["cf_label"], task)
    ok = (b >= 0) & (c >= 0)
    ite = pd.DataFrame({"aspect": pairs["aspect"][ok].astype(str), "direction": pairs["direction"][ok].astype(str),
                        "ite": (c[ok] - b[ok]).astype(float)})
    g = ite.groupby(["aspect", "direction"])["ite"]
    agg = pd.DataFrame({"ate": g.mean(), "std": g.std(ddof=1), "n": g.size()})
    idx = pd.MultiIndex.from_product([ASPECTS, DIRECTIONS], names=["aspect", "direction"])
    out = agg.reindex(idx).reset_index()
    out["n"] = out["n"].fillna(0).astype("int64")
    out.insert(2, "task", task)
    return out


_META_FIELDS = {"cuisine": "cuisine", "region": "region", "star_rating": "rating_overall"}


def metadata_counts(field: str, df: pd.DataFrame | None = None,
                    splits: Iterable[str] = COMBINED_SPLITS) -> pd.DataFrame:
    """Table 5: OpenTable metadata of the *original* reviews (one per ``original_id``).

    ``field`` is ``'cuisine'`` (5a), ``'region'`` (5b) or ``'star_rating'`` (5c, the restaurant's
    OpenTable ``rating_overall``; labels ``1_star``..``5_star``).  Rows ``label, count`` sorted by
    count (descending), then label (stars in star order); missing metadata is counted as
    ``'(missing)'``.
    """
    if field not in _META_FIELDS:
        raise ValueError(f"unknown metadata field {field!r}; use one of {list(_META_FIELDS)}")
    part = _combined(df, splits)
    orig = part[part["is_original"]].drop_duplicates("original_id")
    vals = orig[_META_FIELDS[field]]
    if field == "star_rating":
        labels = [f"{int(v)}_star" if pd.notna(v) else "(missing)" for v in vals]
    else:
        labels = [str(v).strip().lower() if pd.notna(v) and str(v).strip() else "(missing)" for v in vals]
    vc = pd.Series(labels, dtype=object).value_counts()
    out = pd.DataFrame({"label": vc.index.astype(str), "count": vc.to_numpy().astype("int64")})
    if field == "star_rating":  # the paper lists stars in order
        return out.sort_values("label", kind="stable").reset_index(drop=True)
    return out.sort_values(["count", "label"], ascending=[False, True], kind="stable").reset_index(drop=True)


def levenshtein(a: str, b: str) -> int:
    """Character-level Levenshtein distance (unit insert/delete/substitute costs)."""
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    bb = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    idx = np.arange(len(b) + 1)
    prev = idx.copy()
    for i, ch in enumerate(a, start=1):
        code = ord(ch)
        # substitution / deletion candidates for row i, then insertions via a running minimum:
        # row[j] = min_k<=j (tmp[k] + j - k)
        tmp = np.empty_like(prev)
        tmp[0] = i
        np.minimum(prev[1:] + 1, prev[:-1] + (bb != code), out=tmp[1:])
        prev = np.minimum.accumulate(tmp - idx) + idx
    return int(prev[-1])


def normalized_edit_distance(a: str, b: str) -> float:
    """Levenshtein distance divided by the longer text's length (App. B.3); 0 for two empty texts."""
    n = max(len(a), len(b))
    return levenshtein(a, b) / n if n else 0.0


def edit_distances(df: pd.DataFrame | None = None, splits: Iterable[str] = COMBINED_SPLITS) -> pd.DataFrame:
    """Figure 5: normalised character edit distance between each edited text and its original.

    Rows ``id, original_id, split, edit_type, edit_goal, distance`` for every edit (non-original)
    whose original is in the same split.  Takes ~10-20 s for all 12,791 edits.
    """
    from ..utils import progress

    part = _combined(df, splits)
    orig = (part[part["is_original"]].drop_duplicates(["split", "original_id"])
            .set_index(["split", "original_id"])["text"])
    edits = part[~part["is_original"]]
    rows = []
    for rec in progress(edits.itertuples(index=False), total=len(edits), desc="edit distances"):
        key = (rec.split, rec.original_id)
        if key not in orig.index:
            continue
        rows.append({"id": rec.id, "original_id": rec.original_id, "split": rec.split,
                     "edit_type": rec.edit_type, "edit_goal": rec.edit_goal,
                     "distance": normalized_edit_distance(orig[key], rec.text)})
    return pd.DataFrame(rows, columns=["id", "original_id", "split", "edit_type", "edit_goal", "distance"])


# --------------------------------------------------------------------------------------------
# ours vs paper
# --------------------------------------------------------------------------------------------
_TABLE_KEYS = ["table", "aspect", "direction", "group", "label", "metric"]


def _join_paper(ours: pd.DataFrame, paper_table: str, on: list[str]) -> pd.DataFrame:
    from ..tables import paper_values

    pv = paper_values("cebab", paper_table=paper_table)
    pv = pv[on + ["value"]].rename(columns={"value": "paper"})
    out = ours.merge(pv, on=on, how="left", validate="one_to_one")
    return out


def dataset_stats_table(df: pd.DataFrame | None = None) -> pd.DataFrame:
    """Our CEBaB statistics beside the paper's printed numbers (Tables 3a-d, 5a-c, 7).

    Tidy columns ``table, aspect, direction, group, label, metric, ours, ours_std, paper, n``
    (keys empty where they do not apply; ``ours_std`` is NaN -- these are counts or single
    means; ``n`` is the number of pairs behind an ATE, ``''`` on other rows).  Conventions: all statistics over
    ``COMBINED_SPLITS``; Table 3c ``ours`` is the number of *unordered* edit pairs (each pair
    counted once); ATE rows are the paper's three printed directions.
    """
    df = _get_df(df)
    frames = []

    a = aspect_label_counts(df)
    t3a = pd.concat([
        a.assign(metric="count", ours=a["count"].astype(float)),
        a[a["label"] != "total"].assign(metric="proportion", ours=lambda x: x["proportion"]),
    ])
    t3a = t3a.assign(table="Table 3a", direction="", group="aspect_label")
    frames.append(_join_paper(t3a[_TABLE_KEYS + ["ours"]], "Table 3a", ["aspect", "label", "metric"]))

    r = review_rating_counts(df)
    t3b = pd.concat([r.assign(metric="count", ours=r["count"].astype(float)),
                     r.assign(metric="proportion", ours=r["proportion"])])
    t3b = t3b.assign(table="Table 3b", aspect="", direction="", group="review_rating")
    frames.append(_join_paper(t3b[_TABLE_KEYS + ["ours"]], "Table 3b", ["label", "metric"]))

    pairs = edit_pairs(list(COMBINED_SPLITS), df=df)
    c = edit_pair_counts(pairs)
    c3 = (c.groupby(["aspect", "pair_type"], sort=False)["n"].sum() / 2).reset_index()
    t3c = c3.rename(columns={"pair_type": "direction", "n": "ours"}).assign(
        table="Table 3c", group="", label="", metric="edit_pair_count")
    frames.append(_join_paper(t3c[_TABLE_KEYS + ["ours"]], "Table 3c", ["aspect", "direction", "metric"]))

    for task, tname in (("5-way", "Table 3d"), ("binary", "Table 7")):
        e = empirical_ate(pairs, task=task)
        e = e[e["direction"].isin(PAPER_DIRECTIONS)]
        t = e.rename(columns={"ate": "ours"}).assign(table=tname, group="", label="", metric="ate")
        j = _join_paper(t[_TABLE_KEYS + ["ours", "n"]], tname, ["aspect", "direction", "metric"])
        frames.append(j)

    for field, tname, group in (("cuisine", "Table 5a", "cuisine"), ("region", "Table 5b", "us_region"),
                                ("star_rating", "Table 5c", "star_rating")):
        m = metadata_counts(field, df)
        t = m.rename(columns={"count": "ours"}).assign(table=tname, aspect="", direction="", group=group,
                                                       metric="count")
        t["ours"] = t["ours"].astype(float)
        j = _join_paper(t[_TABLE_KEYS + ["ours"]], tname, ["group", "label", "metric"])
        frames.append(j)

    out = pd.concat(frames, ignore_index=True)
    out["ours_std"] = np.nan
    out["paper"] = pd.to_numeric(out["paper"], errors="coerce")
    if "n" not in out.columns:  # pragma: no cover
        out["n"] = np.nan
    # object column: an int where an ATE has a pair count, '' elsewhere (renders cleanly in Markdown)
    out["n"] = [int(v) if pd.notna(v) else "" for v in out["n"]]
    for k in _TABLE_KEYS:
        out[k] = out[k].fillna("").astype(str)
    return out[_TABLE_KEYS + ["ours", "ours_std", "paper", "n"]]
