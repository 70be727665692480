"""CEBaB figures: Figure 2 (ICaCE-Error per aspect) and Figures 10-12 (one figure per distance).

The paper's Figure 2 shows, for the 5-way BERT model, ICaCE-Error averaged per aspect for the three
distances; Figures 10, 11 and 12 show every (model, task) setting for cosine, NormDiff and L2.  Bars
are our mean over seeds with the seed std as error bars, red ticks the paper's Table 10 value, and a
star marks the best (lowest) method of each panel -- all three distances are lower-is-better.  The
paper prints no per-aspect numbers, so Figure 2's red ticks stand in an extra "all aspects" group: the
paper's Table 10 value (pooled over the aspects) beside our Table 10 value.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ...data.cebab import PAPER_MODEL
from ...plotting import grouped_bars
from ...tables import aggregate_seeds, paper_values
from ..agreement import best_position
from . import metrics as cb
from .runner import TASK_TABLE, seeds_label

#: metric -> (figure file name without .png, the paper's figure)
FIGURE_OF_METRIC = {"cosine": ("cebab_fig10_icace_cosine", "Figure 10"),
                    "normdiff": ("cebab_fig11_icace_normdiff", "Figure 11"),
                    "l2": ("cebab_fig12_icace_l2", "Figure 12")}
TASK_ORDER = ("binary", "ternary", "5-way")
#: Figure 2's extra x group: every aspect's pairs pooled (Table 10), where the paper's number stands
ALL_ASPECTS = "all aspects\n(Table 10)"


def per_aspect_table(per_pair: pd.DataFrame) -> pd.DataFrame:
    """ICaCE-Error per (model, task, explainer, aspect, metric): mean and population std over seeds
    (as the paper's ±) of the per-seed mean over that aspect's pairs (Figure 2 averages per aspect)."""
    cols = ["model", "task", "explainer", "aspect", "metric", "ours", "ours_std", "n_seeds", "n_pairs"]
    if per_pair.empty:
        return pd.DataFrame(columns=cols)
    keys = ["model", "task", "explainer", "aspect", "seed"]
    metrics = list(cb.METRICS)
    per_seed = per_pair.groupby(keys)[metrics].mean().reset_index()
    n_pairs = per_pair.groupby(keys).size().groupby(["model", "task", "explainer", "aspect"]).mean()
    long = per_seed.melt(id_vars=keys, value_vars=metrics, var_name="metric", value_name="value")
    out = aggregate_seeds(long, ["model", "task", "explainer", "aspect", "metric"], ddof=0)
    out["n_pairs"] = out.set_index(["model", "task", "explainer", "aspect"]).index.map(n_pairs).to_numpy()
    return out[cols]


def best_index(values: Sequence[float], lower_is_better: bool = True) -> int | None:
    """Position of the best finite value (the starred method): the project's one "best" rule,
    :func:`xaibench.evaluation.agreement.best_position`; ``None`` when there is none."""
    return best_position(values, lower_is_better)


def _seeds(n_seeds) -> str:
    """'5 seeds' / '3-5 seeds' from an int or a column of per-cell seed counts."""
    return seeds_label([n_seeds] if isinstance(n_seeds, (int, np.integer)) else n_seeds)


def _order(explainers: Sequence[str], present: set[str]) -> list[str]:
    return [e for e in explainers if e in present]


def figure2_paper_values(model: str, task: str = "5-way") -> pd.DataFrame:
    """The paper's printed numbers for Figure 2's setting: its Table 10 rows (``explainer, metric, paper``)
    for the paper model our ``model`` is compared with (:data:`PAPER_MODEL`) and ``task``, pooled over the
    aspects -- the paper prints none per aspect.  Empty when the paper has no such row."""
    cols = ["explainer", "metric", "paper"]
    paper_model, table = PAPER_MODEL.get(model), TASK_TABLE.get(task)
    if paper_model is None or table is None:
        return pd.DataFrame(columns=cols)
    pv = paper_values("cebab", paper_table=table, model=paper_model, task=task)
    return pv.rename(columns={"method": "explainer", "value": "paper"})[cols].astype({"paper": float})


def plot_per_aspect(table: pd.DataFrame, model: str, task: str = "5-way", explainers: Sequence[str] = (),
                    t10: pd.DataFrame | None = None):
    """Figure 2: grouped bars (x = aspect, colour = explainer), one panel per distance; the best
    explainer per (aspect, distance) is starred.  The paper prints no per-aspect numbers, so an extra
    group :data:`ALL_ASPECTS` holds our Table 10 value (``t10``: :func:`.runner.icace_error_table`; no
    bars without it) and, as red ticks, the paper's Table 10 value for the compared model
    (:func:`figure2_paper_values`).  Returns the seaborn FacetGrid (``None`` if empty)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    sub = table[(table["model"] == model) & (table["task"] == task)]
    if sub.empty:
        return None
    hue_order = _order(explainers or sorted(set(sub["explainer"])), set(sub["explainer"]))
    aspects = sorted(set(sub["aspect"])) + [ALL_ASPECTS]
    pooled = pd.DataFrame() if t10 is None else t10[(t10["model"] == model) & (t10["task"] == task)]
    plot = sub if pooled.empty else pd.concat(
        [sub, pooled[["model", "task", "explainer", "metric", "ours", "ours_std"]].assign(aspect=ALL_ASPECTS)],
        ignore_index=True)
    paper = figure2_paper_values(model, task).set_index(["metric", "explainer"])["paper"]
    g = sns.catplot(data=plot, x="aspect", y="ours", hue="explainer", col="metric", kind="bar",
                    order=aspects, hue_order=hue_order, col_order=[m for m in ("cosine", "l2", "normdiff")
                                                                   if m in set(sub["metric"])],
                    height=3.0, aspect=1.4, sharey=False, palette="deep", errorbar=None)
    n = len(hue_order)
    width = 0.8 / n
    for metric, ax in g.axes_dict.items():
        d = plot[plot["metric"] == metric].set_index(["aspect", "explainer"])
        for i, aspect in enumerate(aspects):
            xs = [i - 0.4 + width * (j + 0.5) for j in range(n)]
            vals = [d["ours"].get((aspect, e), np.nan) for e in hue_order]
            errs = [d["ours_std"].get((aspect, e), np.nan) for e in hue_order]
            ax.errorbar(xs, vals, yerr=np.nan_to_num(np.asarray(errs, dtype=float)), fmt="none", c="0.3", lw=0.8)
            b = best_index(vals, cb.METRICS[metric].lower_is_better)
            if b is not None:
                ax.text(xs[b], vals[b] + np.nan_to_num(errs[b]) + 0.02, "★", ha="center", fontsize=11)
        drawn = [(len(aspects) - 1 - 0.4 + width * (j + 0.5), paper.get((metric, e), np.nan))
                 for j, e in enumerate(hue_order)]
        drawn = [(x, y) for x, y in drawn if np.isfinite(y)]
        if drawn:
            ax.scatter(*zip(*drawn), marker="_", s=max(40.0, 320.0 / n), linewidths=2, c="crimson", zorder=3,
                       label="paper")
        ax.axvline(len(aspects) - 1.5, c="0.6", lw=0.8, ls="--")
        ax.set_title(metric)
        ax.set_xlabel("")
    g.set_axis_labels("", "ICaCE-Error")
    paper_model = PAPER_MODEL.get(model, "?")
    if paper.notna().any():
        note = f"paper: Table 10 ({paper_model}), pooled over the aspects; no per-aspect number printed"
    else:
        note = f"paper: no number printed for {model}, {task} (none per aspect; no Table 10 row)"
    handle = plt.Line2D([], [], marker="_", ls="none", c="crimson", markersize=12, mew=2)
    g.figure.legend([handle], [note], loc="upper center", bbox_to_anchor=(0.45, 0.0), frameon=False, fontsize=9)
    ours_all = "bars: our Table 10" if len(pooled) else "our Table 10 not drawn here (see Figures 10-12)"
    g.figure.suptitle(f"CEBaB (Abraham et al. 2022) Figure 2: ICaCE-Error per aspect, {model}, {task} task, "
                      f"{_seeds(sub['n_seeds'])} (mean ± population std; ★ best)\nright of the dashed line: all "
                      f"aspects pooled ({ours_all}; red: the paper's Table 10)", y=1.12)
    return g


def plot_metric_grid(t10: pd.DataFrame, metric: str, explainers: Sequence[str] = ()):
    """Figures 10-12: one panel per (model, task) for one distance; bars = ours ± std over seeds, red
    tick = the paper's value for the compared model, ★ = our best method.  Returns the FacetGrid."""
    import seaborn as sns

    sub = t10[t10["metric"] == metric]
    if sub.empty:
        return None
    order = _order(explainers or sorted(set(sub["explainer"])), set(sub["explainer"]))
    tasks = [t for t in TASK_ORDER if t in set(sub["task"])] + sorted(set(sub["task"]) - set(TASK_ORDER))
    g = sns.catplot(data=sub, x="explainer", y="ours", row="model", col="task", col_order=tasks, kind="bar",
                    order=order, hue="explainer", hue_order=order, legend=False, height=2.6, aspect=1.45,
                    sharey=False, palette="deep", errorbar=None)
    for (mdl, task), ax in g.axes_dict.items():
        d = sub[(sub["model"] == mdl) & (sub["task"] == task)].set_index("explainer").reindex(order)
        if d["ours"].isna().all():
            ax.set_title(f"{mdl} · {task} (not run)")
            continue
        xs = np.arange(len(order))
        ax.errorbar(xs, d["ours"], yerr=d["ours_std"].fillna(0), fmt="none", c="0.3", lw=1)
        ax.scatter(xs, d["paper"], marker="_", s=220, c="crimson", zorder=3, label="paper")
        for x in np.flatnonzero(d["ours"].isna().to_numpy()):  # a method without results in this panel
            ax.text(x, 0.01, "not run", rotation=90, ha="center", va="bottom", fontsize=7, color="0.4")
        b = best_index(d["ours"].to_numpy(), cb.METRICS[metric].lower_is_better)
        if b is not None:
            top = d["ours"].iloc[b] + np.nan_to_num(d["ours_std"].iloc[b])
            ax.text(b, top + 0.02, "★", ha="center", fontsize=13)
        ax.tick_params(axis="x", rotation=60)
        pm = d["paper_model"].dropna().iloc[0] if d["paper_model"].notna().any() else "?"
        ax.set_title(f"{mdl} · {task} (paper: {pm}; {_seeds(d['n_seeds'])})", fontsize=9)
    g.set_axis_labels("", f"ICaCE-Error ({metric})")
    fig_name = FIGURE_OF_METRIC.get(metric, ("", "Figure"))[1]
    g.figure.suptitle(f"CEBaB (Abraham et al. 2022) {fig_name} / Table 10: ICaCE-Error ({metric}), every task, "
                      f"{_seeds(sub['n_seeds'])} (bars: ours ± population std; red: paper; ★ our best)", y=1.02)
    return g


def plot_table4(t4: pd.DataFrame):
    """Table 4: CaCE (change of the predicted stars) per aspect and direction, ours ± population std
    over seeds per model beside the paper's BERT.  Returns the Figure (``None`` if empty)."""
    import matplotlib.pyplot as plt

    if t4 is None or t4.empty:
        return None
    fig, ax = plt.subplots(figsize=(12, 3.6))
    d = t4.assign(cell=t4["aspect"] + "\n" + t4["direction"].str.replace("_to_", "→"))
    first = d["model"].iloc[0]
    long = pd.concat([d.assign(source="ours (" + d["model"] + ")", value=d["ours"], err=d["ours_std"]),
                      d[d["model"] == first].assign(source="paper (BERT)", value=d["paper"], err=d["paper_std"])])
    grouped_bars(long, "cell", "value", "source", "err", ax, order=list(dict.fromkeys(d["cell"])))
    ax.tick_params(axis="x", labelsize=8)  # 12 two-line labels: at the default size "ambiance" ones touch
    ax.axhline(0, c="k", lw=0.8)
    ax.set_ylabel("CaCE (stars)")
    ax.set_title(f"CEBaB (Abraham et al. 2022) Table 4: CaCE, 5-way task, {_seeds(t4['n_seeds'])} "
                 "(ours ± population std; paper ± std)", fontsize=10)
    fig.tight_layout()
    return fig


def plot_model_performance(table: pd.DataFrame):
    """Table 8: macro-F1 per (task, condition, split), ours (mean ± std over seeds) beside the paper."""
    import matplotlib.pyplot as plt

    plot = table.dropna(subset=["ours"]).copy()
    if plot.empty:
        return None
    plot["cell"] = plot["task"] + "\n" + plot["condition"].str[:4] + "/" + plot["split"]
    fig, ax = plt.subplots(figsize=(13, 4))
    long = pd.concat([plot.assign(source="ours (" + plot["model"] + ")", value=plot["ours"], err=plot["ours_std"]),
                      plot.assign(source="paper (" + plot["paper_model"] + ")", value=plot["paper"], err=np.nan)])
    grouped_bars(long, "cell", "value", "source", "err", ax, order=list(dict.fromkeys(plot["cell"])))
    ax.set_ylabel("macro-F1")
    ax.set_ylim(0, 1)
    ax.set_title(f"CEBaB (Abraham et al. 2022) Table 8: classifier macro-F1, every task, "
                 f"{_seeds(plot['n_seeds'])} (ours ± sample std over seeds)", fontsize=10)
    fig.tight_layout()
    return fig


def plot_inlp_probe(acc: pd.DataFrame, model: str, task: str, seed: int):
    """INLP: held-out probe accuracy after each projection, per aspect (dashed: majority rate)."""
    import seaborn as sns

    g = sns.relplot(data=acc, x="iteration", y="dev_accuracy", col="aspect", kind="line", marker="o", height=2.6)
    for ax, (_, sub) in zip(g.axes.flat, acc.groupby("aspect", sort=False)):
        ax.axhline(sub["chance"].iloc[0], ls="--", c="grey")
    g.set_axis_labels("projections", "held-out probe accuracy")
    g.figure.suptitle(f"CEBaB (Abraham et al. 2022) App. F, INLP erasure check: {model}, {task} task, seed {seed} "
                      "(one seed: no error bars)", y=1.04)
    return g


def plot_icace_summary(summ: pd.DataFrame, model: str, task: str, seed: int, n_pairs: int):
    """Notebook 10: ICaCE-Error per method and distance for one (model, task, seed) -- one seed, so
    no error bars (notebook 20 has the five-seed Table 10)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(8, 3.2))
    sns.barplot(data=summ, x="method", y="value", hue="metric", ax=ax, errorbar=None)
    ax.set_ylabel("ICaCE-Error")
    ax.set_xlabel("")
    ax.legend(title="metric", bbox_to_anchor=(1.01, 1), loc="upper left")
    ax.set_title(f"CEBaB (Abraham et al. 2022) Table 10 quantities, one run: {model}, {task} task, seed {seed}, "
                 f"{n_pairs} test pairs", fontsize=9)
    fig.tight_layout()
    return fig
