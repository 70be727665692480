"""BiLSTM with additive attention over frozen GloVe vectors (Zhou et al. 2022, Sec. 6).

The architecture of Wiegreffe & Pinter (2019) as used by Zhou et al.: frozen word embeddings ->
bidirectional LSTM (states h_t = [fwd; bwd]) -> additive attention
``a = softmax_t(w^T tanh(W h_t + b))`` (``W: 2H -> H``, ``w`` without bias, padding masked) ->
context ``c = sum_t a_t h_t`` -> linear layer to the logits.  Trained with Adam (lr 1e-3, weight
decay 1e-5, batch 250, grad-norm clip 5) and stopped at the **first epoch whose validation
accuracy reaches ``stop_acc``** (0.97): the paper's attention result depends on stopping there.

Deviations (DEVIATIONS.md): GloVe 6B **50d** (the paper's 200-d review+wiki vectors are not
available offline), hidden size configurable (paper: 200 per direction).

It is a :class:`~xaibench.models.base.TorchTextClassifier`, so the project's local explainers
(gradient, IG, LIME, SHAP, ...) apply unchanged; ``phi(x)`` is the context vector ``c`` and
``module.attention(ids, mask)`` returns the weights ``a``.  Texts are whitespace-tokenised
(:func:`~xaibench.models.embeddings.word_tokenize`, idempotent on pre-tokenised text).
"""
from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from ..device import place
from .base import VocabTorchClassifier
from .embeddings import Vocab, embedding_layer, glove_vectors
from .lstm import LSTMAttentionClassifier


def _build_module(vocab_size: int, emb: np.ndarray | None, hidden: int, n_classes: int, freeze: bool):
    import torch
    from torch import nn

    class Module(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = embedding_layer(vocab_size, emb, 50, freeze=freeze)
            self.lstm = nn.LSTM(50, hidden, batch_first=True, bidirectional=True)
            self.attn1 = nn.Linear(2 * hidden, hidden)
            self.attn2 = nn.Linear(hidden, 1, bias=False)
            self.head = nn.Linear(2 * hidden, n_classes)

        def _states(self, input_ids, attention_mask):
            x = self.embedding(input_ids)
            lengths = attention_mask.long().sum(1).clamp(min=1)
            packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
            out, _ = self.lstm(packed)
            H, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=input_ids.shape[1])
            return H

        def attention(self, input_ids, attention_mask):
            H = self._states(input_ids, attention_mask)
            scores = self.attn2(torch.tanh(self.attn1(H))).squeeze(-1)
            scores = scores.masked_fill(attention_mask == 0, float("-inf"))
            return torch.softmax(scores, dim=1), H

        def features(self, input_ids, attention_mask):
            a, H = self.attention(input_ids, attention_mask)
            return torch.einsum("bt,bth->bh", a, H)

        def forward(self, input_ids, attention_mask):
            return self.head(self.features(input_ids, attention_mask))

    return Module()


class AttentionBiLSTMClassifier(VocabTorchClassifier):
    kind = "bilstm_additive_attention"

    def __init__(self, n_classes: int = 2, seed: int = 42, cache=True, hidden: int = 100, lr: float = 1e-3,
                 weight_decay: float = 1e-5, max_epochs: int = 30, batch_size: int = 250, stop_acc: float = 0.97,
                 freeze_embeddings: bool = True, max_length: int = 256, max_vocab: int = 30000):
        super().__init__(n_classes=n_classes, seed=seed, cache=cache)
        self.hidden, self.lr, self.weight_decay, self.max_epochs = hidden, lr, weight_decay, max_epochs
        self.batch_size, self.stop_acc, self.freeze_embeddings = batch_size, stop_acc, freeze_embeddings
        self.max_length, self.max_vocab = max_length, max_vocab
        self.vocab: Vocab | None = None
        self.module = None
        #: optional ``callable(model) -> dict`` evaluated after every epoch; its items are added to
        #: that epoch's ``history["epochs"]`` row (e.g. attention Attr% during training)
        self.epoch_probe = None

    def config(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("hidden", "lr", "weight_decay", "max_epochs", "batch_size",
                                              "stop_acc", "freeze_embeddings", "max_length", "max_vocab")}

    # same word-level encoding as the project's LSTM (ids padded per batch, pad id 0)
    encode = LSTMAttentionClassifier.encode
    tokens = LSTMAttentionClassifier.tokens
    embedding_layer = LSTMAttentionClassifier.embedding_layer

    def attention_weights(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Attention ``a_t`` over each text's tokens (aligned with :meth:`tokens`), batched."""
        import torch

        from ..checks import check_texts

        self._require()
        texts = check_texts(texts, nonempty=True)
        out: list[np.ndarray | None] = [None] * len(texts)
        self.module.eval()
        with torch.inference_mode():
            for idx, batch in self._batches(list(texts)):
                ids, mask = self.encode(batch)
                a, _ = self.module.attention(ids, mask)
                for j, i in enumerate(idx):
                    out[i] = a[j, : int(mask[j].sum())].detach().cpu().numpy().astype(np.float64)
        return out  # type: ignore[return-value]

    def _make_module(self, emb: np.ndarray | None):
        from ..utils import set_seed

        set_seed(self.seed)
        self.module = place(_build_module(len(self.vocab), emb, self.hidden, self.n_classes, self.freeze_embeddings))
        self.module.eval()

    def accuracy(self, texts: Sequence[str], labels: Sequence[int]) -> float:
        return float((self._predict_proba(list(texts)).argmax(1) == np.asarray(labels)).mean())

    def _fit(self, texts, labels, dev_texts, dev_labels):
        import torch

        from ..progress import progress

        from ..checks import check_texts

        if dev_texts is None:
            raise ValueError("the attention model stops on validation accuracy: pass dev_texts/dev_labels")
        check_texts(texts, nonempty=True)
        check_texts(dev_texts, "dev_texts", nonempty=True)
        self.vocab = Vocab.build(texts, max_size=self.max_vocab)
        emb, found = glove_vectors(self.vocab.itos, seed=self.seed)
        self._make_module(emb)
        params = [p for p in self.module.parameters() if p.requires_grad]
        opt = torch.optim.Adam(params, lr=self.lr, weight_decay=self.weight_decay)
        rng = np.random.default_rng(self.seed)
        y = torch.as_tensor(labels, device=self.device)
        hist: dict[str, Any] = {"epochs": [], "glove_coverage": float(found[2:].mean()) if len(found) > 2 else 0.0}
        t0 = time.time()
        for epoch in range(self.max_epochs):
            self.module.train()
            perm = rng.permutation(len(texts))
            for i in progress(range(0, len(perm), self.batch_size), desc=f"attention epoch {epoch + 1}", leave=False):
                idx = perm[i : i + self.batch_size]
                ids, mask = self.encode([texts[j] for j in idx])
                loss = torch.nn.functional.cross_entropy(self.module(ids, mask), y[idx])
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 5.0)
                opt.step()
            self.module.eval()
            self._fingerprint = None
            acc = self.accuracy(dev_texts, dev_labels)
            hist["epochs"].append({"epoch": epoch + 1, "dev_acc": acc, "seconds": time.time() - t0})
            if self.epoch_probe is not None:
                hist["epochs"][-1].update(self.epoch_probe(self))
            if acc >= self.stop_acc:
                break
        hist["stopped_at_target"] = bool(hist["epochs"][-1]["dev_acc"] >= self.stop_acc)
        hist["train_seconds"] = time.time() - t0
        return hist
