"""A label-conditioned bigram language model with interpolated unigram backoff.

Stage 1 of the MiCE-style editor: MiCE fine-tunes T5 to infill masked spans conditioned on the
(predicted) label; here ``P(w | prev, label) = (c_label(prev, w) + a * P_label(w)) / (c_label(prev) + a)``
is estimated on the train split labelled by the predictor, over spaCy tokens, lower-cased.  With
``label=None`` the label-pooled model is used (Polyjuice-style insertions and the cheap in-domain
fluency LM).  Sampling is restricted to the ``top_k`` successors of the previous word.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Sequence

import numpy as np

BOS = "<s>"


class BigramLM:
    def __init__(self, alpha: float = 2.0, top_k: int = 40, min_count: int = 2):
        self.alpha, self.top_k, self.min_count = alpha, top_k, min_count

    def fit(self, token_lists: Sequence[Sequence[str]], labels: Sequence[int] | None = None) -> "BigramLM":
        labels = [None] * len(token_lists) if labels is None else list(labels)
        uni: dict = defaultdict(Counter)
        bi: dict = defaultdict(lambda: defaultdict(Counter))
        for toks, lab in zip(token_lists, labels):
            seq = [BOS] + [t.lower() for t in toks]
            for key in {lab, None}:
                uni[key].update(seq[1:])
                for a, b in zip(seq[:-1], seq[1:]):
                    bi[key][a][b] += 1
        self.labels = sorted(k for k in uni if k is not None)
        self.unigram, self.successors, self.prev_total = {}, {}, {}
        for key, cnt in uni.items():
            vocab = {w: c for w, c in cnt.items() if c >= self.min_count}
            total = sum(vocab.values())
            self.unigram[key] = {w: c / total for w, c in vocab.items()}
            succ, tot = {}, {}
            for a, nxt in bi[key].items():
                items = [(w, c) for w, c in nxt.items() if w in vocab]
                tot[a] = sum(c for _, c in items)
                items.sort(key=lambda x: -x[1])
                items = items[: self.top_k]
                if items:
                    succ[a] = (np.array([w for w, _ in items]), np.array([c for _, c in items], dtype=np.float64))
            self.successors[key], self.prev_total[key] = succ, tot
        self.n_tokens = sum(uni[None].values())
        return self

    def logprob(self, prev: str, word: str, label: int | None = None) -> float:
        key = label if label in self.unigram else None
        pu = self.unigram[key].get(word.lower(), 0.0)
        pu = pu if pu > 0 else 1.0 / (self.n_tokens + 1)
        words_counts = self.successors[key].get(prev.lower())
        c = 0.0
        if words_counts is not None:
            hit = np.flatnonzero(words_counts[0] == word.lower())
            c = float(words_counts[1][hit[0]]) if hit.size else 0.0
        tot = self.prev_total[key].get(prev.lower(), 0)
        return float(np.log((c + self.alpha * pu) / (tot + self.alpha)))

    def nll(self, tokens: Sequence[str], label: int | None = None) -> float:
        """Mean negative log-likelihood per token."""
        seq = [BOS] + list(tokens)
        if len(seq) < 2:
            return float("nan")
        return -float(np.mean([self.logprob(a, b, label) for a, b in zip(seq[:-1], seq[1:])]))

    def sample(self, prev: str, n: int, rng: np.random.Generator, label: int | None = None,
               avoid: Sequence[str] = ()) -> list[str]:
        """``n`` words continuing ``prev`` (top-k sampling from the label's bigram distribution)."""
        key = label if label in self.unigram else None
        out = []
        for _ in range(n):
            wc = self.successors[key].get(prev.lower()) or self.successors[key].get(BOS)
            words, counts = wc
            p = counts.copy()
            if avoid:
                p[np.isin(words, list(avoid))] = 0.0
            if p.sum() <= 0:
                p = counts.copy()
            w = str(rng.choice(words, p=p / p.sum()))
            out.append(w)
            prev = w
        return out


def train_ngram(dataset: str, predictor=None, max_texts: int | None = 20000, seed: int = 42) -> BigramLM:
    """The label-conditioned bigram LM of ``dataset``'s train split (labels from ``predictor``;
    gold labels when None).  Cached in memory per process by the caller."""
    from ...data.cf_data import load_cf_dataset
    from ...nlp import nlp

    df = load_cf_dataset(dataset)
    train = df[df["split"] == "train"]
    if max_texts is not None and len(train) > max_texts:
        train = train.sample(n=max_texts, random_state=seed)
    texts = train["text"].tolist()
    labels = train["label"].to_numpy() if predictor is None else predictor.predict(texts)
    toks = [[t.text for t in d if not t.is_space] for d in nlp().tokenizer.pipe(texts, batch_size=256)]
    return BigramLM().fit(toks, [int(x) for x in labels])
