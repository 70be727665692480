"""Explanations -> questions: the top-``m`` evidence / counter-evidence of every selected example."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .splits import dataset_spec
from .study import Question

#: fragments shown per list (the paper's top-3)
M_FRAGMENTS = 3


def _frag_texts(frags) -> list[str]:
    return [f.text for f in frags if f.text.strip()]


def _skip(report: "BuildReport | None", task: int, dataset: str, method: str, example_id: str, reason: str) -> None:
    """Record an example that yields no question (when a report is kept)."""
    if report is not None:
        report.skipped.append({"task": f"task_{task}", "dataset": dataset, "method": method,
                               "example_id": example_id, "reason": reason})


def _question_id(dataset: str, task: int, method: str, example_id: str) -> str:
    return f"{dataset}-t{task}-{method}-{example_id.split(':')[1]}"


@dataclass
class BuildReport:
    """What was generated and what had to be skipped (an explanation without evidence)."""

    skipped: list[dict[str, Any]] = field(default_factory=list)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.skipped, columns=["task", "dataset", "method", "example_id", "reason"])


def build_task1(dataset: str, pool: pd.DataFrame, sel: pd.DataFrame, expl_well: Mapping[str, Mapping[str, Any]],
                expl_worse: Mapping[str, Mapping[str, Any]], seed: int = 42, m: int = M_FRAGMENTS,
                report: BuildReport | None = None) -> list[Question]:
    """Task 1 questions: per selected example and method, the top-``m`` evidence of the two models
    (which one is shown as A is a seeded coin flip per example; ``key`` = the well-trained one)."""
    from ...explainers.local import evidence

    spec = dataset_spec(dataset)
    rng = np.random.default_rng(seed)
    flips = rng.random(len(sel)) < 0.5  # one flip per example, shared by every method
    qs: list[Question] = []
    for method in expl_well:
        for (row, flip) in zip(sel.itertuples(), flips):
            ex = pool.iloc[int(row.pos)]
            ew = _frag_texts(evidence(expl_well[method][ex.text], m))
            es = _frag_texts(evidence(expl_worse[method][ex.text], m))
            if not ew and not es:
                _skip(report, 1, dataset, method, ex.example_id, "no evidence from either model")
                continue
            well_is_a = bool(flip)
            qs.append(Question(
                question_id=_question_id(dataset, 1, method, ex.example_id), task=1, dataset=dataset,
                method=method, model_correct=bool(row.correct), key="A" if well_is_a else "B",
                class_names=spec.class_names, predicted_class=spec.class_names[int(row.predicted)],
                evidence_a=tuple(ew if well_is_a else es), evidence_b=tuple(es if well_is_a else ew),
                meta={"example_id": ex.example_id, "true_class": spec.class_names[int(ex.label)],
                      "cell": row.cell, "seed": seed}))
    return qs


def build_task2(dataset: str, pool: pd.DataFrame, sel: pd.DataFrame, expl: Mapping[str, Mapping[str, Any]],
                proba: np.ndarray, seed: int = 42, m: int = M_FRAGMENTS,
                report: BuildReport | None = None) -> list[Question]:
    """Task 2 questions: top-``m`` evidence of the well-trained model; ``key`` = predicted class."""
    from ...explainers.local import evidence

    spec = dataset_spec(dataset)
    qs: list[Question] = []
    for method in expl:
        for row in sel.itertuples():
            ex = pool.iloc[int(row.pos)]
            ev = _frag_texts(evidence(expl[method][ex.text], m))
            if not ev:
                _skip(report, 2, dataset, method, ex.example_id, "no evidence")
                continue
            qs.append(Question(
                question_id=_question_id(dataset, 2, method, ex.example_id), task=2, dataset=dataset,
                method=method, model_correct=bool(row.correct), key=spec.class_names[int(row.predicted)],
                class_names=spec.class_names, evidence=tuple(ev),
                meta={"example_id": ex.example_id, "true_class": spec.class_names[int(ex.label)],
                      "confidence": round(float(proba[int(row.pos)].max()), 4), "cell": row.cell, "seed": seed}))
    return qs


def build_task3(dataset: str, pool: pd.DataFrame, sel: pd.DataFrame, expl: Mapping[str, Mapping[str, Any]],
                proba: np.ndarray, seed: int = 42, m: int = M_FRAGMENTS,
                report: BuildReport | None = None) -> list[Question]:
    """Task 3 questions: top-``m`` evidence and counter-evidence, predicted class and probability
    (rounded to 2 decimals, as shown); ``key`` = the true class."""
    from ...explainers.local import counter_evidence, evidence

    spec = dataset_spec(dataset)
    qs: list[Question] = []
    for method in expl:
        for row in sel.itertuples():
            ex = pool.iloc[int(row.pos)]
            attr = expl[method][ex.text]
            ev, ce = _frag_texts(evidence(attr, m)), _frag_texts(counter_evidence(attr, m))
            if not ev:
                _skip(report, 3, dataset, method, ex.example_id, "no evidence")
                continue
            qs.append(Question(
                question_id=_question_id(dataset, 3, method, ex.example_id), task=3, dataset=dataset,
                method=method, model_correct=bool(row.correct), key=spec.class_names[int(ex.label)],
                class_names=spec.class_names, predicted_class=spec.class_names[int(row.predicted)],
                predicted_probability=round(float(proba[int(row.pos)].max()), 2),
                evidence=tuple(ev), counter_evidence=tuple(ce),
                meta={"example_id": ex.example_id, "cell": row.cell, "seed": seed,
                      "confidence": round(float(proba[int(row.pos)].max()), 4)}))
    return qs


def fragment_table(attributions: Mapping[str, Any], m: int = M_FRAGMENTS) -> pd.DataFrame:
    """The top-``m`` evidence and counter-evidence fragments (`` | ``-joined) the survey would show,
    one row per explanation of ``{row label: Attribution}``."""
    from ...explainers.local import counter_evidence, evidence

    return pd.DataFrame({"method": list(attributions),
                         f"evidence (top {m})": [" | ".join(f.text for f in evidence(a, m)) for a in attributions.values()],
                         f"counter-evidence (top {m})": [" | ".join(f.text for f in counter_evidence(a, m))
                                                         for a in attributions.values()]})


def example_questions(questions: Sequence[Question], dataset: str = "amazon",
                      method: str = "lrp_n") -> dict[int, Question | None]:
    """One question per task: of ``dataset`` and ``method`` when there is one, else the task's first
    question; ``None`` for a task without questions."""
    out: dict[int, Question | None] = {}
    for t in (1, 2, 3):
        cands = [q for q in questions if q.task == t]
        out[t] = next((q for q in cands if q.dataset == dataset and q.method == method), cands[0] if cands else None)
    return out


__all__ = ["M_FRAGMENTS", "BuildReport", "build_task1", "build_task2", "build_task3", "fragment_table",
           "example_questions"]
