"""Agreement between participants: Fleiss' kappa per task and dataset."""
from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .answers import parse_answer
from .scoring import score_answers
from .study import NO_PREFERENCE, Question, Study, StudyError, questions_by_id


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]]) -> float:
    """Fleiss' (1971) kappa for ``counts[i, j]`` = number of raters who put item ``i`` in category
    ``j``; every item must have the same number ``n >= 2`` of ratings
    (:func:`statsmodels.stats.inter_rater.fleiss_kappa`).

    ``kappa = (P_bar - P_e) / (1 - P_e)`` with ``P_i = (sum_j n_ij^2 - n) / (n (n - 1))``,
    ``P_bar = mean_i P_i``, ``p_j = sum_i n_ij / (N n)`` and ``P_e = sum_j p_j^2``.  Returns NaN when
    ``P_e == 1`` (everybody used one single category: kappa is undefined) or for a single item.
    """
    from statsmodels.stats.inter_rater import fleiss_kappa as _fleiss_kappa

    a = np.asarray(counts, dtype=float)
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 1:
        raise ValueError(f"counts must be a 2-D array [n_items, n_categories], got shape {a.shape}")
    if not np.all(np.isfinite(a)) or np.any(a < 0) or np.any(a != np.round(a)):
        raise ValueError("counts must hold non-negative integers (raters per item and category)")
    n_per_item = a.sum(axis=1)
    n = n_per_item[0]
    if np.any(n_per_item != n):
        raise ValueError("every item needs the same number of ratings for Fleiss' kappa; row sums are "
                         f"{sorted(set(n_per_item.astype(int).tolist()))} -- drop or complete the items "
                         "with a different number of raters")
    if n < 2:
        raise ValueError(f"Fleiss' kappa needs at least 2 ratings per item, got {int(n)}")
    if a.shape[0] < 2:  # chance agreement estimated from a single item is meaningless (it would give -1)
        return float("nan")
    p_e = float(((a.sum(axis=0) / a.sum()) ** 2).sum())
    if math.isclose(p_e, 1.0):
        return float("nan")
    return float(_fleiss_kappa(a, method="fleiss"))


def _category(question: Question, answer: str, by: str, collapse_confidence: bool) -> str:
    conf, choice = parse_answer(question, answer)
    if conf is None:
        return NO_PREFERENCE
    if by == "score":
        label = "correct" if choice == question.key else "incorrect"
    else:
        label = choice  # type: ignore[assignment]
    return label if collapse_confidence else f"{conf}:{label}"


def agreement_counts(questions: Sequence[Question], answers: pd.DataFrame, by: str = "answer",
                     collapse_confidence: bool = False) -> tuple[np.ndarray, list[str], list[str]]:
    """Count matrix for :func:`fleiss_kappa` from long-format answers.

    ``by="answer"`` uses the option a participant picked (A/B or a class); ``by="score"`` uses
    whether it was right (so the categories are the five score levels).  ``collapse_confidence``
    merges the confident and unconfident version of each category.  Returns
    ``(counts, question_ids, categories)``.
    """
    if by not in ("answer", "score"):
        raise ValueError(f"by must be 'answer' or 'score', got {by!r}")
    by_id = questions_by_id(questions)
    cats: list[str] = []
    rows: dict[str, dict[str, int]] = {}
    for qid, ans in zip(answers["question_id"].astype(str), answers["answer"].astype(str)):
        if qid not in by_id:
            raise StudyError(f"answer to unknown question {qid!r}")
        c = _category(by_id[qid], ans, by, collapse_confidence)
        if c not in cats:
            cats.append(c)
        rows.setdefault(qid, {})
        rows[qid][c] = rows[qid].get(c, 0) + 1
    cats.sort()
    qids = sorted(rows)
    counts = np.array([[rows[q].get(c, 0) for c in cats] for q in qids], dtype=int).reshape(len(qids), len(cats))
    return counts, qids, cats


def kappa_table(questions: Study | Iterable[Question], answers_df: pd.DataFrame) -> pd.DataFrame:
    """Fleiss' kappa per task and dataset, in four variants.

    The paper prints two values per task ("0.050 / 0.054") without saying how they differ (the
    paper's values in ``xaibench/resources`` mark this as ambiguous).  We report the full answer scale
    (``collapse_confidence=False``) and the scale with confident/unconfident merged
    (``collapse_confidence=True``), each with categories = the chosen option (``by="answer"``) or
    its correctness (``by="score"``).  ``paper`` holds the first printed value beside the
    full-scale rows and the second beside the collapsed rows -- our *guess* at the pairing.

    Only questions with the most common number (>= 2) of answers in their task/dataset are used,
    because Fleiss' kappa needs the same number of raters per item; ``n_items`` says how many.
    """
    from ...tables import join_paper

    scored = score_answers(questions, answers_df)
    by_id = questions_by_id(questions)
    rows = []
    for (task, dataset), g in scored.groupby(["task", "dataset"], sort=True):
        n_per_q = g.groupby("question_id").size()
        n_per_q = n_per_q[n_per_q >= 2]
        if n_per_q.empty:
            continue
        n_raters = int(n_per_q.mode().max())
        keep = set(n_per_q[n_per_q == n_raters].index)
        sub = g[g["question_id"].isin(keep)]
        qs = [by_id[q] for q in sorted(keep)]
        for collapse in (False, True):
            for by in ("answer", "score"):
                counts, _, _ = agreement_counts(qs, sub, by=by, collapse_confidence=collapse)
                rows.append({
                    "task": task, "dataset": dataset, "by": by, "collapse_confidence": collapse,
                    "ours": fleiss_kappa(counts), "ours_std": np.nan,
                    "printed": "second_value" if collapse else "first_value",
                    "n_items": len(keep), "n_raters": n_raters,
                })
    cols = ["task", "dataset", "by", "collapse_confidence", "ours", "ours_std", "paper", "n_items", "n_raters"]
    if not rows:
        return pd.DataFrame(columns=cols)
    table = join_paper(pd.DataFrame(rows), "human_grounded", {"task": "task", "dataset": "dataset", "printed": "subset"},
                       metric="fleiss_kappa")
    return table[cols]


__all__ = ["fleiss_kappa", "agreement_counts", "kappa_table"]
