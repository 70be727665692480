"""Ge et al.'s figures: the rank agreement of each metric with the ground truth (Table 2, and Table 3's
tau for two features per explanation) as bars of our per-seed Kendall tau (mean ± std over seeds),
with the paper's printed value as a black diamond where it printed one."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from . import metrics as cfm

#: the metrics in the order of the paper's tables (erasure, then counterfactual: discrete, continuous)
METRIC_ORDER = ("comp_del", "suff_del", "comp_mask", "suff_mask", "dfr", "validity_disc", "c_disc",
                "validity_soft_disc", "c_soft_disc", "validity_cont", "c_cont", "validity_soft_cont", "c_soft_cont")


def plot_rank_agreement(rows: pd.DataFrame, corr: pd.DataFrame, title: str,
                        labels: Mapping[str, str] | None = None, datasets: Sequence[str] | None = None,
                        statistic: str = "kendall_tau", paper_label: str = "paper"):
    """One panel per dataset: bars = mean ± std over seeds of ``statistic`` per metric (from the per-seed
    ``rows`` of :func:`.tables.correlation_rows`), black diamonds = the ``paper`` column of ``corr`` (a
    :func:`.tables.correlations_table` of the same explainers; NaN draws none).  Every panel lists the
    same metrics in :data:`METRIC_ORDER`.  Returns the Figure (``None`` when ``rows`` has no such statistic)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    rows = rows[rows["statistic"] == statistic]
    if rows.empty:
        return None
    labels = dict(labels or {})
    dsets = [d for d in (datasets or dict.fromkeys(rows["dataset"])) if d in set(rows["dataset"])]
    mets = [m for m in METRIC_ORDER if m in set(rows["metric"])]
    fig, axes = plt.subplots(1, len(dsets), figsize=(5.2 * len(dsets), 0.3 * len(mets) + 1.0),
                             sharey=True, squeeze=False)
    for ax, d in zip(axes[0], dsets):
        sub = rows[rows["dataset"] == d]
        sns.barplot(data=sub, y="metric", x="value", order=mets, ax=ax, errorbar="sd", color="#7aa6c2")
        pv = corr[(corr["dataset"] == d) & (corr["statistic"] == statistic)].set_index("metric")["paper"]
        pts = [(float(pv[m]), i) for i, m in enumerate(mets) if m in pv.index and np.isfinite(pv[m])]
        if pts:
            ax.scatter([p for p, _ in pts], [i for _, i in pts], marker="D", color="black", s=30, zorder=3,
                       label=paper_label)
        ax.set_yticks(range(len(mets)))
        ax.set_yticklabels([cfm.METRICS[m].label for m in mets])
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_xlim(-1.05, 1.05)
        n = sub["seed"].nunique()
        ax.set_title(f"{labels.get(d, d)} ({n} seed{'' if n == 1 else 's'})")
        ax.set_xlabel({"kendall_tau": "Kendall τ", "spearman_rho": "Spearman ρ"}.get(statistic, statistic)
                      + " with the GroundTruth ranking")
        ax.set_ylabel("")
    fig.suptitle(title)
    fig.tight_layout()
    handles = [h for ax in axes[0] for h in ax.get_legend_handles_labels()[0]]
    if handles:   # below the panels, clear of the titles
        fig.legend(handles[:1], [paper_label], loc="upper center", bbox_to_anchor=(0.5, 0.0), frameon=False)
    return fig


def plot_alpha_sweep(table: pd.DataFrame, dataset: str, chosen: float | None = None):
    """Algorithm 2's sweep (:func:`.tables.sweep_table`) on ``dataset``: Validity (cont.) and Proximity (cont.)
    (mean over the six explainers, ± std over seeds) against alpha (log scale), one line per number of Adam
    steps; the paper's range over its explainers other than LR as a grey band; ``chosen`` alpha dotted."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    sub = table[(table["dataset"] == dataset) & (table["statistic"] == "mean_over_explainers")
                & table["alpha"].notna()]
    panels = (("validity_cont", "Validity (cont.)"), ("proximity_cont", "Proximity (cont.)"))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), squeeze=False)
    for ax, (m, label) in zip(axes[0], panels):
        d = sub[sub["metric"] == m].assign(steps=lambda t: t["steps"].astype(int).astype(str) + " steps")
        sns.lineplot(data=d, x="alpha", y="ours", hue="steps", marker="o", ax=ax)
        for _, grp in d.groupby("steps"):
            ax.errorbar(grp["alpha"], grp["ours"], yerr=grp["ours_std"].fillna(0), fmt="none", ecolor="grey", lw=0.8)
        lo, hi = d["paper_min"].dropna(), d["paper_max"].dropna()
        if len(lo):
            ax.axhspan(float(lo.iloc[0]), float(hi.iloc[0]), color="black", alpha=0.15, label="paper (Table 1)")
        if chosen is not None:
            ax.axvline(chosen, color="black", ls=":", lw=1)
        ax.set_xscale("log")
        ax.set_xlabel("α (Eq. 7)")
        ax.set_ylabel(label)
        ax.legend(fontsize=8)
    fig.suptitle(f"Algorithm 2 on {dataset}: Validity and Proximity against α (mean over six explainers)")
    fig.tight_layout()
    return fig
