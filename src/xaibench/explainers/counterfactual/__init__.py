"""Counterfactual editors (text (+ target) -> candidate edits), one interface:
:class:`xaibench.explainers.base.CounterfactualExplainer`.

``build_editor(name, predictor, dataset)`` returns a fitted TextFooler, MiCE-style or
Polyjuice-style editor (see each module for how it was reimplemented offline).
"""
from __future__ import annotations

from ...registry import explainer_specs, register_explainer

#: the paper's three editors (Filandrianos et al.)
EDITORS = ("mice", "polyjuice", "textfooler")


def _editor_factory(name: str):
    def factory(**kw):
        raise TypeError(f"the {name} editor is built with build_editor({name!r}, predictor, dataset), "
                        "which fits it to the predictor and the dataset's language model")

    factory.__doc__ = f"{name} (built by xaibench.explainers.counterfactual.build_editor)"
    return factory


for _name in EDITORS:
    register_explainer(_name, _editor_factory(_name), output="counterfactual", paper=True, source="project")


def build_editor(name: str, predictor, dataset: str, seed: int = 42, **kw):
    lm_max_texts = kw.pop("lm_max_texts", 20000)
    if name == "textfooler":
        from .textfooler import TextFooler

        return TextFooler(**kw).fit(predictor)
    if name == "mice":
        from .mice import MiCE

        return MiCE(dataset=dataset, seed=seed, lm_max_texts=lm_max_texts, **kw).fit(predictor)
    if name == "polyjuice":
        from .mice import cached_infiller
        from .polyjuice import Polyjuice

        lm = kw.pop("lm", None) or cached_infiller(dataset, predictor, lm_max_texts, seed)
        return Polyjuice(lm=lm, seed=seed, **kw).fit(None)
    registered = {s.name: s for s in explainer_specs(family="counterfactual")}
    if name in registered and name not in EDITORS:  # a user's editor: factory(**kw), then fit(predictor)
        return registered[name].make(**kw).fit(predictor)
    raise ValueError(f"unknown editor {name!r}; choose one of {list(registered) or list(EDITORS)}")
