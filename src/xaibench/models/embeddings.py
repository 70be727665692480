"""The word vocabulary of the non-transformer models (GloVe itself lives in :mod:`xaibench.glove`)."""
from __future__ import annotations

import itertools
from collections import Counter
from typing import Iterable, Sequence

from ..glove import PAD, UNK, glove_index, glove_matrix, glove_vectors  # noqa: F401  (re-exported)
from ..text import word_tokenize


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
        """The id of each token (1, the unknown word, for a token outside the vocabulary)."""
        return list(map(self.stoi.get, tokens, itertools.repeat(1)))


def embedding_layer(vocab_size: int, emb: "np.ndarray | None", dim: int = 50, freeze: bool = False):
    """``nn.Embedding`` of ``vocab_size`` x ``dim`` (id 0 = padding), initialised from ``emb``
    (e.g. :func:`glove_vectors`) when given, frozen when ``freeze``."""
    import torch
    from torch import nn

    layer = nn.Embedding(vocab_size, dim, padding_idx=0)
    if emb is not None:
        layer.weight.data.copy_(torch.as_tensor(emb))
    layer.weight.requires_grad = not freeze
    return layer
