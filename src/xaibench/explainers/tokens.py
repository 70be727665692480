"""The tokens an attribution scores, one score each: a torch model's explained input tokens (its non-special
positions), else the words of the part of the text the model reads.  Below :mod:`xaibench.explainers.base` (whose
``LocalExplainer.tokens`` reads them) and :mod:`xaibench.explainers.local` (whose explainers build on them)."""
from __future__ import annotations

from typing import Any

import numpy as np


def chars_read(model: Any, text: str) -> int:
    """How many characters of ``text`` the model reads (``Classifier.chars_read``; all of it for
    models without one)."""
    fn = getattr(model, "chars_read", None)
    return int(fn(text)) if fn is not None else len(text)


def read_part(model: Any, text: str) -> str:
    """The part of ``text`` the model reads: model-agnostic methods (LIME, decision trees) perturb
    and attribute only this, never the tail a truncating model ignores."""
    return text[: chars_read(model, text)]


def is_torch_model(model: Any) -> bool:
    from ..models.base import TorchTextClassifier

    return isinstance(model, TorchTextClassifier)


def special_ids(model: Any) -> set[int]:
    ids = getattr(model, "special_token_ids", None)
    if ids is None and getattr(model, "tokenizer", None) is not None:
        ids = getattr(model.tokenizer, "all_special_ids", None)
    return set(int(i) for i in (ids or ()))


def explained_positions(model: Any, ids, mask) -> np.ndarray:
    """``(B, L)`` bool: positions that are real, non-special tokens."""
    ids_np = ids.detach().cpu().numpy()
    keep = mask.detach().cpu().numpy().astype(bool)
    sp = special_ids(model)
    if sp:
        keep &= ~np.isin(ids_np, list(sp))
    return keep


def row_tokens(model: Any, text: str, keep_row: np.ndarray) -> list[str]:
    """Display tokens of ``text`` at the explained positions of its batch row."""
    toks = model.tokens(text)
    pos = np.flatnonzero(keep_row)
    if len(toks) < (pos.max() + 1 if len(pos) else 0):
        raise RuntimeError(f"{type(model).__name__}.tokens() returned {len(toks)} tokens but encode() has "
                           f"{pos.max() + 1} positions; tokens must align with encode([text])")
    toks = [toks[p] for p in pos]
    return toks


def word_tokens(model: Any, text: str, lower: bool = True) -> list[str]:
    """Words (:func:`word_tokenize`, the CNN's and LSTM's own words) of the part of ``text`` the
    model reads (:func:`read_part`), for the word-level model-agnostic methods (LIME, trees)."""
    from ..models.embeddings import word_tokenize

    return word_tokenize(read_part(model, text), lower=lower)


def batch_tokens(model: Any, texts: list[str]) -> list[list[str]]:
    """Explained tokens per text: the model's non-special input tokens for torch models, else words."""
    if is_torch_model(model):
        ids, mask = model.encode(texts)
        keep = explained_positions(model, ids, mask)
        return [row_tokens(model, t, keep[i]) for i, t in enumerate(texts)]
    return [word_tokens(model, t) for t in texts]
