"""A toy sentiment world for the counterfactual editors: six training sentences, two texts to
edit, word vectors in which antonyms sit next to synonyms (like raw GloVe), a hand-made WordNet,
and the tf-idf logistic regression trained on the six sentences."""
from __future__ import annotations

import numpy as np

from xaibench.explainers.counterfactual.counterfit import WordVectors
from xaibench.explainers.counterfactual.wordnet import WordNet
from xaibench.models.logreg import LogRegClassifier

POS = ["a great and wonderful film , i loved it .", "great acting and a wonderful story .",
       "i loved the wonderful music , a great movie ."]
NEG = ["a terrible and awful film , i hated it .", "terrible acting and an awful story .",
       "i hated the awful music , a terrible movie ."]
TEXTS = ["The film was great and the acting was wonderful.", "I hated this awful, terrible movie."]


def sentiment_logreg() -> LogRegClassifier:
    """Uncached tf-idf (1-2 gram) logistic regression, C = 10, trained on POS (1) and NEG (0)."""
    return LogRegClassifier(2, cache=False, ngram_max=2, C=10.0).fit(POS + NEG, [1] * 3 + [0] * 3)


def toy_vectors() -> WordVectors:
    words = ["great", "wonderful", "terrible", "awful", "good", "fine", "film", "movie", "hated", "loved",
             "disliked", "adored", "acting", "performance"]
    rng = np.random.default_rng(0)
    base = rng.normal(size=(len(words), 8))
    groups = [("great", "wonderful", "terrible"), ("good", "fine", "awful"), ("film", "movie"),
              ("hated", "loved", "disliked", "adored"), ("acting", "performance")]
    for g in groups:  # raw-GloVe-like: antonyms sit next to synonyms
        c = rng.normal(size=8) * 3
        for w in g:
            base[words.index(w)] += c
    return WordVectors(words, base / np.linalg.norm(base, axis=1, keepdims=True))


def toy_wordnet() -> WordNet:
    wn = WordNet()
    for w in ("great", "wonderful", "terrible", "awful", "good", "fine"):
        wn.pos[w] = {"ADJ"}
    for w in ("film", "movie", "acting", "performance"):
        wn.pos[w] = {"NOUN"}
    for w in ("hated", "loved", "disliked", "adored"):
        wn.pos[w] = {"VERB"}
    return wn


def count_tokenizer_pipes(monkeypatch) -> list[int]:
    """``xaibench.nlp.nlp()`` replaced by a pipeline whose tokenizer is the real one and records how many texts each
    ``tokenizer.pipe`` call reads (the returned list)."""
    from xaibench import nlp as nlp_mod

    real, piped = nlp_mod.nlp(), []

    class Tokenizer:
        def pipe(self, xs, batch_size=256):
            xs = list(xs)
            piped.append(len(xs))
            return real.tokenizer.pipe(xs, batch_size=batch_size)

    monkeypatch.setattr(nlp_mod, "nlp", lambda: type("Pipeline", (), {"tokenizer": Tokenizer()})())
    return piped
