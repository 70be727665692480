"""Figures of the image experiments (Zhou et al. 2022, Sec. 5): the manipulations and their effective
regions (Figs. 4 / 14), Attr% against ER size (Fig. 5), test accuracy during training (Fig. 6),
visibility (Fig. 7) and the label keep-probability r with the Shapley range (Fig. 8).

Every figure names the paper's figure and its run count in the title, and marks the runs whose model
learned the manipulation (test accuracy > :data:`.tables.LEARNED_ACC`, filled markers) apart from those
that did not (open markers): only the former have the effective region as ground truth.  Figures are
returned; save them with :func:`xaibench.plotting.save_figure`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...tables import paper_values
from .metrics import shapley_manipulation_range
from .tables import LEARNED_ACC, PAPER as PAPER_VALUES, saliency_per_run

PAPER = "Zhou et al. 2022"
METHOD_NAMES = {"gradient": "Gradient", "smoothgrad": "SmoothGrad", "cam": "Grad-CAM", "lime": "LIME", "shap": "SHAP"}
KIND_COLOURS = {"blur": "tab:blue", "brightness": "tab:orange", "hue": "tab:green", "noise": "tab:red",
                "watermark": "tab:purple"}
ATTR_LABEL = "Attr% on the effective region"
#: the colour scale of the effective-region masks (:func:`manipulation_grid`)
ER_COLOUR_LABEL = "pixel in the effective region (mask: 0 = outside, 1 = inside)"
#: Fig. 5's note on the paper's Attr% numbers: the one it prints (SHAP's average, Sec. 5.1) is missing from our
#: copy of its text (src/xaibench/resources/attribution_gt.csv, a ``missing:`` row), so none is drawn
FIG5_NO_PAPER_ATTR = "paper: no Attr% number in the text we have\n(Sec. 5.1's SHAP average is missing)"


def method_name(method: str) -> str:
    """The method's name as the paper writes it (``cam`` -> ``Grad-CAM``)."""
    return METHOD_NAMES.get(method, method)


def count_runs(n: int) -> str:
    """``"1 run"``, ``"20 runs"``."""
    return f"{n} run" if n == 1 else f"{n} runs"


def learned_note(n_learned: int, n_runs: int) -> str:
    """``"3 of 20 runs learned the manipulation (test accuracy > 95%)"``."""
    return f"{n_learned} of {count_runs(n_runs)} learned the manipulation (test accuracy > {LEARNED_ACC:.0%})"


def method_order(methods) -> list[str]:
    """The methods present, in the paper's order (Gradient, SmoothGrad, Grad-CAM, LIME, SHAP), others after."""
    present = list(dict.fromkeys(methods))
    return [m for m in METHOD_NAMES if m in present] + [m for m in present if m not in METHOD_NAMES]


def _panels(methods, ncols: int | None = None, size: float = 2.8):
    import matplotlib.pyplot as plt

    ncols = ncols or len(methods)
    nrows = int(np.ceil(len(methods) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(size * ncols + 1.8, size * nrows + 0.6), squeeze=False,
                             sharex=True, sharey=True)
    for ax in axes.flat[len(methods):]:
        ax.axis("off")
    return fig, list(axes.flat[:len(methods)])


def _legend(fig, handles_labels: dict) -> None:
    fig.legend(list(handles_labels.values()), list(handles_labels), loc="center left", bbox_to_anchor=(1.0, 0.5),
               fontsize=8, frameon=False)


def _marker(ax, x, y, colour, learned: bool, marker: str = "o", size: float = 40):
    return ax.scatter(x, y, s=size, marker=marker, edgecolors=colour, linewidths=1.2,
                      facecolors=colour if learned else "none")


def manipulation_grid(images: list[np.ndarray], size: int = 112, seed: int = 0):
    """Figs. 4 / 14: the originals, the five manipulations (the r-sweep parameters) and their ERs."""
    import matplotlib.pyplot as plt

    from . import manipulations as mp
    from .image_runner import view

    rng = np.random.default_rng(seed)
    fig, axes = plt.subplots(len(images) + 1, len(mp.KINDS) + 1, figsize=(2 * (len(mp.KINDS) + 1), 2 * (len(images) + 1)))
    for r, img in enumerate(images):
        v = view(img, size, None)
        axes[r, 0].imshow(v)
        axes[r, 0].set_title("original" if r == 0 else "", fontsize=9)
        for c, kind in enumerate(mp.KINDS, start=1):
            axes[r, c].imshow(mp.R_SWEEP[kind](v, rng))
            if r == 0:
                axes[r, c].set_title(kind, fontsize=9)
    axes[-1, 0].text(0.5, 0.5, "effective\nregion", ha="center", va="center", fontsize=10)
    for c, kind in enumerate(mp.KINDS, start=1):
        er = axes[-1, c].imshow(mp.R_SWEEP[kind].er(size), cmap="Greens", vmin=0, vmax=1)
    for ax in axes.flat:
        ax.axis("off")
    fig.suptitle(f"{PAPER}, Figs. 4 and 14: the five manipulations on two test birds and their effective regions "
                 "(green)", fontsize=10)
    fig.tight_layout()
    cbar = fig.colorbar(er, ax=list(axes[-1, 1:]), orientation="horizontal", fraction=0.05, pad=0.04, aspect=60)
    cbar.set_ticks([0, 1], labels=["0: outside", "1: inside"])
    cbar.set_label(ER_COLOUR_LABEL, fontsize=8)
    return fig


def fig5_paper_share() -> tuple[float, int] | None:
    """The paper's printed share of its Fig. 5 runs that learned (Sec. 5.1: 70 %) and their number (100);
    ``None`` when the transcription lacks either."""
    pv = paper_values(PAPER_VALUES, paper_table="Sec 5.1 (text)",
                      metric=["share_of_runs_meeting_accuracy_threshold", "n_models"]).set_index("metric")["value"]
    if not {"share_of_runs_meeting_accuracy_threshold", "n_models"} <= set(pv.index):
        return None
    return float(pv["share_of_runs_meeting_accuracy_threshold"]), int(float(pv["n_models"]))


def fig5_attr_vs_er(attr: pd.DataFrame, experiment: str = "er", protocol: str = ""):
    """Fig. 5: per Fig. 5 run (r = 0.5; ``experiment``), method and class, the mean Attr% on the ER against
    the ER size; colour = manipulation, circle = manipulated positives, square = unchanged negatives,
    filled = learned.  Dotted: a uniform map (Attr% = ER size); green: the ideal Attr% = 1.  ``protocol``
    (e.g. "species groups") is named in the title.  The paper's share of runs that learned
    (:func:`fig5_paper_share`) stands beside ours; the one Attr% number it prints (SHAP's average, Sec. 5.1)
    is missing from our copy of its text, which the legend says (:data:`FIG5_NO_PAPER_ATTR`)."""
    per_run = saliency_per_run(attr[attr.experiment == experiment])
    methods = method_order(per_run.method)
    fig, axes = _panels(methods)
    handles = {}
    for ax, method in zip(axes, methods):
        sub = per_run[per_run.method == method]
        for _, row in sub.iterrows():
            _marker(ax, row.er_size, row.attr_pct, KIND_COLOURS.get(row.manipulation, "k"), bool(row.learned),
                    "o" if row["class"] == "positive" else "s")
        ax.plot([0, 1], [0, 1], "k:", lw=0.8)
        ax.axhline(1.0, color="g", lw=0.8)
        ax.set_title(method_name(method), fontsize=10)
        ax.set_xlabel("ER size (share of the image)")
    axes[0].set_ylabel(ATTR_LABEL)
    for kind in dict.fromkeys(per_run.manipulation):
        handles[kind] = axes[0].scatter([], [], color=KIND_COLOURS.get(kind, "k"), marker="o")
    handles["positive (manipulated)"] = axes[0].scatter([], [], color="0.4", marker="o")
    handles["negative (unchanged)"] = axes[0].scatter([], [], color="0.4", marker="s")
    handles["did not learn (open marker)"] = axes[0].scatter([], [], facecolors="none", edgecolors="0.4")
    share = fig5_paper_share()
    if share is not None:
        handles[f"paper: {share[0]:.0%} of {share[1]} runs learned\n(Sec. 5.1)"] = axes[0].scatter([], [], alpha=0)
    handles[FIG5_NO_PAPER_ATTR] = axes[0].scatter([], [], alpha=0)
    _legend(fig, handles)
    done = per_run.drop_duplicates("run")
    paper_share = f" (paper: {share[0]:.0%} of its {share[1]} runs)" if share is not None else ""
    fig.suptitle(f"{PAPER}, Fig. 5{' (' + protocol + ')' if protocol else ''}: Attr% on the ER vs. ER size at "
                 f"r = 0.5, {count_runs(len(done))}; "
                 f"{learned_note(int(done.learned.sum()), len(done))}{paper_share}\ndotted: a uniform map; green: "
                 "the ideal for a model that learned (the paper's expectation, Attr% = 1); "
                 "no Attr% number of the paper's is drawn", fontsize=10)
    fig.tight_layout()
    return fig


def fig6_attr_vs_acc(track: pd.DataFrame, protocol: str = ""):
    """Fig. 6: per tracked run and method, the mean Attr% on the ER after every epoch against the test
    accuracy after that epoch (one line per run, colour = manipulation); ``None`` without tracking rows."""
    if not len(track):
        return None
    tr = track.groupby(["run", "manipulation", "method", "epoch"], as_index=False)[["attr_pct", "test_acc"]].mean()
    methods = method_order(tr.method)
    fig, axes = _panels(methods, size=3.2)
    handles = {}
    for ax, method in zip(axes, methods):
        for (run, kind), g in tr[tr.method == method].groupby(["run", "manipulation"], sort=False):
            line, = ax.plot(g.test_acc, g.attr_pct, "-o", color=KIND_COLOURS.get(kind, "k"), ms=3, lw=0.8)
            handles.setdefault(kind, line)
        ax.axvline(LEARNED_ACC, color="k", ls=":", lw=0.8)
        ax.set_title(method_name(method), fontsize=10)
        ax.set_xlabel("test accuracy after the epoch")
    axes[0].set_ylabel(ATTR_LABEL)
    _legend(fig, handles)
    last = tr.sort_values("epoch").groupby("run").tail(1)
    n_runs, n_learned = last.run.nunique(), int((last.groupby("run").test_acc.first() > LEARNED_ACC).sum())
    fig.suptitle(f"{PAPER}, Fig. 6{' (' + protocol + ')' if protocol else ''}: Attr% on the ER vs. test accuracy "
                 f"during training, {count_runs(n_runs)} "
                 f"(tracked methods only); {learned_note(n_learned, n_runs)} by the last epoch\ndotted: "
                 f"{LEARNED_ACC:.0%} test accuracy", fontsize=10)
    fig.tight_layout()
    return fig


def fig7_attr_vs_visibility(attr: pd.DataFrame):
    """Fig. 7: per visibility run, method and manipulation, the mean Attr% on the ER (both classes) against
    the visibility level (0 = least visible); one line per manipulation, filled markers = learned runs;
    ``None`` without visibility runs."""
    vis = attr[attr.experiment.str.startswith("visibility")]
    if not len(vis):
        return None
    per_run = saliency_per_run(vis)
    v = per_run.groupby(["manipulation", "method", "level", "run"], as_index=False).agg(
        attr_pct=("attr_pct", "mean"), learned=("learned", "first"))
    methods = method_order(v.method)
    fig, axes = _panels(methods, size=3.0)
    handles = {}
    for ax, method in zip(axes, methods):
        for kind, g in v[v.method == method].groupby("manipulation"):
            g = g.sort_values("level")
            colour = KIND_COLOURS.get(kind, "k")
            handles[kind], = ax.plot(g.level, g.attr_pct, "-", color=colour, lw=1)
            for _, row in g.iterrows():
                _marker(ax, row.level, row.attr_pct, colour, bool(row.learned))
        ax.set_title(method_name(method), fontsize=10)
        ax.set_xlabel("visibility level (0 = least visible)")
    axes[0].set_ylabel(ATTR_LABEL)
    handles["did not learn (open marker)"] = axes[0].scatter([], [], facecolors="none", edgecolors="0.4")
    _legend(fig, handles)
    done = v.drop_duplicates("run")
    fig.suptitle(f"{PAPER}, Fig. 7: Attr% on the ER vs. manipulation visibility at r = 0.5, {count_runs(len(done))} "
                 f"(one per manipulation and level); {learned_note(int(done.learned.sum()), len(done))}",
                 fontsize=10)
    fig.tight_layout()
    return fig


def shapley_band(r_grid: np.ndarray, accuracy: float) -> np.ndarray:
    """Lower end of the Shapley range of the manipulation's attribution (App. B.6) along ``r_grid`` for a
    classifier of ``accuracy`` (clipped to > 0.5, where the range is defined); the upper end is 1."""
    p = max(0.51, float(accuracy))
    return np.array([shapley_manipulation_range(float(r), p)[0] for r in r_grid])


def fig8_attr_vs_r(attr: pd.DataFrame, run_table: pd.DataFrame):
    """Fig. 8: per r-sweep run, method and class, the mean Attr% on the ER against the label keep-probability
    r, one row of panels per class (top: the manipulated positives, as the paper; bottom: the unchanged
    negatives); colour = manipulation, solid = similar pair, dashed = distinct pair, dotted = species groups, filled markers =
    learned runs.  Green: each run's own Shapley range (App. B.6) at its test accuracy, a vertical bar from
    the lower end to 1 at its r (no bar where the accuracy is <= 0.5); ``None`` without r runs."""
    import matplotlib.pyplot as plt

    rs = attr[attr.experiment.str.startswith("r-")]
    if not len(rs):
        return None
    rs = rs.assign(pair_type=rs.experiment.str.split("-").str[1])
    per_run = saliency_per_run(rs).merge(rs.drop_duplicates("run")[["run", "pair_type"]], on="run")
    methods = method_order(per_run.method)
    classes = [c for c in ("positive", "negative") if c in set(per_run["class"])]
    fig, axes = plt.subplots(len(classes), len(methods), figsize=(3.0 * len(methods) + 1.8, 3.0 * len(classes) + 0.8),
                             squeeze=False, sharex=True, sharey=True)
    acc = run_table[run_table.experiment.str.startswith("r-")].drop_duplicates("run").set_index("run").test_acc
    offset = {"similar": -0.008, "distinct": 0.008}
    handles = {}
    for row, cls in enumerate(classes):
        for col, method in enumerate(methods):
            ax = axes[row, col]
            sub = per_run[(per_run.method == method) & (per_run["class"] == cls)]
            for run, g in sub.groupby("run"):
                p = float(acc.get(run, np.nan))
                if p > 0.5:
                    x = float(g.r.iloc[0]) + offset.get(g.pair_type.iloc[0], 0.0)
                    lo = shapley_manipulation_range(float(g.r.iloc[0]), p)[0]
                    band = ax.plot([x, x], [lo, 1.0], color="g", alpha=0.35, lw=3, solid_capstyle="butt")[0]
                    handles.setdefault("Shapley range at the run's test accuracy", band)
            for (kind, ptype), g in sub.groupby(["manipulation", "pair_type"]):
                g = g.sort_values("r")
                colour = KIND_COLOURS.get(kind, "k")
                line, = ax.plot(g.r, g.attr_pct, {"similar": "-", "distinct": "--"}.get(ptype, ":"), color=colour, lw=1)
                handles[f"{kind}, species groups" if ptype == "groups" else f"{kind}, {ptype} pair"] = line
                for _, rr in g.iterrows():
                    _marker(ax, rr.r, rr.attr_pct, colour, bool(rr.learned), size=25)
            if row == 0:
                ax.set_title(method_name(method), fontsize=10)
            if row == len(classes) - 1:
                ax.set_xlabel("label keep-probability r")
        axes[row, 0].set_ylabel(f"{ATTR_LABEL}\n({cls} class)")
    handles["did not learn (open marker)"] = axes[0, 0].scatter([], [], facecolors="none", edgecolors="0.4")
    _legend(fig, handles)
    done = per_run.drop_duplicates("run")
    fig.suptitle(f"{PAPER}, Fig. 8: Attr% on the ER vs. r, {count_runs(len(done))}; "
                 f"{learned_note(int(done.learned.sum()), len(done))}\ngreen: each run's Shapley range at its own "
                 "test accuracy (the paper: > 0.95 for every run); top row: the manipulated positive class",
                 fontsize=10)
    fig.tight_layout()
    return fig


__all__ = ["METHOD_NAMES", "method_name", "method_order", "count_runs", "learned_note", "manipulation_grid",
           "fig5_paper_share", "fig5_attr_vs_er",
           "fig6_attr_vs_acc", "fig7_attr_vs_visibility", "shapley_band", "fig8_attr_vs_r"]
