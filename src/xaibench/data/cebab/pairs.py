"""Edit pairs (Sections 3 and 5), built as the authors' released pipeline builds them."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .loading import get_df, splits_arg
from .schema import ASPECTS, CONCEPT_VALUES, SPLITS, check_task, direction_name, pair_type, task_label

PAIR_COLUMNS = (
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
    splits = splits_arg(split)
    df = get_df(df)
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
    ok = np.isin(base_val, CONCEPT_VALUES) & np.isin(cf_val, CONCEPT_VALUES) & (base_val != cf_val)
    m = m[ok].copy()
    m["base_value"], m["cf_value"] = base_val[ok], cf_val[ok]
    m["direction"] = [direction_name(b, c) for b, c in zip(m["base_value"], m["cf_value"])]
    m["pair_type"] = [pair_type(b, c) for b, c in zip(m["base_value"], m["cf_value"])]
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
    return out.reset_index(drop=True)[list(PAIR_COLUMNS)]



def task_pairs(pairs: pd.DataFrame, task: str) -> pd.DataFrame:
    """The edit pairs of ``task``: those whose base *and* counterfactual text both have a class in
    ``task`` (App. C.3: 3-star texts have no binary class; 'no majority' texts no class at all).

    Each task is scored on its own pair set, so its number of evaluation pairs differs (binary
    loses every pair with a 3-star side).  Adds ``base_task_label`` and ``cf_task_label``.
    """
    task = check_task(task)
    for c in ("base_label", "cf_label"):
        if c not in pairs.columns:
            raise ValueError(f"pairs lack column {c!r}; build them with xaibench.data.cebab.edit_pairs")
    b = task_label(pairs["base_label"].to_numpy(), task)
    c = task_label(pairs["cf_label"].to_numpy(), task)
    keep = (b >= 0) & (c >= 0)
    out = pairs.loc[keep].copy()
    out["base_task_label"], out["cf_task_label"] = b[keep], c[keep]
    return out.reset_index(drop=True)


__all__ = ["PAIR_COLUMNS", "edit_pairs", "task_pairs"]
