"""The shared training loop steps Adam / AdamW with torch's multi-tensor (``foreach``) implementation: the same
weights, bit for bit, as the per-parameter loop torch uses by default on a CPU, in fewer, larger kernels."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.helpers.optim import record_adam
from xaibench.models.training import TrainConfig, train_loop

TEXTS = [f"w{i % 7} w{(3 * i) % 7} w{(5 * i + 1) % 7}" for i in range(24)]
LABELS = np.array([i % 3 for i in range(24)])


class Tiny(torch.nn.Module):
    """Embedding, layer norm and two linear layers: parameters of several shapes, with and without decay."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(8, 6)
        self.hidden = torch.nn.Linear(6, 10)
        self.norm = torch.nn.LayerNorm(10)
        self.out = torch.nn.Linear(10, 3)

    def forward(self, ids, mask):
        h = (self.emb(ids) * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
        return self.out(self.norm(torch.tanh(self.hidden(h))))


def _encode(texts):
    ids = torch.tensor([[int(w[1:]) + 1 for w in t.split()] for t in texts])
    return ids, torch.ones_like(ids, dtype=torch.float32)


def _train(optimizer: str) -> Tiny:
    module = Tiny()
    cfg = TrainConfig(lr=5e-2, epochs=2, batch_size=5, weight_decay=0.01, warmup_ratio=0.2, optimizer=optimizer)
    train_loop(module, _encode, TEXTS, LABELS, cfg)  # 2 epochs x 5 batches: 10 steps, clipped, warm-up and decay
    return module


def _identical(a: torch.nn.Module, b: torch.nn.Module) -> list[str]:
    """Names of the parameters that differ in any bit."""
    return [n for (n, p), (_, q) in zip(a.named_parameters(), b.named_parameters()) if not torch.equal(p, q)]


@pytest.mark.parametrize("optimizer", ["adamw", "adam"])
def test_foreach_steps_give_the_weights_of_the_per_parameter_loop(optimizer, monkeypatch):
    start = Tiny()
    seen: list = []
    name = "AdamW" if optimizer == "adamw" else "Adam"
    record_adam(monkeypatch, seen, name)
    project = _train(optimizer)
    assert [kw.get("foreach") for kw, _ in seen] == [True], seen  # the loop asks for the multi-tensor steps
    assert not seen[0][0].get("fused")
    monkeypatch.undo()
    record_adam(monkeypatch, [], name, foreach=False)
    loop = _train(optimizer)
    assert len(_identical(start, project)) == len(list(start.parameters()))  # every parameter was trained
    assert _identical(project, loop) == []


def test_the_bitwise_check_sees_one_ulp():
    a, b = Tiny(), Tiny()
    assert _identical(a, b) == []
    with torch.no_grad():
        w = b.hidden.weight
        w[0, 0] = torch.nextafter(w[0, 0], torch.tensor(np.inf))
    assert _identical(a, b) == ["hidden.weight"]
