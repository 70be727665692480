"""Small shared helpers: seeding, hashing (progress bars: :mod:`xaibench.progress`)."""
from __future__ import annotations

import hashlib
import os
import random

import numpy as np



def set_seed(seed: int) -> None:
    """Seed python, numpy and torch (CPU and CUDA), ask torch for deterministic kernels (with cuBLAS's
    deterministic workspace, :func:`xaibench.device.deterministic_cublas`) and pin its thread count
    (:func:`xaibench.device.pin_threads`: results depend on it)."""
    from .device import deterministic_cublas, pin_threads

    random.seed(seed)
    np.random.seed(seed)
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    deterministic_cublas()  # cuBLAS reads it when it starts
    try:
        import torch

        torch.manual_seed(seed)
        torch.use_deterministic_algorithms(True, warn_only=True)
    except ImportError:  # pragma: no cover
        return

    pin_threads()


def _utf8(text: str) -> bytes:
    # "surrogatepass": texts decoded with errors="surrogateescape" hold lone surrogates, which
    # strict UTF-8 cannot encode; they still get a stable, distinct byte string
    return text.encode("utf-8", "surrogatepass")


def text_hash(text: str) -> str:
    """Stable key of a text (any ``str``, lone surrogates included)."""
    return hashlib.sha1(_utf8(text)).hexdigest()


def query_seed(*parts) -> int:
    """A 64-bit seed determined by ``parts`` (e.g. explainer seed, model fingerprint, text).

    The one per-query seeding rule of the project: a query's random draw depends on what it is,
    not on its batch or position, and two models (different fingerprints) get different draws.
    Parts are joined by their ``str`` with a unit separator; robust to lone surrogates.
    """
    key = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(_utf8(key)).digest()[:8], "little")


def check_texts(texts, what: str = "texts") -> list[str]:
    """The text check of every model and explainer entry point (:func:`xaibench.checks.check_texts`)."""
    from .checks import check_texts as _check

    return _check(texts, what)


def sha256_file(path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()
