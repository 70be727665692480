"""Small shared helpers: seeding, hashing (progress bars: :mod:`xaibench.progress`)."""
from __future__ import annotations

import hashlib
import os
import random

import numpy as np



def set_seed(seed: int) -> None:
    """Seed python, numpy and torch (CPU and CUDA), ask torch for deterministic kernels and pin
    its thread count (:func:`xaibench.device.pin_threads`: results depend on it)."""
    random.seed(seed)
    np.random.seed(seed)
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    try:
        import torch

        torch.manual_seed(seed)
        torch.use_deterministic_algorithms(True, warn_only=True)
    except ImportError:  # pragma: no cover
        return
    from .device import pin_threads

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


_FIX_SURROGATES = ("decode the source with errors='replace' (not 'surrogateescape'), or clean the texts: "
                   "[t.encode('utf-8', 'replace').decode('utf-8') for t in texts]")


def check_texts(texts, what: str = "texts") -> list[str]:
    """The one input check of every model and explainer entry point: ``texts`` must be a list
    (or other sequence) of ``str`` without lone surrogates.  Returns it as a list; raises
    ``TypeError``/``ValueError`` saying which item is wrong and how to fix it."""
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"{what}: pass a list of texts, not a single string (wrap it: [text])")
    if texts is None or not hasattr(texts, "__iter__"):
        raise TypeError(f"{what} must be a list of str; got {type(texts).__name__}")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            hint = " (missing values? drop or fill them first, e.g. df['text'].fillna(''))" if t is None or (
                isinstance(t, float) and t != t) else ""
            raise TypeError(f"{what} must be str; item {i} is {type(t).__name__} {t!r:.40}{hint}")
        try:
            t.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(f"{what}: item {i} holds a lone surrogate {t[e.start]!r} at character {e.start} "
                             f"(bytes that were not valid UTF-8); {_FIX_SURROGATES}") from None
    return out


def sha256_file(path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()
