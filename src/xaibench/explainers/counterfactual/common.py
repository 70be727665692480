"""Pieces the counterfactual editors share: token-level text surgery and the MiniLM encoder."""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np


def join_tokens(words: Sequence[str], spaces: Sequence[str]) -> str:
    """Rebuild a text from spaCy tokens and their trailing whitespace (``token.whitespace_``)."""
    return "".join(w + s for w, s in zip(words, spaces)).strip()


def doc_parts(doc) -> tuple[list[str], list[str]]:
    return [t.text for t in doc], [t.whitespace_ for t in doc]


def match_case(new: str, old: str) -> str:
    if old.isupper() and len(old) > 1:
        return new.upper()
    if old[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


@functools.lru_cache(maxsize=1)
def sentence_encoder():
    """The bundled MiniLM-L6 sentence encoder (stands in for the Universal Sentence Encoder)."""
    from sentence_transformers import SentenceTransformer

    from ...device import torch_device
    from ...models.transformer import resolve_checkpoint

    return SentenceTransformer(resolve_checkpoint("minilm"), device=str(torch_device()))


_EMBEDDINGS: dict[str, np.ndarray] = {}


def angular_similarity(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """``1 - arccos(cos)/pi`` between paired texts (TextAttack's USE 'angular' metric)."""
    todo = [t for t in dict.fromkeys(list(a) + list(b)) if t not in _EMBEDDINGS]
    if todo:
        if len(_EMBEDDINGS) > 200_000:  # bounded memo (windows recur across the steps of a chain)
            _EMBEDDINGS.clear()
        from ...device import torch_threads

        with torch_threads(1):  # a few short windows per call: one thread is faster (device.torch_threads)
            emb = sentence_encoder().encode(todo, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
        _EMBEDDINGS.update(zip(todo, emb))
    ea, eb = np.stack([_EMBEDDINGS[t] for t in a]), np.stack([_EMBEDDINGS[t] for t in b])
    cos = np.clip((ea * eb).sum(1), -1.0, 1.0)
    return 1.0 - np.arccos(cos) / np.pi
