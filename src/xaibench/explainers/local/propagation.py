"""LRP (Bach et al., 2015) and DeepLIFT (Shrikumar et al., 2017) for the 1D CNN, via captum.

Both propagate the target logit back to the word vectors (the output of the frozen embedding
layer) and sum the relevance over the embedding dimensions: one score per word.  The n-gram
versions of the paper score every window of the filter widths (2, 3, 4) with the sum of its
words' relevance (``Attribution.ngrams``), as the authors' code does.

* **LRP**: captum ``LRP`` on a wrapper ``(word vectors, mask) -> logits`` that holds only the
  conv body and the head.  Rules are set by hand: the epsilon rule on every ``Conv1d`` (captum has
  no default rule for it) and ``Linear``; ReLU and dropout pass relevance through; the masked
  max-pool over time is a ``torch.amax`` whose gradient routes all relevance to the winning
  window (LRP's winner-take-all rule).  With zero biases and a tiny epsilon, relevance is
  conserved: the scores sum to the target logit.
* **DeepLIFT**: captum ``DeepLift`` (Rescale rule) on the same wrapper with an all-zero baseline
  (= the ``<pad>`` vector, same mask).  Scores sum to ``f(x) - f(baseline)``.  The conv map of the
  zero baseline is constant over time, so routing the pooled difference through the max-pool's
  gradient is exact.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..base import Attribution
from ._common import BaseLocalExplainer, explained_positions, filter_widths, ngrams_from_words, row_tokens


def _wrapper(model):
    from torch import nn

    module = model.module
    if not all(hasattr(module, a) for a in ("body", "head", "forward_embeddings")):
        raise TypeError(f"{type(model).__name__} is not a CNN with body/head/forward_embeddings; LRP and "
                        "DeepLIFT are implemented for xaibench.models.cnn.CNNClassifier (use IG or "
                        "grad_x_input for other torch models)")

    class EmbToLogits(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = module.body
            self.head = module.head

        def forward(self, emb, mask):
            return self.head(self.body(emb, mask))

    return EmbToLogits()


class _PropagationExplainer(BaseLocalExplainer):
    needs_torch = True
    ngram_level = False

    def __init__(self, batch_size: int = 32, seed: int = 42):
        super().__init__(batch_size=batch_size, seed=seed)

    def fit(self, model, data=None):
        super().fit(model, data)
        self._net = _wrapper(model)
        self._net.eval()
        return self

    def _relevance(self, emb, mask, targets):  # -> (B, L, d) tensor
        raise NotImplementedError

    def _explain_batch(self, texts, targets):
        import torch

        model = self.model
        ids, mask = model.encode(texts)
        with torch.no_grad():
            emb = model.module.embedding(ids).detach()
        emb.requires_grad_(True)
        model.n_forward += 2 * len(texts)  # LRP: two passes; DeepLIFT: inputs + baselines
        with warnings.catch_warnings():  # captum announces its (temporary) hooks on every call
            warnings.filterwarnings("ignore", message=".*hooks.*", category=UserWarning)
            rel = self._relevance(emb, mask, targets).sum(-1).detach().cpu().numpy()
        keep = explained_positions(model, ids, mask)
        widths = filter_widths(model)
        out = []
        for i, (text, tgt) in enumerate(zip(texts, targets)):
            scores = rel[i][keep[i]].astype(np.float64)
            toks = row_tokens(model, text, keep[i])
            ngrams = ngrams_from_words(scores, widths) if self.ngram_level else []
            out.append(Attribution(text, toks, scores, tgt, ngrams=ngrams, meta={"method": self.name}))
        return out


class _LRP(_PropagationExplainer):
    def __init__(self, epsilon: float = 1e-6, batch_size: int = 32, seed: int = 42):
        super().__init__(batch_size=batch_size, seed=seed)
        self.epsilon = float(epsilon)

    def _relevance(self, emb, mask, targets):
        from captum.attr import LRP
        from captum.attr._utils.lrp_rules import EpsilonRule
        from torch import nn

        for layer in self._net.modules():  # captum deletes the rules after each call: set them every time
            if isinstance(layer, (nn.Conv1d, nn.Linear)):
                layer.rule = EpsilonRule(epsilon=self.epsilon)
        return LRP(self._net).attribute(emb, target=list(targets), additional_forward_args=(mask,))


class LRPWords(_LRP):
    name = "lrp_words"
    paper_name = "LRP (W)"


class LRPNgrams(_LRP):
    name = "lrp_ngrams"
    paper_name = "LRP (N)"
    granularity = "ngrams"
    ngram_level = True


class _DeepLift(_PropagationExplainer):
    def _relevance(self, emb, mask, targets):
        import torch
        from captum.attr import DeepLift

        return DeepLift(self._net).attribute(emb, baselines=torch.zeros_like(emb), target=list(targets),
                                             additional_forward_args=(mask,))


class DeepLiftWords(_DeepLift):
    name = "deeplift_words"
    paper_name = "DeepLIFT (W)"


class DeepLiftNgrams(_DeepLift):
    name = "deeplift_ngrams"
    paper_name = "DeepLIFT (N)"
    granularity = "ngrams"
    ngram_level = True
