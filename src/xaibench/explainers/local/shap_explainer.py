"""SHAP partition explainer (Owen values over a token hierarchy) for any TorchTextClassifier.

Equivalent to ``shap.Explainer(f, shap.maskers.Text(tokenizer))`` but at the level of the
model's own input ids, so it works for word-level models (CNN, LSTM) and subword models alike
and the values align one-to-one with the model's tokens:

* features = the text's explained tokens (special tokens and padding are never masked);
* masking a token replaces its id by the tokenizer's mask token ([MASK]) when the model has
  one, else by the pad token (for the CNN the zero ``<pad>`` vector);
* the hierarchy is shap's own text clustering (``shap.maskers._text.partition_tree``: word
  pieces first, then words, phrases, across punctuation and sentences last);
* ``shap.explainers.PartitionExplainer`` computes the Owen values of the target logit with
  ``max_evals`` model evaluations, sent to the model in batches of ``forward_batch_size`` rows.

Values sum to ``f(x) - f(all masked)`` (shap's efficiency property).
"""
from __future__ import annotations

import numpy as np

from ..base import Attribution
from ._common import BaseLocalExplainer, explained_positions, pad_id, row_tokens


def _mask_id(model) -> int:
    tok = getattr(model, "tokenizer", None)
    mid = getattr(tok, "mask_token_id", None) if tok is not None else None
    return int(mid) if mid is not None else pad_id(model)


class ShapPartition(BaseLocalExplainer):
    name = "shap"
    paper_name = "SHAP (partition)"
    granularity = "words"
    needs_torch = True

    def __init__(self, max_evals: int = 500, forward_batch_size: int = 256, batch_size: int = 16, seed: int = 42):
        super().__init__(batch_size=batch_size, seed=seed)
        if max_evals < 3:
            raise ValueError(f"max_evals must be >= 3, got {max_evals}")
        self.max_evals, self.forward_batch_size = int(max_evals), int(forward_batch_size)

    def _explain_one(self, text: str, tgt: int, ids_row, mask_row, keep_row):
        import shap
        import torch
        from shap.maskers._text import partition_tree

        model = self.model
        pos = np.flatnonzero(keep_row)
        toks = row_tokens(model, text, keep_row)
        M = len(pos)
        base_ids = ids_row.clone()
        mid = _mask_id(model)

        def f(X: np.ndarray) -> np.ndarray:
            X = np.asarray(X)
            ids = base_ids.unsqueeze(0).repeat(len(X), 1)
            ids[:, torch.as_tensor(pos)] = torch.as_tensor(X.astype(np.int64), device=ids.device)
            mask = mask_row.unsqueeze(0).repeat(len(X), 1)
            with torch.inference_mode():
                return model.logits_from_ids(ids, mask).float().cpu().numpy()

        def counted(X):
            model.n_forward += len(X)
            return f(X)

        x = ids_row[torch.as_tensor(pos)].detach().cpu().numpy().astype(np.float64)[None, :] if M else np.zeros((1, 0))
        masked = np.full_like(x, float(mid))
        if M == 0:
            return Attribution(text, [], np.zeros(0), tgt, meta={"method": self.name})
        if M == 1:  # no hierarchy to build: the single Owen value is the full difference
            out = counted(np.concatenate([x, masked]))
            return Attribution(text, toks, np.array([out[0, tgt] - out[1, tgt]]), tgt,
                               meta={"method": self.name, "base_value": float(out[1, tgt])})
        clustering = partition_tree(toks, set())
        masker = shap.maskers.Partition(masked, clustering=clustering)
        explainer = shap.explainers.PartitionExplainer(counted, masker)
        res = explainer(x, max_evals=self.max_evals, batch_size=self.forward_batch_size, silent=True)
        values = np.asarray(res.values)[0]  # (M, n_classes)
        base = np.asarray(res.base_values)[0]
        return Attribution(text, toks, values[:, tgt].astype(np.float64), tgt,
                           meta={"method": self.name, "base_value": float(np.ravel(base)[tgt])})

    def _explain_batch(self, texts, targets):
        model = self.model
        model.module.eval()
        out = []
        for text, tgt in zip(texts, targets):
            ids, mask = model.encode([text])
            keep = explained_positions(model, ids, mask)
            out.append(self._explain_one(text, tgt, ids[0], mask[0], keep[0]))
        return out
