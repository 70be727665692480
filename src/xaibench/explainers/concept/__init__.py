"""Concept-based explainers evaluated on CEBaB (Abraham et al., 2022, Section 4).

Every class subclasses :class:`xaibench.explainers.base.ConceptExplainer`:
``fit(model, fit_rows)`` -- the task's cleaned train_exclusive rows, :func:`xaibench.data.cebab.fit_frame` -- then ``explain(queries) -> (n, n_classes)`` ICaCE estimates,
where ``queries`` come from :func:`xaibench.evaluation.cebab.metrics.make_queries` (base side + ``cf_value``).

========================  ===================================================================
name                      method
========================  ===================================================================
``random``                difference of two random probability vectors
``approx``                approximate counterfactual sampled from train (Eq. 6)
``conexp``                conditional expectation (Eq. 7)
``s-learner``             logistic regression on aspect labels (Eq. 8)
``tcav``                  tanh of CAV directional derivatives (Eq. 9, App. G)
``conceptshap``           Shapley values of concept subsets (Eq. 24-25, App. H)
``inlp``                  iterative nullspace projection + retrained head (App. F)
``causalm``               adversarially fine-tuned counterfactual encoder + head (App. E)
========================  ===================================================================
"""
from __future__ import annotations

from typing import Any

from ._common import proba_lookup
from .baselines import ApproxExplainer, CONEXPExplainer, RandomExplainer, SLearnerExplainer
from .causalm import CausaLMExplainer
from .conceptshap import ConceptSHAPExplainer, completeness_score, shapley_values
from .inlp import INLPExplainer, INLPResult, inlp_projection
from .tcav import TCAVExplainer

from ...registry import register_explainer, view

for _name, _cls in {"random": RandomExplainer, "approx": ApproxExplainer, "conexp": CONEXPExplainer,
                    "s-learner": SLearnerExplainer, "tcav": TCAVExplainer, "conceptshap": ConceptSHAPExplainer,
                    "causalm": CausaLMExplainer, "inlp": INLPExplainer}.items():
    register_explainer(_name, _cls, family="concept", paper=True, source="project")
#: name -> class: a live view of the "concept" family of :mod:`xaibench.registry` (the paper's eight,
#: then any registered concept explainer)
CONCEPT_EXPLAINERS = view("concept")

#: explainers that take an ``aspect_predictor`` argument
USES_ASPECT_PREDICTOR = ("approx", "s-learner")


def make_concept_explainer(name: str, **kwargs: Any):
    """Instantiate a registered explainer by name.

    The common arguments ``seed`` and ``aspect_predictor`` are dropped for methods that take none
    (CONEXP is deterministic; only Approx and S-Learner use aspect labels of the query texts).
    """
    import inspect

    if name not in CONCEPT_EXPLAINERS:
        raise KeyError(f"unknown concept explainer {name!r}; choose from {sorted(CONCEPT_EXPLAINERS)}")
    cls = CONCEPT_EXPLAINERS[name]
    accepted = inspect.signature(cls).parameters
    if name not in USES_ASPECT_PREDICTOR:
        kwargs.pop("aspect_predictor", None)
    if "seed" not in accepted and not any(p.kind is p.VAR_KEYWORD for p in accepted.values()):
        kwargs.pop("seed", None)
    return cls(**kwargs)


__all__ = [
    "CONCEPT_EXPLAINERS", "USES_ASPECT_PREDICTOR", "make_concept_explainer", "RandomExplainer", "ApproxExplainer",
    "CONEXPExplainer", "SLearnerExplainer", "TCAVExplainer", "ConceptSHAPExplainer", "INLPExplainer",
    "CausaLMExplainer", "INLPResult", "proba_lookup", "inlp_projection", "shapley_values", "completeness_score",
]
