"""Attention bar plots of the article datasets (Zhou et al. 2022, Figs. 10-11): one panel per test review,
one bar per token, coloured by its ground-truth role.  Figures are returned; save them with
:func:`xaibench.plotting.save_figure`."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from .text_runner import TextConfig, load_attention

#: Bar colour of a correlating article, a non-correlating article and any other token.
ROLE_COLOURS = {"corr": "tab:orange", "noncorr": "tab:red", "other": "tab:green"}
PAPER = "Zhou et al. 2022"
DATASET_NAMES = {"article": "article", "cn": "CN", "nc": "NC"}


def role_colours(corr: np.ndarray, noncorr: np.ndarray) -> np.ndarray:
    """The bar colour of every token: :data:`ROLE_COLOURS` by its role (correlating wins over non-correlating)."""
    corr, noncorr = np.asarray(corr, dtype=bool), np.asarray(noncorr, dtype=bool)
    if corr.shape != noncorr.shape:
        raise ValueError(f"role_colours: corr has shape {corr.shape} but noncorr {noncorr.shape}; "
                         "pass one flag per token for both")
    return np.where(corr, ROLE_COLOURS["corr"], np.where(noncorr, ROLE_COLOURS["noncorr"], ROLE_COLOURS["other"]))


def plot_attention(ax: Any, tokens: Sequence[str], weights: Sequence[float], corr: np.ndarray,
                   noncorr: np.ndarray, title: str) -> Any:
    """One review's attention weights as bars over its tokens, coloured by :func:`role_colours`."""
    weights = np.asarray(weights, dtype=float)
    if len(tokens) != len(weights):
        raise ValueError(f"plot_attention: {len(tokens)} tokens but {len(weights)} attention weights; "
                         "the weights must come from the same tokenisation")
    ax.bar(range(len(weights)), weights, color=role_colours(corr, noncorr))
    ax.set_xticks(range(len(weights)))
    ax.set_xticklabels(tokens, rotation=90, fontsize=6)
    ax.set_ylabel("attention")
    ax.set_title(title, fontsize=9)
    return ax


def panel_reviews(split: Any, n: int, min_len: int = 15, max_len: int = 45) -> list[int]:
    """The first ``n`` test reviews of ``min_len``-``max_len`` tokens (short enough to read every bar);
    the first ``n`` reviews when none is that long."""
    idx = [i for i in range(len(split)) if min_len <= len(split.tokens(i)) <= max_len][:n]
    return idx or list(range(min(n, len(split))))


def attention_panels(df: pd.DataFrame, kinds: Sequence[str], cfg: TextConfig, n_per_kind: int, figure: str):
    """``n_per_kind`` test reviews per dataset kind (one row per kind) with the first run's attention model.
    ``figure`` names the paper's figure (e.g. "Fig. 10"); the title adds the paper, datasets and run."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(kinds), n_per_kind, figsize=(7 * n_per_kind, 3 * len(kinds)), squeeze=False)
    for r, kind in enumerate(kinds):
        model, ds = load_attention(df, kind, cfg)
        idx = panel_reviews(ds.test, n_per_kind)
        for c, (i, a) in enumerate(zip(idx, model.attention_weights([ds.test.texts[i] for i in idx]))):
            a = np.asarray(a, dtype=float)
            corr, noncorr = ds.test.corr[i], ds.test.noncorr[i]
            title = f"{kind}: label {ds.test.labels[i]}, attention on corr. articles {a[corr].sum():.2f}"
            if noncorr.any():
                title += f", non-corr. {a[noncorr].sum():.2f}"
            plot_attention(axes[r, c], ds.test.tokens(i), a, corr, noncorr, title)
    names = [DATASET_NAMES.get(k, k) for k in kinds]
    where = f"the {names[0]} dataset" if len(kinds) == 1 else f"the {' and '.join(names)} datasets (rows, top to bottom)"
    fig.suptitle(f"{PAPER} {figure}: attention weights on {where}, {n_per_kind} test reviews each, "
                 f"first of {len(cfg.seeds)} runs (seed {cfg.seeds[0]})")
    fig.tight_layout()
    return fig


__all__ = ["ROLE_COLOURS", "role_colours", "plot_attention", "panel_reviews", "attention_panels"]
