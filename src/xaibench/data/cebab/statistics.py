"""Dataset statistics of the paper's Tables 3, 5, 7 and Figure 5 (one implementation of the ATE)."""
from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd
from rapidfuzz.distance import Levenshtein

from .loading import get_df, splits_arg
from .pairs import edit_pairs
from .schema import ASPECTS, COMBINED_SPLITS, DIRECTIONS, NO_MAJORITY, PAIR_KINDS, check_task, task_label

def combined_rows(df: pd.DataFrame | None, splits: Iterable[str]) -> pd.DataFrame:
    df = get_df(df)
    return df[df["split"].isin(splits_arg(splits))]


def aspect_label_counts(df: pd.DataFrame | None = None,
                        splits: Iterable[str] = COMBINED_SPLITS) -> pd.DataFrame:
    """Table 3(a): majority aspect labels per aspect over ``splits`` (default: every text once).

    Tidy rows ``aspect, label`` (``positive, negative, unknown, no_majority, total``), ``count``,
    and ``proportion`` -- the paper's printed percentage, which is a *column share*: this
    aspect's share of all labels of that kind across the four aspects (NaN for ``total``).  Texts
    where the aspect is absent (``''``) are not counted, as in the paper's totals.
    """
    part = combined_rows(df, splits)
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
    part = combined_rows(df, splits)
    vc = part["review_majority"].value_counts()
    rows = [{"label": f"{s}_star", "count": int(vc.get(str(s), 0))} for s in range(1, 6)]
    rows.append({"label": "no_majority", "count": int(vc.get(NO_MAJORITY, 0))})
    out = pd.DataFrame(rows)
    out["proportion"] = out["count"] / max(len(part), 1)
    return out


def pairs_arg(pairs: pd.DataFrame | None, df: pd.DataFrame | None, splits: Iterable[str]) -> pd.DataFrame:
    return edit_pairs(list(splits_arg(splits)), df=df) if pairs is None else pairs


def edit_pair_counts(pairs: pd.DataFrame | None = None, df: pd.DataFrame | None = None,
                     splits: Iterable[str] = COMBINED_SPLITS, by_kind: bool = False) -> pd.DataFrame:
    """Table 3(c): number of edit pairs per aspect and direction.

    Rows ``aspect, direction, pair_type, [pair_kind,] n`` with ``n`` the number of *ordered*
    pairs (every zero count included, in ``ASPECTS`` x ``DIRECTIONS`` order).  Each unordered
    pair is counted once per direction, so the unordered count of a ``pair_type`` is the sum of
    its two directions divided by 2.  ``pairs`` defaults to :func:`edit_pairs` of ``splits``.
    """
    pairs = pairs_arg(pairs, df, splits)
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
    task = check_task(task)
    pairs = pairs_arg(pairs, df, splits)
    b = task_label(pairs["base_label"].to_numpy(), task)
    c = task_label(pairs["cf_label"].to_numpy(), task)
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
    part = combined_rows(df, splits)
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
    """Character-level Levenshtein distance (unit insert/delete/substitute costs;
    :func:`rapidfuzz.distance.Levenshtein.distance`)."""
    return int(Levenshtein.distance(a, b))


def normalized_edit_distance(a: str, b: str) -> float:
    """Levenshtein distance divided by the longer text's length (App. B.3); 0 for two empty texts."""
    n = max(len(a), len(b))
    return levenshtein(a, b) / n if n else 0.0


def edit_distances(df: pd.DataFrame | None = None, splits: Iterable[str] = COMBINED_SPLITS,
                   max_edits: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Figure 5: normalised character edit distance between each edited text and its original.

    Rows ``id, original_id, split, edit_type, edit_goal, distance`` for every edit (non-original)
    whose original is in the same split.  Takes ~10-20 s for all 12,791 edits; ``max_edits`` scores a
    seeded random sample of that many of them instead (a smoke run's figure), in the edits' order.
    """
    from ...progress import progress

    part = combined_rows(df, splits)
    orig = (part[part["is_original"]].drop_duplicates(["split", "original_id"])
            .set_index(["split", "original_id"])["text"])
    edits = part[~part["is_original"]]
    edits = edits[[key in orig.index for key in zip(edits["split"], edits["original_id"])]]
    if max_edits is not None and len(edits) > max_edits:
        edits = edits.sample(n=max_edits, random_state=seed).sort_index()
    rows = []
    for rec in progress(edits.itertuples(index=False), total=len(edits), desc="edit distances"):
        key = (rec.split, rec.original_id)
        rows.append({"id": rec.id, "original_id": rec.original_id, "split": rec.split,
                     "edit_type": rec.edit_type, "edit_goal": rec.edit_goal,
                     "distance": normalized_edit_distance(orig[key], rec.text)})
    return pd.DataFrame(rows, columns=["id", "original_id", "split", "edit_type", "edit_goal", "distance"])



__all__ = ["aspect_label_counts", "review_rating_counts", "edit_pair_counts", "empirical_ate", "metadata_counts",
           "levenshtein", "normalized_edit_distance", "edit_distances", "combined_rows", "pairs_arg"]
