"""Ge et al.'s protocol object (counterfactual evaluation of faithfulness): the erasure and
counterfactual metrics at K = 1 for every registered attribution explainer that can explain the
embedding LR -- the paper's six feature explainers and every registered local explainer that explains
any model (through :class:`~xaibench.explainers.feature.TextExplainerAdapter`).

It runs the explainers through the runner, :func:`.runner.run`, unchanged: results go to the runner's
store, keyed on the full configuration (the explainer list included), and
:meth:`CfFaithfulnessProtocol.stored` reads every stored entry of the profile's settings, whatever
explainers it holds, so nothing notebook 23 or an earlier scorecard stored is computed again.
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from ... import registry
from ...store import canonical
from ..base import Protocol
from . import metrics as cfm
from . import runner

#: ranked metrics of the paper's tables reported by the scorecard (K = 1)
SCORED = ("comp_del", "suff_del", "dfr", "validity_cont", "c_cont", "ground_truth")
#: run settings per profile: datasets and RunConfig overrides (the full profile: the runner's defaults)
SETTINGS = {"full": (("adult", "rt-polarity"), {}),
            "quick": (("rt-polarity",), {"n_explain": 10, "epochs": 3, "cont_steps": 10, "ks_text": (1,)})}


class CfFaithfulnessProtocol(Protocol):
    name = "cf_faithfulness"
    paper = "Ge et al. (2021), counterfactual evaluation of faithfulness (erasure + counterfactual metrics)"
    accepts = ("attribution",)
    families = ("feature", "local")
    models = ("embedding_lr",)
    datasets = ("adult", "rt-polarity")
    metrics = {m: cfm.METRICS[m] for m in SCORED}
    paper_explainers = runner.PAPER_ORDER
    paper_tables = ("cf_faithfulness_scores_seeds",)

    def _tidy_results(self, df: pd.DataFrame) -> pd.DataFrame:
        """K = 1 rows of the scored metrics under the default feature selection (``supporting``, the one the
        paper's tables and notebook 23's figures and claims use): one row per unit and explainer."""
        df = df[(df["k"] == 1) & df["metric"].isin(SCORED) & (df["explainer"] != "")
                & (df["selection"] == cfm.SELECTIONS[0])]
        return pd.DataFrame({"metric": df["metric"].values, "explainer": df["explainer"].values,
                             "model": "embedding_lr", "dataset": df["dataset"].values, "seed": df["seed"].values,
                             "value": df["value"].values})

    def _config(self, profile: str, names: Sequence[str] = ()) -> runner.RunConfig:
        datasets, overrides = SETTINGS[profile]
        return runner.RunConfig(**{**overrides, **({"explainers": tuple(names)} if names else {})})

    def _score(self, names: list[str], profile: str, seeds: list[int]) -> pd.DataFrame:
        # through the runner's store: a rerun of the scorecard reads these back instead of recomputing
        datasets, _ = SETTINGS[profile]
        return self._tidy_results(runner.run(list(datasets), seeds, self._config(profile, names)))

    def stored(self, profile: str = "full") -> pd.DataFrame:
        """The runner's stored per-seed results of this profile's settings (notebook 23's, and what an
        earlier scorecard computed), whatever explainer list they were run with; where two entries hold the
        same explainer, dataset and seed, the newer one's rows are kept."""
        datasets, _ = SETTINGS[profile]
        cfg = self._config(profile)
        store = runner.result_store()

        def settings(config: dict) -> dict:
            return {k: v for k, v in canonical(config).items() if k != "explainers"}

        frames = []
        for config in store.configs():
            if config.get("dataset") not in datasets:
                continue
            if settings(config) != settings(runner.store_config(config["dataset"], config["seed"], cfg)):
                continue
            hit = store.load(config)
            if hit is not None:
                frames.append(hit["results"])
        if not frames:
            return super().stored(profile)
        rows = pd.concat(frames, ignore_index=True).drop_duplicates(
            ["dataset", "seed", "selection", "explainer", "k", "metric"], keep="last")
        return self.tidy(self._tidy_results(rows))


PROTOCOL = registry.register_protocol(CfFaithfulnessProtocol(), replace=True)

__all__ = ["SCORED", "SETTINGS", "CfFaithfulnessProtocol", "PROTOCOL"]
