"""Random baselines of the paper: Random (W) scores words, Random (N) scores the n-gram windows
of the conv filter widths, both with i.i.d. N(0, 1) relevance seeded per (seed, model fingerprint, text), so two models get
independent draws (the human-grounded task 1 compares two models' random explanations)."""
from __future__ import annotations

import numpy as np

from ..base import Attribution
from ...utils import query_seed
from ._common import BaseLocalExplainer, batch_tokens, filter_widths, model_key, ngram_windows


class RandomWords(BaseLocalExplainer):
    name = "random_words"
    paper_name = "Random (W)"
    granularity = "words"

    def _explain_batch(self, texts, targets):
        out, key = [], model_key(self.model)
        for text, tgt, toks in zip(texts, targets, batch_tokens(self.model, texts)):
            rng = np.random.default_rng(query_seed(self.seed, key, text))
            out.append(Attribution(text, toks, rng.standard_normal(len(toks)), tgt, meta={"method": self.name}))
        return out


class RandomNgrams(BaseLocalExplainer):
    name = "random_ngrams"
    paper_name = "Random (N)"
    granularity = "ngrams"

    def _explain_batch(self, texts, targets):
        out, key = [], model_key(self.model)
        widths = filter_widths(self.model)
        for text, tgt, toks in zip(texts, targets, batch_tokens(self.model, texts)):
            rng = np.random.default_rng(query_seed(self.seed, key, text))
            wins = ngram_windows(len(toks), widths)
            vals = rng.standard_normal(len(wins))
            scores, counts = np.zeros(len(toks)), np.zeros(len(toks))
            for (s, e), v in zip(wins, vals):
                scores[s:e] += v
                counts[s:e] += 1
            scores = np.divide(scores, counts, out=np.zeros_like(scores), where=counts > 0)
            ngrams = [(s, e, float(v)) for (s, e), v in zip(wins, vals)]
            out.append(Attribution(text, toks, scores, tgt, ngrams=ngrams, meta={"method": self.name}))
        return out
