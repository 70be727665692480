"""Ge et al.'s protocol object (counterfactual evaluation of faithfulness): the erasure and
counterfactual metrics at K = 1 for every registered attribution explainer that can explain the
embedding LR -- the paper's six feature explainers and every registered local explainer that explains
any model (through :class:`~xaibench.explainers.feature.TextExplainerAdapter`).

It wraps the public per-seed function of the runner, :func:`.runner.run_seed`, unchanged (the
runner's own result files, keyed on its configuration, are read by :meth:`CfFaithfulnessProtocol.stored`
and never overwritten here).
"""
from __future__ import annotations

import pandas as pd

from ... import paths, registry
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

    def _tidy_results(self, df: pd.DataFrame) -> pd.DataFrame:
        df = df[(df["k"] == 1) & df["metric"].isin(SCORED) & (df["explainer"] != "")]
        return pd.DataFrame({"metric": df["metric"].values, "explainer": df["explainer"].values,
                             "model": "embedding_lr", "dataset": df["dataset"].values, "seed": df["seed"].values,
                             "value": df["value"].values})

    def _score(self, names: list[str], profile: str, seeds: list[int]) -> pd.DataFrame:
        datasets, overrides = SETTINGS[profile]
        cfg = runner.RunConfig(**{**overrides, "explainers": tuple(names)})
        frames = [runner.run_seed(d, s, cfg) for d in datasets for s in seeds]
        return self._tidy_results(pd.concat(frames, ignore_index=True))

    def stored(self, profile: str = "full") -> pd.DataFrame:
        """The runner's stored per-seed results of this profile (the newest file per dataset and seed)."""
        folder = paths.results_dir() / "cf_faithfulness"
        newest: dict[str, object] = {}
        for f in sorted(folder.glob("*_seed*_*.parquet"), key=lambda p: p.stat().st_mtime) if folder.exists() else ():
            newest[f.name.split("_n")[0]] = f  # "<dataset>_seed<seed>" -> newest file
        frames = []
        for f in newest.values():
            try:
                frames.append(pd.read_parquet(f))
            except Exception:  # noqa: BLE001 - an unreadable file counts as not stored
                continue
        if not frames:
            return super().stored(profile)
        return self.tidy(self._tidy_results(pd.concat(frames, ignore_index=True)))


PROTOCOL = registry.register_protocol(CfFaithfulnessProtocol(), replace=True)

__all__ = ["SCORED", "SETTINGS", "CfFaithfulnessProtocol", "PROTOCOL"]
