"""The one explainer interface.

Every explainer is fitted once against a model (``fit(model, data)``; a no-op for methods that
need no training data) and then explains batches (``explain(batch) -> list``).  What an
explanation *is* depends on the family, and each family declares its output type so that every
protocol can check what it can score:

* :class:`LocalExplainer` (``output = "attribution"``) -> one :class:`Attribution` per text (per-token
  relevance, optional n-gram relevance, and whether the model read the whole text) for a target
  class; consumed by the human-grounded tasks (:mod:`xaibench.evaluation.human_grounded`) and the
  ground-truth attribution protocol (:mod:`xaibench.evaluation.attribution_gt`).  The feature-level
  explainers of Ge et al. (:mod:`xaibench.explainers.feature`) return attributions over a fixed set of
  features and are scored by :mod:`xaibench.evaluation.cf_faithfulness.metrics`.
* :class:`ConceptExplainer` (``output = "concept_effect"``) -> ICaCE estimates (an effect vector over
  classes) for (text, concept, c, c') queries; consumed by the CEBaB protocol.
* :class:`CounterfactualExplainer` (``output = "counterfactual"``) -> candidate edited texts per text;
  consumed by the counterfactual-feedback protocol (:mod:`xaibench.evaluation.cf_feedback`).
* :class:`ImageExplainer` (``output = "image_attribution"``) -> a non-negative saliency map per image of
  an image classifier; consumed by Zhou et al.'s image protocol
  (:mod:`xaibench.evaluation.attribution_gt.image_protocol`).

Protocols ask :func:`applicable` (which reads ``explainer.output``) to decide whether they apply,
so a new explainer is scored by every protocol that applies to it without editing the protocol.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np


class Explainer(abc.ABC):
    name: str = "explainer"
    output: str = ""

    def fit(self, model: Any, data: Any = None) -> "Explainer":
        self.model = model
        return self

    @abc.abstractmethod
    def explain(self, batch: Any) -> Any: ...

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"{type(self).__name__}(name={self.name!r})"


@dataclass
class Attribution:
    """Relevance of each token of ``text`` for class ``target``.

    ``scores[i]`` belongs to ``tokens[i]``.  ``ngrams`` optionally lists n-gram fragments as
    ``(start, end, score)`` over token positions (end exclusive), for n-gram-level methods.

    A model that reads at most a fixed number of tokens sees only ``text[:chars_read]``; the
    tokens are then those of that part and ``truncated`` is True (set by ``explain``; ``None``
    means unknown).
    """

    text: str
    tokens: list[str]
    scores: np.ndarray
    target: int
    ngrams: list[tuple[int, int, float]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    truncated: bool = False
    chars_read: int | None = None

    def __post_init__(self) -> None:
        self.scores = np.asarray(self.scores, dtype=np.float64)
        if self.scores.shape != (len(self.tokens),):
            raise ValueError(f"scores has shape {self.scores.shape} but there are {len(self.tokens)} tokens")


class LocalExplainer(Explainer):
    """Every protocol reads an :class:`Attribution` as one score per token of the model: :meth:`tokens`.
    An explainer defined outside the package has each result of its ``explain`` checked against them, so
    one that tokenises its own way is refused at its first explanation, with the tokens it should use."""

    output = "attribution"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        explain = cls.__dict__.get("explain")
        if explain is not None and not cls.__module__.startswith("xaibench.") \
                and not getattr(explain, "checks_tokens", False):
            cls.explain = _checking_tokens(explain)

    @abc.abstractmethod
    def explain(self, texts: Sequence[str], targets: Sequence[int] | None = None) -> list[Attribution]:
        """One :class:`Attribution` per text; ``targets`` default to the predicted classes."""

    def tokens(self, text: str) -> list[str]:
        """The tokens of ``text`` that an attribution scores, one score each, as the protocols and the
        heat maps read them: a torch model's explained input tokens (its non-special positions, e.g. the
        CNN's lower-cased words of the part it reads), else the lower-cased words of the part the model
        reads (:func:`xaibench.text.word_tokenize`).  Needs :meth:`fit` first."""
        from .tokens import batch_tokens

        return batch_tokens(self.model, [text])[0]


def _checking_tokens(explain: Any) -> Any:
    """``explain`` that refuses attributions whose tokens are not :meth:`LocalExplainer.tokens` (when fitted)."""
    import functools

    @functools.wraps(explain)
    def checked(self: LocalExplainer, texts: Sequence[str], *args: Any, **kwargs: Any) -> list[Attribution]:
        from .tokens import batch_tokens

        out = explain(self, texts, *args, **kwargs)
        if getattr(self, "model", None) is None:  # explains without a model: no tokens to keep to
            return out
        texts = [texts] if isinstance(texts, str) else list(texts)
        for text, a, want in zip(texts, out, batch_tokens(self.model, texts)):
            if list(a.tokens) != list(want):
                raise ValueError(
                    f"explainer {type(self).__name__} explains {text[:60]!r} as the tokens {list(a.tokens)[:8]} but "
                    f"the protocols score one value per token of the model, here {list(want)[:8]}: build each "
                    "Attribution on self.tokens(text) (LocalExplainer.tokens)")
        return out

    checked.checks_tokens = True
    return checked


class ConceptExplainer(Explainer):
    """Estimates ICaCE: the change of the model's class-probability vector when concept
    ``aspect`` of a text changes from ``base`` to ``counterfactual`` value."""

    output = "concept_effect"

    @abc.abstractmethod
    def explain(self, queries: Any) -> np.ndarray:
        """``queries``: DataFrame with columns ``text`` (base text), ``aspect``, ``base_value``,
        ``cf_value`` (+ optional predicted aspect labels); returns ``(n, n_classes)`` effects.
        Never receives the counterfactual text."""


class CounterfactualExplainer(Explainer):
    """A counterfactual editor: text (+ target class) -> candidate edited texts.

    ``explain(texts, targets)`` returns one list of candidate edits per text (possibly empty:
    the editor found nothing).  ``targeted`` says whether the editor uses ``targets`` (MiCE) or
    edits towards any other class; ``uses_predictor`` is False for predictor-agnostic editors
    (Polyjuice).  Consumed by the counterfactual-feedback protocol
    (:mod:`xaibench.evaluation.cf_feedback`).
    """

    output = "counterfactual"
    targeted: bool = False
    uses_predictor: bool = True

    @abc.abstractmethod
    def explain(self, texts: Sequence[str], targets: Sequence[int] | None = None) -> list[list[str]]:
        """Candidate edits per text; ``targets`` are the desired classes (ignored if untargeted)."""

    def _check_inputs(self, texts: Any, targets: Any = None) -> tuple[list[str], np.ndarray | None]:
        """What every editor's ``explain`` checks first: ``texts`` a list of ``str`` (a single string
        is refused, not edited character by character) and, when given, one target class per text
        (within the predictor's classes when it declares ``n_classes``)."""
        from ..checks import check_targets, check_texts

        if not hasattr(self, "model"):
            raise RuntimeError(f"{type(self).__name__} is not fitted: call .fit(predictor) before .explain(texts)")
        texts = check_texts(texts)
        if targets is None:
            return texts, None
        n_classes = getattr(self.model, "n_classes", None)
        default = "the second most probable classes" if self.targeted else "no target (the editor ignores it)"
        return texts, check_targets(targets, len(texts), n_classes, default=default)


class ImageExplainer(Explainer):
    """Pixel saliency of an image classifier (a torch module mapping normalised ``(B, 3, S, S)`` images to
    class logits).  ``fit(model)`` keeps the model; ``explain(x, targets, images=None, **context)``
    returns a ``(B, S, S)`` array of non-negative relevance for logit ``targets`` (default: the predicted
    classes).  ``images`` are the same images as ``uint8 (B, S, S, 3)`` (for superpixels); ``context`` may
    carry ``baselines`` (background images in the model's input space) and ``hide`` (the input-space value of
    a hidden pixel) -- a method uses what it needs and ignores the rest."""

    output = "image_attribution"

    @abc.abstractmethod
    def explain(self, x: Any, targets: Any = None, images: Any = None, **context: Any) -> np.ndarray:
        """``(B, S, S)`` non-negative saliency of each image for its target class."""

    def _targets(self, x: Any, targets: Any) -> Any:
        """``targets`` as a long tensor on ``x``'s device, or the model's predicted classes."""
        import torch

        if not hasattr(self, "model"):
            raise RuntimeError(f"{type(self).__name__} is not fitted: call .fit(image_model) before .explain(x)")
        if targets is None:
            self.model.eval()
            with torch.no_grad():
                return self.model(x).argmax(1)
        targets = torch.as_tensor(np.asarray(targets), device=x.device).long()
        if targets.shape != (x.shape[0],):
            raise ValueError(f"targets has shape {tuple(targets.shape)}; pass one class per image ({x.shape[0]})")
        return targets


def applicable(explainers: Mapping[str, Any], output: str) -> list[str]:
    """Names of the ``explainers`` (``{name: class or instance}``, order kept) whose declared
    :attr:`Explainer.output` is ``output``: what a protocol that scores ``output`` can score.

    A protocol asks this instead of listing explainers, so a new explainer is scored by every
    protocol that applies to it without editing the protocol.
    """
    known = (LocalExplainer.output, ConceptExplainer.output, CounterfactualExplainer.output)
    if output not in known:
        raise ValueError(f"unknown explainer output {output!r}; explainers declare one of {known}")
    declared = getattr(explainers, "output_of", None)  # a registry view knows the outputs of factory functions
    return [name for name, e in explainers.items()
            if (declared(name) if declared is not None else getattr(e, "output", None)) == output]
