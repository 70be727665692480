"""The counterfactual-feedback protocol object (Filandrianos et al., 2023): every registered counterfactual
editor fed its own output, scored by the paper's inconsistency ``inc@n`` (lower is better), the flip rate
after the first edit (higher is better) and the minimality of that edit (lower is better).

It runs the editors through :func:`.runner.run_experiment` with notebook 22's settings for the profile
(:data:`SETTINGS`: the same datasets, sample sizes, steps, predictor and infiller), so the chains notebook 22
stored are the ones :meth:`CfFeedbackProtocol.stored` reads, and an added editor's chains are stored beside
them under the same key scheme (keyed on its source file too, see :func:`.runner.chain_config`).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ... import registry
from ...store import canonical
from ..base import Metric, Protocol
from . import metrics as cf
from . import runner

#: the run settings per profile: texts per dataset, steps, the predictor's and infiller's training caps, and
#: MiCE's stage-1 infiller (the quick profile: notebook 22's IMDb cell only).  Notebook 22 reads its training caps
#: and quick steps from here; its parameters' defaults (texts, steps, infiller) are these full-profile values
SETTINGS: dict[str, dict[str, Any]] = {
    "full": {"samples": dict(runner.FULL_SAMPLE), "n_steps": cf.N_STEPS, "max_train": None, "lm_max_texts": 20000,
             "mice_infiller": "two-sided", "predictor": "logreg", "max_words": 400},
    "quick": {"samples": {"imdb": 2}, "n_steps": 2, "max_train": 2000, "lm_max_texts": 1000,
              "mice_infiller": "two-sided", "predictor": "logreg", "max_words": 400},
}

METRICS: dict[str, Metric] = {
    "inc": Metric("inc", True, "inconsistency inc@n over all feedback steps (Eq. 1-2; Table 1's inc@9 in full)",
                  label="inc@n"),
    "flip_rate": Metric("flip_rate", False, "share of texts whose predicted class the first edit changes (Table 2)",
                        label="flip rate@1"),
    "minimality": Metric("minimality", True, "mean word-level Levenshtein distance of the first edit (edits made)",
                         label="minimality@1"),
}


def chain_scores(chains: pd.DataFrame, n_steps: int) -> dict[str, float]:
    """The protocol's three metrics of one (dataset, editor, seed) chain table (:func:`.metrics.run_chains`):
    ``inc`` = inc@``n_steps`` (Table 1), ``flip_rate`` = flip rate@1 (Table 2, every text counts), ``minimality``
    = mean minimality of the step-1 edits the editor made (a carried step, no edit, is left out)."""
    cf.check_chains(chains, cf.CHAIN_COLUMNS)
    first = chains[chains["step"] == 1]
    if "carried" in first:
        first = first[~first["carried"].astype(bool)]
    return {"inc": cf.inc_at_n(cf.chain_distances(chains), n_steps, n_steps=n_steps),
            "flip_rate": cf.flip_rate_at(chains, 1),
            "minimality": float(first["minimality"].mean()) if len(first) else float("nan")}


class CfFeedbackProtocol(Protocol):
    name = "cf_feedback"
    paper = "Filandrianos et al. (2023), counterfactuals of counterfactuals: editors fed their own output"
    accepts = ("counterfactual",)
    families = ("counterfactual",)
    models = ("logreg",)
    datasets = ("imdb", "newsgroups")
    metrics = METRICS
    paper_explainers = runner.EDITOR_ORDER
    paper_tables = ("cf_feedback_inconsistency", "cf_feedback_flip_rate")

    def _rows(self, chains: pd.DataFrame, dataset: str, editor: str, seed: int, n_steps: int) -> list[dict]:
        return [{"metric": m, "explainer": editor, "model": SETTINGS["full"]["predictor"], "dataset": dataset,
                 "seed": int(seed), "value": v} for m, v in chain_scores(chains, n_steps).items() if np.isfinite(v)]

    def _run_kwargs(self, profile: str, editor: str) -> dict[str, Any]:
        s = SETTINGS[profile]
        return {"n_steps": s["n_steps"], "predictor": s["predictor"], "max_words": s["max_words"],
                "max_train": s["max_train"], "lm_max_texts": s["lm_max_texts"],
                "infiller": s["mice_infiller"] if editor == "mice" else "bigram"}

    def _score(self, names: list[str], profile: str, seeds: list[int]) -> pd.DataFrame:
        runs = [{"dataset": dataset, "editor": editor, "n_texts": n, "seed": seed, **self._run_kwargs(profile, editor)}
                for dataset, n in SETTINGS[profile]["samples"].items() for editor in names for seed in seeds]
        done = runner.run_experiments(runs, progress=False)  # the missing runs: cells of the executor
        rows = []
        for run, (chains, _) in zip(runs, done):
            rows += self._rows(chains, run["dataset"], run["editor"], run["seed"], SETTINGS[profile]["n_steps"])
        return pd.DataFrame(rows)

    def stored(self, profile: str = "full") -> pd.DataFrame:
        """The chains notebook 22 (or an earlier scorecard) stored under this profile's settings, every editor
        and seed found."""
        s = SETTINGS[profile]
        store = runner.chains_store()
        rows = []
        for config in store.configs():
            dataset, editor, seed = config.get("dataset"), config.get("editor"), config.get("seed")
            if dataset not in s["samples"] or editor is None or seed is None:
                continue
            want = runner.chain_config(dataset, editor, s["samples"][dataset], seed=seed,
                                       **self._run_kwargs(profile, editor))
            if canonical(config) != canonical(want):
                continue
            hit = store.load(config)
            if hit is not None:
                rows += self._rows(hit["chains"], dataset, editor, seed, s["n_steps"])
        return self.tidy(pd.DataFrame(rows)) if rows else super().stored(profile)


PROTOCOL = registry.register_protocol(CfFeedbackProtocol(), replace=True)

__all__ = ["SETTINGS", "METRICS", "chain_scores", "CfFeedbackProtocol", "PROTOCOL"]
