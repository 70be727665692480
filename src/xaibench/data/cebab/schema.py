"""CEBaB's domain vocabulary, in one place: aspects, concept values, tasks and their label maps,
splits, edit-pair directions, the authors' control concepts and the paper-model map.

Every layer (data loading, models, concept explainers, evaluation, notebooks) imports these names
from here (``xaibench.data.cebab``); nothing else defines them.
"""
from __future__ import annotations

from typing import Any

import numpy as np

ASPECTS: tuple[str, ...] = ("food", "service", "ambiance", "noise")
TASKS: tuple[str, ...] = ("binary", "ternary", "5-way")
SPLITS: tuple[str, ...] = ("train_exclusive", "train_inclusive", "train_observational", "dev", "test")
TRAIN_SPLITS: tuple[str, ...] = ("train_exclusive", "train_inclusive", "train_observational")
EVAL_SPLITS: tuple[str, ...] = ("dev", "test")
#: The splits that together hold every CEBaB text exactly once (the paper's "train/dev/test").
COMBINED_SPLITS: tuple[str, ...] = ("train_inclusive", "dev", "test")

NUM_CLASSES: dict[str, int] = {"binary": 2, "ternary": 3, "5-way": 5}
TASK_ALIASES: dict[str, str] = {"2-way": "binary", "2-class": "binary", "3-way": "ternary", "3-class": "ternary",
                                "5-class": "5-way", "five-way": "5-way"}
#: stars (1..5) -> class of each task (App. C.3); a star rating missing from a map is dropped
LABEL_MAPS: dict[str, dict[int, int]] = {
    "binary": {1: 0, 2: 0, 4: 1, 5: 1},          # 3 stars dropped (App. C.3)
    "ternary": {1: 0, 2: 0, 3: 1, 4: 2, 5: 2},
    "5-way": {1: 0, 2: 1, 3: 2, 4: 3, 5: 4},
}
LABEL_NAMES: dict[str, tuple[str, ...]] = {"binary": ("negative", "positive"),
                                            "ternary": ("negative", "neutral", "positive"),
                                            "5-way": ("1", "2", "3", "4", "5")}

NO_MAJORITY = "no majority"
#: The aspect labels that count as a concept value, in the one order every code uses
#: (Negative 0, unknown 1, Positive 2); 'no majority' and '' (absent) are not concept values.
CONCEPT_VALUES: tuple[str, ...] = ("Negative", "unknown", "Positive")
#: the same tuple under the data layer's historical name
ASPECT_VALUES = CONCEPT_VALUES
#: Class order of the *trained* aspect-sentiment (ABSA) model of App. C.4 -- a model's output
#: order, fixed by the saved models, not a second concept order.
ABSA_LABELS: tuple[str, ...] = ("Negative", "Positive", "unknown")
SHORT: dict[str, str] = {"Negative": "neg", "unknown": "unk", "Positive": "pos"}
DIRECTIONS: tuple[str, ...] = ("neg_to_pos", "pos_to_neg", "neg_to_unk", "unk_to_neg", "pos_to_unk", "unk_to_pos")
#: The three directions the paper prints (the reverse of each is its negation).
PAPER_DIRECTIONS: tuple[str, ...] = ("neg_to_pos", "neg_to_unk", "pos_to_unk")
PAIR_TYPES: tuple[str, ...] = ("neg-pos", "neg-unk", "pos-unk")
PAIR_KINDS: tuple[str, ...] = ("original-edit", "edit-original", "edit-edit")

#: CausaLM's control concept per treated concept, as in the authors' released scripts
#: (``run_causalm_*.sh``: food is controlled by service, every other concept by food).
CONTROL_CONCEPTS: dict[str, str] = {"food": "service", "service": "food", "ambiance": "food", "noise": "food"}

#: which of the paper's model rows each of our models is compared with (Tables 4, 8 and 10)
PAPER_MODEL: dict[str, str] = {"minilm": "bert-base-uncased", "lstm": "lstm", "bert-base-uncased": "bert-base-uncased",
                               "roberta-base": "roberta-base", "gpt2": "gpt2"}

REVIEW_VALUES: frozenset[str] = frozenset({"1", "2", "3", "4", "5", NO_MAJORITY})
#: raw aspect labels (lower-cased) -> canonical label
ASPECT_CANON: dict[str, str] = {"positive": "Positive", "negative": "Negative", "unknown": "unknown",
                                "unk": "unknown", "can't tell": "unknown", "no majority": NO_MAJORITY, "": ""}
REQUIRED_FIELDS: tuple[str, ...] = (
    "id", "original_id", "edit_id", "is_original", "edit_type", "edit_goal", "description",
    "review_majority", *(f"{a}_aspect_majority" for a in ASPECTS),
)
METADATA_FIELDS: tuple[str, ...] = (
    "restaurant_id", "restaurant_name", "cuisine", "price_tier", "dining_style", "dress_code",
    "parking", "region", "rating_overall", "rating_food", "rating_service", "rating_ambiance",
    "rating_noise",
)
#: Columns of :func:`load_cebab`, in order.
COLUMNS: tuple[str, ...] = (
    "id", "original_id", "edit_id", "is_original", "edit_type", "edit_goal", "edit_worker", "text",
    "split", "review_majority", "label", *(f"{a}_majority" for a in ASPECTS),
    "review_label_distribution", *METADATA_FIELDS,
)



def check_task(task: str) -> str:
    """The canonical task name (aliases such as ``'3-way'`` accepted); ValueError for others."""
    task = TASK_ALIASES.get(task, task)
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; use one of {list(TASKS)}")
    return task


def check_tasks(tasks: Any, name: str = "TASKS") -> list[str]:
    """The tasks in ``tasks`` (``"binary ternary 5-way"`` or a list; canonical names only, as they name
    model folders and tables), else a ValueError naming ``name`` (the Make variable) and the known tasks."""
    got = str(tasks).split() if isinstance(tasks, str) else [str(t) for t in tasks]
    bad = [t for t in got if t not in TASKS]
    if bad or not got:
        why = f"unknown task {bad[0]!r}" if bad else "no task given"
        raise ValueError(f"{name}={' '.join(got)!r}: {why}; use one or more of {' '.join(TASKS)}")
    from ...config import check_unique

    return check_unique(got, name, " ".join(got))


def task_of_classes(n_classes: int) -> str:
    """The task whose models have ``n_classes`` outputs (2 -> binary, 3 -> ternary, 5 -> 5-way)."""
    for t, k in NUM_CLASSES.items():
        if k == n_classes:
            return t
    raise ValueError(f"n_classes must be 2, 3 or 5 for CEBaB; got {n_classes}")


def task_label(label5: Any, n_classes: int | str) -> np.ndarray:
    """Map 5-way labels (0..4 = 1..5 stars, -1 = no majority) to a task's classes (-1 = dropped).

    ``n_classes`` is 2, 3 or 5 (or a task name).  5: unchanged; 3 (ternary): {0,1}->0, 2->1,
    {3,4}->2; 2 (binary): {0,1}->0, {3,4}->1 and the neutral 2 -> -1 (dropped, App. C.3).
    """
    task = check_task(n_classes) if isinstance(n_classes, str) else task_of_classes(int(n_classes))
    y = np.asarray(label5, dtype=np.int64)
    if y.size and (y.max() > 4 or y.min() < -1):
        raise ValueError(f"5-way labels must lie in 0..4 (or -1 for no majority); got range [{y.min()}, {y.max()}]")
    lut = np.array([LABEL_MAPS[task].get(stars, -1) for stars in range(1, 6)], dtype=np.int64)
    out = np.full(y.shape, -1, dtype=np.int64)
    ok = y >= 0
    out[ok] = lut[y[ok]]
    return out


def direction_name(base_value: str, cf_value: str) -> str:
    """``("Negative", "Positive") -> "neg_to_pos"``."""
    try:
        return f"{SHORT[base_value]}_to_{SHORT[cf_value]}"
    except KeyError as e:
        raise ValueError(f"concept values must be one of {CONCEPT_VALUES}; got {base_value!r} -> {cf_value!r}") from e


def pair_type(base_value: str, cf_value: str) -> str:
    """The unordered value pair, e.g. ``("Positive", "Negative") -> "neg-pos"``."""
    return "-".join(sorted((SHORT[base_value], SHORT[cf_value])))


__all__ = [
    "ASPECTS", "TASKS", "SPLITS", "TRAIN_SPLITS", "EVAL_SPLITS", "COMBINED_SPLITS", "NUM_CLASSES", "TASK_ALIASES",
    "LABEL_MAPS", "LABEL_NAMES", "NO_MAJORITY", "CONCEPT_VALUES", "ASPECT_VALUES", "ABSA_LABELS", "SHORT",
    "DIRECTIONS", "PAPER_DIRECTIONS", "PAIR_TYPES", "PAIR_KINDS", "CONTROL_CONCEPTS", "PAPER_MODEL",
    "REVIEW_VALUES", "ASPECT_CANON", "REQUIRED_FIELDS", "METADATA_FIELDS", "COLUMNS",
    "check_task", "check_tasks", "task_of_classes", "task_label", "direction_name", "pair_type",
]
