"""On-disk cache of model outputs keyed by (model fingerprint, text hash).

One SQLite file per cache folder; each row stores a float32 vector.  SQLite commits are atomic,
so an interrupted run never leaves a corrupt cache; a half-finished batch is simply not there.  A file
that is damaged all the same (truncated by a full disk, overwritten, not a database) goes through
:func:`xaibench.io.discard_damaged` like every other computed file: a warning names it, it is removed
(with its ``-wal`` and ``-shm`` files) and an empty cache takes its place, also when the damage shows only
in a later read or write.
"""
from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from . import io, paths
from .utils import text_hash


class OutputCache:
    """Vectors per (namespace, text).  ``namespace`` is e.g. ``"<fingerprint>/proba"``."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else paths.cache_dir() / "outputs.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = self._open()

    def _connect(self, path: Path) -> sqlite3.Connection:
        """A connection to the cache file ``path`` with its table (created when the file is new); raises
        ``sqlite3.DatabaseError`` when the file is not a readable SQLite database of that table."""
        conn = sqlite3.connect(path, timeout=60, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("CREATE TABLE IF NOT EXISTS outputs (ns TEXT, key TEXT, dim INTEGER, vec BLOB,"
                         " PRIMARY KEY (ns, key))")
            conn.execute("SELECT ns, key, dim, vec FROM outputs LIMIT 1").fetchall()
            conn.commit()
        except BaseException:
            conn.close()
            raise
        return conn

    def _open(self) -> sqlite3.Connection:
        if self.path.exists():
            try:
                return self._connect(self.path)
            except sqlite3.DatabaseError as err:  # in use elsewhere: raised; else damaged: removed
                if _is_busy(err):
                    raise
                self._remove_journal()
                io.discard_damaged(self.path, err, "output cache")
        return self._connect(self.path)

    def _remove_journal(self) -> None:
        for suffix in ("-wal", "-shm", "-journal"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def _damaged(self, err: sqlite3.DatabaseError) -> None:
        """A read or write found the open file damaged: close it, name and remove it, start an empty cache
        (what it held is recomputed).  Call with the lock held."""
        self._conn.close()
        self._remove_journal()
        io.discard_damaged(self.path, err, "output cache")
        self._conn = self._connect(self.path)

    def get_many(self, namespace: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        keys = list({text_hash(t) for t in texts})
        found: dict[str, np.ndarray] = {}
        with self._lock:
            try:
                for i in range(0, len(keys), 500):
                    chunk = keys[i : i + 500]
                    q = f"SELECT key, vec FROM outputs WHERE ns=? AND key IN ({','.join('?' * len(chunk))})"
                    for k, blob in self._conn.execute(q, [namespace, *chunk]):
                        found[k] = np.frombuffer(blob, dtype=np.float32)
            except sqlite3.DatabaseError as err:
                if _is_busy(err):
                    raise
                self._damaged(err)
                return {}
        return found

    def put_many(self, namespace: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        rows = [
            (namespace, text_hash(t), int(v.shape[-1]), np.asarray(v, dtype=np.float32).tobytes())
            for t, v in zip(texts, vectors)
        ]
        with self._lock:
            for attempt in range(2):
                try:
                    self._conn.executemany("INSERT OR REPLACE INTO outputs VALUES (?,?,?,?)", rows)
                    self._conn.commit()
                    return
                except sqlite3.DatabaseError as err:
                    if _is_busy(err) or attempt:
                        raise
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.rollback()
                    self._damaged(err)

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


def _is_busy(err: sqlite3.DatabaseError) -> bool:
    """Whether ``err`` says the file is in use (locked, busy) rather than damaged."""
    return isinstance(err, sqlite3.OperationalError) and any(
        w in str(err).lower() for w in ("locked", "busy", "unable to open", "readonly", "disk i/o"))


_DEFAULT: dict[Path, OutputCache] = {}


def default_cache() -> OutputCache:
    p = paths.cache_dir() / "outputs.sqlite"
    if p not in _DEFAULT:
        _DEFAULT[p] = OutputCache(p)
    return _DEFAULT[p]
