"""Counter-fitting word vectors (Mrkšić et al., NAACL 2016) with WordNet constraints.

TextFooler's synonym candidates come from counter-fitted vectors: raw GloVe puts antonyms next to
each other (good ~ bad, boring ~ funny), counter-fitting pushes antonyms apart and pulls synonyms
together while keeping each word's original neighbourhood.  Loss on L2-normalised vectors, cosine
distance ``d = 1 - cos``:

* antonym repel  ``sum relu(delta - d(u, w))`` over antonym pairs (delta = 1.0),
* synonym attract ``sum relu(d(u, w) - gamma)`` over synonym pairs (gamma = 0.0),
* vector-space preservation ``sum relu(d'(i, j) - d(i, j))`` over pairs whose original cosine
  distance is below ``rho`` (0.2),

each weighted 1 as in the paper, optimised full-batch with Adam (SGD on the summed loss diverges for frequent words).  ``counterfitted_glove()`` builds
(and caches under ``data/cache/cf_feedback/``) the vectors of the most frequent GloVe 6B-50d words.  Its antonym
constraints are WordNet's antonym pairs **extended to the inflected forms in the vocabulary** (``loved``/``hated``,
``better``/``worse``: :meth:`WordNet.base_forms`), since GloVe's vocabulary is mostly inflected forms that WordNet
lists only as lemmas; the synonym constraints are WordNet's most-frequent-sense synonyms as listed.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np


def _normalise(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def counter_fit(vectors: np.ndarray, synonyms: Sequence[tuple[int, int]], antonyms: Sequence[tuple[int, int]],
                epochs: int = 50, lr: float = 0.01, delta: float = 1.0, gamma: float = 0.0, rho: float = 0.2,
                seed: int = 0, chunk: int = 2048) -> np.ndarray:
    """Counter-fitted copy of ``vectors`` (rows L2-normalised) given index pairs."""
    import torch

    from ...device import torch_device

    torch.manual_seed(seed)
    dev = torch_device()
    v0 = torch.tensor(_normalise(np.asarray(vectors, dtype=np.float32)), device=dev)
    # vector-space-preservation pairs: original cosine distance < rho
    vi, vj, vd = [], [], []
    for s in range(0, len(v0), chunk):
        sims = v0[s:s + chunk] @ v0.T
        i, j = torch.nonzero(sims > 1 - rho, as_tuple=True)
        keep = (i + s) != j
        vi.append(i[keep] + s)
        vj.append(j[keep])
        vd.append(1 - sims[i[keep], j[keep]])
    vi, vj, vd = torch.cat(vi), torch.cat(vj), torch.cat(vd)
    syn = torch.tensor(np.asarray(synonyms, dtype=np.int64).reshape(-1, 2), device=dev)
    ant = torch.tensor(np.asarray(antonyms, dtype=np.int64).reshape(-1, 2), device=dev)
    if len(ant) and len(vi):  # an antonym pair is not a neighbourhood to preserve
        n = len(v0)
        bad = set((ant[:, 0] * n + ant[:, 1]).tolist()) | set((ant[:, 1] * n + ant[:, 0]).tolist())
        keep = torch.tensor([int(k) not in bad for k in (vi * n + vj).tolist()], dtype=torch.bool, device=dev)
        vi, vj, vd = vi[keep], vj[keep], vd[keep]
    v = v0.clone().requires_grad_(True)
    opt = torch.optim.Adam([v], lr=lr)

    def dist(a, b):
        return 1 - torch.nn.functional.cosine_similarity(v[a], v[b], dim=-1)

    for _ in range(epochs):
        opt.zero_grad()
        loss = torch.zeros((), device=dev)
        if len(ant):
            loss = loss + torch.relu(delta - dist(ant[:, 0], ant[:, 1])).sum()
        if len(syn):
            loss = loss + torch.relu(dist(syn[:, 0], syn[:, 1]) - gamma).sum()
        if len(vi):
            loss = loss + torch.relu(dist(vi, vj) - vd).sum()
        loss.backward()
        opt.step()
    return _normalise(v.detach().cpu().numpy())


@dataclass
class WordVectors:
    words: list[str]
    vectors: np.ndarray  # (n, d), L2-normalised

    def __post_init__(self):
        self.index = {w: i for i, w in enumerate(self.words)}

    def neighbours(self, word: str, k: int = 50, min_cos: float = 0.5) -> list[tuple[str, float]]:
        """Up to ``k`` nearest words with cosine >= ``min_cos`` (the word itself excluded)."""
        i = self.index.get(word)
        if i is None:
            return []
        sims = self.vectors @ self.vectors[i]
        sims[i] = -np.inf
        top = np.argpartition(-sims, min(k, len(sims) - 1))[:k]
        top = top[np.argsort(-sims[top])]
        return [(self.words[j], float(sims[j])) for j in top if sims[j] >= min_cos]


def antonym_pairs(words: Sequence[str], wordnet) -> list[tuple[int, int]]:
    """Index pairs ``(i, j)``, ``i < j``, of ``words`` that are WordNet antonyms directly or through the lemmas
    they inflect (:meth:`WordNet.is_antonym`)."""
    by_lemma: dict[str, list[int]] = {}
    for i, w in enumerate(words):
        for b in wordnet.base_forms(w):
            by_lemma.setdefault(b, []).append(i)
    out = set()
    for i, w in enumerate(words):
        for b in wordnet.base_forms(w):
            for a in wordnet.antonyms_of(b):
                out.update((min(i, j), max(i, j)) for j in by_lemma.get(a, ()) if j != i)
    return sorted(out)


def counterfitted_glove(n_words: int = 30000, epochs: int = 20, inflected_antonyms: bool = True) -> WordVectors:
    """Counter-fitted GloVe 6B-50d for the ``n_words`` most frequent alphabetic words (cached).

    ``inflected_antonyms=False``: the antonym constraints are WordNet's lemma pairs only (the earlier
    vectors, kept to measure what the extension changes)."""
    from ... import io, paths
    from ...glove import glove_index, glove_matrix
    from .wordnet import load_wordnet

    version = "v3-inflected-antonyms" if inflected_antonyms else "v2"
    key = hashlib.sha1(f"glove50|{n_words}|{epochs}|wn3.0|{version}".encode()).hexdigest()[:12]
    path = paths.cache_dir() / "cf_feedback" / f"counterfit_glove50_{key}.npz"
    idx = glove_index()

    def build() -> WordVectors:
        words = [w for w in sorted(idx, key=idx.get) if w.isalpha()][:n_words]
        mat = glove_matrix()
        vecs = np.asarray(mat[[idx[w] for w in words]], dtype=np.float32)
        wn = load_wordnet()
        pos = {w: i for i, w in enumerate(words)}
        syn = [(pos[a], pos[b]) for a, b in wn.synonyms if a in pos and b in pos and a < b]
        ant = (antonym_pairs(words, wn) if inflected_antonyms else
               [(pos[a], pos[b]) for a, b in wn.antonyms if a in pos and b in pos and a < b])
        out = counter_fit(vecs, syn, ant, epochs=epochs)
        with io.atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.savez(fh, words=np.array(words), vectors=out.astype(np.float32))
        return WordVectors(words, out)

    return io.read_or_rebuild(path, read_word_vectors, build, what="counter-fitted vectors")


def read_word_vectors(path) -> WordVectors:
    """The :class:`WordVectors` an ``.npz`` of ``words`` and ``vectors`` holds (both read in full, checked)."""
    with np.load(path, allow_pickle=False) as z:
        words, vectors = z["words"].tolist(), np.asarray(z["vectors"])
    if vectors.ndim != 2 or len(words) != len(vectors) or not np.all(np.isfinite(vectors)):
        raise ValueError(f"{len(words)} words but vectors of shape {vectors.shape} (or non-finite values)")
    return WordVectors(words, vectors)
