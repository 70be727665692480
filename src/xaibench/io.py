"""Atomic file writing: an interrupted run never leaves a half-written file behind.

Everything is written to a temporary file in the destination folder and then renamed with
:func:`os.replace`, which is atomic on POSIX file systems.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, TypeVar

if TYPE_CHECKING:  # pandas is imported where a frame is read: the make-time checks import this module without it
    import pandas as pd

T = TypeVar("T")


#: Leftover temporary files of atomic writes are removed by readers only once they are this old
#: (seconds): a younger one may belong to another process writing the same file right now (two
#: workers building the same cache), and every write of the project takes far less.
STALE_TMP_AGE_S = 600.0


@contextlib.contextmanager
def atomic_path(dest: str | os.PathLike, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path next to ``dest``; rename it onto ``dest`` only on success."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=suffix + ".tmp", dir=dest.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        if tmp_path.is_file():  # mkstemp creates 0600; give the file the usual umask-based mode
            os.chmod(tmp_path, 0o666 & ~_umask())
        os.replace(tmp_path, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            if tmp_path.is_dir():
                import shutil

                shutil.rmtree(tmp_path)
            else:
                tmp_path.unlink()
        raise


@contextlib.contextmanager
def file_lock(path: str | os.PathLike, shared: bool = False) -> Iterator[None]:
    """Hold an advisory lock (``flock``) on ``path`` -- a folder, or a file created when missing -- between
    processes: exclusive, or ``shared`` (many holders at once, none while an exclusive one is held).
    Blocks until it is granted."""
    import fcntl

    path = Path(path)
    fd = os.open(path, os.O_RDONLY) if path.is_dir() else os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@contextlib.contextmanager
def atomic_dir(dest: str | os.PathLike, swap_lock: Callable[[], Any] | None = None) -> Iterator[Path]:
    """Yield a temporary folder next to ``dest``; swap it in for ``dest`` only on success (inside the context
    manager ``swap_lock()`` when given, e.g. a :func:`file_lock` that readers of ``dest`` share, so that two
    writers of ``dest`` swap one after the other and no reader sees ``dest`` half swapped)."""
    import shutil

    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
    try:
        yield tmp
        with swap_lock() if swap_lock is not None else contextlib.nullcontext():
            _swap_in(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _swap_in(tmp: Path, dest: Path) -> None:
    import shutil

    if dest.exists():
        old = dest.with_name(f".{dest.name}.old")
        if old.exists():
            shutil.rmtree(old)
        os.replace(dest, old)
        os.replace(tmp, dest)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, dest)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes(dest: str | os.PathLike, data: bytes) -> Path:
    with atomic_path(dest) as tmp:
        tmp.write_bytes(data)
    return Path(dest)


def write_text(dest: str | os.PathLike, text: str) -> Path:
    with atomic_path(dest) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(dest)


def write_json(dest: str | os.PathLike, obj: Any, **kw: Any) -> Path:
    kw.setdefault("indent", 2)
    kw.setdefault("sort_keys", True)
    return write_text(dest, json.dumps(obj, **kw) + "\n")


def write_parquet(dest: str | os.PathLike, df: pd.DataFrame) -> Path:
    with atomic_path(dest, suffix=".parquet") as tmp:
        df.to_parquet(tmp, index=False)
    return Path(dest)


def write_csv(dest: str | os.PathLike, df: pd.DataFrame) -> Path:
    with atomic_path(dest, suffix=".csv") as tmp:
        df.to_csv(tmp, index=False)
    return Path(dest)


def read_parquet_cache(path: str | os.PathLike) -> pd.DataFrame | None:
    """Read a parquet *cache*: ``None`` when it is missing or unreadable (truncated by a crash,
    disk full, an older writer), so that the caller rebuilds it.  An unreadable file is deleted
    and a warning names it; leftovers of a killed write of ``path`` older than
    :data:`STALE_TMP_AGE_S` are removed."""
    path = Path(path)
    if path.parent.is_dir():
        remove_stale_tmp(path.parent, min_age_s=STALE_TMP_AGE_S, name=path.name)
    if not path.is_file():
        return None
    try:
        import pandas as pd

        return pd.read_parquet(path)
    except Exception as e:  # noqa: BLE001 - pyarrow raises many types (ArrowInvalid, OSError, ...)
        import warnings

        warnings.warn(f"cache {path} is unreadable ({type(e).__name__}: {str(e)[:120]}); rebuilding it",
                      RuntimeWarning, stacklevel=2)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return None


def remove_stale_tmp(folder: str | os.PathLike, min_age_s: float = 0.0, name: str | None = None) -> list[Path]:
    """Delete the leftovers of interrupted atomic writes in ``folder`` (``.NAME.*.tmp`` files and
    folders of :func:`atomic_path`/:func:`atomic_dir`, and ``.NAME.old``) last modified at least
    ``min_age_s`` seconds ago; only those of the destination ``name`` when it is given.  Call it only
    where no writer can be active (e.g. under a lock) or with an age no live writer reaches.
    Returns what was removed."""
    import shutil
    import time

    folder = Path(folder)
    if not folder.is_dir():
        return []
    removed = []
    now = time.time()
    for p in folder.iterdir():
        if not p.name.startswith(".") or not (p.name.endswith(".tmp") or p.name.endswith(".old")):
            continue
        if name is not None and not (p.name.startswith(f".{name}.") and
                                     (p.name.endswith(".tmp") or p.name == f".{name}.old")):
            continue
        try:
            if now - p.lstat().st_mtime < min_age_s:
                continue
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
        except FileNotFoundError:
            continue
        removed.append(p)
    return removed


def discard_damaged(path: str | os.PathLike, err: BaseException, what: str = "cache") -> None:
    """Warn (``RuntimeWarning``) that ``path`` is damaged, naming it and the error, and delete it
    (a file or a folder) so that the caller recomputes it."""
    import shutil
    import warnings

    path = Path(path)
    warnings.warn(f"{what} {path} is damaged or unreadable ({type(err).__name__}: {str(err)[:200]}); "
                  "it is removed and recomputed", RuntimeWarning, stacklevel=3)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def read_or_rebuild(path: str | os.PathLike, reader: Callable[[Path], T], builder: Callable[[], T],
                    what: str = "cache") -> T:
    """The one way to read a computed cache that is not a :class:`~xaibench.store.ResultStore` entry
    (a model folder, an ``.npz``, a pickle, an incremental parquet).

    Leftovers of a killed atomic write of ``path`` (``.NAME.*.tmp``, ``.NAME.old``) older than
    :data:`STALE_TMP_AGE_S` are removed first (a younger one may be another process's write in flight).
    When ``path`` exists, ``reader(path)`` reads it; any error there (truncated, altered, of an older
    format: the reader should also check what it read) warns with a ``RuntimeWarning`` naming the
    file, deletes it and falls through to ``builder()``, which computes the value (and writes it
    atomically, e.g. with :func:`atomic_path`).  Returns what the reader or the builder returned.
    """
    path = Path(path)
    remove_stale_tmp(path.parent, min_age_s=STALE_TMP_AGE_S, name=path.name)
    if path.exists():
        try:
            return reader(path)
        except Exception as err:  # noqa: BLE001 - any damage means: recompute
            discard_damaged(path, err, what)
    return builder()
