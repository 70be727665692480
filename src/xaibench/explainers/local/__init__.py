"""Local attribution explainers (per-token / per-n-gram relevance for one prediction).

The methods of Lertvittayakumjorn & Toni (EMNLP 2019) for 1D CNNs -- Random (W/N), LIME, LRP (W/N),
DeepLIFT (W/N), Grad-CAM-Text, decision-tree extraction -- plus model-generic gradient and SHAP
explainers (Integrated Gradients, Gradient x Input, SHAP partition) that run on any
:class:`~xaibench.models.base.TorchTextClassifier` (CNN, LSTM, transformers).

Usage::

    from xaibench.explainers.local import LOCAL_EXPLAINERS, make_explainer, evidence
    exp = make_explainer("lrp_ngrams").fit(model)            # DTs: .fit(model, train_texts)
    attrs = exp.explain(texts)                                # targets default to the predictions
    [f.text for f in evidence(attrs[0], m=3)]                 # top-3 evidence fragments

Every explainer returns :class:`~xaibench.explainers.base.Attribution` objects: ``tokens`` are the
model's explained input tokens (special tokens and padding dropped), ``scores`` one relevance per
token, and for n-gram methods ``ngrams`` the scored windows ``(start, end, score)``.
"""
from __future__ import annotations

from typing import Any

from ._common import BaseLocalExplainer, Fragment, counter_evidence, evidence
from ._common import proba_uncached  # public: uncached, big-batch forward passes (xaibench.bench)
from ._common import batch_tokens  # public: the tokens an attribution scores (LocalExplainer.tokens)
from .baselines import RandomNgrams, RandomWords
from .gradcam import GradCAMText
from .gradient import GradientXInput, IntegratedGradients
from .lime_explainer import LimeWords
from .propagation import DeepLiftNgrams, DeepLiftWords, LRPNgrams, LRPWords
from .shap_explainer import ShapPartition
from .trees import DecisionTreeExplainer

from ...registry import register_explainer, view

#: the nine methods evaluated in the paper (CNN only)
PAPER_METHODS = ("random_words", "random_ngrams", "lime", "lrp_words", "lrp_ngrams", "deeplift_words",
                 "deeplift_ngrams", "gradcam_text", "decision_trees")
#: methods that read a 1D CNN's layers (filters, feature maps): they explain CNNs only
CNN_ONLY = ("lrp_words", "lrp_ngrams", "deeplift_words", "deeplift_ngrams", "gradcam_text", "decision_trees")

for _cls in (RandomWords, RandomNgrams, LimeWords, LRPWords, LRPNgrams, DeepLiftWords, DeepLiftNgrams,
             GradCAMText, DecisionTreeExplainer, IntegratedGradients, GradientXInput, ShapPartition):
    register_explainer(_cls.name, _cls, family="local", paper=_cls.name in PAPER_METHODS, source="project",
                       models=("cnn",) if _cls.name in CNN_ONLY else ())

#: registry name -> class: a live view of the "local" family of :mod:`xaibench.registry` (the paper's
#: methods in the order of its tables, then the generic methods, then any registered explainer)
LOCAL_EXPLAINERS = view("local")
#: methods that run on any TorchTextClassifier (or any classifier, for LIME/random/DT-ngrams)
GENERIC_METHODS = ("random_words", "random_ngrams", "lime", "integrated_gradients", "grad_x_input", "shap")


def make_explainer(name: str, **kwargs: Any) -> BaseLocalExplainer:
    """Instantiate a registered local explainer by name (any explainer registered in the "local"
    family of :mod:`xaibench.registry`, the project's and the user's)."""
    if name not in LOCAL_EXPLAINERS:
        raise KeyError(f"unknown local explainer {name!r}; known: {sorted(LOCAL_EXPLAINERS)}")
    return LOCAL_EXPLAINERS[name](**kwargs)


__all__ = ["LOCAL_EXPLAINERS", "PAPER_METHODS", "CNN_ONLY", "GENERIC_METHODS", "make_explainer", "evidence",
           "counter_evidence", "Fragment", "BaseLocalExplainer", "RandomWords", "RandomNgrams", "LimeWords",
           "LRPWords", "LRPNgrams", "DeepLiftWords", "DeepLiftNgrams", "GradCAMText", "DecisionTreeExplainer",
           "IntegratedGradients", "GradientXInput", "ShapPartition"]
__all__ += ["proba_uncached", "batch_tokens"]
