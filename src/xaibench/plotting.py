"""Generic plotting helpers with no domain knowledge (foundation layer), shared by the papers' plot modules
and the notebooks: :func:`save_figure` (save a figure as PNG and show it in the notebook) and seaborn helpers."""
from __future__ import annotations

import base64
from pathlib import Path
from typing import Any, Sequence

import numpy as np


def grouped_bars(data: Any, x: str, y: str, hue: str, err: str, ax: Any, order: Sequence[str] | None = None,
                 hue_order: Sequence[str] | None = None, legend: bool = True) -> Any:
    """Grouped bars of ``y`` (x = ``x``, colour = ``hue``) with ``err`` (e.g. the std over seeds) as error
    bars; a NaN ``err`` draws none.  Rows repeating an (``x``, ``hue``) cell are averaged.  Returns ``ax``."""
    import seaborn as sns

    order = list(order) if order is not None else list(dict.fromkeys(data[x]))
    hue_order = list(hue_order) if hue_order is not None else list(dict.fromkeys(data[hue]))
    missing = [c for c in (x, y, hue, err) if c not in data.columns]
    if missing:
        raise ValueError(f"grouped_bars: columns {missing} not in the data (columns: {list(data.columns)})")
    sns.barplot(data=data, x=x, y=y, hue=hue, order=order, hue_order=hue_order, ax=ax, palette="deep",
                errorbar=None)
    width = 0.8 / len(hue_order)
    for j, h in enumerate(hue_order):
        sub = data[data[hue] == h].groupby(x)[[y, err]].mean().reindex(order)
        xs = np.arange(len(order)) - 0.4 + width * (j + 0.5)
        ax.errorbar(xs, sub[y], yerr=sub[err].fillna(0).to_numpy(dtype=float), fmt="none", c="0.3", lw=0.8)
    ax.set_xlabel("")
    if legend:
        ax.legend(fontsize=8, bbox_to_anchor=(1.01, 1), loc="upper left")
    return ax


__all__ = ["grouped_bars"]


def figure_alt_text(fig: Any, name: str) -> str:
    """A figure's alt text: its suptitle, else its axes' titles joined, else its file name."""
    sup = getattr(fig, "_suptitle", None)
    if sup is not None and sup.get_text().strip():
        return " ".join(sup.get_text().split())
    titles = [ax.get_title() for ax in fig.get_axes() if ax.get_title().strip()]
    return " | ".join(" ".join(t.split()) for t in titles) if titles else name


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the notebook stack
        return False
    shell = get_ipython()
    return shell is not None and shell.__class__.__name__ == "ZMQInteractiveShell"


def show_png(path: Path, alt: str) -> None:
    """Display the PNG at ``path`` in the running notebook, with ``alt`` as its text and alt attribute."""
    from IPython.display import display

    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    display({"image/png": data, "text/plain": alt}, raw=True, metadata={"image/png": {"alt": alt}})


def save_figure(fig: Any, name: str, dpi: int = 130, alt: str | None = None, show: bool | None = None) -> Path:
    """Save ``fig`` as ``<figures_dir>/<name>.png`` atomically (respects the run profile) and show it.

    In a notebook (``show=None``) the saved PNG itself is displayed, with ``alt`` (default: the
    figure's titles) as its alt text, and the figure is closed, so an executed report holds exactly
    the image that was saved, whatever the matplotlib backend.  ``show=False`` only saves.
    """
    import matplotlib.pyplot as plt

    from . import io, paths

    dest = paths.figures_dir() / f"{name}.png"
    with io.atomic_path(dest, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=dpi, bbox_inches="tight", format="png")
    if show is None:
        show = _in_notebook()
    if show:
        show_png(dest, alt or figure_alt_text(fig, name))
        plt.close(fig)
    return dest
