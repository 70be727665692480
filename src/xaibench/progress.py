"""Progress reporting that suits where the code runs.

:func:`progress` is the project's one progress bar (use it instead of ``tqdm``):

* on the command line (``make``, ``python -m ...``) it is a normal tqdm bar on stderr;
* inside a Jupyter/papermill kernel it draws no bar at all -- executed notebooks are read on the
  web, and a bar there is escape codes, one frame per refresh, or (without ipywidgets) an
  "IProgress not found" warning.  Instead an outer loop (``leave=True``, tqdm's default) prints
  a few plain-text lines: one at most every ``XAIBENCH_PROGRESS_INTERVAL`` seconds (default 60)
  and one when it ends; inner loops (``leave=False``, e.g. the batches of one epoch) print
  nothing;
* ``XAIBENCH_QUIET=1`` (the test suite) silences both.

``XAIBENCH_PROGRESS=bar|text|off`` overrides the automatic choice (``auto``, the default).
Importing :mod:`xaibench` inside a kernel calls :func:`quiet_kernel_output`: it turns off the bars of
the Hugging Face libraries (model loading, datasets) and tqdm's "IProgress not found" warning
(``tqdm.auto`` wants ipywidgets in a kernel; the project draws no widgets).
"""
from __future__ import annotations

import os
import sys
import time
from typing import Any, Iterable

MODES = ("auto", "bar", "text", "off")


def in_kernel() -> bool:
    """True inside a Jupyter kernel (JupyterLab, papermill), False in a terminal or plain python."""
    if "ipykernel" not in sys.modules:
        return False
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def mode() -> str:
    """``bar``, ``text`` or ``off`` for this process (see the module docstring)."""
    if os.environ.get("XAIBENCH_QUIET") == "1":
        return "off"
    choice = (os.environ.get("XAIBENCH_PROGRESS") or "auto").strip().lower()
    if choice not in MODES:
        raise ValueError(f"XAIBENCH_PROGRESS={choice!r} is not understood; use one of {', '.join(MODES)}")
    if choice == "auto":
        return "text" if in_kernel() else "bar"
    return choice


def quiet_library_bars() -> None:
    """Turn off the tqdm bars of huggingface_hub, datasets and transformers for this process."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    if "huggingface_hub" in sys.modules:
        sys.modules["huggingface_hub"].utils.disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    if "datasets" in sys.modules:
        sys.modules["datasets"].disable_progress_bars()


def quiet_kernel_output() -> None:
    """In a kernel: no library progress bars, no tqdm "IProgress not found" (see module docstring)."""
    if not in_kernel():
        return
    import warnings

    warnings.filterwarnings("ignore", message="IProgress not found")
    quiet_library_bars()


def _seconds(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


class TextProgress:
    """A tqdm stand-in that writes a few plain lines (``iter``, ``update``, ``close``, ``with``)."""

    def __init__(self, iterable: Iterable | None = None, desc: str | None = None, total: float | None = None,
                 leave: bool | None = True, interval: float | None = None, file=None, **_ignored: Any):
        self.iterable = iterable
        self.desc = desc or "progress"
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)
        self.total = total
        self.silent = leave is False
        self.interval = float(os.environ.get("XAIBENCH_PROGRESS_INTERVAL", 60) if interval is None else interval)
        self.file = file or sys.stdout
        self.n = 0
        self.start = self._last = time.monotonic()
        self.closed = False

    def _count(self) -> str:
        return f"{self.n:g}/{self.total:g}" if self.total is not None else f"{self.n:g}"

    def _write(self, what: str) -> None:
        if not self.silent:
            print(f"{self.desc}: {self._count()} {what} ({_seconds(time.monotonic() - self.start)})",
                  file=self.file, flush=True)

    def update(self, n: float = 1) -> None:
        self.n += n
        now = time.monotonic()
        if now - self._last >= self.interval:
            self._last = now
            self._write("so far")

    def refresh(self) -> None:
        """A line saying it still runs when nothing was said for an interval (a long step between updates)."""
        now = time.monotonic()
        if not self.closed and now - self._last >= self.interval:
            self._last = now
            self._write("so far, still running")

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._write("done")

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None:
        self.desc = desc or self.desc

    def set_postfix(self, *args: Any, **kw: Any) -> None:
        """Accepted for tqdm compatibility; the text lines carry no postfix."""

    def __len__(self) -> int:
        return int(self.total or 0)

    def __iter__(self):
        if self.iterable is None:
            raise TypeError("progress() was given no iterable to loop over; use update() instead")
        try:
            for item in self.iterable:
                yield item
                self.update(1)
        finally:
            self.close()

    def __enter__(self) -> "TextProgress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def progress(iterable: Iterable | None = None, **kw: Any):
    """A progress bar around ``iterable`` (tqdm's keywords: ``desc``, ``total``, ``leave``, ...)."""
    how = mode()
    if how == "text":
        quiet_library_bars()
        return TextProgress(iterable, **kw)
    from tqdm.std import tqdm  # never tqdm.auto: it wants ipywidgets inside a kernel

    kw.setdefault("mininterval", 2.0)
    kw.setdefault("disable", how == "off")
    return tqdm(iterable, **kw)
