"""Rationale models trained to a target selection rate (Zhou et al. 2022, Sec. 7).

A *selector* scores every token, a binary/relaxed mask ``z`` is drawn, and a *classifier* sees
only the selected token embeddings (``emb * z``).  Two training schemes:

* ``rl`` (Lei et al. 2016): ``z_t ~ Bernoulli(sigmoid(g_t))``; the classifier gets the
  cross-entropy, the selector REINFORCE with cost ``CE_i + lambda * |rate_i - target|`` per review
  (the authors' regulariser; no continuity term).  Evaluation: ``z_t = [p_t >= 0.5]``.
* ``cr`` (Bastings et al. 2019): ``z_t ~ HardKuma(a_t, b_t)`` (Kumaraswamy stretched to
  ``(-0.1, 1.1)`` and rectified into ``[0, 1]``), reparameterised; loss
  ``CE + lambda * |E[L0 rate]_batch - target|`` with the expected L0 rate averaged over the
  mini-batch (the authors' Sec. 7 regulariser).  Evaluation: the most probable of
  {0, continuous, 1}; a token is selected when ``z_t > 0``.

Simplification (DEVIATIONS.md): independent per-token gates from a BiLSTM selector instead of
the RCNN/dependent-z selectors of the original code; LSTM encoders instead of RCNN.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..device import module_device, place
from .embeddings import Vocab, glove_vectors, word_tokenize

KUMA_L, KUMA_R = -0.1, 1.1
MODES = ("rl", "cr")


def _kuma_cdf(x, a, b):
    import torch

    x = x.clamp(1e-6, 1 - 1e-6) if isinstance(x, torch.Tensor) else min(max(x, 1e-6), 1 - 1e-6)
    return 1.0 - (1.0 - x ** a) ** b


def hardkuma_probs(a, b):
    """``(P(z = 0), P(z = 1))`` of the rectified stretched Kumaraswamy."""
    x0 = (0.0 - KUMA_L) / (KUMA_R - KUMA_L)
    x1 = (1.0 - KUMA_L) / (KUMA_R - KUMA_L)
    p0 = _kuma_cdf(x0, a, b)
    p1 = 1.0 - _kuma_cdf(x1, a, b)
    return p0, p1


def hardkuma_sample(a, b):
    import torch

    u = torch.rand_like(a).clamp(1e-6, 1 - 1e-6)
    k = (1.0 - (1.0 - u) ** (1.0 / b)) ** (1.0 / a)
    return (KUMA_L + (KUMA_R - KUMA_L) * k).clamp(0.0, 1.0)


def _build(vocab_size: int, emb: np.ndarray, hidden: int, n_classes: int, mode: str):
    import torch
    from torch import nn

    def encoder():
        return nn.LSTM(50, hidden, batch_first=True, bidirectional=True)

    def run(lstm, x, lengths, T):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, (h, _) = lstm(packed)
        H, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=T)
        return H, torch.cat([h[0], h[1]], dim=1)

    class Module(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(vocab_size, 50, padding_idx=0)
            self.embedding.weight.data.copy_(torch.as_tensor(emb))
            self.embedding.weight.requires_grad = False
            self.sel_lstm = encoder()
            self.sel_out = nn.Linear(2 * hidden, 1 if mode == "rl" else 2)
            self.cls_lstm = encoder()
            self.cls_out = nn.Linear(2 * hidden, n_classes)
            self.mode = mode

        def gates(self, ids, mask):
            lengths = mask.sum(1).clamp(min=1)
            H, _ = run(self.sel_lstm, self.embedding(ids), lengths, ids.shape[1])
            return self.sel_out(H)  # (B, T, 1|2)

        def classify(self, ids, mask, z):
            lengths = mask.sum(1).clamp(min=1)
            x = self.embedding(ids) * z.unsqueeze(-1)
            _, h = run(self.cls_lstm, x, lengths, ids.shape[1])
            return self.cls_out(h)

    return Module()


@dataclass
class RationaleOutput:
    logits: Any
    z: Any           # (B, T) sampled / deterministic gates
    aux: dict


class RationaleModel:
    """``fit(texts, labels, dev_texts, dev_labels)``, ``predict``, ``select`` (boolean masks aligned
    with :func:`word_tokenize` tokens)."""

    def __init__(self, mode: str = "rl", selection: float = 0.1, reg_strength: float = 1.0, hidden: int = 50,
                 lr: float = 1e-3, batch_size: int = 128, max_epochs: int = 20, stop_acc: float = 0.97,
                 rate_tol: float = 0.01, seed: int = 42, max_length: int = 256, baseline: bool = True):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if not 0 < selection < 1:
            raise ValueError(f"target selection rate must lie in (0, 1), got {selection}")
        self.mode, self.selection, self.reg_strength, self.hidden = mode, float(selection), reg_strength, hidden
        self.lr, self.batch_size, self.max_epochs, self.stop_acc = lr, batch_size, max_epochs, stop_acc
        self.rate_tol, self.seed, self.max_length, self.baseline = rate_tol, seed, max_length, baseline
        self.vocab: Vocab | None = None
        self.module = None

    # ----- data ---------------------------------------------------------------------------------
    def encode(self, texts: Sequence[str]):
        import torch

        seqs = [self.vocab.encode(word_tokenize(t)[: self.max_length]) or [1] for t in texts]
        n = max(len(s) for s in seqs)
        ids = torch.zeros((len(seqs), n), dtype=torch.long)
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = torch.as_tensor(s)
        if self.module is not None:
            ids = ids.to(module_device(self.module))
        return ids, (ids != 0)

    # ----- forward ------------------------------------------------------------------------------
    def _forward(self, ids, mask, train: bool) -> RationaleOutput:
        import torch
        import torch.nn.functional as F

        g = self.module.gates(ids, mask)
        m = mask.float()
        if self.mode == "rl":
            p = torch.sigmoid(g.squeeze(-1))
            z = torch.bernoulli(p).detach() if train else (p >= 0.5).float()
            z = z * m
            logits = self.module.classify(ids, mask, z)
            return RationaleOutput(logits, z, {"p": p})
        a = F.softplus(g[..., 0]).clamp(1e-2, 100.0)
        b = F.softplus(g[..., 1]).clamp(1e-2, 100.0)
        p0, p1 = hardkuma_probs(a, b)
        if train:
            z = hardkuma_sample(a, b)
        else:
            pc = 1.0 - p0 - p1
            mean_k = (KUMA_L + (KUMA_R - KUMA_L) * (
                b * torch.exp(torch.lgamma(1 + 1 / a) + torch.lgamma(b) - torch.lgamma(1 + 1 / a + b)))).clamp(0, 1)
            z = torch.where((p0 >= p1) & (p0 >= pc), torch.zeros_like(a),
                            torch.where(p1 >= pc, torch.ones_like(a), mean_k))
        z = z * m
        logits = self.module.classify(ids, mask, z)
        return RationaleOutput(logits, z, {"p0": p0})

    def _loss(self, out: RationaleOutput, y, mask):
        import torch
        import torch.nn.functional as F

        m = mask.float()
        lengths = m.sum(1).clamp(min=1)
        ce = F.cross_entropy(out.logits, y, reduction="none")
        if self.mode == "rl":
            p = out.aux["p"].clamp(1e-6, 1 - 1e-6)
            logpz = (out.z * torch.log(p) + (1 - out.z) * torch.log(1 - p)) * m
            rate = out.z.sum(1) / lengths
            cost = ce.detach() + self.reg_strength * (rate - self.selection).abs()
            adv = cost - cost.mean() if self.baseline else cost
            return ce.mean() + (adv * logpz.sum(1)).mean(), float(rate.mean())
        l0 = (((1.0 - out.aux["p0"]) * m).sum(1) / lengths).mean()
        return ce.mean() + self.reg_strength * (l0 - self.selection).abs(), float(l0.detach())

    # ----- training ------------------------------------------------------------------------------
    def fit(self, texts: Sequence[str], labels: Sequence[int], dev_texts: Sequence[str],
            dev_labels: Sequence[int]) -> "RationaleModel":
        import torch

        from ..checks import check_labels, check_texts
        from ..progress import progress
        from ..utils import set_seed

        texts = check_texts(texts, nonempty=True)
        labels = check_labels(labels, n=len(texts))
        dev_texts = check_texts(dev_texts, "dev_texts", nonempty=True)
        dev_labels = check_labels(dev_labels, n_classes=int(labels.max()) + 1, n=len(dev_texts), what="dev_labels",
                                  texts_name="dev_texts")
        set_seed(self.seed)
        self.vocab = Vocab.build(texts)
        emb, _ = glove_vectors(self.vocab.itos, seed=self.seed)
        self.module = place(_build(len(self.vocab), emb, self.hidden, int(labels.max()) + 1, self.mode))
        params = [p for p in self.module.parameters() if p.requires_grad]
        opt = torch.optim.Adam(params, lr=self.lr, weight_decay=2e-6)
        rng = np.random.default_rng(self.seed)
        y = torch.as_tensor(labels, device=module_device(self.module))
        self.history: dict[str, Any] = {"epochs": []}
        t0 = time.time()
        for epoch in range(self.max_epochs):
            self.module.train()
            perm = rng.permutation(len(texts))
            for i in progress(range(0, len(perm), self.batch_size), desc=f"{self.mode} epoch {epoch + 1}",
                              leave=False):
                idx = perm[i : i + self.batch_size]
                ids, mask = self.encode([texts[j] for j in idx])
                loss, _ = self._loss(self._forward(ids, mask, train=True), y[idx], mask)
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 5.0)
                opt.step()
            ev = self.evaluate(dev_texts, dev_labels)
            self.history["epochs"].append({"epoch": epoch + 1, **ev, "seconds": time.time() - t0})
            if ev["acc"] >= self.stop_acc and abs(ev["rate"] - self.selection) <= self.rate_tol:
                break
        last = self.history["epochs"][-1]
        self.history["reached_target"] = bool(last["acc"] >= self.stop_acc
                                              and abs(last["rate"] - self.selection) <= self.rate_tol)
        self.history["train_seconds"] = time.time() - t0
        return self

    def _eval_batches(self, texts: Sequence[str]):
        import torch

        from ..checks import check_texts

        if self.module is None:
            raise RuntimeError("the rationale model is not trained yet: call fit(texts, labels, dev_texts, dev_labels)")
        texts = check_texts(texts, nonempty=True)
        if not texts:
            raise ValueError("texts is empty; pass at least one text")
        self.module.eval()
        with torch.inference_mode():
            for i in range(0, len(texts), 256):
                ids, mask = self.encode(texts[i : i + 256])
                yield mask, self._forward(ids, mask, train=False)

    def predict_select(self, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        """Predicted classes and the selected-token masks (``z > 0``) per text."""
        preds, sel = [], []
        for mask, out in self._eval_batches(texts):
            preds.append(out.logits.argmax(1).detach().cpu().numpy())
            z = out.z.detach().cpu()
            for j in range(mask.shape[0]):
                n = int(mask[j].sum())
                sel.append((z[j, :n] > 0).numpy())
        return np.concatenate(preds), sel

    def evaluate(self, texts: Sequence[str], labels: Sequence[int]) -> dict[str, float]:
        from ..checks import check_labels, check_texts

        texts = check_texts(texts)
        preds, sel = self.predict_select(texts)
        labels = check_labels(labels, n_classes=self.module.cls_out.out_features, n=len(texts))
        n_sel = sum(int(s.sum()) for s in sel)
        n_tok = sum(len(s) for s in sel)
        return {"acc": float((preds == np.asarray(labels)).mean()), "rate": n_sel / max(n_tok, 1)}
