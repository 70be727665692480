"""1D CNN text classifier over frozen GloVe vectors (Lertvittayakumjorn & Toni, EMNLP 2019).

Architecture (the paper's Sec. 4 and the authors' code, ``plkumjorn/CNNAnalysis``):

    words -> frozen GloVe 6B vectors (50d here; the paper used 200d, which is not shipped offline)
          -> Conv1d filters of widths 2, 3, 4 (50 each) -> ReLU
          -> max-pool over time per filter -> phi(x), a 150-d vector
          -> dense head (hidden 150 + ReLU, then the class layer, as in the authors' code;
             ``hidden=0`` gives a single linear layer) -> softmax

Module API used by the explainers:

* ``module.features(ids, mask)`` -- the pooled 150-d vector phi(x);
* ``module.head`` -- phi(x) -> logits;
* ``module.feature_maps(ids, mask)`` -- the post-ReLU conv maps, one ``(B, n_filters, T_w)``
  tensor per width (windows that run into padding are 0), for Grad-CAM-Text and the DT explainer;
* ``module.forward_embeddings(emb, mask)`` -- logits from word vectors (LRP / DeepLIFT input);
* ``module.body`` (convs + ReLUs + dropout) and ``module.head`` are the only layers after the
  embedding, so relevance-propagation wrappers can exclude the embedding layer.

Batches are padded per batch (``<pad>`` = id 0, a zero vector), and every text to at least the
widest filter so that even a one-word text has one window.  Windows that reach into the padding
of a longer neighbour are masked out of the max-pool, so a text's output does not depend on which
batch it is in.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..device import place
from ..text import word_tokenize
from .base import VocabTorchClassifier
from .embeddings import PAD, Vocab, glove_vectors
from .training import TrainConfig, train_loop


def _build_module(vocab_size: int, emb_dim: int, widths: Sequence[int], n_filters: int, hidden: int,
                  n_classes: int, dropout: float, emb: np.ndarray | None = None):
    import torch
    from torch import nn

    class ConvBody(nn.Module):
        """Convolutions, one ReLU module per width (captum's DeepLIFT/LRP need unshared modules),
        masked max-pool over time, dropout."""

        def __init__(self):
            super().__init__()
            self.widths = [int(w) for w in widths]
            self.convs = nn.ModuleList(nn.Conv1d(emb_dim, n_filters, w) for w in self.widths)
            self.acts = nn.ModuleList(nn.ReLU() for _ in self.widths)
            self.dropout = nn.Dropout(dropout)

        def window_masks(self, mask) -> list:
            """Per width, a ``(B, 1, T_w)`` bool mask of windows lying inside the text (a text
            shorter than the width keeps its first window, which covers zero padding vectors)."""
            n = mask.long().sum(1)
            out = []
            for w in self.widths:
                t = torch.arange(mask.shape[1] - w + 1, device=mask.device)
                last = (n - w).clamp(min=0)
                out.append((t[None, :] <= last[:, None])[:, None, :])
            return out

        def maps(self, emb, mask) -> list:
            x = emb.transpose(1, 2)
            res = []
            for conv, act, valid in zip(self.convs, self.acts, self.window_masks(mask)):
                res.append(act(conv(x)) * valid)
            return res

        def pool(self, maps, mask):
            # fill invalid windows with -1 (< every ReLU output) so the max and its gradient only
            # ever pick windows inside the text
            pooled = [m.masked_fill(~v, -1.0).amax(dim=2) for m, v in zip(maps, self.window_masks(mask))]
            return torch.cat(pooled, dim=1)

        def forward(self, emb, mask):
            return self.dropout(self.pool(self.maps(emb, mask), mask))

    if hidden:
        head = nn.Sequential(nn.Linear(n_filters * len(widths), hidden), nn.ReLU(), nn.Linear(hidden, n_classes))
    else:
        head = nn.Linear(n_filters * len(widths), n_classes)

    class Module(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=0)
            if emb is not None:
                self.embedding.weight.data.copy_(torch.as_tensor(emb))
            self.embedding.weight.requires_grad_(False)  # frozen GloVe, as in the paper
            self.body = ConvBody()
            self.head = head

        def feature_maps(self, input_ids, attention_mask) -> list:
            return self.body.maps(self.embedding(input_ids), attention_mask)

        def features(self, input_ids, attention_mask):
            emb = self.embedding(input_ids)
            return self.body.pool(self.body.maps(emb, attention_mask), attention_mask)

        def forward_embeddings(self, emb, attention_mask):
            return self.head(self.body(emb, attention_mask))

        def forward(self, input_ids, attention_mask):
            return self.forward_embeddings(self.embedding(input_ids), attention_mask)

    return Module()


class CNNClassifier(VocabTorchClassifier):
    """The paper's 1D CNN (see module docstring).  Constructor keywords are :meth:`config`."""

    kind = "cnn"
    emb_dim = 50

    def __init__(self, n_classes: int, seed: int = 42, cache=True, filter_widths: Sequence[int] = (2, 3, 4),
                 n_filters: int = 50, hidden: int = 150, dropout: float = 0.0, lr: float = 1e-3,
                 epochs: int = 20, batch_size: int = 64, patience: int = 3, max_len: int = 150,
                 min_freq: int = 1, max_vocab: int = 50000, restrict_to_glove: bool = True):
        super().__init__(n_classes=n_classes, seed=seed, cache=cache)
        widths = [int(w) for w in filter_widths]
        if not widths or min(widths) < 1:
            raise ValueError(f"filter_widths must be positive integers, e.g. (2, 3, 4); got {filter_widths!r}")
        if max_len < max(widths):
            raise ValueError(f"max_len={max_len} is shorter than the widest filter ({max(widths)}); raise max_len")
        self.filter_widths, self.n_filters, self.hidden, self.dropout = widths, int(n_filters), int(hidden), dropout
        self.lr, self.epochs, self.batch_size, self.patience = lr, int(epochs), int(batch_size), int(patience)
        self.max_len, self.min_freq, self.max_vocab = int(max_len), int(min_freq), max_vocab
        self.restrict_to_glove = bool(restrict_to_glove)
        self.vocab: Vocab | None = None
        self.module = None

    def config(self) -> dict[str, Any]:
        return {"filter_widths": list(self.filter_widths), "n_filters": self.n_filters, "hidden": self.hidden,
                "dropout": self.dropout, "lr": self.lr, "epochs": self.epochs, "batch_size": self.batch_size,
                "patience": self.patience, "max_len": self.max_len, "min_freq": self.min_freq,
                "max_vocab": self.max_vocab, "restrict_to_glove": self.restrict_to_glove}

    # --- inputs -------------------------------------------------------------------------------

    def words(self, text: str) -> list[str]:
        """The words the model reads (lower-cased, truncated to ``max_len``), without padding."""
        return word_tokenize(text)[: self.max_len]

    def chars_read(self, text: str) -> int:
        """The model reads the first ``max_len`` words (:meth:`words`): ``text[:chars_read(text)]``."""
        from ..text import cut_to_words

        return len(text) if len(word_tokenize(text)) <= self.max_len else len(cut_to_words(text, self.max_len))

    def encode(self, texts: Sequence[str]):
        """``(ids, mask)``: padded to the longest text of the batch and to at least the widest filter."""
        import torch

        self._require()
        seqs = [self.vocab.encode(self.words(t)) for t in texts]
        lengths = np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs))
        n = max([max(self.filter_widths)] + lengths.tolist())
        ids = np.zeros((len(seqs), n), dtype=np.int64)  # filled as arrays, one tensor each at the end
        for i, s in enumerate(seqs):
            if s:
                ids[i, : len(s)] = s
        mask = (np.arange(n)[None, :] < lengths[:, None]).astype(np.int64)
        return torch.from_numpy(ids).to(self.device), torch.from_numpy(mask).to(self.device)

    def tokens(self, text: str) -> list[str]:
        """One display token per position of ``encode([text])`` (``<pad>`` for the padding up to the
        widest filter; explainers drop positions whose mask is 0)."""
        w = self.words(text)
        return w + [PAD] * max(0, max(self.filter_widths) - len(w))

    @property
    def embedding_layer(self):
        self._require()
        return self.module.embedding

    @property
    def pad_token_id(self) -> int:
        return 0

    # --- training -----------------------------------------------------------------------------
    def _make_module(self, emb: np.ndarray | None) -> None:
        from ..utils import set_seed

        set_seed(self.seed)
        self.module = _build_module(len(self.vocab), self.emb_dim, self.filter_widths, self.n_filters,
                                    self.hidden, self.n_classes, self.dropout, emb)
        self.module = place(self.module).eval()

    def _fit(self, texts, labels, dev_texts, dev_labels):
        self.vocab = Vocab.build(texts, min_freq=self.min_freq, max_size=self.max_vocab,
                                 restrict_to_glove=self.restrict_to_glove)
        emb, found = glove_vectors(self.vocab.itos, seed=self.seed)
        self._make_module(emb)
        cfg = TrainConfig(lr=self.lr, epochs=self.epochs, batch_size=self.batch_size, patience=self.patience,
                          optimizer="adam", seed=self.seed, max_grad_norm=None)
        hist = train_loop(self.module, self.encode, texts, labels, cfg, dev_texts, dev_labels,
                          predict=self._predict_proba, desc="cnn")
        hist["glove_coverage"] = float(found[2:].mean()) if len(found) > 2 else 0.0
        hist["vocab_size"] = len(self.vocab)
        return hist

    def _run(self, texts, fn):
        self._require()
        return super()._run(texts, fn)
