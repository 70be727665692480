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
from ...registry import explainer_specs, register_explainer

#: the paper's six explainers, in its column order
PAPER_EXPLAINERS: dict[str, type[FeatureExplainer]] = {
    c.name: c for c in (RandomExplainer, OmissionExplainer, LimeExplainer, AnchorExplainer,
                        DecisionBoundaryExplainer, LogisticRegressionExplainer)
}
for _cls in PAPER_EXPLAINERS.values():
    register_explainer(_cls.name, _cls, family="feature", paper=True, source="project", models=("embedding_lr",))
#: the project's local explainers the paper's tables show beside the paper's six (see explainers.local)
PROJECT_EXPLAINERS = ("integrated_gradients", "grad_x_input", "shap")


def feature_explainer_names() -> list[str]:
    """Every name :func:`make_feature_explainer` accepts: the registered "feature" family (the
    paper's six first), then every registered local (text attribution) explainer that can explain
    any model (no ``models`` restriction), run through :class:`TextExplainerAdapter`."""
    from .. import local  # noqa: F401 - registers the local explainers

    names = [s.name for s in explainer_specs(family="feature")]
    return names + [s.name for s in explainer_specs(family="local")
                    if not s.models and s.name not in names]


def make_feature_explainer(name: str, **kwargs: Any) -> FeatureExplainer:
    """A feature explainer by registered name: one of the "feature" family, or any registered local
    explainer that explains any model (:func:`feature_explainer_names`), adapted to id rows."""
    from ...registry import explainer_spec

    known = feature_explainer_names()
    if name not in known:
        raise KeyError(f"unknown feature explainer {name!r}; known: {known}")
    if name in [s.name for s in explainer_specs(family="feature")]:
        return explainer_spec(name, family="feature").make(**kwargs)
    from ..local import make_explainer

    return TextExplainerAdapter(make_explainer(name, **kwargs))


__all__ = ["FeatureExplainer", "TextExplainerAdapter", "PAPER_EXPLAINERS", "PROJECT_EXPLAINERS",
           "make_feature_explainer", "feature_explainer_names", "LogisticRegressionExplainer", "RandomExplainer", "OmissionExplainer",
           "LimeExplainer", "AnchorExplainer", "DecisionBoundaryExplainer"]
