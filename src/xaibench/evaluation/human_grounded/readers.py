"""Simulated participants: bag-of-n-grams readers that answer what a human is shown.

Simulated participants
----------------------
A :class:`SimulatedReader` is a bag-of-n-grams logistic regression trained on the ``reader`` split
(one bootstrap resample per participant).  It is shown exactly what a human is shown (the
question's visible fields, see :func:`visible_fields`) and answers on the paper's 5-level scale:

* Task 2: ``q = p_reader(. | evidence)``; choice = ``argmax q``; strength = margin between the two
  largest ``q``.
* Task 1: ``b_X = p_reader(predicted class | evidence of model X)`` for X in A, B; choice = the
  larger; strength = ``|b_A - b_B|``.
* Task 3: log-odds pooling of the shown probability and the reader's reading of the fragments:
  ``logit b = log(p_shown (K-1) / (1 - p_shown)) + [logit p_r(c|E) - logit pi_c]
  + [logit p_r(c|CE) - logit pi_c]``
  (``c`` the predicted class, ``pi`` the reader's belief given no text); choice = ``c`` if
  ``b >= 0.5`` else the other class the counter-evidence points to; strength = ``|2b - 1|``.

Strength -> answer (:class:`AnswerThresholds`): below ``no_preference`` (0.1) "can't say"
(tasks 1 and 2 only; task 3 falls back to "unconfident"), below ``confident`` (0.5) "unconfident",
else "confident".  These thresholds are our assumptions, not the paper's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .study import CONFIDENT, NO_PREFERENCE, UNCONFIDENT, Question

#: the ``participants`` label of every simulated answer (kept apart from human answers)
PARTICIPANTS = "simulated"


@dataclass(frozen=True)
class AnswerThresholds:
    """Strength (in [0, 1]) -> answer level.  ``strength < no_preference`` -> "can't say" (where
    offered), ``< confident`` -> unconfident, else confident."""

    no_preference: float = 0.1
    confident: float = 0.5

    def __post_init__(self) -> None:
        if not 0.0 <= self.no_preference <= self.confident <= 1.0:
            raise ValueError(f"need 0 <= no_preference <= confident <= 1, got {self}")


def strength_to_answer(strength: float, choice: str, allow_none: bool = True,
                       thresholds: AnswerThresholds = AnswerThresholds()) -> str:
    """Map a belief strength and the chosen option to an answer code of the 5-level scale.

    >>> strength_to_answer(0.05, "A"), strength_to_answer(0.3, "A"), strength_to_answer(0.7, "A")
    ('none', 'unconfident:A', 'confident:A')
    """
    if not (0.0 <= strength <= 1.0) or math.isnan(strength):
        raise ValueError(f"strength must lie in [0, 1], got {strength}")
    if strength < thresholds.no_preference and allow_none:
        return NO_PREFERENCE
    level = CONFIDENT if strength >= thresholds.confident else UNCONFIDENT
    return f"{level}:{choice}"


VISIBLE_FIELDS = {
    1: ("task", "class_names", "predicted_class", "evidence_a", "evidence_b"),
    2: ("task", "class_names", "evidence"),
    3: ("task", "class_names", "predicted_class", "predicted_probability", "evidence", "counter_evidence"),
}


def visible_fields(question: Question) -> dict[str, Any]:
    """What a participant sees of ``question`` (never ``key``, ``model_correct``, ``meta``, method)."""
    return {f: getattr(question, f) for f in VISIBLE_FIELDS[question.task]}


def _logit(p: float, eps: float = 1e-4) -> float:
    p = min(max(float(p), eps), 1.0 - eps)
    return math.log(p / (1.0 - p))


class SimulatedReader:
    """A simulated participant: a text classifier that reads only the visible fields of a question.

    ``model`` is any :class:`~xaibench.models.base.Classifier` over the dataset's classes (index
    ``i`` = ``class_names[i]``); the default is a bag-of-n-grams logistic regression
    (:func:`train_readers`).  Fragments are joined with spaces and read as one document.
    """

    def __init__(self, model: Any, class_names: Sequence[str], participant_id: str,
                 thresholds: AnswerThresholds = AnswerThresholds()):
        if getattr(model, "n_classes", len(class_names)) != len(class_names):
            raise ValueError(f"reader model has {model.n_classes} classes but {len(class_names)} class names")
        self.model, self.class_names = model, tuple(class_names)
        self.participant_id, self.thresholds = participant_id, thresholds
        self._memo: dict[str, np.ndarray] = {}

    def belief(self, fragments: Sequence[str]) -> np.ndarray:
        """The reader's class probabilities given only ``fragments`` (no text: its prior)."""
        text = " ".join(fragments)
        if text not in self._memo:
            self._memo[text] = np.asarray(self.model.predict_proba([text])[0], dtype=float)
        return self._memo[text]

    def prefetch(self, texts: Sequence[str]) -> None:
        """Score many fragment-joins in one batch (speed only; same answers)."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if todo:
            for t, p in zip(todo, self.model.predict_proba(todo)):
                self._memo[t] = np.asarray(p, dtype=float)

    def _cls(self, name: str) -> int:
        return self.class_names.index(name)

    def answer(self, question: Question) -> str:
        """Answer code for ``question``, computed from :func:`visible_fields` only."""
        v = visible_fields(question)
        if tuple(v["class_names"]) and tuple(v["class_names"]) != self.class_names:
            raise ValueError(f"question {question.question_id!r} has classes {v['class_names']} but the reader "
                             f"knows {self.class_names}")
        th = self.thresholds
        if v["task"] == 1:
            c = self._cls(v["predicted_class"])
            ba, bb = self.belief(v["evidence_a"])[c], self.belief(v["evidence_b"])[c]
            return strength_to_answer(min(1.0, abs(ba - bb)), "A" if ba >= bb else "B", True, th)
        if v["task"] == 2:
            q = self.belief(v["evidence"])
            order = np.argsort(-q, kind="stable")
            margin = float(q[order[0]] - q[order[1]])
            return strength_to_answer(min(1.0, margin), self.class_names[order[0]], True, th)
        c = self._cls(v["predicted_class"])
        prior = self.belief([])
        pe, pce = self.belief(v["evidence"]), self.belief(v["counter_evidence"])
        k = len(self.class_names)
        p_shown = min(max(float(v["predicted_probability"]), 1e-4), 1 - 1e-4)
        # odds of the predicted class against one alternative, the rest of the mass split evenly
        # (= logit(p) for two classes), then the reader's likelihood ratios for the fragments
        z = (math.log(p_shown * (k - 1) / (1.0 - p_shown)) + (_logit(pe[c]) - _logit(prior[c]))
             + (_logit(pce[c]) - _logit(prior[c])))
        b = 1.0 / (1.0 + math.exp(-z))
        if b >= 0.5:
            choice = c
        else:  # the other class the counter-evidence (then the evidence) points to most
            others = [k for k in range(len(self.class_names)) if k != c]
            score = pce[others] - prior[others] if v["counter_evidence"] else pe[others] - prior[others]
            choice = others[int(np.argmax(score))]
        return strength_to_answer(min(1.0, abs(2 * b - 1)), self.class_names[choice], False, th)


def train_readers(texts: Sequence[str], labels: Sequence[int], class_names: Sequence[str], n_readers: int = 5,
                  seed: int = 42, thresholds: AnswerThresholds = AnswerThresholds(), C: float = 10.0,
                  ngram_max: int = 2, prefix: str = "sim") -> list[SimulatedReader]:
    """``n_readers`` simulated participants, each a logistic regression on uni+bi-gram tf-idf
    trained on its own bootstrap resample (seed ``seed + i``) of ``texts``."""
    from ...models.logreg import LogRegClassifier

    if n_readers < 1:
        raise ValueError(f"n_readers must be >= 1, got {n_readers}")
    texts = list(texts)
    y = np.asarray(labels, dtype=int)
    if len(texts) != len(y):
        raise ValueError(f"got {len(texts)} texts but {len(y)} labels")
    readers = []
    for i in range(n_readers):
        rng = np.random.default_rng(seed + i)
        idx = rng.integers(0, len(texts), size=len(texts))
        while len(np.unique(y[idx])) < len(class_names):  # a resample must contain every class
            idx = rng.integers(0, len(texts), size=len(texts))
        model = LogRegClassifier(n_classes=len(class_names), seed=seed + i, cache=False, features="bow",
                                 C=C, ngram_max=ngram_max)
        model.fit([texts[j] for j in idx], y[idx])
        readers.append(SimulatedReader(model, class_names, f"{prefix}-{seed + i}", thresholds))
    return readers


def simulate_answers(readers: Sequence[SimulatedReader], questions: Sequence[Question]) -> pd.DataFrame:
    """Every reader answers every question it knows the classes of.  Returns ``participant_id,
    question_id, answer, participants`` (``participants`` = ``"simulated"``)."""
    rows = []
    for r in readers:
        mine = [q for q in questions if tuple(q.class_names) == r.class_names]
        joins = {" ".join(f) for q in mine for f in (q.evidence, q.counter_evidence, q.evidence_a, q.evidence_b)}
        r.prefetch(sorted(joins | {""}))
        rows.extend({"participant_id": r.participant_id, "question_id": q.question_id, "answer": r.answer(q),
                     "participants": PARTICIPANTS} for q in mine)
    return pd.DataFrame(rows, columns=["participant_id", "question_id", "answer", "participants"])


__all__ = ["PARTICIPANTS", "AnswerThresholds", "strength_to_answer", "VISIBLE_FIELDS", "visible_fields",
           "SimulatedReader", "train_readers", "simulate_answers"]
