"""LIME (Ribeiro et al., 2016) on words, through the ``lime`` package.

``LimeTextExplainer`` calls its ``classifier_fn`` once per explained text with all
``num_samples`` perturbed strings; our ``classifier_fn`` runs them through the model in batches
of ``forward_batch_size`` (default 512), so a 1000-sample explanation costs 2 forward batches.
Perturbations bypass the on-disk output cache.

Words are the model's own words (the CNN's tokens) or :func:`word_tokenize` words for other
models, and each occurrence is a separate feature (``bow=False``); a removed word is deleted from
the string (``mask_string=""``), as with LIME's default bag-of-words removal.  The weights of the
locally fitted ridge model for the target class are the word relevances.
"""
from __future__ import annotations

import numpy as np

from ..base import Attribution
from ...utils import query_seed
from ._common import BaseLocalExplainer, proba_uncached, read_part, word_tokens


class LimeWords(BaseLocalExplainer):
    name = "lime"
    paper_name = "LIME (W)"
    granularity = "words"

    def __init__(self, num_samples: int = 1000, forward_batch_size: int = 512, kernel_width: float = 25.0,
                 batch_size: int = 16, seed: int = 42):
        super().__init__(batch_size=batch_size, seed=seed)
        if num_samples < 2:
            raise ValueError(f"num_samples must be >= 2, got {num_samples}")
        self.num_samples, self.forward_batch_size, self.kernel_width = int(num_samples), int(forward_batch_size), kernel_width

    def _classifier_fn(self, strings: list[str]) -> np.ndarray:
        return proba_uncached(self.model, list(strings), self.forward_batch_size)

    def _explain_batch(self, texts, targets):
        from lime.lime_text import LimeTextExplainer

        out = []
        for text, tgt in zip(texts, targets):
            words = word_tokens(self.model, text)
            if not words:
                out.append(Attribution(text, [], np.zeros(0), tgt, meta={"method": self.name}))
                continue
            raw_words = word_tokens(self.model, text, lower=False)
            # a model that reads only a window (max_len / max_length words) is explained on that
            # window: perturbing or scoring the unread tail would attribute words it never sees
            lime_text = read_part(self.model, text)
            exp = LimeTextExplainer(kernel_width=self.kernel_width, bow=False, mask_string="",
                                    split_expression=lambda s, _w=raw_words: list(_w),
                                    feature_selection="none",
                                    random_state=np.random.RandomState(query_seed(self.seed, text) % 2**32))
            res = exp.explain_instance(lime_text, self._classifier_fn, labels=(tgt,), num_features=len(words),
                                       num_samples=self.num_samples)
            scores = np.zeros(len(words))
            for fid, w in res.local_exp[tgt]:
                scores[fid] = w
            out.append(Attribution(text, words, scores, tgt,
                                   meta={"method": self.name, "intercept": float(res.intercept[tgt]),
                                         "score": float(res.score)}))
        return out
