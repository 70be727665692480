"""The study file: :class:`Question`, :class:`Study`, their JSON format and its validation.

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
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from ... import io

TASKS = (1, 2, 3)
CONFIDENT = "confident"
UNCONFIDENT = "unconfident"
NO_PREFERENCE = "none"
TASK1_CHOICES = ("A", "B")
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


def _check_fields(d: dict, allowed: set[str], required: Sequence[str], where: str) -> None:
    """No field outside ``allowed``, every ``required`` one present."""
    unknown = sorted(set(d) - allowed)
    if unknown:
        raise StudyError(f"{where}: unknown field(s) {unknown}; allowed: {sorted(allowed)}")
    for name in required:
        if name not in d:
            raise StudyError(f"{where}: missing required field {name!r}")


def _check_id(d: dict, name: str, where: str) -> str:
    """``d[name]`` as a valid identifier (it names files and table rows)."""
    value = d[name]
    if not isinstance(value, str) or not _ID_RE.match(value):
        raise StudyError(f"{where}: {name} must be 1-128 characters of letters, digits, "
                         f"'.', '_' or '-' (starting with a letter or digit), got {value!r}")
    return value


def _question_from_json(d: Any, index: int) -> Question:
    where = f"question #{index}"
    if not isinstance(d, dict):
        raise StudyError(f"{where}: must be a JSON object, got {type(d).__name__}")
    if isinstance(d.get("question_id"), str):
        where = f"question #{index} ({d['question_id']!r})"
    _check_fields(d, _Q_FIELDS, ("question_id", "task", "dataset", "method", "model_correct", "key"), where)
    qid = _check_id(d, "question_id", where)
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
    _check_fields(d, _STUDY_FIELDS, ("study_id", "seed", "questions"), "study")
    sid = _check_id(d, "study_id", "study")
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


def questions_by_id(questions: Study | Iterable[Question]) -> dict[str, Question]:
    """``{question_id: Question}``; raises :class:`StudyError` when an id appears twice."""
    qs = questions.questions if isinstance(questions, Study) else list(questions)
    out: dict[str, Question] = {}
    for q in qs:
        if q.question_id in out:
            raise StudyError(f"question_id {q.question_id!r} appears twice")
        out[q.question_id] = q
    return out


__all__ = [
    "TASKS", "CONFIDENT", "UNCONFIDENT", "NO_PREFERENCE", "TASK1_CHOICES", "DEFAULT_MODEL_LABELS", "DOC_NOUNS",
    "StudyError", "Question", "Study", "study_from_json", "load_study", "save_study", "questions_by_id",
]
