"""Embedding-per-feature logistic regression: the white-box model of Ge et al. (Sec. 4.2).

Each of the ``M`` features (Adult's 12 columns, or Movie Reviews' word positions) goes through one
embedding table; the embeddings are concatenated and fed to a logistic regression::

    z(x) = b + sum_j  w_j . e(x_j),      p(y = 1 | x) = sigmoid(z)

Adult learns its embeddings (``emb_dim`` = 8); Movie Reviews uses frozen GloVe 6B 50d vectors
(``<unk>`` = the mean vector of the vocabulary, id 0 a zero vector).  The logits returned to
explainers are ``[-z/2, z/2]`` (softmax of them is ``[1 - p, p]``), so gradient explainers see a
non-constant logit for either class.

Besides the :class:`~xaibench.models.base.TorchTextClassifier` text API (texts are the
:class:`~xaibench.data.feature_data.FeatureSpec` renderings), the model has an id-matrix API used by
the protocol: :meth:`proba_ids`, :meth:`embed_ids`, :meth:`contributions` (``w_j . e(x_j)``) and
:meth:`logits_from_embeddings`.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..data.feature_data import PAD_ID, UNK_ID, FeatureSpec
from .base import TorchTextClassifier

#: the reference values an LR feature effect is measured against (:meth:`EmbeddingLR.reference_shares`)
REFERENCES = ("reference", "zero", "train_mean")


def _build_module(n_ids: int, n_features: int, emb_dim: int, emb: np.ndarray | None, freeze: bool):
    import torch
    from torch import nn

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(n_features * emb_dim, 1)

        def forward(self, phi):
            z = self.linear(phi)
            return torch.cat([-z / 2, z / 2], dim=-1)

    class Module(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(n_ids, emb_dim, padding_idx=PAD_ID)
            if emb is not None:
                self.embedding.weight.data.copy_(torch.as_tensor(emb))
            self.embedding.weight.requires_grad_(not freeze)
            self.head = Head()

        def features(self, input_ids, attention_mask=None):
            return self.embedding(input_ids).flatten(1)

        def forward_embeddings(self, emb, attention_mask=None):
            return self.head(emb.flatten(1))

        def forward(self, input_ids, attention_mask=None):
            return self.head(self.features(input_ids))

    return Module()


class EmbeddingLR(TorchTextClassifier):
    """See module docstring.  ``spec`` is a :class:`FeatureSpec` or its ``as_dict()``."""

    kind = "embedding_lr"

    def __init__(self, n_classes: int = 2, seed: int = 42, cache=False, spec: Any = None, emb_dim: int = 8,
                 glove: bool = False, lr: float = 1e-2, weight_decay: float = 1e-4, epochs: int = 30,
                 batch_size: int = 128, patience: int = 3):
        super().__init__(n_classes=n_classes, seed=seed, cache=cache)
        if n_classes != 2:
            raise ValueError("EmbeddingLR is a binary logistic regression; n_classes must be 2")
        if spec is None:
            raise ValueError("EmbeddingLR needs the dataset's FeatureSpec (spec=dataset.spec)")
        self.spec = spec if isinstance(spec, FeatureSpec) else FeatureSpec(**spec)
        self.emb_dim = 50 if glove else int(emb_dim)
        self.glove, self.lr, self.weight_decay = bool(glove), float(lr), float(weight_decay)
        self.epochs, self.batch_size, self.patience = int(epochs), int(batch_size), int(patience)
        self.module = None
        self._make_module(self._glove_matrix() if self.glove else None)

    # ----- construction ----------------------------------------------------------------------
    def _glove_matrix(self) -> np.ndarray:
        from .embeddings import glove_vectors

        if self.spec.kind != "text":
            raise ValueError("glove=True needs a text spec (a word vocabulary)")
        emb, _ = glove_vectors(self.spec.vocab)
        emb[PAD_ID] = 0.0
        emb[UNK_ID] = emb[2:].mean(0)
        return emb

    def _make_module(self, emb: np.ndarray | None) -> None:
        import torch

        from ..device import torch_device

        torch.manual_seed(self.seed)
        self.module = _build_module(self.spec.n_ids, self.spec.n_features, self.emb_dim, emb, freeze=self.glove)
        self.module.to(torch_device())

    def config(self) -> dict[str, Any]:
        return {"spec": self.spec.as_dict(), "emb_dim": self.emb_dim, "glove": self.glove, "lr": self.lr,
                "weight_decay": self.weight_decay, "epochs": self.epochs, "batch_size": self.batch_size,
                "patience": self.patience}

    @property
    def device(self):
        return next(self.module.parameters()).device

    # ----- training --------------------------------------------------------------------------
    def fit_ids(self, X: np.ndarray, y: np.ndarray, X_dev: np.ndarray | None = None,
                y_dev: np.ndarray | None = None) -> "EmbeddingLR":
        """Adam on the cross-entropy, mini-batches, early stopping on dev accuracy."""
        import torch

        X = self.spec.check_ids(X)
        if X_dev is not None:
            X_dev = self.spec.check_ids(X_dev, "X_dev")
        torch.manual_seed(self.seed)
        rng = np.random.default_rng(self.seed)
        params = [p for p in self.module.parameters() if p.requires_grad]
        opt = torch.optim.Adam(params, lr=self.lr, weight_decay=self.weight_decay)
        Xt = torch.as_tensor(X, dtype=torch.long, device=self.device)
        yt = torch.as_tensor(y, dtype=torch.long, device=self.device)
        best, best_state, bad, hist = -1.0, None, 0, []
        for epoch in range(self.epochs):
            self.module.train()
            perm = torch.as_tensor(rng.permutation(len(X)), device=self.device)
            for i in range(0, len(X), self.batch_size):
                b = perm[i : i + self.batch_size]
                loss = torch.nn.functional.cross_entropy(self.module(Xt[b]), yt[b])
                opt.zero_grad()
                loss.backward()
                opt.step()
            if X_dev is None:
                continue
            acc = float((self.proba_ids(X_dev).argmax(1) == y_dev).mean())
            hist.append({"epoch": epoch + 1, "dev_accuracy": acc})
            if acc > best:
                best, bad = acc, 0
                best_state = {k: v.detach().clone() for k, v in self.module.state_dict().items()}
            else:
                bad += 1
                if bad >= self.patience:
                    break
        if best_state is not None:
            self.module.load_state_dict(best_state)
        self._table64 = None
        self.module.eval()
        self.history = {"epochs": hist, "best_dev_accuracy": best if X_dev is not None else None}
        self._fingerprint = None
        return self

    def _fit(self, texts, labels, dev_texts, dev_labels):
        self.fit_ids(self.spec.from_texts(texts), labels,
                     self.spec.from_texts(dev_texts) if dev_texts is not None else None, dev_labels)
        return self.history

    # ----- id API ----------------------------------------------------------------------------
    @property
    def weights(self) -> np.ndarray:
        """``(M, d)``: the LR weight slice ``w_j`` of every feature's embedding."""
        self._table()
        return self._w64

    @property
    def bias(self) -> float:
        return float(self.module.head.linear.bias.detach().cpu().numpy()[0])

    def _table(self) -> np.ndarray:
        """The embedding table as float64 numpy, cached until the weights change."""
        if getattr(self, "_table64", None) is None:
            self._table64 = self.module.embedding.weight.detach().cpu().numpy().astype(np.float64)
            self._w64 = self.module.head.linear.weight.detach().cpu().numpy().astype(np.float64).reshape(
                self.spec.n_features, self.emb_dim)
        return self._table64

    def embed_ids(self, X: np.ndarray) -> np.ndarray:
        """``(n, M, d)`` embeddings of the ids (each valid in its slot: :meth:`FeatureSpec.check_ids`)."""
        return self._table()[self.spec.check_ids(X)]

    def contributions(self, X: np.ndarray) -> np.ndarray:
        """``(n, M)``: ``w_j . e(x_j)``, each feature's additive share of the logit ``z``."""
        X = self.spec.check_ids(X)
        if getattr(self, "_share", None) is None or self._table64 is None:
            self._share = self._w64_share()     # (M, n_ids): w_j . e(id) for every feature and id
        return self._share[np.arange(X.shape[1])[None, :], X]

    def _w64_share(self) -> np.ndarray:
        T = self._table()
        return self._w64 @ T.T

    def mean_embeddings(self, train_X: np.ndarray) -> np.ndarray:
        """``(M, d)``: each slot's mean embedding over the rows ``train_X`` (non-padding slots only; zero for a
        slot never filled)."""
        train_X = np.asarray(train_X, dtype=np.int64)
        E = self.embed_ids(train_X)
        real = (train_X != PAD_ID)[:, :, None]
        cnt = real.sum(0)
        return np.where(cnt > 0, (E * real).sum(0) / np.maximum(cnt, 1), 0.0)

    def reference_shares(self, reference: str = "zero", train_X: np.ndarray | None = None) -> np.ndarray:
        """``(M,)``: the logit share ``w_j . r_j`` of each feature's reference value ``r_j``, against which an
        effect ``w_j . (e(x_j) - r_j)`` is measured (:data:`REFERENCES`):

        * ``zero``: the zero embedding (deletion), share 0;
        * ``reference``: Molnar's reading of an LR (Sec. 4.1-4.2): a categorical feature's effect is measured
          against its reference category, here the feature's first value (treatment coding); a word's embedding
          is a numerical feature value, measured against 0 (share 0 on text);
        * ``train_mean``: the slot's mean embedding over the training rows ``train_X`` (non-padding slots)."""
        if reference not in REFERENCES:
            raise ValueError(f"reference must be one of {', '.join(map(repr, REFERENCES))}; got {reference!r}")
        M = self.spec.n_features
        if reference == "zero" or (reference == "reference" and self.spec.kind == "text"):
            return np.zeros(M)
        if reference == "reference":
            return self.contributions(np.asarray(self.spec.offsets, dtype=np.int64)[None, :])[0]
        if train_X is None:
            raise ValueError("reference='train_mean' needs the training rows (train_X)")
        return (self.mean_embeddings(train_X) * self.weights).sum(1)

    def effects(self, X: np.ndarray, reference: str = "zero", train_X: np.ndarray | None = None) -> np.ndarray:
        """``(n, M)``: each feature's effect on the logit, ``w_j . e(x_j)`` minus its reference share
        (:meth:`reference_shares`); ``reference="zero"`` gives :meth:`contributions`."""
        return self.contributions(X) - self.reference_shares(reference, train_X)[None, :]

    def logit_z(self, X: np.ndarray) -> np.ndarray:
        return self.contributions(X).sum(1) + self.bias

    def proba_ids(self, X: np.ndarray) -> np.ndarray:
        """``(n, 2)`` class probabilities (exact, in float64)."""
        z = self.logit_z(X)
        p1 = 1.0 / (1.0 + np.exp(-z))
        return np.stack([1.0 - p1, p1], axis=1)

    def logits_from_embeddings(self, E):
        """Torch: logits ``(n, 2)`` from embeddings ``(n, M, d)`` (differentiable)."""
        return self.module.forward_embeddings(E)

    # ----- TorchTextClassifier API -----------------------------------------------------------
    def encode(self, texts: Sequence[str]):
        import torch

        ids = torch.as_tensor(self.spec.from_texts(list(texts)), dtype=torch.long, device=self.device)
        return ids, (ids != PAD_ID).long()

    def tokens(self, text: str) -> list[str]:
        return self.spec.tokens(self.spec.from_text(text))

    @property
    def special_token_ids(self) -> set[int]:
        return {PAD_ID}

    pad_token_id = PAD_ID

    @property
    def embedding_layer(self):
        return self.module.embedding

    def _predict_proba(self, texts: list[str]) -> np.ndarray:
        return self.proba_ids(self.spec.from_texts(texts)).astype(np.float32)

    def chars_read(self, text: str) -> int:
        """The model reads the first ``n_features`` words of a sentence (:meth:`FeatureSpec.chars_read`)."""
        return self.spec.chars_read(text)

    def _save_weights(self, folder: Path) -> None:
        import torch

        torch.save(self.module.state_dict(), folder / "weights.pt")

    def _load_weights(self, folder: Path) -> None:
        import torch

        self.module.load_state_dict(torch.load(folder / "weights.pt", map_location=self.device, weights_only=True))
        self.module.eval()
        self._table64 = None

    def _weights_digest(self) -> str:
        h = hashlib.sha1(json.dumps(self.config(), sort_keys=True, default=str).encode())
        h.update(super()._weights_digest().encode())
        return h.hexdigest()
