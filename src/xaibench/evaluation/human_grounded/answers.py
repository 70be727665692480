"""The 5-level answer scale of every question and the exported answers table.

Answer codes are ``"confident:<choice>"``, ``"unconfident:<choice>"`` (``<choice>`` = ``A``/``B`` in
task 1, a class name in tasks 2 and 3) and ``"none"`` (can't say; tasks 1 and 2 only).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import pandas as pd

from .study import CONFIDENT, DEFAULT_MODEL_LABELS, NO_PREFERENCE, UNCONFIDENT, Question, StudyError


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


def read_answers(path: str | os.PathLike) -> pd.DataFrame:
    """Read an exported answers CSV (all columns as strings)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"answers file {path} does not exist; create it with "
                                "`python -m xaibench.survey export --db DB --out {path}`")
    return pd.read_csv(path, dtype=str, keep_default_na=False)


__all__ = ["answer_options", "parse_answer", "read_answers"]
