"""The CEBaB protocol object (Abraham et al., 2022): ICaCE-Error (cosine, L2, norm difference) of
every registered concept explainer, on the 5-way CEBaB classifiers notebook 02 trained.

It wraps :func:`.runner.run_one` (which computes only the explainers whose per-pair result files
are missing) for every model and seed that notebook 02 trained for the profile; a model that was not
trained is skipped (training the classifiers is notebook 02's job) and named in a warning.
:meth:`CebabProtocol.stored` reads the stored per-pair results.
"""
from __future__ import annotations

import warnings

import pandas as pd

from ... import registry
from ..base import Protocol
from . import metrics as cb
from . import runner

TASK = "5-way"
MODELS = runner.DEFAULT_MODELS


class CebabProtocol(Protocol):
    name = "cebab"
    paper = "Abraham et al. (2022), CEBaB: ICaCE-Error of concept explainers"
    accepts = ("concept_effect",)
    families = ("concept",)
    models = MODELS
    datasets = ("cebab",)
    metrics = dict(cb.METRICS)
    paper_explainers = runner.EXPLAINERS
    paper_tables = ("cebab_icace_error",)

    def _per_seed(self, per_pair: pd.DataFrame) -> pd.DataFrame:
        if per_pair.empty:
            return pd.DataFrame(columns=["metric", "explainer", "model", "dataset", "seed", "value"])
        return runner.per_seed_errors(per_pair, ["model", "explainer"]).assign(dataset="cebab")

    def _score(self, names: list[str], profile: str, seeds: list[int]) -> pd.DataFrame:
        frames, skipped = [], []
        for model in MODELS:
            for seed in seeds:
                if not runner.is_trained(model, TASK, seed, profile):
                    skipped.append(f"{model}/seed{seed}")
                    continue
                frames.append(runner.run_one(model, TASK, seed, explainers=names, profile=profile))
        if skipped:
            warnings.warn(f"cebab: no {profile}-profile {TASK} classifier for {', '.join(skipped)} "
                          "(notebook 02 / `make models` trains them): skipped", stacklevel=2)
        return self._per_seed(pd.concat(frames, ignore_index=True) if frames else pd.DataFrame())

    def stored(self, profile: str = "full") -> pd.DataFrame:
        """The per-pair results notebooks 10/20 stored for this profile, every seed found on disk."""
        names = [s.name for s in self.applicable_specs()]
        seeds = sorted({int(p.name[4:]) for m in MODELS
                        for p in runner.result_path(m, TASK, 0, "random").parent.parent.glob("seed*")
                        if p.name[4:].isdigit()})
        return self.tidy(self._per_seed(runner.load_results(list(MODELS), [TASK], seeds, names)))


PROTOCOL = registry.register_protocol(CebabProtocol(), replace=True)

__all__ = ["TASK", "MODELS", "CebabProtocol", "PROTOCOL"]
