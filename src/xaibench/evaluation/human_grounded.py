"""Human-grounded evaluation of explanation methods (Lertvittayakumjorn & Toni, EMNLP 2019).

The paper asks people three kinds of questions about the explanations of a 1D-CNN text
classifier and turns every answer into a score in ``{-1, -0.5, 0, +0.5, +1}``:

* **Task 1 -- revealing model behaviour.**  Two models (a well-trained one and a worse one) put
  the same input in the same class; the participant sees *only* the evidence each model's
  explanation gives (the input text is not shown) and says which model is more reasonable.
  Correct = the well-trained model.
* **Task 2 -- justifying predictions.**  The participant sees the top-3 evidence fragments of a
  confident prediction (``max_c p_c > 0.9``) and guesses the class of the document they come
  from.  Correct = the class the model *predicted*.
* **Task 3 -- investigating uncertain predictions.**  The participant sees the top-3 evidence and
  top-3 counter-evidence fragments of an uncertain prediction (``max_c p_c < 0.7``) together with
  the predicted class and its probability, and guesses the *true* class.  Correct = the true
  class.  There is no "can't say" option in this task (the paper: people can still fall back on
  the predicted probability).

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

Answer codes
------------
An answer is stored as a short string:

* ``"confident:<choice>"`` or ``"unconfident:<choice>"``, where ``<choice>`` is ``A`` or ``B``
  in task 1 (the model whose explanation was shown first / second) and a class name in tasks
  2 and 3;
* ``"none"`` -- no preference / can't say (tasks 1 and 2 only).

Study file (JSON)
-----------------
::

    {
      "study_id": "amazon-pilot-1",          # letters, digits, '.', '_' and '-'
      "seed": 42,                            # question order per participant
      "title": "Explanation study",          # optional, shown on the start page
      "instructions": "Please ...",          # optional plain text, shown on the start page
      "shuffle": true,                       # optional (default true): shuffle per participant
      "model_labels": ["Robot A", "Robot B"],# optional display names of the two task-1 models
      "questions": [
        {"question_id": "t1-0001", "task": 1, "dataset": "amazon", "method": "lime",
         "model_correct": true,              # was the (shared) prediction right?
         "class_names": ["Negative", "Positive"],   # optional in task 1
         "predicted_class": "Negative",      # the class both models predicted
         "evidence_a": ["waste of money", "..."],   # evidence of the model shown as A
         "evidence_b": ["..."],                      # evidence of the model shown as B
         "key": "A"},                        # which of A / B is the well-trained model
        {"question_id": "t2-0001", "task": 2, "dataset": "amazon", "method": "lime",
         "model_correct": false,
         "class_names": ["Negative", "Positive"],
         "evidence": ["enjoyed reading this", "Review : I enjoyed", "the story is fully"],
         "key": "Positive"},                 # the class the model predicted
        {"question_id": "t3-0001", "task": 3, "dataset": "amazon", "method": "lrp_n",
         "model_correct": true,
         "class_names": ["Negative", "Positive"],
         "predicted_class": "Positive", "predicted_probability": 0.62,
         "evidence": ["Good Sound . .", "is good . Has", ". I was happier"],
         "counter_evidence": ["would not re -", "cheap foam covers on", "Poor quality"],
         "key": "Positive"},                 # the true class
        ...
      ]
    }

Any question may carry a free-form ``"meta"`` object (example id, probabilities, ...), which is
kept but never shown.  All text is shown HTML-escaped by the survey app.  Method names follow the
project's explainer names (``random_w``, ``random_n``, ``lime``, ``lrp_w``, ``lrp_n``,
``deeplift_w``, ``deeplift_n``, ``gradcam_text``, ``dt``) so that :func:`score_table` can put the
paper's numbers beside ours.
"""
from __future__ import annotations

import json
import math
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from .. import io

TASKS = (1, 2, 3)
CONFIDENT = "confident"
UNCONFIDENT = "unconfident"
NO_PREFERENCE = "none"
TASK1_CHOICES = ("A", "B")
SUBSETS = ("all", "correct", "incorrect")
DEFAULT_MODEL_LABELS = ("Robot A", "Robot B")

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")

#: how the document is called in the question text, per dataset
DOC_NOUNS = {"amazon": "review", "arxiv": "abstract"}


class StudyError(ValueError):
    """A study file or an answer does not follow the documented format."""


# --------------------------------------------------------------------------------------------
# data classes
# --------------------------------------------------------------------------------------------
@dataclass
class Question:
    """One survey question; which fields are shown depends on ``task`` (see module docstring)."""

    question_id: str
    task: int
    dataset: str
    method: str
    model_correct: bool
    key: str
    class_names: tuple[str, ...] = ()
    predicted_class: str | None = None
    predicted_probability: float | None = None
    evidence: tuple[str, ...] = ()
    counter_evidence: tuple[str, ...] = ()
    evidence_a: tuple[str, ...] = ()
    evidence_b: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def choices(self) -> tuple[str, ...]:
        """What an answer can point at: ``("A", "B")`` in task 1, the class names otherwise."""
        return TASK1_CHOICES if self.task == 1 else tuple(self.class_names)

    @property
    def allows_no_preference(self) -> bool:
        """Tasks 1 and 2 offer "can't say"; task 3 does not (as in the paper)."""
        return self.task in (1, 2)

    @property
    def doc_noun(self) -> str:
        return DOC_NOUNS.get(self.dataset.lower(), "text")

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        out: dict[str, Any] = {}
        for k, v in d.items():
            if isinstance(v, tuple):
                v = list(v)
            # empty lists are kept where the task requires the field (an explanation may have
            # no counter-evidence, or one task-1 model no evidence): the loader needs the key
            if v in (None, [], {}) and k not in ("question_id", "key") and not (
                    v == [] and k in _REQUIRED_BY_TASK.get(self.task, ())):
                continue
            out[k] = v
        return out


@dataclass
class Study:
    """A questionnaire: every participant answers every question, in a per-participant order."""

    study_id: str
    seed: int
    questions: list[Question]
    title: str = "Explanations of a text classifier"
    instructions: str = ""
    shuffle: bool = True
    model_labels: tuple[str, str] = DEFAULT_MODEL_LABELS

    def question(self, question_id: str) -> Question:
        for q in self.questions:
            if q.question_id == question_id:
                return q
        raise KeyError(f"study {self.study_id!r} has no question {question_id!r}")

    def order_for(self, participant_id: str) -> list[str]:
        """Question ids in the order this participant sees them (deterministic).

        With ``shuffle`` the order is a permutation seeded by ``seed`` and the participant id, so
        a participant who comes back gets the same order and continues where they stopped.
        """
        ids = [q.question_id for q in self.questions]
        if self.shuffle:
            import random

            random.Random(f"{self.seed}:{participant_id}").shuffle(ids)
        return ids

    def to_json(self) -> dict[str, Any]:
        return {
            "study_id": self.study_id,
            "seed": self.seed,
            "title": self.title,
            "instructions": self.instructions,
            "shuffle": self.shuffle,
            "model_labels": list(self.model_labels),
            "questions": [q.to_json() for q in self.questions],
        }


# --------------------------------------------------------------------------------------------
# validation / loading
# --------------------------------------------------------------------------------------------
_Q_FIELDS = {f for f in Question.__dataclass_fields__}
_STUDY_FIELDS = {"study_id", "seed", "title", "instructions", "shuffle", "model_labels", "questions"}
_REQUIRED_BY_TASK = {
    1: ("predicted_class", "evidence_a", "evidence_b"),
    2: ("class_names", "evidence"),
    3: ("class_names", "evidence", "counter_evidence", "predicted_class", "predicted_probability"),
}
#: an explanation may find no evidence (task 1: one model's list may be empty) or no counter-evidence
_MAY_BE_EMPTY = ("evidence_a", "evidence_b", "counter_evidence")
_FORBIDDEN_BY_TASK = {
    1: ("evidence", "counter_evidence", "predicted_probability"),
    2: ("evidence_a", "evidence_b", "counter_evidence", "predicted_class", "predicted_probability"),
    3: ("evidence_a", "evidence_b"),
}


def _str_list(value: Any, where: str, name: str, allow_empty: bool = False) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise StudyError(f"{where}: {name!r} must be a list of strings, got {value!r}")
    if not allow_empty and not value:
        raise StudyError(f"{where}: {name!r} must not be empty")
    if any(not s.strip() for s in value):
        raise StudyError(f"{where}: {name!r} contains an empty string")
    return tuple(value)


def _question_from_json(d: Any, index: int) -> Question:
    where = f"question #{index}"
    if not isinstance(d, dict):
        raise StudyError(f"{where}: must be a JSON object, got {type(d).__name__}")
    if isinstance(d.get("question_id"), str):
        where = f"question #{index} ({d['question_id']!r})"
    unknown = sorted(set(d) - _Q_FIELDS)
    if unknown:
        raise StudyError(f"{where}: unknown field(s) {unknown}; allowed: {sorted(_Q_FIELDS)}")
    for name in ("question_id", "task", "dataset", "method", "model_correct", "key"):
        if name not in d:
            raise StudyError(f"{where}: missing required field {name!r}")
    qid = d["question_id"]
    if not isinstance(qid, str) or not _ID_RE.match(qid):
        raise StudyError(f"{where}: question_id must be 1-128 characters of letters, digits, "
                         f"'.', '_' or '-' (starting with a letter or digit), got {qid!r}")
    task = d["task"]
    if isinstance(task, bool) or task not in TASKS:
        raise StudyError(f"{where}: task must be 1, 2 or 3, got {task!r}")
    for name in ("dataset", "method"):
        if not isinstance(d[name], str) or not d[name].strip():
            raise StudyError(f"{where}: {name!r} must be a non-empty string, got {d[name]!r}")
    if not isinstance(d["model_correct"], bool):
        raise StudyError(f"{where}: model_correct must be true or false, got {d['model_correct']!r}")
    for name in _REQUIRED_BY_TASK[task]:
        if d.get(name) is None or (name not in _MAY_BE_EMPTY and d.get(name) in ([], "")):
            raise StudyError(f"{where}: task {task} needs field {name!r}")
    for name in _FORBIDDEN_BY_TASK[task]:
        if d.get(name) not in (None, []):
            raise StudyError(f"{where}: field {name!r} is not shown in task {task}; remove it "
                             "(task 1 shows evidence_a/evidence_b, task 2 evidence, task 3 "
                             "evidence/counter_evidence/predicted_class/predicted_probability)")

    kw: dict[str, Any] = {}
    for name in ("evidence", "counter_evidence", "evidence_a", "evidence_b"):
        if d.get(name) is not None:
            kw[name] = _str_list(d[name], where, name,
                                 allow_empty=name in _MAY_BE_EMPTY or name not in _REQUIRED_BY_TASK[task])
    class_names: tuple[str, ...] = ()
    if d.get("class_names") is not None:
        class_names = _str_list(d["class_names"], where, "class_names")
        if len(class_names) < 2:
            raise StudyError(f"{where}: class_names needs at least two classes, got {list(class_names)}")
        if len(set(class_names)) != len(class_names):
            raise StudyError(f"{where}: class_names has duplicates: {list(class_names)}")
        if NO_PREFERENCE in class_names:
            raise StudyError(f"{where}: {NO_PREFERENCE!r} is reserved for 'no preference' and "
                             "cannot be a class name")
    pred = d.get("predicted_class")
    if pred is not None:
        if not isinstance(pred, str) or not pred:
            raise StudyError(f"{where}: predicted_class must be a non-empty string, got {pred!r}")
        if class_names and pred not in class_names:
            raise StudyError(f"{where}: predicted_class {pred!r} is not one of class_names "
                             f"{list(class_names)}")
    prob = d.get("predicted_probability")
    if prob is not None:
        if isinstance(prob, bool) or not isinstance(prob, (int, float)) or not 0.0 <= prob <= 1.0:
            raise StudyError(f"{where}: predicted_probability must be a number in [0, 1], got {prob!r}")
        prob = float(prob)
    meta = d.get("meta", {})
    if not isinstance(meta, dict):
        raise StudyError(f"{where}: meta must be a JSON object, got {type(meta).__name__}")

    key = d["key"]
    valid_keys = TASK1_CHOICES if task == 1 else class_names
    if key not in valid_keys:
        what = ("which model (A or B) is the well-trained one" if task == 1 else
                "the predicted class" if task == 2 else "the true class")
        raise StudyError(f"{where}: key must be {what}, one of {list(valid_keys)}; got {key!r}")
    return Question(question_id=qid, task=task, dataset=d["dataset"], method=d["method"],
                    model_correct=d["model_correct"], key=key, class_names=class_names,
                    predicted_class=pred, predicted_probability=prob, meta=meta, **kw)


def study_from_json(d: Any) -> Study:
    """Build and validate a :class:`Study` from parsed JSON (raises :class:`StudyError`)."""
    if not isinstance(d, dict):
        raise StudyError(f"a study must be a JSON object, got {type(d).__name__}")
    unknown = sorted(set(d) - _STUDY_FIELDS)
    if unknown:
        raise StudyError(f"study: unknown field(s) {unknown}; allowed: {sorted(_STUDY_FIELDS)}")
    for name in ("study_id", "seed", "questions"):
        if name not in d:
            raise StudyError(f"study: missing required field {name!r}")
    sid = d["study_id"]
    if not isinstance(sid, str) or not _ID_RE.match(sid):
        raise StudyError(f"study_id must be 1-128 characters of letters, digits, '.', '_' or '-', "
                         f"got {sid!r}")
    seed = d["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise StudyError(f"seed must be an integer, got {seed!r}")
    qs = d["questions"]
    if not isinstance(qs, list) or not qs:
        raise StudyError("questions must be a non-empty list")
    questions = [_question_from_json(q, i) for i, q in enumerate(qs)]
    seen: set[str] = set()
    for q in questions:
        if q.question_id in seen:
            raise StudyError(f"question_id {q.question_id!r} is used twice; ids must be unique")
        seen.add(q.question_id)
    kw: dict[str, Any] = {}
    for name in ("title", "instructions"):
        if name in d:
            if not isinstance(d[name], str):
                raise StudyError(f"{name} must be a string, got {d[name]!r}")
            kw[name] = d[name]
    if "shuffle" in d:
        if not isinstance(d["shuffle"], bool):
            raise StudyError(f"shuffle must be true or false, got {d['shuffle']!r}")
        kw["shuffle"] = d["shuffle"]
    if "model_labels" in d:
        ml = d["model_labels"]
        if (not isinstance(ml, list) or len(ml) != 2 or not all(isinstance(s, str) and s.strip() for s in ml)
                or ml[0] == ml[1]):
            raise StudyError(f"model_labels must be two different non-empty strings, got {ml!r}")
        kw["model_labels"] = (ml[0], ml[1])
    return Study(study_id=sid, seed=seed, questions=questions, **kw)


def load_study(path: str | os.PathLike) -> Study:
    """Read and validate a study JSON file; errors name the file and the offending question."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"study file {path} does not exist") from None
    except json.JSONDecodeError as e:
        raise StudyError(f"{path} is not valid JSON: {e}") from None
    try:
        return study_from_json(raw)
    except StudyError as e:
        raise StudyError(f"{path}: {e}") from None


def save_study(study: Study, path: str | os.PathLike) -> Path:
    """Validate ``study`` (by a JSON round trip) and write it atomically."""
    d = study.to_json()
    study_from_json(json.loads(json.dumps(d)))
    return io.write_json(path, d, sort_keys=False)


# --------------------------------------------------------------------------------------------
# answers and scores
# --------------------------------------------------------------------------------------------
def answer_options(question: Question,
                   model_labels: Sequence[str] = DEFAULT_MODEL_LABELS) -> list[tuple[str, str]]:
    """The answer scale of ``question`` as ``(code, label)`` pairs, in the paper's order.

    Task 1: A clearly / A slightly / can't say / B slightly / B clearly.  Tasks 2 and 3: "certain"
    for every class, then "not certain but likely" for every class, then (task 2 only) "can't say".
    """
    if question.task == 1:
        a, b = model_labels
        return [
            (f"{CONFIDENT}:A", f"{a} seems clearly more reasonable than {b}."),
            (f"{UNCONFIDENT}:A", f"{a} seems slightly more reasonable than {b}."),
            (NO_PREFERENCE, "I can't say which one is more reasonable."),
            (f"{UNCONFIDENT}:B", f"{b} seems slightly more reasonable than {a}."),
            (f"{CONFIDENT}:B", f"{b} seems clearly more reasonable than {a}."),
        ]
    noun = question.doc_noun
    if question.task == 2:
        sure = "I'm certain that they are from a{n} {c} " + noun + "."
        maybe = "I'm not certain but they are likely from a{n} {c} " + noun + "."
    else:
        sure = "I'm certain that it is a{n} {c} " + noun + "."
        maybe = "I'm not certain but it is probably a{n} {c} " + noun + "."

    def art(c: str) -> str:
        return "n" if c[:1].lower() in "aeiou" else ""

    opts = [(f"{CONFIDENT}:{c}", sure.format(n=art(c), c=c)) for c in question.class_names]
    opts += [(f"{UNCONFIDENT}:{c}", maybe.format(n=art(c), c=c)) for c in question.class_names]
    if question.allows_no_preference:
        opts.append((NO_PREFERENCE, "I can't say."))
    return opts


def parse_answer(question: Question, answer: str) -> tuple[str | None, str | None]:
    """Split an answer code into ``(confidence, choice)``; ``(None, None)`` for no preference.

    Raises :class:`StudyError` naming the valid codes when ``answer`` is not one of them.
    """
    valid = [code for code, _ in answer_options(question)]
    if not isinstance(answer, str) or answer not in valid:
        raise StudyError(f"answer {answer!r} is not valid for question {question.question_id!r} "
                         f"(task {question.task}); valid answers: {valid}")
    if answer == NO_PREFERENCE:
        return None, None
    conf, choice = answer.split(":", 1)
    return conf, choice


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


def _questions_by_id(questions: Study | Iterable[Question]) -> dict[str, Question]:
    qs = questions.questions if isinstance(questions, Study) else list(questions)
    out: dict[str, Question] = {}
    for q in qs:
        if q.question_id in out:
            raise StudyError(f"question_id {q.question_id!r} appears twice")
        out[q.question_id] = q
    return out


def score_answers(questions: Study | Iterable[Question], answers: pd.DataFrame) -> pd.DataFrame:
    """Attach ``task``/``dataset``/``method``/``model_correct``/``score`` to every answer row.

    ``answers`` needs columns ``question_id`` and ``answer`` (``participant_id`` is kept when
    present), e.g. the CSV written by ``python -m xaibench.survey export``.
    """
    missing = [c for c in ("question_id", "answer") if c not in answers.columns]
    if missing:
        raise StudyError(f"answers table is missing column(s) {missing}; it has "
                         f"{list(answers.columns)} (export one with `python -m xaibench.survey export`)")
    by_id = _questions_by_id(questions)
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
    table["paper"] = _paper_lookup(table) if with_paper else np.nan
    return table[cols]


def _paper_lookup(table: pd.DataFrame) -> list[float]:
    try:
        from ..tables import paper_values

        pv = paper_values("human_grounded", metric="avg_human_score")
    except (KeyError, FileNotFoundError):  # pragma: no cover - resources always ship
        return [np.nan] * len(table)
    lut = {(r.task, r.dataset, r.method, r.subset): float(r.value) for r in pv.itertuples()}
    return [lut.get((r.task, r.dataset, r.method, r.subset), np.nan) for r in table.itertuples()]


# --------------------------------------------------------------------------------------------
# agreement
# --------------------------------------------------------------------------------------------
def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]]) -> float:
    """Fleiss' (1971) kappa for ``counts[i, j]`` = number of raters who put item ``i`` in category
    ``j``; every item must have the same number ``n >= 2`` of ratings.

    ``kappa = (P_bar - P_e) / (1 - P_e)`` with ``P_i = (sum_j n_ij^2 - n) / (n (n - 1))``,
    ``P_bar = mean_i P_i``, ``p_j = sum_i n_ij / (N n)`` and ``P_e = sum_j p_j^2``.  Returns NaN when
    ``P_e == 1`` (everybody used one single category: kappa is undefined) or for a single item.
    """
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
    n_items = a.shape[0]
    if n_items < 2:  # chance agreement estimated from a single item is meaningless (gave -1.0)
        return float("nan")
    p_j = a.sum(axis=0) / (n_items * n)
    p_i = ((a ** 2).sum(axis=1) - n) / (n * (n - 1))
    p_bar = p_i.mean()
    p_e = float((p_j ** 2).sum())
    if math.isclose(p_e, 1.0):
        return float("nan")
    return float((p_bar - p_e) / (1.0 - p_e))


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
    by_id = _questions_by_id(questions)
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

    The paper prints two values per task ("0.050 / 0.054") without saying how they differ
    (``shared/paper_values`` flags this as ambiguous).  We report the full answer scale
    (``collapse_confidence=False``) and the scale with confident/unconfident merged
    (``collapse_confidence=True``), each with categories = the chosen option (``by="answer"``) or
    its correctness (``by="score"``).  ``paper`` holds the first printed value beside the
    full-scale rows and the second beside the collapsed rows -- our *guess* at the pairing.

    Only questions with the most common number (>= 2) of answers in their task/dataset are used,
    because Fleiss' kappa needs the same number of raters per item; ``n_items`` says how many.
    """
    scored = score_answers(questions, answers_df)
    by_id = _questions_by_id(questions)
    try:
        from ..tables import paper_values

        pv = paper_values("human_grounded", metric="fleiss_kappa")
        plut = {(r.task, r.dataset, r.subset): float(r.value) for r in pv.itertuples()}
    except (KeyError, FileNotFoundError):  # pragma: no cover
        plut = {}
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
                    "paper": plut.get((task, dataset, "second_value" if collapse else "first_value"), np.nan),
                    "n_items": len(keep), "n_raters": n_raters,
                })
    cols = ["task", "dataset", "by", "collapse_confidence", "ours", "ours_std", "paper", "n_items", "n_raters"]
    return pd.DataFrame(rows, columns=cols)


def read_answers(path: str | os.PathLike) -> pd.DataFrame:
    """Read an exported answers CSV (all columns as strings)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"answers file {path} does not exist; create it with "
                                "`python -m xaibench.survey export --db DB --out {path}`")
    return pd.read_csv(path, dtype=str, keep_default_na=False)


__all__ = [
    "Question", "Study", "StudyError", "load_study", "save_study", "study_from_json",
    "answer_options", "parse_answer", "score_answer", "score_answers", "score_table",
    "fleiss_kappa", "agreement_counts", "kappa_table", "read_answers",
]
