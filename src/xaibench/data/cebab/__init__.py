"""The CEBaB domain model: records, label schemes, classifier/ABSA datasets, edit pairs, statistics.

CEBaB (Abraham et al., NeurIPS 2022) starts from 2,299 OpenTable reviews ("originals").  Crowd
workers edited each original to change the sentiment of one aspect (food, service, ambiance,
noise) to a goal (Positive / Negative / unknown); five other workers then labelled every text for
each aspect and gave it a 1-5 star review rating.  A label is the *majority* (at least 3 of 5) or
``'no majority'``.

This package turns the released JSON (``CEBaB-v1.1/{train_exclusive, train_inclusive,
train_observational, dev, test}.json``) into one tidy DataFrame (:func:`load_cebab`) and derives
from it everything else the project uses:

* :func:`review_label` / :func:`task_frame` -- the binary / ternary / 5-way review-sentiment
  datasets of Appendix C.3;
* :func:`absa_frame` -- the aspect-based sentiment dataset of Appendix C.4;
* :func:`edit_pairs` -- the (base, counterfactual) edit pairs of Sections 3 and 5, built exactly as
  the authors' released pipeline builds them (``code/eval_pipeline/utils/data_utils.py``,
  ``get_intervention_pairs``);
* :func:`task_pairs` / :func:`fit_frame` -- the pairs and the cleaned training rows of one task;
* statistics for the paper's Tables 3, 5, 7 and Figure 5 (the table that puts them beside the
  paper's numbers is :func:`xaibench.evaluation.cebab.tables.dataset_stats_table`).

Modules: :mod:`.schema` (the domain vocabulary every layer imports: aspects, concept values,
tasks and label maps, directions, control concepts, paper-model map), :mod:`.loading`,
:mod:`.tasks`, :mod:`.pairs`, :mod:`.statistics`.

Conventions: an absent aspect label is ``''`` (the raw files use ``""`` for aspects that were not
annotated); ``label`` is the 5-way class ``int(review_majority) - 1`` and ``-1`` for ``'no
majority'``.  "Combined" statistics use ``train_inclusive + dev + test`` (every text exactly once,
15,090 texts): ``train_exclusive`` and ``train_observational`` are re-samplings of
``train_inclusive`` texts.
"""

from __future__ import annotations

from .schema import *  # noqa: F401,F403 - the vocabulary is this package's public surface
from .schema import __all__ as _schema_all

#: the rest of the public surface, imported on first use (``loading`` imports pandas: a process that only checks
#: a Make parameter, such as make's ``check-params``, does not pay for it)
_LAZY = {"DataError": "..fetch", "load_cebab": ".loading", "PAIR_COLUMNS": ".pairs", "edit_pairs": ".pairs",
         "task_pairs": ".pairs", "aspect_label_counts": ".statistics", "edit_distances": ".statistics",
         "edit_pair_counts": ".statistics", "empirical_ate": ".statistics", "levenshtein": ".statistics",
         "metadata_counts": ".statistics", "normalized_edit_distance": ".statistics",
         "review_rating_counts": ".statistics", "absa_frame": ".tasks", "fit_frame": ".tasks", "label_names": ".tasks",
         "review_label": ".tasks", "task_frame": ".tasks"}


def __getattr__(name: str):
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    if name in ("loading", "pairs", "statistics", "tasks"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    *_schema_all, "DataError", "load_cebab", "label_names", "review_label", "task_frame", "absa_frame",
    "fit_frame", "PAIR_COLUMNS", "edit_pairs", "task_pairs", "aspect_label_counts", "review_rating_counts",
    "edit_pair_counts", "empirical_ate", "metadata_counts", "levenshtein", "normalized_edit_distance",
    "edit_distances",
]
