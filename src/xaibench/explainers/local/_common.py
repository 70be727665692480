"""Shared machinery of the local explainers: batching, targets, token positions, n-gram windows,
evidence / counter-evidence selection."""
from __future__ import annotations

import abc
import contextlib
from typing import Any, Iterator, NamedTuple, Sequence

import numpy as np

from ..base import Attribution, LocalExplainer
from ..tokens import is_torch_model as _is_torch_model  # noqa: F401
from ..tokens import (batch_tokens, chars_read, explained_positions, read_part, row_tokens,  # noqa: F401
                      special_ids, word_tokens)

#: n-gram widths used when the model has no conv filters (the paper's CNN widths)
DEFAULT_WIDTHS = (2, 3, 4)
_SPECIAL_STRINGS = {"[CLS]", "[SEP]", "[PAD]", "<s>", "</s>", "<pad>", "<|endoftext|>", "[MASK]", "<mask>"}


class BaseLocalExplainer(LocalExplainer):
    """Validates inputs, fills in default targets (the predicted classes) and cuts the texts
    into batches of ``batch_size``; subclasses implement :meth:`_explain_batch`."""

    name = "local"
    paper_name = ""        # label used in the paper's tables (e.g. "LRP (N)")
    granularity = "words"  # or "ngrams"
    needs_torch = False    # needs a TorchTextClassifier (encode/module/embedding_layer)

    def __init__(self, batch_size: int = 16, seed: int = 42):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.batch_size = int(batch_size)
        self.seed = int(seed)
        self.model: Any = None

    def fit(self, model: Any, data: Any = None) -> "BaseLocalExplainer":
        if self.needs_torch and not _is_torch_model(model):
            raise TypeError(f"{type(self).__name__} needs a TorchTextClassifier (with encode/module/"
                            f"embedding_layer); got {type(model).__name__}")
        self.model = model
        return self

    def explain(self, texts: Sequence[str], targets: Sequence[int] | None = None) -> list[Attribution]:
        if self.model is None:
            raise RuntimeError(f"{type(self).__name__} is not fitted: call .fit(model) before .explain(texts)")
        from ...progress import progress
        from ...utils import check_texts

        texts = check_texts(texts)
        if not texts:
            return []
        targets = self.model.predict(texts) if targets is None else _check_targets(targets, len(texts), self.model)
        out: list[Attribution] = []
        starts = range(0, len(texts), self.batch_size)
        for i in progress(starts, desc=self.name, total=len(starts), leave=False):
            out.extend(self._explain_batch(texts[i : i + self.batch_size], [int(t) for t in targets[i : i + self.batch_size]]))
        for text, a in zip(texts, out):  # what the model read of each text (see Attribution.truncated)
            a.chars_read = chars_read(self.model, text)
            a.truncated = a.chars_read < len(text)
        return out

    @abc.abstractmethod
    def _explain_batch(self, texts: list[str], targets: list[int]) -> list[Attribution]: ...


def _check_targets(targets: Any, n_texts: int, model: Any) -> np.ndarray:
    """``targets`` as an int array: one class index in ``[0, n_classes)`` per text."""
    from ...checks import check_targets

    return check_targets(targets, n_texts, getattr(model, "n_classes", None))


# ----------------------------------------------------------------------------------------------
# model helpers
# ----------------------------------------------------------------------------------------------
def filter_widths(model: Any) -> tuple[int, ...]:
    """The model's conv filter widths (n-gram sizes), or the paper's (2, 3, 4)."""
    w = getattr(model, "filter_widths", None)
    return tuple(int(x) for x in w) if w else DEFAULT_WIDTHS


def pad_id(model: Any) -> int:
    pid = getattr(model, "pad_token_id", None)
    if pid is None and getattr(model, "tokenizer", None) is not None:
        pid = getattr(model.tokenizer, "pad_token_id", None)
    return int(pid) if pid is not None else 0


def model_key(model: Any) -> str:
    """What identifies the model in per-query seeds (:func:`xaibench.utils.query_seed`): its
    fingerprint, so two models explained with the same seed get different random draws."""
    fp = getattr(model, "fingerprint", None)
    return str(fp()) if callable(fp) else type(model).__name__


@contextlib.contextmanager
def big_batches(model: Any, batch_size: int) -> Iterator[None]:
    """Temporarily raise ``model.batch_size`` so perturbation methods run few, large forward batches."""
    old = getattr(model, "batch_size", None)
    if old is None:
        yield
        return
    model.batch_size = max(int(old), int(batch_size))
    try:
        yield
    finally:
        model.batch_size = old


def proba_uncached(model: Any, texts: list[str], batch_size: int = 512) -> np.ndarray:
    """Class probabilities for perturbed texts without touching the on-disk cache (perturbations
    are used once); torch models run in batches of ``batch_size``."""
    with big_batches(model, batch_size):
        return model._counted(model._predict_proba, list(texts))


# ----------------------------------------------------------------------------------------------
# n-grams
# ----------------------------------------------------------------------------------------------
def ngram_windows(n_tokens: int, widths: Sequence[int]) -> list[tuple[int, int]]:
    """All windows ``(start, end)`` of the given widths over ``n_tokens`` tokens (end exclusive).
    A text shorter than a width gets one window covering the whole text."""
    seen: dict[tuple[int, int], None] = {}
    for w in widths:
        if n_tokens == 0:
            break
        if n_tokens < w:
            seen[(0, n_tokens)] = None
            continue
        for s in range(n_tokens - w + 1):
            seen[(s, s + w)] = None
    return list(seen)


def ngrams_from_words(scores: np.ndarray, widths: Sequence[int]) -> list[tuple[int, int, float]]:
    """N-gram relevance = sum of its words' relevance (the paper's LRP (N) / DeepLIFT (N))."""
    c = np.concatenate([[0.0], np.cumsum(scores)])
    return [(s, e, float(c[e] - c[s])) for s, e in ngram_windows(len(scores), widths)]


# ----------------------------------------------------------------------------------------------
# evidence / counter-evidence (human-grounded tasks)
# ----------------------------------------------------------------------------------------------
class Fragment(NamedTuple):
    start: int
    end: int
    score: float
    text: str


def _fragments(attribution: Attribution) -> list[tuple[int, int, float]]:
    if attribution.ngrams:
        return [(int(s), int(e), float(v)) for s, e, v in attribution.ngrams]
    return [(i, i + 1, float(v)) for i, v in enumerate(attribution.scores)]


def _select(cands: list[tuple[int, int, float]], m: int, tokens: list[str]) -> list[Fragment]:
    """Greedy top-``m`` non-overlapping fragments by score (the authors' selection rule)."""
    cands = sorted(cands, key=lambda f: (-f[2], f[0], f[1]))
    used: set[int] = set()
    out: list[Fragment] = []
    for s, e, v in cands:
        if len(out) >= m:
            break
        span = set(range(s, e))
        if not span or span & used:
            continue
        used |= span
        out.append(Fragment(s, e, v, " ".join(tokens[s:e])))
    return out


def evidence(attribution: Attribution, m: int = 3) -> list[Fragment]:
    """Top-``m`` non-overlapping fragments with positive relevance for ``attribution.target``
    (n-grams for n-gram methods, single tokens otherwise)."""
    if m < 0:
        raise ValueError(f"m must be >= 0, got {m}")
    return _select([f for f in _fragments(attribution) if f[2] > 0], m, attribution.tokens)


def counter_evidence(attribution: Attribution, m: int = 3,
                     others: Sequence[Attribution] | None = None) -> list[Fragment]:
    """Top-``m`` fragments speaking against ``attribution.target``.

    Default (as in the authors' code): the fragments with the most negative relevance for the
    target class (scores returned as positive magnitudes).  With ``others`` (explanations of the
    same text for the other classes) the positive-relevance fragments for those classes are
    pooled instead.
    """
    if m < 0:
        raise ValueError(f"m must be >= 0, got {m}")
    if others:
        for o in others:
            if o.tokens != attribution.tokens:
                raise ValueError("`others` must explain the same text with the same tokens")
            if o.target == attribution.target:
                raise ValueError("`others` must explain classes other than attribution.target")
        cands = [f for o in others for f in _fragments(o) if f[2] > 0]
    else:
        cands = [(s, e, -v) for s, e, v in _fragments(attribution) if v < 0]
    return _select(cands, m, attribution.tokens)


