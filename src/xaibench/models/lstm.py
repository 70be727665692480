"""LSTM with Luong dot attention over word embeddings initialised from GloVe 6B 50d.

CEBaB's LSTM (App. C.2) used the bert-base-uncased tokenizer and fastText vectors; neither is
available offline, so we use a word tokenizer and GloVe (see DEVIATIONS.md).

Architecture: embeddings (GloVe init, fine-tuned) -> 1-layer LSTM -> hidden states H; the last
hidden state h_T queries H with dot attention (Luong et al. 2015), context c = sum_t a_t H_t;
phi(x) = [c; h_T]; head = dense + tanh + projection.  ``module.attention`` returns the weights a_t
(used as an attention explanation).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..device import place
from ..text import word_tokenize
from .base import VocabTorchClassifier
from .embeddings import Vocab, embedding_layer, glove_vectors
from .training import TrainConfig, train_loop


def _build_module(vocab_size: int, emb: np.ndarray | None, hidden: int, n_classes: int, dropout: float):
    import torch
    from torch import nn

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.dropout = nn.Dropout(dropout)
            self.dense = nn.Linear(2 * hidden, hidden)
            self.out_proj = nn.Linear(hidden, n_classes)

        def forward(self, phi):
            return self.out_proj(self.dropout(torch.tanh(self.dense(self.dropout(phi)))))

    class Module(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = embedding_layer(vocab_size, emb, 50)
            self.lstm = nn.LSTM(50, hidden, batch_first=True)
            self.head = Head()

        def _states(self, input_ids, attention_mask):
            x = self.embedding(input_ids)
            lengths = attention_mask.long().sum(1).clamp(min=1)
            packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
            out, (h, _) = self.lstm(packed)
            H, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=input_ids.shape[1])
            return H, h[-1]

        def attention(self, input_ids, attention_mask):
            H, hT = self._states(input_ids, attention_mask)
            scores = torch.einsum("bth,bh->bt", H, hT)
            scores = scores.masked_fill(attention_mask == 0, float("-inf"))
            return torch.softmax(scores, dim=1), H, hT

        def features(self, input_ids, attention_mask):
            a, H, hT = self.attention(input_ids, attention_mask)
            c = torch.einsum("bt,bth->bh", a, H)
            return torch.cat([c, hT], dim=1)

        def forward(self, input_ids, attention_mask):
            return self.head(self.features(input_ids, attention_mask))

    return Module()


class LSTMAttentionClassifier(VocabTorchClassifier):
    kind = "lstm_attention"

    def __init__(self, n_classes: int, seed: int = 42, cache=True, hidden: int = 128, lr: float = 1e-3,
                 epochs: int = 10, batch_size: int = 32, patience: int = 2, dropout: float = 0.2,
                 max_length: int = 256, max_vocab: int = 30000):
        super().__init__(n_classes=n_classes, seed=seed, cache=cache)
        self.hidden, self.lr, self.epochs, self.batch_size = hidden, lr, epochs, batch_size
        self.patience, self.dropout, self.max_length, self.max_vocab = patience, dropout, max_length, max_vocab
        self.vocab: Vocab | None = None
        self.module = None

    def config(self) -> dict[str, Any]:
        return {"hidden": self.hidden, "lr": self.lr, "epochs": self.epochs, "batch_size": self.batch_size,
                "patience": self.patience, "dropout": self.dropout, "max_length": self.max_length,
                "max_vocab": self.max_vocab}

    def encode(self, texts: Sequence[str]):
        import torch

        self._require()
        seqs = [self.vocab.encode(word_tokenize(t)[: self.max_length]) or [1] for t in texts]
        n = max(len(s) for s in seqs)
        ids = torch.zeros((len(seqs), n), dtype=torch.long)
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = torch.as_tensor(s)
        ids = ids.to(self.device)
        return ids, (ids != 0).long()

    def tokens(self, text: str) -> list[str]:
        return word_tokenize(text)[: self.max_length] or [UNK_TOKEN]

    def chars_read(self, text: str) -> int:
        """The model reads the first ``max_length`` words: ``text[:chars_read(text)]``."""
        from ..text import cut_to_words

        return len(text) if len(word_tokenize(text)) <= self.max_length else len(cut_to_words(text, self.max_length))

    @property
    def embedding_layer(self):
        self._require()
        return self.module.embedding

    def attention_weights(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Attention a_t over each text's tokens (aligned with :meth:`tokens`)."""
        import torch

        self._require()
        out = []
        with torch.inference_mode():
            for t in texts:
                ids, mask = self.encode([t])
                a, _, _ = self.module.attention(ids, mask)
                out.append(a[0].cpu().numpy())
        return out

    def _make_module(self, emb: np.ndarray | None):
        from ..utils import set_seed

        set_seed(self.seed)
        self.module = place(_build_module(len(self.vocab), emb, self.hidden, self.n_classes, self.dropout))
        self.module.eval()

    def _fit(self, texts, labels, dev_texts, dev_labels):
        self.vocab = Vocab.build(texts, max_size=self.max_vocab)
        emb, found = glove_vectors(self.vocab.itos, seed=self.seed)
        self._make_module(emb)
        cfg = TrainConfig(lr=self.lr, epochs=self.epochs, batch_size=self.batch_size, patience=self.patience,
                          optimizer="adam", seed=self.seed, max_grad_norm=5.0)
        hist = train_loop(self.module, self.encode, texts, labels, cfg, dev_texts, dev_labels,
                          predict=self._predict_proba, desc="lstm")
        hist["glove_coverage"] = float(found[2:].mean()) if len(found) > 2 else 0.0
        return hist


UNK_TOKEN = "<unk>"
