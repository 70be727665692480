"""The human-grounded protocol object (Lertvittayakumjorn & Toni, 2019): tasks 1-3 answered by the
simulated readers, one score per task and dataset (column A: all questions) for every registered
attribution explainer that can explain the 1D CNNs.

It runs the steps of notebook 21 (:mod:`.pipeline`) with the notebook's quick-profile sizes in the
quick profile; :meth:`HumanGroundedProtocol.stored` reads the scores notebook 21 stored.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from ... import paths, registry
from ...config import get_profile
from ..base import Metric, Protocol
from .methods import LIME_SAMPLES, PAPER_METHODS

METRICS = {f"task_{t}": Metric(f"task_{t}", False, label=f"Task {t} (A)",
                               description=f"mean simulated-reader score of task {t}, all questions (+1 .. -1)")
           for t in (1, 2, 3)}
#: (n_questions, n_readers) per profile, as in notebook 21.  The profile caps the sampling explainers' draws (LIME's
#: samples; SHAP's model evaluations: an explainer the paper does not have, at its default of 500), as in notebooks
#: 11 and 21 (:meth:`xaibench.config.Profile.cap_samples`)
SIZES = {"full": (100, 5), "quick": (12, 3)}
_REGISTRY_NAME = dict(PAPER_METHODS)                      # paper short name -> registry name
_SHORT_NAME = {v: k for k, v in PAPER_METHODS.items()}    # registry name -> paper short name


class HumanGroundedProtocol(Protocol):
    name = "human_grounded"
    paper = "Lertvittayakumjorn & Toni (2019), human-grounded evaluation (simulated participants)"
    accepts = ("attribution",)
    families = ("local",)
    models = ("cnn",)
    datasets = ("amazon", "arxiv")
    metrics = METRICS
    paper_explainers = tuple(PAPER_METHODS.values())
    paper_tables = ("human_grounded_tasks_seeds",)

    def _rows(self, scores: pd.DataFrame, seed: int) -> pd.DataFrame:
        s = scores[(scores["subset"] == "all") & (scores.get("metric", "avg_score") == "avg_score")]
        return pd.DataFrame({"metric": s["task"].values, "explainer": s["method"].map(lambda m: _REGISTRY_NAME.get(m, m)).values,
                             "model": "cnn", "dataset": s["dataset"].values, "seed": seed, "value": s["ours"].values})

    def _score(self, names: list[str], profile: str, seeds: list[int]) -> pd.DataFrame:
        from . import pipeline as pl

        n_questions, n_readers = SIZES[profile]
        cap = get_profile(profile).cap_samples
        methods = [_SHORT_NAME.get(n, n) for n in names]
        frames = []
        for seed in seeds:
            _, tasks = pl.run_seed(seed, methods, n_questions, n_readers, cap(LIME_SAMPLES), shap_evals=cap(None),
                                   quick=profile == "quick", datasets=self.datasets)
            frames.append(self._rows(tasks[tasks["metric"] == "avg_score"], seed))
        return pd.concat(frames, ignore_index=True)

    def stored(self, profile: str = "full") -> pd.DataFrame:
        """Column A of notebook 21's per-seed task table (``human_grounded_tasks_seeds``), every seed."""
        path = paths.tables_dir() / "human_grounded_tasks_seeds.csv"
        if not path.exists():
            return super().stored(profile)
        tasks = pd.read_csv(path)
        return self.tidy(pd.concat([self._rows(g, int(seed)) for seed, g in tasks.groupby("seed", sort=True)],
                                   ignore_index=True))


PROTOCOL = registry.register_protocol(HumanGroundedProtocol(), replace=True)


def methods_for(explainers: Any = "") -> list[str]:
    """The methods notebooks 11 and 21 score for their ``explainers`` parameter (Make's ``EXPLAINERS``), as
    :meth:`xaibench.evaluation.base.Protocol.run_list` of this protocol chooses them:
    empty -> the paper's nine; ``"all"`` -> the nine, then every other registered explainer the
    tasks can score; names -> the paper's methods among them (all nine when none is named), then the
    named others.  Paper methods keep their short names (``lrp_n``)."""
    return [_SHORT_NAME.get(n, n) for n in PROTOCOL.run_list(explainers)]


__all__ = ["METRICS", "SIZES", "HumanGroundedProtocol", "PROTOCOL", "methods_for"]
