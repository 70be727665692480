"""One survey study file per dataset and task (``data/studies/hg-<dataset>-task<k>.json``)."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

from ... import paths
from .study import Question, Study, load_study, save_study


STUDY_INSTRUCTIONS = {
    1: ("Two robots classified the same {noun} into the same class. For each robot you see the parts "
        "of the {noun} it based its decision on (not the whole {noun}). Which robot is more reasonable?"),
    2: ("A robot classified a {noun}. You see the parts of the {noun} it based its decision on. "
        "Which class do you think the {noun} belongs to?"),
    3: ("A robot was unsure about a {noun}. You see its prediction, its probability, the parts of the "
        "{noun} that speak for the prediction and those that speak against it. What is the true class?"),
}


def make_study(dataset: str, task: int, questions: Sequence[Question], seed: int = 42) -> Study:
    """A survey study (loadable by ``python -m xaibench.survey serve``) for one dataset and task."""
    qs = [q for q in questions if q.dataset == dataset and q.task == task]
    if not qs:
        raise ValueError(f"no task-{task} questions for {dataset!r} to put in a study")
    noun = qs[0].doc_noun
    return Study(study_id=f"hg-{dataset}-task{task}", seed=int(seed), questions=list(qs),
                 title=f"Explanations of a text classifier ({dataset}, task {task})",
                 instructions=STUDY_INSTRUCTIONS[task].format(noun=noun), shuffle=True)


def studies_dir() -> Path:
    """``data/studies`` (``reports/<profile>/data/studies`` outside the full profile)."""
    return paths.profiled(paths.data_dir() / "studies")


def save_studies(questions: Sequence[Question], seed: int = 42, folder: Path | None = None) -> list[Path]:
    """One study file per (dataset, task) under :func:`studies_dir`; returns the paths."""
    folder = Path(folder) if folder is not None else studies_dir()
    out = []
    for dataset, task in sorted({(q.dataset, q.task) for q in questions}):
        study = make_study(dataset, task, questions, seed)
        out.append(save_study(study, folder / f"{study.study_id}.json"))
    return out


def load_studies(paths_: Iterable[str | Path]) -> list[Question]:
    """All questions of the given study files (validated by :func:`load_study`)."""
    qs: list[Question] = []
    for p in paths_:
        qs.extend(load_study(p).questions)
    return qs


__all__ = ["STUDY_INSTRUCTIONS", "make_study", "studies_dir", "save_studies", "load_studies"]
