"""The ERASER protocol object: comprehensiveness and sufficiency of every registered attribution
explainer on the human-grounded protocol's well-trained Amazon CNN (trained once by notebook 11/21,
reloaded here; trained if missing).

Per seed: the first ``n_texts`` question-pool (test) reviews, explained for the CNN's predicted class;
tokens ranked by relevance (ties by position), the top ``ceil(f * n_tokens)`` for each bin ``f`` in
:data:`BINS` removed (comprehensiveness) or kept alone (sufficiency), in their order.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ... import registry
from ...config import get_profile
from ..base import Protocol
from ..human_grounded.methods import LIME_SAMPLES, sampling_kwargs
from .comprehensiveness import METRIC as COMP, comprehensiveness
from .sufficiency import METRIC as SUFF, sufficiency

#: the token fractions of ERASER's AOPC
BINS = (0.01, 0.05, 0.1, 0.2, 0.5)
#: texts explained per seed
N_TEXTS = {"full": 200, "quick": 20}


def cost(profile: str) -> dict[str, int]:
    """The sampling explainers' cost settings under ``profile``, as the human-grounded protocol offers them
    (:func:`~xaibench.evaluation.human_grounded.methods.sampling_kwargs`; an explainer gets those it accepts):
    LIME's samples (those of the human-grounded pipeline, whose CNN is explained here), and SHAP's model
    evaluations where the profile caps them (else SHAP keeps its default, 500)."""
    cap = get_profile(profile).cap_samples
    return sampling_kwargs(cap(LIME_SAMPLES), cap(None))


def top_tokens(scores: Sequence[float], fraction: float) -> np.ndarray:
    """Positions of the top ``ceil(fraction * n)`` (at least one) tokens by relevance, ties by position."""
    scores = np.asarray(scores, dtype=float)
    k = max(1, math.ceil(fraction * len(scores)))
    return np.sort(np.argsort(-scores, kind="stable")[:k])


def perturbed_texts(tokens: Sequence[str], scores: Sequence[float], bins: Sequence[float] = BINS
                    ) -> tuple[list[str], list[str]]:
    """``(removed, kept)``: per bin, the text without its top tokens and the top tokens alone."""
    removed, kept = [], []
    for f in bins:
        top = set(top_tokens(scores, f).tolist())
        removed.append(" ".join(t for i, t in enumerate(tokens) if i not in top))
        kept.append(" ".join(t for i, t in enumerate(tokens) if i in top))
    return removed, kept


def erasure_rows(model: Any, attributions: Sequence[Any], bins: Sequence[float] = BINS) -> dict[str, float]:
    """Mean comprehensiveness and sufficiency of ``attributions`` (one per text, for their ``target``)."""
    full, removed, kept, targets = [], [], [], []
    for a in attributions:
        full.append(" ".join(a.tokens))
        r, k = perturbed_texts(a.tokens, a.scores, bins)
        removed += r
        kept += k
        targets.append(int(a.target))
    n, b = len(full), len(bins)
    t = np.asarray(targets)
    p_full = model.predict_proba(full)[np.arange(n), t]
    p_rem = model.predict_proba(removed)[np.arange(n * b), np.repeat(t, b)].reshape(n, b)
    p_kept = model.predict_proba(kept)[np.arange(n * b), np.repeat(t, b)].reshape(n, b)
    return {"comprehensiveness": float(comprehensiveness(p_full, p_rem).mean()),
            "sufficiency": float(sufficiency(p_full, p_kept).mean())}


class EraserProtocol(Protocol):
    name = "eraser"
    paper = "DeYoung et al. (2020), ERASER: comprehensiveness and sufficiency (AOPC)"
    accepts = ("attribution",)
    families = ("local",)
    models = ("cnn",)
    datasets = ("amazon",)
    metrics = {COMP.name: COMP, SUFF.name: SUFF}

    @property
    def paper_explainers(self) -> tuple[str, ...]:  # ERASER has no list of its own: the human-grounded paper's
        from ...explainers.local import PAPER_METHODS

        return PAPER_METHODS

    def _score(self, names: list[str], profile: str, seeds: list[int]) -> pd.DataFrame:
        from ..human_grounded import prepare
        from ...progress import progress
        from ..base import make_with

        rows = []
        for seed in seeds:
            setup = prepare(["amazon"], seed, quick=profile == "quick")["amazon"]
            model, texts = setup.models["well"], setup.pool["text"].head(N_TEXTS[profile]).tolist()
            for name in progress(names, desc=f"ERASER explainers (seed {seed})"):
                exp = make_with(registry.explainer_spec(name, family="local").factory, seed=seed, **cost(profile))
                attrs = exp.fit(model, setup.fit_texts).explain(texts)
                for metric, value in erasure_rows(model, attrs).items():
                    rows.append({"metric": metric, "explainer": name, "model": "cnn", "dataset": "amazon",
                                 "seed": seed, "value": value})
        return pd.DataFrame(rows)


PROTOCOL = registry.register_protocol(EraserProtocol(), replace=True)

__all__ = ["BINS", "N_TEXTS", "cost", "top_tokens", "perturbed_texts", "erasure_rows", "EraserProtocol", "PROTOCOL"]
