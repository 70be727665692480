"""Figures of the human-grounded evaluation (notebooks 11 and 21).  Each returns the figure; save
it with :func:`xaibench.plotting.save_figure` (atomic, respects the run profile, shows the PNG)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from .methods import PAPER_METHODS, method_label

TASK_NAMES = ("task_1", "task_2", "task_3")


def answer_distribution_plot(dist: pd.DataFrame) -> Any:
    """Share of each answer score per task and dataset (:func:`.scoring.answer_distribution`)."""
    import seaborn as sns

    g = sns.catplot(data=dist, x="score", y="share", hue="dataset", col="task", kind="bar", height=2.8, aspect=1.1)
    g.set_axis_labels("answer score", "share of answers")
    g.figure.suptitle("Answer levels of the simulated participants (simulated, not human)", y=1.04)
    return g.figure


def task_scores_plot(scores: pd.DataFrame, datasets: Sequence[str],
                     methods: Sequence[str] = tuple(PAPER_METHODS)) -> Any:
    """Column A of every task and dataset: ours (simulated, error bar = ``ours_std``: the std over seeds)
    beside the paper's human score, per method."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, len(datasets), figsize=(5.5 * len(datasets), 10), sharey="row", squeeze=False)
    labels = [method_label(m) for m in methods]
    for i, task in enumerate(TASK_NAMES):
        for j, ds in enumerate(datasets):
            ax = axes[i, j]
            s = (scores[(scores.task == task) & (scores.dataset == ds) & (scores.subset == "all")]
                 .set_index("method").reindex(methods))
            x = np.arange(len(methods))
            ax.bar(x - 0.2, s["ours"], 0.4, yerr=s["ours_std"].fillna(0), label="ours (simulated)", color="tab:orange",
                   capsize=2)
            ax.bar(x + 0.2, s["paper"], 0.4, label="paper (human)", color="tab:gray")
            ax.axhline(0, color="k", lw=0.6)
            ax.set_xticks(x, labels, rotation=45, ha="right", fontsize=8)
            ax.set_title(f"{task.replace('_', ' ')} · {ds} · column A", fontsize=10)
            if j == 0:
                ax.set_ylabel("average score")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("Human-grounded tasks: SIMULATED participants vs the paper's human participants", y=1.0)
    fig.tight_layout()
    return fig


def rank_agreement_plot(scores: pd.DataFrame, agree: pd.DataFrame) -> Any:
    """Per task (column A): our score against the paper's, one point per method and dataset, with
    the Spearman rho of :func:`xaibench.evaluation.agreement.rank_agreement` in the title."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for ax, task in zip(axes, TASK_NAMES):
        s = scores[(scores.task == task) & (scores.subset == "all")]
        sns.scatterplot(data=s, x="paper", y="ours", hue="dataset", style="dataset", ax=ax, s=50)
        for r in s.itertuples():
            ax.annotate(method_label(r.method), (r.paper, r.ours), fontsize=6, alpha=0.7, xytext=(2, 2),
                        textcoords="offset points")
        lo = min(s["paper"].min(), s["ours"].min()) - 0.05
        hi = max(s["paper"].max(), s["ours"].max()) + 0.05
        ax.plot([lo, hi], [lo, hi], color="k", lw=0.5, ls="--")
        a = agree[(agree.task == task) & (agree.subset == "all")].set_index("dataset")["spearman"]
        ax.set_title(f"{task.replace('_', ' ')} (column A); Spearman " + ", ".join(f"{d} {v:+.2f}" for d, v in a.items()),
                     fontsize=9)
        ax.set_xlabel("paper (human)")
        ax.set_ylabel("ours (simulated)")
    fig.suptitle("Per-method scores: simulated participants vs the paper's humans", y=1.02)
    fig.tight_layout()
    return fig


def cnn_heatmap_figure(panels: Sequence[tuple[dict[str, Any], str]], dataset: str, max_tokens: int = 80) -> Any:
    """Heat maps of the paper's methods on the well-trained CNN of ``dataset``, one panel per input
    (``panels``: :func:`.pipeline.explanation_panels`)."""
    from ...viz import heatmap_grid

    return heatmap_grid([[p] for p in panels], max_tokens=max_tokens,
                        suptitle=f"Local explanations of the well-trained 1D CNN ({dataset}); "
                                 "red = for, blue = against the predicted class")


def cebab_heatmap_figure(attrs: dict[str, Sequence[Any]], model: str, max_tokens: int = 45) -> Any:
    """Heat maps of the model-generic methods on CEBaB reviews: one row per method
    (:data:`.pipeline.CEBAB_METHODS`), one column per review.  ``attrs``: :func:`.pipeline.explain_cebab`."""
    from ...viz import heatmap_grid
    from .pipeline import CEBAB_METHODS

    methods = [m for m in CEBAB_METHODS if m in attrs]
    first = attrs[methods[0]]
    preds = [a.target for a in attrs["lime"]] if "lime" in attrs else [a.target for a in first]
    panels = [[({CEBAB_METHODS[m]: attrs[m][k]}, f"review {k + 1}, predicted {p + 1} stars" if i == 0 else "")
               for k, p in enumerate(preds)] for i, m in enumerate(methods)]
    return heatmap_grid(panels, max_tokens=max_tokens, figsize=(9 * len(preds), 1.9 * len(methods)),
                        suptitle=f"CEBaB 5-way {model}: model-generic explanations "
                                 "(red = for, blue = against the predicted rating)")


def cebab_html_heatmaps(attrs: dict[str, Sequence[Any]], model: str) -> list[str]:
    """One HTML heat map per review (all methods as rows), for hovering over raw scores."""
    from ...viz import html_heatmap
    from .pipeline import CEBAB_METHODS

    methods = [m for m in CEBAB_METHODS if m in attrs]
    n = len(attrs[methods[0]])
    preds = [a.target for a in attrs.get("lime", attrs[methods[0]])]
    return [html_heatmap({CEBAB_METHODS[m]: attrs[m][k] for m in methods},
                         title=f"CEBaB · {model} · predicted {preds[k] + 1} stars") for k in range(n)]


__all__ = ["answer_distribution_plot", "task_scores_plot", "rank_agreement_plot", "cnn_heatmap_figure",
           "cebab_heatmap_figure", "cebab_html_heatmaps"]
