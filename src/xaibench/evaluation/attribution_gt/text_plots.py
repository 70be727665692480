"""Figures of the text experiments (Zhou et al. 2022, Secs. 6-7): attention bar plots of single reviews
(Figs. 10-11: one bar per token, coloured by its ground-truth role), Attr% per method and dataset
(Fig. 1 left), attention Attr% after every training epoch, and rationale precision / recall against the
dataset-wide optimum (Figs. 12-13, top).  Figures are returned; save them with
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


METHOD_NAMES = {"attention": "attention", "random_words": "random words", "grad_x_input": "Gradient × Input",
                "integrated_gradients": "Integrated Gradients", "lime": "LIME", "shap": "SHAP"}


def attr_bars(table: pd.DataFrame):
    """Fig. 1 (left) as bars: Attr% on the correlating articles per method (x) and dataset (colour), error
    bars the std over runs, the dotted line the articles' mean token share.  The paper's printed numbers
    (Sec. 6.1) stand beside ours in red: a tick at every bar with a ``paper`` value (attention on the article
    dataset: 8.6 %) and a dashed line at ``paper_uniform_share`` (articles are 7.9 % of all words); the
    paper's Fig. 1 (left) table prints no other number.  ``table``: :func:`.tables.attention_table`."""
    import matplotlib.pyplot as plt

    from ...plotting import grouped_bars

    sub = table[table.region == "corr"].assign(
        method=lambda d: d.method.map(lambda m: METHOD_NAMES.get(m, m)),
        dataset=lambda d: d.dataset.map(lambda k: DATASET_NAMES.get(k, k)))
    fig, ax = plt.subplots(figsize=(10, 4))
    order, hue_order = list(dict.fromkeys(sub.method)), list(dict.fromkeys(sub.dataset))
    grouped_bars(sub, "method", "ours", "dataset", "ours_std", ax, order=order, hue_order=hue_order, legend=False)
    ax.axhline(sub.uniform_share.mean(), color="k", ls=":", label="ours: uniform (article token share)")
    width = 0.8 / len(hue_order)
    paper = sub.dropna(subset=["paper"]) if "paper" in sub else sub.iloc[:0]
    for r in paper.itertuples():
        x = order.index(r.method) - 0.4 + width * (hue_order.index(r.dataset) + 0.5)
        ax.scatter([x], [r.paper], marker="_", s=300, linewidths=2.5, c="crimson", zorder=4,
                   label=f"paper (Sec. 6.1): {r.method} on the {r.dataset} dataset, {r.paper:.1%}")
    shares = sub["paper_uniform_share"].dropna().unique() if "paper_uniform_share" in sub else []
    for v in shares:
        ax.axhline(float(v), color="crimson", ls="--", lw=0.9,
                   label=f"paper (Sec. 6.1): articles are {float(v):.1%} of all words")
    if not len(paper) and not len(shares):
        ax.plot([], [], ls="none", label="paper: no number printed")
    ax.set_ylabel("Attr% on correlating articles")
    ax.tick_params(axis="x", rotation=30)
    plt.setp(ax.get_xticklabels(), ha="right", rotation_mode="anchor")  # long method names must not overlap
    ax.legend(bbox_to_anchor=(1.01, 1), loc="upper left")
    n_att = int(table.loc[table.method == "attention", "n_runs"].max())
    runs = f"{n_att} attention run" + ("s" if n_att != 1 else "")
    ax.set_title(f"{PAPER}, Fig. 1 (left): Attr% on correlating articles ({runs} per dataset; "
                 "explainers: the first run's model)\nideal: 1 for a > 97% accurate model (only the articles carry "
                 "the label); red: the paper's numbers (Sec. 6.1; none printed for the other bars)", fontsize=10)
    fig.tight_layout()
    return fig


def attention_training_curves(epochs: pd.DataFrame, token_share: float):
    """Attention Attr% on the correlating articles (validation) against validation accuracy after every epoch,
    one line per run, one colour per dataset; dotted: the 0.97 stop threshold, grey: ``token_share``, the
    article dataset's article token share (what a uniform attention gets there).
    ``epochs``: :func:`.tables.attention_epochs_table`."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    colours = dict(zip(epochs.dataset.unique(), plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for (kind, _), g in epochs.groupby(["dataset", "run"], sort=False):
        ax.plot(g.dev_acc, g.val_attn_corr, "-o", color=colours[kind], ms=3, lw=0.8, alpha=0.8)
    for kind, c in colours.items():
        ax.plot([], [], "-o", color=c, label=DATASET_NAMES.get(kind, kind))
    ax.axvline(0.97, color="k", ls=":", lw=0.8, label="stop threshold (0.97)")
    ax.axhline(token_share, color="grey", lw=0.8, label="token share of the articles\n(article dataset)")
    ax.set_xlabel("validation accuracy after the epoch")
    ax.set_ylabel("attention Attr% on correlating\narticles (validation)")
    ax.legend(bbox_to_anchor=(1.01, 1), loc="upper left", fontsize=8)
    n_runs = epochs.groupby("dataset").run.nunique().max() if len(epochs) else 0
    runs = f"{n_runs} run" + ("s" if n_runs != 1 else "")
    ax.set_title(f"Beyond {PAPER} (Sec. 6): attention Attr% after each training epoch, {runs} x "
                 f"{epochs.dataset.nunique()} datasets", fontsize=10)
    fig.tight_layout()
    return fig


def failed_rationales(rat: pd.DataFrame) -> pd.Series:
    """``True`` for a rationale model that failed: test accuracy not above the paper's 97 %
    (:data:`.tables.TEXT_LEARNED_ACC`); its selections are not a result and are not plotted.  Without a
    ``test_acc`` column no model can be called failed (all ``False``)."""
    from .tables import TEXT_LEARNED_ACC

    if "test_acc" not in rat.columns:
        return pd.Series(False, index=rat.index)
    return ~(rat.test_acc > TEXT_LEARNED_ACC)


def _failed_note(failed: pd.DataFrame) -> str:
    if not len(failed):
        return ""
    names = ", ".join(f"{DATASET_NAMES.get(r.dataset, r.dataset)} {r.model.upper()} at rate {r.target_rate:g} "
                      f"(test acc {r.test_acc:.2f})" for r in failed.itertuples())
    return f"\nfailed, not shown (test accuracy <= 97%): {names}"


def rationale_precision_recall(rat: pd.DataFrame, corr_share: float):
    """Fig. 12 (top): precision and recall of the article dataset's rationale models against their actual
    selection rate, with the dataset-wide optimum for a test set whose correlating-article share is
    ``corr_share`` (precision ``min(1, share / rate)``, recall ``min(1, rate / share)``).  Failed models
    (:func:`failed_rationales`) are left out and named in the title."""
    import matplotlib.pyplot as plt

    art_all = rat[rat.dataset == "article"]
    bad = failed_rationales(art_all)
    art, failed = art_all[~bad], art_all[bad]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    xs = np.linspace(0.005, max(0.3, float(art.rate.max()) if len(art) else 0.3), 100)
    for ax, metric in zip(axes, ("precision", "recall")):
        for model, g in art.groupby("model"):
            ax.scatter(g.rate, g[metric], label=model.upper(), s=40)
        ax.plot(xs, np.minimum(1, corr_share / xs) if metric == "precision" else np.minimum(1, xs / corr_share),
                "g-", label="dataset-wide optimum")
        ax.set_xlabel("actual selection rate (test)")
        ax.set_ylabel(metric)
        ax.set_ylim(-0.02, 1.05)
    axes[0].legend()
    fig.suptitle(f"{PAPER}, Fig. 12 (top): rationale precision / recall on the article dataset "
                 f"({len(art)} of {len(art_all)} models, one per model type and selection rate, that learned)"
                 + _failed_note(failed), fontsize=10)
    fig.tight_layout()
    return fig


def rationale_cn_nc(rat: pd.DataFrame):
    """Fig. 13 (top): per CN / NC rationale model, the precision on correlating articles, its dataset-wide
    optimum and the share of non-correlating articles among the selected words; ``None`` without CN/NC rows.
    Failed models (:func:`failed_rationales`) are left out and named in the title."""
    import seaborn as sns

    cnnc_all = rat[rat.dataset.isin(["cn", "nc"])]
    if not len(cnnc_all):
        return None
    bad = failed_rationales(cnnc_all)
    cnnc, failed = cnnc_all[~bad], cnnc_all[bad]
    if not len(cnnc):
        return None
    names = {"precision": "precision", "optimal_precision": "dataset-wide optimal precision",
             "noncorr_share_of_selection": "non-correlating articles among the selection"}
    long = cnnc.melt(id_vars=["dataset", "model"], value_vars=list(names), var_name="quantity", value_name="value")
    long["model"] = long.model.str.upper()
    long["dataset"] = long.dataset.map(lambda k: DATASET_NAMES.get(k, k))
    long["quantity"] = long.quantity.map(names)
    g = sns.catplot(data=long, x="dataset", y="value", hue="quantity", col="model", kind="bar", height=3.5)
    g.set_axis_labels("dataset", "share")
    g.set_titles("{col_name}")
    g.figure.suptitle(f"{PAPER}, Fig. 13 (top): precision on correlating articles vs. the dataset-wide optimum, "
                      f"and non-correlating articles among the selection ({len(cnnc)} of {len(cnnc_all)} models, one "
                      "per dataset and model type, that learned)" + _failed_note(failed), y=1.06, fontsize=10)
    return g.figure


__all__ = ["ROLE_COLOURS", "METHOD_NAMES", "role_colours", "plot_attention", "panel_reviews", "attention_panels",
           "attr_bars", "attention_training_curves", "failed_rationales", "rationale_precision_recall",
           "rationale_cn_nc"]
