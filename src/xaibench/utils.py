"""Small shared helpers: seeding, hashing (progress bars: :mod:`xaibench.progress`)."""
from __future__ import annotations

import hashlib
import os
import random

import numpy as np

from .progress import progress  # noqa: F401  (the older import path of the one progress helper)


def set_seed(seed: int) -> None:
    """Seed python, numpy and torch (CPU and CUDA) and ask torch for deterministic kernels."""
    random.seed(seed)
    np.random.seed(seed)
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    try:
        import torch

        torch.manual_seed(seed)
        torch.use_deterministic_algorithms(True, warn_only=True)
    except ImportError:  # pragma: no cover
        pass


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def sha256_file(path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()
