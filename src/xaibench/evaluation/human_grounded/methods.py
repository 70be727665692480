"""The explanation methods the human-grounded tasks score, and explaining the question pool.

The tasks show an explanation's top-``m`` evidence and counter-evidence fragments, so they can score
every explainer whose declared output is an attribution (:data:`ACCEPTS`, see
:func:`xaibench.explainers.base.applicable`).  The paper's nine methods keep the short names of
its tables (:data:`PAPER_METHODS`); any other registered local explainer is scored under its
registry name, so a new :class:`~xaibench.explainers.base.LocalExplainer` added to
``xaibench.explainers.local.LOCAL_EXPLAINERS`` is picked up without editing this package.
"""
from __future__ import annotations

from typing import Any, Sequence

from ...explainers.base import applicable
from ...progress import progress
from ..base import mark_added

#: the explainer output type the tasks can score
ACCEPTS = "attribution"

#: LIME's perturbed samples per text in the human-grounded pipeline and the protocols on its CNNs (the paper gives
#: no number); a profile may cap it (:meth:`xaibench.config.Profile.cap_samples`)
LIME_SAMPLES = 1000


def sampling_kwargs(lime_samples: int = LIME_SAMPLES, shap_evals: int | None = None) -> dict[str, int]:
    """The sampling settings offered to every explainer the human-grounded and ERASER protocols build:
    ``num_samples`` (LIME's perturbed samples per text) and, unless ``None`` (SHAP's own default, 500),
    ``max_evals`` (SHAP's model evaluations per text).  An explainer gets those its constructor accepts
    (:func:`xaibench.evaluation.base.make_with`), a user's explainer as much as LIME or SHAP."""
    return {"num_samples": int(lime_samples), **({} if shap_evals is None else {"max_evals": int(shap_evals)})}


#: study/paper method name -> explainer registry name (xaibench.explainers.local), in table order
PAPER_METHODS: dict[str, str] = {
    "random_w": "random_words",
    "random_n": "random_ngrams",
    "lime": "lime",
    "lrp_w": "lrp_words",
    "lrp_n": "lrp_ngrams",
    "deeplift_w": "deeplift_words",
    "deeplift_n": "deeplift_ngrams",
    "gradcam_text": "gradcam_text",
    "dt": "decision_trees",
}
#: printed names of the paper's tables
PAPER_LABELS: dict[str, str] = {
    "random_w": "Random (W)", "random_n": "Random (N)", "lime": "LIME (W)", "lrp_w": "LRP (W)",
    "lrp_n": "LRP (N)", "deeplift_w": "DeepLIFT (W)", "deeplift_n": "DeepLIFT (N)",
    "gradcam_text": "Grad-CAM-T (N)", "dt": "DTs (N)",
}


def scorable_methods() -> list[str]:
    """Every method the tasks can score: the paper's short names (table order), then the registry
    names of the other registered explainers whose declared output is :data:`ACCEPTS`."""
    from ...explainers.local import LOCAL_EXPLAINERS

    names = applicable(LOCAL_EXPLAINERS, ACCEPTS)
    paper = [m for m, n in PAPER_METHODS.items() if n in names]
    return paper + [n for n in names if n not in PAPER_METHODS.values()]


def table_label(method: str) -> str:
    """:func:`method_label`, marked ``(added)`` for a method that is not one of the paper's nine."""
    return method_label(method) if method in PAPER_METHODS else mark_added(method_label(method))


def method_label(method: str) -> str:
    """The paper's printed name of ``method`` (the method name itself for non-paper methods)."""
    return PAPER_LABELS.get(method, method)


def make_paper_explainer(method: str, model: Any, fit_texts: Sequence[str], seed: int = 42,
                         lime_samples: int = LIME_SAMPLES, shap_evals: int | None = None) -> Any:
    """A fitted explainer for a method name: a paper name (``lrp_n``, ``dt``, ...) or the registry
    name of any explainer in :func:`scorable_methods`.  Every explainer is fitted with the model's
    training texts (only those that need data, the decision trees, use them).  ``shap_evals``: SHAP's model
    evaluations per text (``None``: SHAP's own default, 500)."""
    from ...explainers.local import LOCAL_EXPLAINERS
    from ..base import make_with

    known = scorable_methods()
    if method not in known:
        raise KeyError(f"unknown method {method!r} for the human-grounded tasks; use one of {known}")
    name = PAPER_METHODS.get(method, method)
    # a registered explainer need not take seed / num_samples / max_evals: only what it accepts is passed
    return make_with(LOCAL_EXPLAINERS[name], seed=seed, **sampling_kwargs(lime_samples, shap_evals)
                     ).fit(model, list(fit_texts))


def explain_texts(model: Any, texts: Sequence[str], methods: Sequence[str], fit_texts: Sequence[str],
                  seed: int = 42, lime_samples: int = LIME_SAMPLES, desc: str = "") -> dict[str, dict[str, Any]]:
    """``{method: {text: Attribution for the predicted class}}`` for the unique ``texts``."""
    uniq = list(dict.fromkeys(texts))
    out: dict[str, dict[str, Any]] = {}
    for method in progress(list(methods), desc=desc or "explainers"):
        exp = make_paper_explainer(method, model, fit_texts, seed=seed, lime_samples=lime_samples)
        attrs = exp.explain(uniq)
        out[method] = dict(zip(uniq, attrs))
    return out


__all__ = ["ACCEPTS", "LIME_SAMPLES", "sampling_kwargs", "PAPER_METHODS", "PAPER_LABELS", "scorable_methods", "table_label", "method_label",
           "make_paper_explainer", "explain_texts"]
