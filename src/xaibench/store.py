"""Result stores: what an experiment computed, stored as one unit keyed on everything that changed it.

A store entry is a folder ``<root>/<name>/<key>/`` holding the entry's parts (DataFrames as
parquet, arrays as ``.npy``, anything JSON-able as ``.json``) and a ``manifest.json`` written last
that lists every part with its size and SHA-256.  The key is a hash of the full configuration
(every setting that changes the result, explainer names and settings included) and of the code's
result-format ``version``, so that asking for anything else never returns a stale result.

Reading goes through :meth:`ResultStore.load`, the one reader: a missing entry is ``None``; an
entry whose manifest or any part is missing, truncated or altered is reported by name
(a ``RuntimeWarning``), deleted and returned as ``None``, so the caller recomputes it.  Entries
are written into a temporary folder and renamed into place (:func:`xaibench.io.atomic_dir`), and
leftovers of a killed write are removed the next time the store is opened.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import warnings
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from . import io

MANIFEST = "manifest.json"


def canonical(obj: Any) -> Any:
    """``obj`` as plain JSON types with sorted keys: tuples become lists, numpy scalars numbers, paths
    strings; anything else raises a ``TypeError`` naming it (a key must not depend on ``repr``)."""
    if isinstance(obj, Mapping):
        return {str(k): canonical(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [canonical(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted(canonical(v) for v in obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, (bool, int, float, str)) or obj is None:
        return obj
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot key a result store on {type(obj).__name__} {obj!r}: pass its settings as "
                    "plain values (numbers, strings, lists, dicts)")


def config_key(config: Mapping[str, Any], version: int | str) -> str:
    """A 16-hex-digit hash of ``config`` and the result-format ``version``."""
    text = json.dumps({"config": canonical(config), "version": canonical(version)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def source_file(obj: Any) -> Any:
    """The file that defines ``obj`` (a class, a function, a partial's function or an instance's class), or None."""
    import functools
    import inspect

    while isinstance(obj, functools.partial):
        obj = obj.func
    target = obj if inspect.isclass(obj) or inspect.isfunction(obj) else type(obj)
    try:
        path = inspect.getsourcefile(target)
    except TypeError:
        return None
    return Path(path) if path else None


def source_digest(obj: Any) -> str:
    """SHA-256 (16 hex digits) of the file that defines ``obj`` (e.g. an explainer factory's module): part of a
    store key, so that editing an explainer's code recomputes its results; ``""`` when unknown."""
    path = source_file(obj)
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path else ""


class ResultStore:
    """Entries of one kind of result under ``root/name``, keyed by :func:`config_key`."""

    def __init__(self, root: str | Path, name: str, version: int | str):
        if not name or "/" in name:
            raise ValueError(f"a store name is one folder name; got {name!r}")
        self.folder = Path(root) / name
        self.name, self.version = name, version
        io.remove_stale_tmp(self.folder, min_age_s=io.STALE_TMP_AGE_S)  # younger: maybe a write in flight

    def path(self, config: Mapping[str, Any]) -> Path:
        return self.folder / config_key(config, self.version)

    def save(self, config: Mapping[str, Any], parts: Mapping[str, Any]) -> Path:
        """Write ``parts`` (name -> DataFrame | ndarray | JSON-able) as one entry; returns its folder."""
        if not parts:
            raise ValueError("a store entry needs at least one part")
        dest = self.path(config)
        with io.atomic_dir(dest, swap_lock=self._lock) as tmp:
            listing = {}
            for name, value in parts.items():
                if not name.replace("_", "").replace("-", "").isalnum():
                    raise ValueError(f"part names are letters, digits, '_' and '-'; got {name!r}")
                if isinstance(value, pd.DataFrame):
                    fname = f"{name}.parquet"
                    value.to_parquet(tmp / fname)
                elif isinstance(value, np.ndarray):
                    fname = f"{name}.npy"
                    np.save(tmp / fname, value, allow_pickle=False)
                else:
                    fname = f"{name}.json"
                    (tmp / fname).write_text(json.dumps(canonical(value)))
                listing[name] = {"file": fname, "bytes": (tmp / fname).stat().st_size, "sha256": _sha256(tmp / fname)}
            manifest = {"store": self.name, "version": canonical(self.version), "config": canonical(config),
                        "parts": listing}
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))  # written last
        return dest

    def configs(self) -> list[dict[str, Any]]:
        """The configurations of the finished entries (read from their manifests), oldest first; an entry
        without a readable manifest is left out (:meth:`load` of its configuration would rebuild it)."""
        found = []
        for m in self.folder.glob(f"*/{MANIFEST}") if self.folder.is_dir() else ():
            try:
                manifest = json.loads(m.read_text())
                if manifest.get("version") != canonical(self.version):
                    continue
                found.append((m.stat().st_mtime, manifest["config"]))
            except (OSError, ValueError, KeyError):
                continue
        return [c for _, c in sorted(found, key=lambda t: t[0])]

    def _lock(self, shared: bool = False):
        """A lock on the store's folder between processes: writers hold it (exclusive) only while they swap a
        finished entry into place, readers (shared) while they read one; a folder that cannot be opened
        (a read-only copy) is read without it."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            return io.file_lock(self.folder, shared=shared)
        except OSError:
            import contextlib

            return contextlib.nullcontext()

    def load(self, config: Mapping[str, Any]) -> dict[str, Any] | None:
        """The entry's parts, or ``None`` when it is absent or damaged (then deleted, with a warning).

        Reading shares a lock with the other readers that no writer's swap can enter, so an entry being
        replaced by another process is read before or after, never half swapped; an entry that reads as
        damaged is read again under the writers' lock before it is deleted."""
        dest = self.path(config)
        if not self.folder.is_dir():
            return None
        with self._lock(shared=True):
            if not dest.exists():
                return None
            try:
                return self._read(dest, config)
            except Exception:  # noqa: BLE001 - checked again below, alone
                pass
        with self._lock():
            if not dest.exists():
                return None
            try:
                return self._read(dest, config)
            except Exception as err:  # noqa: BLE001 - any damage means: recompute
                warnings.warn(f"result store entry {dest} is damaged ({err}); it is removed and recomputed",
                              RuntimeWarning, stacklevel=2)
                shutil.rmtree(dest, ignore_errors=True)
                return None

    def _read(self, dest: Path, config: Mapping[str, Any]) -> dict[str, Any]:
        mpath = dest / MANIFEST
        if not mpath.is_file():
            raise ValueError("no manifest (the write did not finish)")
        manifest = json.loads(mpath.read_text())
        if manifest.get("config") != canonical(config) or manifest.get("version") != canonical(self.version):
            raise ValueError("its manifest records another configuration")
        out = {}
        for name, meta in manifest["parts"].items():
            f = dest / meta["file"]
            if not f.is_file():
                raise ValueError(f"part {meta['file']} is missing")
            if f.stat().st_size != meta["bytes"] or _sha256(f) != meta["sha256"]:
                raise ValueError(f"part {meta['file']} does not match its checksum")
            if f.suffix == ".parquet":
                out[name] = pd.read_parquet(f)
            elif f.suffix == ".npy":
                out[name] = np.load(f, allow_pickle=False)
            else:
                out[name] = json.loads(f.read_text())
        return out
