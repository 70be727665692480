"""The classifier datasets of Appendix C.3 (review sentiment per task) and C.4 (aspect sentiment)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..fetch import DataError
from .loading import check_split, get_df
from .schema import (ABSA_LABELS, ASPECTS, EVAL_SPLITS, LABEL_MAPS, LABEL_NAMES, NO_MAJORITY, REVIEW_VALUES,
                     check_task, task_label)

def review_label(review_majority: str | int, task: str) -> int | None:
    """The class of a review rating for ``task`` (Appendix C.3), or ``None`` if it is dropped.

    ``binary``: 1-2 stars -> 0, 4-5 -> 1, 3 -> ``None`` (dropped); ``ternary``: 1-2 -> 0,
    3 -> 1, 4-5 -> 2; ``5-way``: ``stars - 1``.  ``'no majority'`` -> ``None`` for every task.
    ``review_majority`` is the raw string (``'1'``..``'5'``, ``'no majority'``) or an int 1..5.
    """
    task = check_task(task)
    if isinstance(review_majority, str):
        v = review_majority.strip().lower()
        if v == NO_MAJORITY:
            return None
        if v not in REVIEW_VALUES:
            raise ValueError(f"review_majority {review_majority!r} is not '1'..'5' or 'no majority'")
        stars = int(v)
    elif isinstance(review_majority, (int, np.integer)) and not isinstance(review_majority, bool):
        stars = int(review_majority)
        if not 1 <= stars <= 5:
            raise ValueError(f"review rating {stars} is outside 1..5")
    else:
        raise ValueError(f"review_majority {review_majority!r} is neither a string nor an int")
    return LABEL_MAPS[task].get(stars)


def label_names(task: str = "5-way") -> list[str]:
    """Class names of ``task`` indexed by its label: binary ``negative, positive``; ternary
    ``negative, neutral, positive``; 5-way the star ratings ``'1'``..``'5'``."""
    return list(LABEL_NAMES[check_task(task)])


def task_frame(split: str, task: str, df: pd.DataFrame | None = None) -> pd.DataFrame:
    """The review-sentiment classification dataset of one split for ``task`` (Appendix C.3).

    Returns ``id, text, label`` (task class, see :func:`review_label`) plus ``original_id,
    is_original, edit_type, review_majority, split``, in file order.  Texts whose rating has no
    class in ``task`` are dropped: 3-star reviews for ``binary`` (in every split, as the authors'
    ``_encode_dataset`` does) and ``'no majority'`` reviews in the train splits.  Dev and test hold
    no ``'no majority'`` review by construction (Sec. 5: such groups were put in train); as in the
    authors' code, which would fail on one, such a record there raises :class:`DataError`.
    """
    task = check_task(task)
    check_split(split)
    df = get_df(df)
    part = df[df["split"] == split]
    if split in EVAL_SPLITS and (part["review_majority"] == NO_MAJORITY).any():
        bad = part.loc[part["review_majority"] == NO_MAJORITY, "id"].iloc[0]
        raise DataError(f"{split}: record {bad!r} has review_majority 'no majority', which CEBaB's "
                        "dev/test splits never contain (Sec. 5); the data is not CEBaB v1.1")
    labels = task_label(part["label"].to_numpy(), task)
    keep = labels >= 0
    out = part.loc[keep, ["id", "text", "original_id", "is_original", "edit_type", "review_majority",
                          "split"]].copy()
    out.insert(2, "label", labels[keep])
    return out.reset_index(drop=True)


def absa_frame(split: str, df: pd.DataFrame | None = None) -> pd.DataFrame:
    """The aspect-based sentiment dataset of one split (Appendix C.4).

    One row per (text, aspect) whose majority label is one of ``ABSA_LABELS``
    (Negative/Positive/unknown); ``'no majority'`` and absent (``''``) aspect labels are dropped.
    Columns ``id, text, aspect, label`` (index into ``ABSA_LABELS``), ``label_name``, ``split``;
    ordered by file order, then ``ASPECTS`` order.  The model input is "text [SEP] aspect"
    (Sun et al. 2019), built by the model code.
    """
    check_split(split)
    df = get_df(df)
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


def fit_frame(task: str, split: str = "train_exclusive", df: pd.DataFrame | None = None) -> pd.DataFrame:
    """The task's cleaned training rows, on which the concept explainers are fit (App. C.3).

    All :func:`load_cebab` columns of ``split`` (text, ``{aspect}_majority``, 5-way ``label``, ...)
    for the rows that have a class in ``task`` -- 'no majority' reviews are left out for every
    task, 3-star reviews for ``binary`` -- plus ``task_label`` (the class in ``task``).  These are
    the same texts the classifier of ``task`` was trained on (:func:`task_frame`).
    """
    task = check_task(task)
    check_split(split)
    df = get_df(df)
    part = df[df["split"] == split]
    labels = task_label(part["label"].to_numpy(), task)
    keep = labels >= 0
    out = part.loc[keep].copy()
    out["task_label"] = labels[keep]
    return out.reset_index(drop=True)


__all__ = ["review_label", "label_names", "task_frame", "absa_frame", "fit_frame"]
