"""Scores of answers and the paper's score tables (task x dataset x method x subset).

Answer scale and scores (the paper's screenshots)::

    confident & correct      +1.0      e.g. "Robot A seems clearly more reasonable than Robot B"
    unconfident & correct    +0.5           "Robot A seems slightly more reasonable than Robot B"
    no preference             0.0           "I can't say which robot is more reasonable"
    unconfident & incorrect  -0.5
    confident & incorrect    -1.0

Scores are averaged per task, dataset and method over all answers (column ``A`` of the paper's
tables), over the answers to questions whose model prediction was correct (check mark) and over
those whose prediction was wrong (cross).  In task 1 both models predict the same class, so they
are both right or both wrong.  Agreement between participants is Fleiss' kappa.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .answers import parse_answer
from .methods import PAPER_METHODS
from .readers import PARTICIPANTS
from .study import CONFIDENT, Question, Study, StudyError, questions_by_id

SUBSETS = ("all", "correct", "incorrect")
#: direction of the average score (+1 = every answer confidently right): higher is better
LOWER_IS_BETTER = False


def score_answer(question: Question, answer: str) -> float:
    """Score one answer: +1 / +0.5 for a confident / unconfident correct answer, 0 for no
    preference, -0.5 / -1 for an unconfident / confident wrong one.

    "Correct" means choosing ``question.key``: the well-trained model (task 1), the predicted class
    (task 2), the true class (task 3).
    """
    conf, choice = parse_answer(question, answer)
    if conf is None:
        return 0.0
    magnitude = 1.0 if conf == CONFIDENT else 0.5
    return magnitude if choice == question.key else -magnitude


def score_answers(questions: Study | Iterable[Question], answers: pd.DataFrame) -> pd.DataFrame:
    """Attach ``task``/``dataset``/``method``/``model_correct``/``score`` to every answer row.

    ``answers`` needs columns ``question_id`` and ``answer`` (``participant_id`` is kept when
    present), e.g. the CSV written by ``python -m xaibench.survey export``.
    """
    missing = [c for c in ("question_id", "answer") if c not in answers.columns]
    if missing:
        raise StudyError(f"answers table is missing column(s) {missing}; it has "
                         f"{list(answers.columns)} (export one with `python -m xaibench.survey export`)")
    by_id = questions_by_id(questions)
    qids = answers["question_id"].astype(str)
    unknown = sorted(set(qids) - set(by_id))
    if unknown:
        raise StudyError(f"{len(unknown)} answered question id(s) are not in the study, e.g. "
                         f"{unknown[:5]}; score with the study file the answers were collected for")
    out = answers.copy()
    out["question_id"] = qids
    out["answer"] = out["answer"].astype(str)
    qs = [by_id[i] for i in qids]
    out["task"] = [f"task_{q.task}" for q in qs]
    out["dataset"] = [q.dataset for q in qs]
    out["method"] = [q.method for q in qs]
    out["model_correct"] = [q.model_correct for q in qs]
    out["score"] = [score_answer(q, a) for q, a in zip(qs, out["answer"])]
    return out


def iter_subsets(scored: pd.DataFrame):
    """Yield ``((task, dataset, method, subset), rows)`` for the paper's columns A / check / cross
    (``subset`` = ``all`` / ``correct`` / ``incorrect``); empty subsets are skipped."""
    for (task, dataset, method), g in scored.groupby(["task", "dataset", "method"], sort=True):
        for subset in SUBSETS:
            sub = g if subset == "all" else g[g["model_correct"] == (subset == "correct")]
            if not sub.empty:
                yield (task, dataset, method, subset), sub


def score_table(questions: Study | Iterable[Question], answers_df: pd.DataFrame,
                with_paper: bool = True) -> pd.DataFrame:
    """Average human score per task, dataset, method and subset (the paper's Tables 2-4 layout).

    Returns a tidy table with columns ``task`` (``task_1``...), ``dataset``, ``method``,
    ``subset`` (``all`` = column A, ``correct`` = check mark, ``incorrect`` = cross), ``ours`` (mean
    score over the answers), ``ours_std`` (NaN: one study, no seeds), ``paper`` (the printed number
    or NaN), ``n_answers`` and ``n_questions``.  A subset with no answers gets no row.
    """
    scored = score_answers(questions, answers_df)
    rows = []
    for (task, dataset, method, subset), sub in iter_subsets(scored):
        rows.append({"task": task, "dataset": dataset, "method": method, "subset": subset,
                     "ours": float(sub["score"].mean()), "ours_std": np.nan,
                     "n_answers": int(len(sub)), "n_questions": int(sub["question_id"].nunique())})
    cols = ["task", "dataset", "method", "subset", "ours", "ours_std", "paper", "n_answers", "n_questions"]
    if not rows:
        return pd.DataFrame(columns=cols)
    table = pd.DataFrame(rows)
    table["paper"] = paper_scores(table) if with_paper else np.nan
    return table[cols]


def paper_scores(table: pd.DataFrame) -> list[float]:
    """The paper's average human score for every (task, dataset, method, subset) row of ``table``
    (NaN where the paper prints none)."""
    from ...tables import join_paper

    keys = ["task", "dataset", "method", "subset"]
    joined = join_paper(table[keys].reset_index(drop=True), "human_grounded", keys, metric="avg_human_score")
    return joined["paper"].astype(float).tolist()


def participant_score_table(questions: Sequence[Question], answers: pd.DataFrame,
                            participants: str = PARTICIPANTS) -> pd.DataFrame:
    """The paper's score tables (task x dataset x method x subset) from several participants.

    ``ours`` = mean over participants of each participant's mean score, ``ours_std`` = sample std
    of those per-participant means (NaN for one participant); ``paper`` = the human number.
    (The mean is taken per group in answer order, here rather than with
    :func:`xaibench.tables.aggregate_seeds`, whose grouped mean sums in another order and can differ
    in the last digit.)
    """
    if "participant_id" not in answers.columns:
        raise ValueError("answers need a participant_id column (one row per participant and question)")
    scored = score_answers(questions, answers)
    rows = []
    for (task, dataset, method, subset), sub in iter_subsets(scored):
        per = sub.groupby("participant_id")["score"].mean()
        rows.append({"task": task, "dataset": dataset, "method": method, "subset": subset,
                     "participants": participants, "ours": float(per.mean()),
                     "ours_std": float(per.std(ddof=1)) if len(per) > 1 else np.nan,
                     "n_participants": int(len(per)), "n_questions": int(sub["question_id"].nunique())})
    cols = ["task", "dataset", "method", "subset", "participants", "ours", "ours_std", "paper",
            "n_participants", "n_questions"]
    if not rows:
        return pd.DataFrame(columns=cols)
    table = pd.DataFrame(rows)
    table["paper"] = paper_scores(table)
    order = {m: i for i, m in enumerate(PAPER_METHODS)}
    table["_o"] = table["method"].map(order).fillna(len(order))
    table = table.sort_values(["task", "dataset", "_o", "subset"], kind="stable").drop(columns="_o")
    return table[cols].reset_index(drop=True)


def answer_distribution(questions: Sequence[Question], answers: pd.DataFrame) -> pd.DataFrame:
    """Share of each score level (-1 .. +1) per task and dataset (a check on the thresholds)."""
    scored = score_answers(questions, answers)
    out = (scored.groupby(["task", "dataset"])["score"].value_counts(normalize=True)
           .rename("share").reset_index())
    return out.sort_values(["task", "dataset", "score"]).reset_index(drop=True)


__all__ = ["SUBSETS", "LOWER_IS_BETTER", "score_answer", "score_answers", "iter_subsets", "score_table", "paper_scores",
           "participant_score_table", "answer_distribution"]
