"""Recording and overriding the keywords a training loop builds ``torch.optim.Adam`` / ``AdamW`` with, and a
bitwise comparison of parameters: for the tests that the multi-tensor (``foreach``) step gives the weights of the
per-parameter loop."""
from __future__ import annotations

import torch


def record_adam(monkeypatch, seen: list, name: str = "Adam", **force) -> None:
    """``torch.optim.<name>`` replaced by a subclass that appends ``(keywords, parameters)`` of each construction
    to ``seen`` (the keywords as the caller passed them, the parameters as a list) and overrides the keywords in
    ``force`` (e.g. ``foreach=False``: the per-parameter loop)."""
    base = getattr(torch.optim, name)

    class Recorded(base):
        def __init__(self, params, *args, **kw):
            params = list(params)
            seen.append((dict(kw), [p for g in params for p in (g["params"] if isinstance(g, dict) else [g])]))
            super().__init__(params, *args, **{**kw, **force})

    monkeypatch.setattr(torch.optim, name, Recorded)


def differing(a, b) -> list[int]:
    """Positions at which two parameter lists differ in any bit (shape included)."""
    assert len(a) == len(b), (len(a), len(b))
    return [i for i, (p, q) in enumerate(zip(a, b)) if not torch.equal(p, q)]
