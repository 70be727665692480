"""Feature-level explainers for the counterfactual-faithfulness protocol (Ge et al.).

``make_feature_explainer(name)`` builds the six explainers of the paper (``logistic_regression``,
``random``, ``omission``, ``lime``, ``anchor``, ``decision_boundary``) and, through
:class:`TextExplainerAdapter`, the project's generic local explainers that run on the same model
(``integrated_gradients``, ``grad_x_input``, ``shap``).
"""
from __future__ import annotations

from typing import Any

from ._base import FeatureExplainer, TextExplainerAdapter
from .decision_boundary import DecisionBoundaryExplainer
from .perturbation import AnchorExplainer, LimeExplainer
from .simple import LogisticRegressionExplainer, OmissionExplainer, RandomExplainer

#: the paper's six explainers, in its column order
PAPER_EXPLAINERS: dict[str, type[FeatureExplainer]] = {
    c.name: c for c in (RandomExplainer, OmissionExplainer, LimeExplainer, AnchorExplainer,
                        DecisionBoundaryExplainer, LogisticRegressionExplainer)
}
#: the project's local explainers that also apply to EmbeddingLR (see explainers.local)
PROJECT_EXPLAINERS = ("integrated_gradients", "grad_x_input", "shap")


def make_feature_explainer(name: str, **kwargs: Any) -> FeatureExplainer:
    if name in PAPER_EXPLAINERS:
        return PAPER_EXPLAINERS[name](**kwargs)
    if name in PROJECT_EXPLAINERS:
        from ..local import make_explainer

        return TextExplainerAdapter(make_explainer(name, **kwargs))
    raise KeyError(f"unknown feature explainer {name!r}; known: {[*PAPER_EXPLAINERS, *PROJECT_EXPLAINERS]}")


__all__ = ["FeatureExplainer", "TextExplainerAdapter", "PAPER_EXPLAINERS", "PROJECT_EXPLAINERS",
           "make_feature_explainer", "LogisticRegressionExplainer", "RandomExplainer", "OmissionExplainer",
           "LimeExplainer", "AnchorExplainer", "DecisionBoundaryExplainer"]
