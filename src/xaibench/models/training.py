"""One training loop for every torch classifier (transformer, LSTM, CNN, re-trained heads).

Mini-batches are padded per batch (texts bucketed by length within a shuffled pool), the loss is
cross-entropy, and training stops early when dev macro-F1 has not improved for ``patience``
epochs; the best epoch's weights are restored.  Deterministic under ``seed``.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from .. import levers
from ..device import module_device
from ..progress import progress
from ..utils import set_seed


@dataclass
class TrainConfig:
    lr: float = 2e-5
    epochs: int = 3
    batch_size: int = 16
    patience: int = 1
    weight_decay: float = 0.0
    warmup_ratio: float = 0.0
    max_grad_norm: float | None = 1.0
    seed: int = 42
    optimizer: str = "adamw"  # or "adam"
    extra: dict[str, Any] = field(default_factory=dict)


def length_bucketed_batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Shuffle, then sort by length inside pools of 50 batches, then shuffle the batches."""
    perm = rng.permutation(len(lengths))
    pool = batch_size * 50
    batches = []
    for i in range(0, len(perm), pool):
        chunk = perm[i : i + pool]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches.extend(chunk[j : j + batch_size] for j in range(0, len(chunk), batch_size))
    order = rng.permutation(len(batches))
    return [batches[k] for k in order]


def macro_f1(y_true: Sequence[int], y_pred: Sequence[int]) -> float:
    from sklearn.metrics import f1_score

    return float(f1_score(y_true, y_pred, average="macro"))


def train_loop(module, encode: Callable[[list[str]], tuple[Any, Any]], texts: list[str], labels: np.ndarray,
               cfg: TrainConfig, dev_texts: list[str] | None = None, dev_labels: np.ndarray | None = None,
               predict: Callable[[list[str]], np.ndarray] | None = None, desc: str = "train",
               parameters=None) -> dict[str, Any]:
    """Train ``module`` (``forward(ids, mask) -> logits``) in place; returns the history dict.

    ``predict(texts) -> proba`` evaluates dev macro-F1 after each epoch (early stopping).  Only
    ``parameters`` (default: all trainable ones) are optimised.
    """
    import torch

    set_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    params = [p for p in (parameters if parameters is not None else module.parameters()) if p.requires_grad]
    opt_cls = torch.optim.AdamW if cfg.optimizer == "adamw" else torch.optim.Adam
    # foreach: the multi-tensor step, bit for bit the weights of the per-parameter loop torch defaults to on a
    # CPU, in a few large kernels instead of several small ones per parameter (fused=True rounds differently: the
    # fused_adam lever, off by default, xaibench.levers)
    opt = opt_cls(params, lr=cfg.lr, weight_decay=cfg.weight_decay, **levers.optimizer_kwargs())
    lengths = np.array([len(t) for t in texts])
    n_steps = cfg.epochs * int(np.ceil(len(texts) / cfg.batch_size))
    warm = int(cfg.warmup_ratio * n_steps)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / max(1, warm)) * max(0.0, (n_steps - s) / max(1, n_steps - warm))
        if warm else max(0.0, (n_steps - s) / n_steps))
    loss_fn = torch.nn.CrossEntropyLoss()
    device = module_device(module)
    hist: dict[str, Any] = {"epochs": [], "best_epoch": None, "best_dev_f1": None}
    best_state, best_f1, bad = None, -1.0, 0
    t0 = time.time()
    for epoch in range(cfg.epochs):
        module.train()
        total, seen = 0.0, 0
        batches = length_bucketed_batches(lengths, cfg.batch_size, rng)
        for idx in progress(batches, desc=f"{desc} epoch {epoch + 1}/{cfg.epochs}", leave=False):
            ids, mask = encode([texts[i] for i in idx])
            opt.zero_grad()
            with levers.autocast(device, module):  # bfloat16 only with the bf16 lever
                logits = module(ids, mask)
                # labels go where the logits are (the module's device: XAIBENCH_DEVICE)
                loss = loss_fn(logits, torch.as_tensor(labels[idx], dtype=torch.long, device=logits.device))
            loss.backward()
            if cfg.max_grad_norm:
                torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
            seen += len(idx)
        rec = {"epoch": epoch + 1, "train_loss": total / max(1, seen), "seconds": time.time() - t0}
        if predict is not None and dev_texts is not None and dev_labels is not None and len(dev_texts):
            module.eval()
            f1 = macro_f1(dev_labels, predict(dev_texts).argmax(1))
            rec["dev_macro_f1"] = f1
            if f1 > best_f1:
                best_f1, bad = f1, 0
                best_state = copy.deepcopy(module.state_dict())
                hist["best_epoch"], hist["best_dev_f1"] = epoch + 1, f1
            else:
                bad += 1
        hist["epochs"].append(rec)
        if predict is not None and dev_texts is not None and bad >= cfg.patience:
            break
    if best_state is not None:
        module.load_state_dict(best_state)
    module.eval()
    hist["train_seconds"] = time.time() - t0
    return hist
