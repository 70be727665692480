"""Counterfactual editors (text (+ target) -> candidate edits), one interface:
:class:`xaibench.explainers.base.CounterfactualExplainer`.

``build_editor(name, predictor, dataset)`` returns a fitted TextFooler, MiCE-style or
Polyjuice-style editor (see each module for how it was reimplemented offline).
"""
from __future__ import annotations

EDITORS = ("mice", "polyjuice", "textfooler")


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
    raise ValueError(f"unknown editor {name!r}; choose one of {EDITORS}")
