"""Counterfactual editors (text (+ target) -> candidate edits), one interface:
:class:`xaibench.explainers.base.CounterfactualExplainer`.

``build_editor(name, predictor, dataset)`` returns a fitted TextFooler, MiCE-style or
Polyjuice-style editor (see each module for how it was reimplemented offline), or one of the
:data:`ORIGINAL_EDITORS`, which run the papers' own models from a local copy (:mod:`.hf_editors`;
registered ``opt_in``: only when named).  :func:`editor_source` says what runs under a name.
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


def _register_original_editors() -> None:
    from .hf_editors import MiceT5, PolyjuiceHF

    for cls in (PolyjuiceHF, MiceT5):
        register_explainer(cls.name, cls, output="counterfactual", source="project", opt_in=True)


#: editors that run a paper's original model from a local copy (``polyjuice_hf``, ``mice_t5``)
ORIGINAL_EDITORS = ("polyjuice_hf", "mice_t5")
_register_original_editors()

#: what the offline editors of the paper's names are
_STAND_INS = {
    "mice": "MiCE-style editor: |gradient x input| masking, label-conditioned bigram infiller (not T5)",
    "polyjuice": "Polyjuice-style editor: dependency blanks, one rule per control code (not its GPT-2)",
    "textfooler": "TextFooler re-implemented: counter-fitted GloVe 50d, MiniLM similarity (not Paragram, USE)",
}


def editor_source(name: str, dataset: str | None = None) -> dict:
    """What runs under the editor ``name`` (loads nothing): ``{"editor", "kind", "model", "what"}``, ``kind``
    ``"offline stand-in"`` (the paper's three names), ``"original model"`` (:data:`ORIGINAL_EDITORS`; ``model``:
    the id or folder it loads, MiCE's weights file when set) or ``"registered editor"`` (a user's)."""
    if name in _STAND_INS:
        return {"editor": name, "kind": "offline stand-in", "model": "", "what": _STAND_INS[name]}
    if name == "polyjuice_hf":
        from ...models.hf_local import model_source
        from .hf_editors import POLYJUICE_ENV, POLYJUICE_ID, PolyjuiceHF

        return {"editor": name, "kind": "original model", "model": model_source(None, POLYJUICE_ENV, POLYJUICE_ID),
                "what": PolyjuiceHF.describe()}
    if name == "mice_t5":
        from ...models.hf_local import model_source
        from .hf_editors import MICE_T5_ENV, MICE_T5_ID, MiceT5

        w = MiceT5.weights_path(dataset)
        return {"editor": name, "kind": "original model",
                "model": model_source(None, MICE_T5_ENV, MICE_T5_ID) + (f" + {w}" if w else ""),
                "what": MiceT5.describe(dataset)}
    spec = {s.name: s for s in explainer_specs(family="counterfactual")}.get(name)
    if spec is None:
        raise ValueError(f"unknown editor {name!r}")
    return {"editor": name, "kind": "registered editor", "model": "", "what": f"{spec.description} ({spec.source})"}


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
    if name == "polyjuice_hf":
        from .hf_editors import PolyjuiceHF

        return PolyjuiceHF(seed=seed, **kw).fit(None)
    if name == "mice_t5":
        from .hf_editors import MiceT5

        return MiceT5(dataset=dataset, seed=seed, **kw).fit(predictor)
    registered = {s.name: s for s in explainer_specs(family="counterfactual")}
    if name in registered and name not in EDITORS:  # a user's editor: factory(**kw), then fit(predictor)
        return registered[name].make(**kw).fit(predictor)
    raise ValueError(f"unknown editor {name!r}; choose one of {list(registered) or list(EDITORS)}")
