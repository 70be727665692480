"""``python -m xaibench.bench cnn_encode``: the 1D CNN's input encoding (Lertvittayakumjorn & Toni, notebooks 11
and 21; every text LIME and the other perturbation explainers score goes through it) as it is now -- ASCII texts
lower-cased before the tokenizer's match, the vocabulary's ``get`` mapped over the tokens, one id array and one
mask per batch -- against the path it replaces, one zero tensor each filled a row at a time
(:func:`encode_row_by_row`) -> ``figures/tables/bench_cnn_encode.csv``.

Per dataset: a CNN fitted for one epoch on the dataset's first ``n_train`` texts (its vocabulary; the weights do not
enter the encoding), and LIME-like perturbations of its last ``SAMPLE[dataset]`` texts (``per_text`` each: every word kept
with a probability drawn per perturbation), encoded in batches of 64 both ways, ``repeats`` times (the fastest
counts); ``identical`` says whether the ids and masks are the same, value and dtype."""
from __future__ import annotations

import numpy as np
import pandas as pd

SAMPLE = {"amazon-polarity": 40, "arxiv": 40}


def tokenize_by_token(text: str, lower: bool = True) -> list[str]:
    """:func:`xaibench.text.word_tokenize` as it was: match, then lower-case each token."""
    from ..text import TOKEN_RE

    toks = TOKEN_RE.findall(text)
    return [t.lower() for t in toks] if lower else toks


def encode_row_by_row(clf, texts):
    """``CNNClassifier.encode`` as it was: one zero tensor for the ids and one for the mask, filled a row at a time."""
    import torch

    seqs = [[clf.vocab.stoi.get(t, 1) for t in tokenize_by_token(x)[: clf.max_len]] for x in texts]
    n = max([max(clf.filter_widths)] + [len(s) for s in seqs])
    ids = torch.zeros((len(seqs), n), dtype=torch.long)
    mask = torch.zeros((len(seqs), n), dtype=torch.long)
    for i, s in enumerate(seqs):
        if s:
            ids[i, : len(s)] = torch.as_tensor(s)
            mask[i, : len(s)] = 1
    return ids, mask


def perturbations(texts, per_text: int, rng: np.random.Generator) -> list[str]:
    """LIME-like perturbations: each text's words, each kept with a probability drawn once per perturbation."""
    out = []
    for t in texts:
        words = t.split()
        for _ in range(per_text):
            keep = rng.random(len(words)) > rng.random()
            out.append(" ".join(w for w, k in zip(words, keep) if k))
    return out


def bench_cnn_encode(sample: dict[str, int] | None = None, per_text: int = 250, n_train: int = 2000,
                     repeats: int = 3, seed: int = 0) -> pd.DataFrame:
    import torch

    from ..data.loaders import load
    from ..models.cnn import CNNClassifier
    from .common import fastest_of, machine_context

    rows = []
    for d, n in (sample or SAMPLE).items():
        df = load(d)
        train, test = df.iloc[:n_train], df.iloc[-n:]  # the human-grounded study draws its own splits
        clf = CNNClassifier(int(df["label"].nunique()), cache=False, epochs=1, seed=seed)
        clf.fit(train["text"].tolist(), train["label"].to_numpy())
        texts = perturbations(test["text"].tolist(), per_text, np.random.default_rng(seed))
        batches = [texts[i:i + 64] for i in range(0, len(texts), 64)]
        ways = {"before": lambda: [encode_row_by_row(clf, b) for b in batches],
                "now": lambda: [clf.encode(b) for b in batches]}
        seconds, got = fastest_of(ways, repeats)
        identical = all(a.dtype == b.dtype and torch.equal(a, b)
                        for x, y in zip(got["before"], got["now"]) for a, b in zip(x, y))
        for way in ways:
            rows.append({"dataset": d, "way": way, "texts_encoded": len(texts), "batch": 64,
                         "seconds": round(seconds[way], 3),
                         "us_per_text": round(1e6 * seconds[way] / len(texts), 1),
                         "speedup_vs_before": round(seconds["before"] / seconds[way], 2), "identical": identical,
                         **machine_context()})
    return pd.DataFrame(rows)
