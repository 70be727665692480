"""A label-conditioned MLM head on the bundled MiniLM: the alternative stage-1 infiller of the
MiCE-style editor, built to *measure* the trade-off against the bigram infiller (notebook 22 §8).

The MiniLM-L6 checkpoint (sentence-transformers) ships no MLM head, so one is trained here on the
frozen encoder: ``logits = LN(GELU(W (h + e_label))) E^T + b`` with ``E`` MiniLM's (frozen) word
embeddings, ``h`` the encoder's output at a ``[MASK]`` position and ``e_label`` a learned embedding
of the predictor's label (MiCE conditions its T5 infiller on the label the same way: by input).
Training data: ``max_texts`` train texts labelled by the predictor, 128 word pieces, 15% of the
pieces masked.  Filling: one forward per masked text (the 15 infills of a level as one batch),
each ``[MASK]`` sampled independently from the head's top-k, word pieces merged into words.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


class MLMInfiller:
    MASK = "\u2063MASK\u2063"  # placeholder word in MiCE's templates (never in real text)

    def __init__(self, n_labels: int, checkpoint: str = "minilm", top_k: int = 40, max_length: int = 512,
                 seed: int = 42):
        self.n_labels, self.checkpoint, self.top_k, self.max_length, self.seed = n_labels, checkpoint, top_k, max_length, seed

    def _load(self):
        from transformers import AutoModel, AutoTokenizer

        from ...device import place
        from ...models.transformer import resolve_checkpoint

        path = resolve_checkpoint(self.checkpoint)
        self.tok = AutoTokenizer.from_pretrained(path)
        self.enc = place(AutoModel.from_pretrained(path)).eval()
        for p in self.enc.parameters():
            p.requires_grad_(False)

    def fit(self, texts: Sequence[str], labels: Sequence[int], epochs: int = 8, batch: int = 16,
            mask_rate: float = 0.15, train_length: int = 128) -> "MLMInfiller":
        import torch
        from torch import nn

        from ...device import place, torch_device
        from ...utils import set_seed

        set_seed(self.seed)
        self._load()
        dev = torch_device()
        d = self.enc.config.hidden_size
        self.head = place(nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.LayerNorm(d)))
        self.label_emb = place(nn.Embedding(self.n_labels, d))
        nn.init.zeros_(self.label_emb.weight)
        self.bias = nn.Parameter(torch.zeros(self.enc.config.vocab_size, device=dev))
        gen = torch.Generator().manual_seed(self.seed)
        H, Y, T = [], [], []
        special = torch.tensor(self.tok.all_special_ids)
        with torch.inference_mode():
            for b in range(0, len(texts), batch):
                enc = self.tok(list(texts[b:b + batch]), truncation=True, max_length=train_length, padding=True,
                               return_tensors="pt")
                ids = enc["input_ids"]
                cand = enc["attention_mask"].bool() & ~torch.isin(ids, special)
                m = cand & (torch.rand(ids.shape, generator=gen) < mask_rate)
                x = ids.clone()
                x[m] = self.tok.mask_token_id
                h = self.enc(input_ids=x.to(dev), attention_mask=enc["attention_mask"].to(dev)).last_hidden_state
                H.append(h[m.to(dev)].clone())
                T.append(ids[m])
                Y.append(torch.tensor(labels[b:b + batch]).repeat_interleave(m.sum(1)))
        H, Y, T = torch.cat(H), torch.cat(Y).to(dev), torch.cat(T).to(dev)
        params = list(self.head.parameters()) + list(self.label_emb.parameters()) + [self.bias]
        opt = torch.optim.Adam(params, lr=2e-3)
        E = self.enc.embeddings.word_embeddings.weight
        for _ in range(epochs):
            perm = torch.randperm(len(H), generator=gen)
            for s in range(0, len(H), 512):
                i = perm[s:s + 512]
                logits = self.head(H[i] + self.label_emb(Y[i])) @ E.T + self.bias
                loss = nn.functional.cross_entropy(logits, T[i])
                opt.zero_grad()
                loss.backward()
                opt.step()
        self.train_loss = float(loss.detach())
        self.n_train_positions = len(H)
        return self

    def fill_batch(self, templates: Sequence[list[str]], label: int, rng: np.random.Generator
                   ) -> list[list[str | None]]:
        """Each template is a word list with :attr:`MASK` placeholders (one word piece each);
        returns, per template, one sampled word piece per placeholder (None for placeholders past
        the encoder's ``max_length``, which the caller leaves as they were)."""
        import torch

        texts = [" ".join(self.tok.mask_token if w == self.MASK else w for w in t) for t in templates]
        enc = self.tok(texts, truncation=True, max_length=self.max_length, padding=True, return_tensors="pt")
        dev = self.bias.device
        enc = {k: v.to(dev) for k, v in enc.items()}
        with torch.inference_mode():
            h = self.enc(**enc).last_hidden_state
            m = enc["input_ids"] == self.tok.mask_token_id
            z = self.head(h[m] + self.label_emb(torch.full((int(m.sum()),), int(label), device=dev)))
            logits = z @ self.enc.embeddings.word_embeddings.weight.T + self.bias
            logits[:, self.tok.all_special_ids] = -np.inf
            top, idx = logits.topk(self.top_k, dim=-1)
            p = torch.softmax(top, -1).double().cpu().numpy()
            idx = idx.cpu()
        picks = [self.tok.convert_ids_to_tokens(int(idx[r, rng.choice(self.top_k, p=p[r] / p[r].sum())]))
                 for r in range(len(p))]
        out, k = [], 0
        for t, row in zip(templates, m):
            n_here, n_masks = int(row.sum()), sum(w == self.MASK for w in t)
            out.append(picks[k:k + n_here] + [None] * (n_masks - n_here))
            k += n_here
        return out

    def join_pieces(self, pieces: Sequence[str]) -> list[str]:
        """Word pieces of one span -> words (``##`` continuations glued)."""
        return self.tok.convert_tokens_to_string(list(pieces)).split()


def train_mlm_infiller(dataset: str, predictor, max_texts: int = 1000, seed: int = 42) -> MLMInfiller:
    """The MLM head for ``dataset``: ``max_texts`` seeded train texts labelled by ``predictor``."""
    from ...data.cf_data import cf_label_names, load_cf_dataset

    df = load_cf_dataset(dataset)
    train = df[df["split"] == "train"]
    train = train.sample(n=min(max_texts, len(train)), random_state=seed)
    texts = train["text"].tolist()
    labels = [int(x) for x in predictor.predict(texts)]
    return MLMInfiller(len(cf_label_names(dataset)), seed=seed).fit(texts, labels)
