"""Generic seaborn helpers with no domain knowledge (foundation layer), shared by the papers' plot modules
and the notebooks.  Figures are saved with :func:`xaibench.viz.save_figure`."""
from __future__ import annotations

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
