"""Tiny torch models with hand-set weights (their gradients and saliency maps are known by hand)."""
from __future__ import annotations

import torch


class PatchNet(torch.nn.Module):
    """Image model whose two logits are (+m, -m), m = (sum of the top-left ``patch`` x ``patch``
    square over all channels) / size**2: its input gradient is 1/size**2 per channel on that square
    and 0 elsewhere.  ``features`` (the channel sum on the square, 0 elsewhere) and the linear head
    ``fc`` (weights +1, -1, no bias) make it usable by CAM as well."""

    def __init__(self, size: int = 16, patch: int = 4):
        super().__init__()
        self.size, self.patch = size, patch
        self.fc = torch.nn.Linear(1, 2, bias=False)
        self.fc.weight.data = torch.tensor([[1.0], [-1.0]])

    def features(self, x):
        f = torch.zeros(x.shape[0], 1, self.size, self.size)
        f[:, :, :self.patch, :self.patch] = x[:, :, :self.patch, :self.patch].sum(1, keepdim=True)
        return f

    def forward(self, x):
        return self.fc(self.features(x).mean(dim=(2, 3)))
