"""On-disk cache of model outputs keyed by (model fingerprint, text hash).

One SQLite file per cache folder; each row stores a float32 vector.  SQLite commits are atomic,
so an interrupted run never leaves a corrupt cache; a half-finished batch is simply not there.
"""
from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from . import paths
from .utils import text_hash


class OutputCache:
    """Vectors per (namespace, text).  ``namespace`` is e.g. ``"<fingerprint>/proba"``."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else paths.cache_dir() / "outputs.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS outputs (ns TEXT, key TEXT, dim INTEGER, vec BLOB,"
            " PRIMARY KEY (ns, key))"
        )
        self._conn.commit()

    def get_many(self, namespace: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        keys = list({text_hash(t) for t in texts})
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                q = f"SELECT key, vec FROM outputs WHERE ns=? AND key IN ({','.join('?' * len(chunk))})"
                for k, blob in self._conn.execute(q, [namespace, *chunk]):
                    found[k] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, namespace: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        rows = [
            (namespace, text_hash(t), int(v.shape[-1]), np.asarray(v, dtype=np.float32).tobytes())
            for t, v in zip(texts, vectors)
        ]
        with self._lock:
            self._conn.executemany("INSERT OR REPLACE INTO outputs VALUES (?,?,?,?)", rows)
            self._conn.commit()

    def cached_call(self, namespace: str, texts: Sequence[str],
                    compute: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """Return ``compute(texts)`` row by row, computing only the texts not yet cached."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        found = self.get_many(namespace, texts)
        todo = list(dict.fromkeys(t for t in texts if text_hash(t) not in found))
        if todo:
            new = np.asarray(compute(todo), dtype=np.float32)
            self.put_many(namespace, todo, new)
            for t, v in zip(todo, new):
                found[text_hash(t)] = v
        return np.stack([found[text_hash(t)] for t in texts])

    def clear(self, namespace: str | None = None) -> None:
        with self._lock:
            if namespace is None:
                self._conn.execute("DELETE FROM outputs")
            else:
                self._conn.execute("DELETE FROM outputs WHERE ns=?", (namespace,))
            self._conn.commit()

    def close(self) -> None:
        self._conn.close()


_DEFAULT: dict[Path, OutputCache] = {}


def default_cache() -> OutputCache:
    p = paths.cache_dir() / "outputs.sqlite"
    if p not in _DEFAULT:
        _DEFAULT[p] = OutputCache(p)
    return _DEFAULT[p]
