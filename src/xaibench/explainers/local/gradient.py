"""Gradient explainers for any :class:`~xaibench.models.base.TorchTextClassifier` (CNN, LSTM,
transformers), on the output of ``model.embedding_layer``.

* **Integrated Gradients** (Sundararajan et al., 2017): captum ``LayerIntegratedGradients``,
  50 Gauss-Legendre steps, baseline = the same sequence with every explained token replaced by
  the pad token (special tokens and padding kept), so ``sum(scores) ~= f(x) - f(baseline)``.
* **Gradient x Input**: captum ``LayerGradientXActivation`` (gradient of the target logit w.r.t.
  the token embeddings times the embeddings).

Scores are summed over the embedding dimensions; positions of special tokens ([CLS], [SEP],
padding) are dropped, so ``Attribution.tokens`` are the model's explained input tokens.
"""
from __future__ import annotations

import numpy as np

from ..base import Attribution
from ._common import BaseLocalExplainer, explained_positions, pad_id, row_tokens


class _LayerGradientExplainer(BaseLocalExplainer):
    needs_torch = True

    def _forward(self, ids, mask):
        return self.model.logits_from_ids(ids, mask)

    def _attribute(self, ids, mask, keep, targets):  # -> (B, L, d) tensor
        raise NotImplementedError

    def _explain_batch(self, texts, targets):
        import torch

        model = self.model
        model.module.eval()
        ids, mask = model.encode(texts)
        keep = explained_positions(model, ids, mask)
        with torch.enable_grad():
            attr = self._attribute(ids, mask, keep, targets)
        rel = attr.sum(-1).detach().cpu().numpy()
        out = []
        for i, (text, tgt) in enumerate(zip(texts, targets)):
            out.append(Attribution(text, row_tokens(model, text, keep[i]), rel[i][keep[i]].astype(np.float64), tgt,
                                   meta={"method": self.name, **self._meta(i)}))
        return out

    def _meta(self, i: int) -> dict:
        return {}


class IntegratedGradients(_LayerGradientExplainer):
    name = "integrated_gradients"
    paper_name = "Integrated Gradients"

    def __init__(self, n_steps: int = 50, internal_batch_size: int | None = None, batch_size: int = 8,
                 seed: int = 42):
        super().__init__(batch_size=batch_size, seed=seed)
        if n_steps < 1:
            raise ValueError(f"n_steps must be >= 1, got {n_steps}")
        self.n_steps, self.internal_batch_size = int(n_steps), internal_batch_size

    def baseline_ids(self, ids, keep):
        import torch

        base = ids.clone()
        base[torch.as_tensor(keep)] = pad_id(self.model)
        return base

    def _attribute(self, ids, mask, keep, targets):
        from captum.attr import LayerIntegratedGradients

        ig = LayerIntegratedGradients(self._forward, self.model.embedding_layer)
        ibs = self.internal_batch_size or self.n_steps * ids.shape[0]
        # steps + (inputs, baselines) for the layer values + (inputs, baselines) for the delta
        self.model.n_forward += (self.n_steps + 4) * ids.shape[0]
        attr, delta = ig.attribute(ids, baselines=self.baseline_ids(ids, keep), target=list(targets),
                                   additional_forward_args=(mask,), n_steps=self.n_steps,
                                   internal_batch_size=ibs, return_convergence_delta=True)
        self._delta = delta.detach().cpu().numpy()
        return attr

    def _meta(self, i):
        return {"convergence_delta": float(self._delta[i]), "n_steps": self.n_steps}


class GradientXInput(_LayerGradientExplainer):
    name = "grad_x_input"
    paper_name = "Gradient x Input"

    def __init__(self, batch_size: int = 32, seed: int = 42):
        super().__init__(batch_size=batch_size, seed=seed)

    def _attribute(self, ids, mask, keep, targets):
        from captum.attr import LayerGradientXActivation

        self.model.n_forward += ids.shape[0]
        return LayerGradientXActivation(self._forward, self.model.embedding_layer).attribute(
            ids, target=list(targets), additional_forward_args=(mask,))
