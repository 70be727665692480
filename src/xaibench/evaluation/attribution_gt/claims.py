"""Headline claims of Zhou et al. (2022) "Do feature attribution methods correctly attribute features?",
checked against our committed tables ``attribution_gt_saliency`` and ``attribution_gt_image_runs`` (images,
Sec. 5), ``attribution_gt_attention`` (attention, Sec. 6) and ``attribution_gt_rationales`` (rationales,
Sec. 7), each judged by the interval of the quantity it is about (:mod:`xaibench.evaluation.claims`).

**Which runs.**  The paper's conclusions rest on models that *learned* the manipulation: image models above
95 % test accuracy (Sec. 5.1), text models above 97 % (Secs. 6-7); only for those is the effective region
(ER) the ground truth.  How many learned is a precondition (``image-runs-learned``, ``text-models-over-97``:
a share with its exact binomial interval, no verdict); every claim about attributions is judged on the
learned runs, and with fewer than :data:`MIN_LEARNED` of them it is ``not comparable`` (the saliency claims
on the per-run table: ``inconclusive``, below).  The image claims
of Sec. 5.1 read the species-group runs (about 1,000 training and 300 test images per class, as the paper);
the species-pair runs (80 training, 18-20 test images) are named in the reasons but never judged.

**Saliency claims per run.**  The Sec. 5.1 saliency claims read ``attribution_gt_saliency_runs``
(:func:`.tables.saliency_runs_table`: one row per run, method and class, ``ours`` = the run's mean Attr% over
its explained images, ``learned`` = test accuracy > 0.95) where it exists.  The independent unit is the learned
species-group run (``group`` ``er-groups``, keyed by ``manipulation`` and ``run``; the two classes averaged
unless the claim compares them), and comparisons are paired within a run: each method's Attr% by its t interval
over the learned runs (below-ideal), SHAP minus the runner-up per run (SHAP-best), positive minus negative
class per learned watermark run (watermark presence).  A claim needs :data:`MIN_LEARNED` learned runs of what
it compares: with fewer it is ``inconclusive`` (its interval shown, the count named), with none ``not
comparable``.  Leaving one ``run`` out (:data:`.claims_stability.REPLICATION`) drops one species-group run with
all its methods and classes.  Without the per-run table the claims read the aggregated table as below.

**Learned runs from aggregated rows.**  The saliency table gives per cell the mean over the learned runs
(``ours_learned``) but the spread over all runs (``ours_std``); the attention table gives mean and spread over
all runs only.  Where some runs did not learn, the learned runs' interval is bounded over what the table
leaves unknown -- the unlearned runs' values, each in [0, 1] (Attr% is a share) -- by :func:`_learned_interval`:
the union of the t intervals over every value the table admits, which holds the exact one.  On the aggregated
saliency table the Sec. 5.1 claims take the manipulation as their unit (t over manipulations; Welch t over the
learned runs for watermark presence, as the table cannot pair the classes within a run).  A per-run attention
table (``attribution_gt_attention_runs`` with ``dataset, seed, corr, noncorr, share_corr_tokens,
share_noncorr_tokens, test_acc``) would give the attention intervals exactly.

**Sweeps.**  The visibility (Sec. 5.3) and r (Sec. 5.4) sweeps are judged on the species-pair sweep runs
(``visibility-<kind>``, ``r``); the species-group sweeps (``visibility-groups-<kind>``, ``r-groups``) are not
read.  They stay on the aggregated table: a visibility level is one run, so its per-run row is the aggregated
one; the r sweep's two runs per r are two fixed species pairs, whose offset the per-r mean keeps out of the
slope's residuals and which the per-run table does not name.

**Thresholds.**  ``IDEAL``: "Attr% ~ 1" reads as at least 0.9.  ``NEAR``: "near the optimum" is within 0.05 of
it, "markedly below" more than 0.05 below, "selects non-correlating articles" at least 0.05 of the selection.
``TREND_BAND``: "no consistent increase with visibility" is a slope below 0.025 Attr% per visibility level
(0.1 over the four steps from least to most visible); the paper prints no slope (Fig. 7 only), so the band is
ours.  A number the paper prints is compared within half its claimed effect (8.6 % against its 7.9 % random
share: within 0.35 points).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from ..claims import (CONFIDENCE, Claim, Interval, MissingTable, Outcome, Tables, by_cells, judge, judge_agrees,
                      paired_interval, precondition, share_interval, side, summary_interval, t_interval,
                      welch_interval)
from .tables import LEARNED_ACC, SHARE_METRIC, TEXT_LEARNED_ACC

PAPER = "Attribution ground truth (Zhou et al. 2022)"

#: fewest learned runs a claim about attributions needs before it is judged
MIN_LEARNED = 3
#: "near the dataset-wide optimum" / "markedly below it" / a non-negligible share of the selection
NEAR = 0.05
#: "Attr% approximately 1": at least this much of the attribution on the ER
IDEAL = 0.9
#: "no consistent increase with visibility": a slope of Attr% below this per visibility level
TREND_BAND = 0.025
#: the paper's share of runs above 95 % test accuracy (Sec. 5.1)
PAPER_LEARNED = 0.70
#: the paper's attention Attr% on the article words and the articles' share of all words (Sec. 6.1)
PAPER_ARTICLE_ATTR, PAPER_ARTICLE_SHARE = 0.086, 0.079

SAL, RUNS, ATT, RAT = ("attribution_gt_saliency", "attribution_gt_image_runs", "attribution_gt_attention",
                       "attribution_gt_rationales")
SAL_RUNS = "attribution_gt_saliency_runs"
GAP = "attribution_gt_attention_gap"
LENGTH_FIT = "attribution_gt_attention_length_fit"
GROUPS, PAIRS = "er-groups", "er"
MORE_GROUP_RUNS = "more learned species-group runs (or a per-run Attr% table to pair within runs)"
MORE_RUNS = "more learned species-group runs"


class _NotComparable(Exception):
    pass


def _judge(fn):
    """Turn a check that may raise :class:`_NotComparable` into one that returns an Outcome."""
    def check(t: Tables) -> Outcome:
        try:
            return fn(t)
        except _NotComparable as err:
            return Outcome(None, "not comparable", str(err))
    check.__name__ = fn.__name__
    check.__doc__ = fn.__doc__
    return check


# ------------------------------------------------------------------------------- learned runs from aggregates
def _learned_moments(mean: float, std: float, n: int, n_learned: int, unlearned: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of the learned runs when every unlearned run has the value ``unlearned`` (one per entry),
    from the mean and std over all ``n`` runs.  For a given sum of the unlearned values, equal values leave the
    learned runs the largest variance, so these are the widest the table admits."""
    k = n - n_learned
    total, squares = n * mean, (n - 1) * std ** 2 + n * mean ** 2
    m = (total - k * unlearned) / n_learned
    return m, (squares - k * unlearned ** 2 - n_learned * m ** 2) / (n_learned - 1)


def _learned_interval(mean: float, std: float, n: int, n_learned: int, learned_mean: float | None = None) -> Interval:
    """t interval of the mean over the learned runs, from a row that gives ``mean`` and ``std`` over all ``n`` runs
    (and ``learned_mean``, the learned runs' mean, where the table has it).  All runs learned: the row's own t
    interval.  Otherwise the union of the t intervals over every value of the unlearned runs (each in [0, 1])
    that the row admits; with fewer than two learned runs, or no spread given, infinite."""
    n, nl = int(n), int(n_learned)
    if nl == n:
        return summary_interval(mean, std, n, "runs")
    effect = float(mean if learned_mean is None or pd.isna(learned_mean) else learned_mean)
    what = f"{nl} learned of {n} runs"
    if nl < 2 or not np.isfinite(std):
        return Interval(effect, -math.inf, math.inf, what, "t over learned runs (fewer than two: no interval)")
    if learned_mean is not None and not pd.isna(learned_mean):
        unlearned = np.array([(n * mean - nl * learned_mean) / (n - nl)])
    else:
        unlearned = np.linspace(0.0, 1.0, 1001)
    m, var = _learned_moments(float(mean), float(std), n, nl, unlearned)
    ok = var >= -1e-9
    if not ok.any():
        return Interval(effect, -math.inf, math.inf, what, "t over learned runs (row inconsistent: no interval)")
    ivs = [summary_interval(mi, math.sqrt(max(vi, 0.0)), nl, "runs") for mi, vi in zip(m[ok], var[ok])]
    if learned_mean is None or pd.isna(learned_mean):
        effect = float((m[ok].min() + m[ok].max()) / 2)
    return Interval(effect, min(iv.low for iv in ivs), max(iv.high for iv in ivs), what,
                    "t over learned runs, bounded over the unlearned runs' unknown values")


def _learned_std(row) -> float:
    """The largest std over the learned runs that a saliency row (``ours``, ``ours_std`` over ``n_runs``,
    ``ours_learned`` over ``n_learned``) admits; exact when every run learned."""
    n, nl = int(row.n_runs), int(row.n_learned)
    if nl == n:
        return float(row.ours_std)
    if nl < 2:
        return math.nan
    unlearned = np.array([(n * row.ours - nl * row.ours_learned) / (n - nl)])
    return math.sqrt(max(float(_learned_moments(row.ours, row.ours_std, n, nl, unlearned)[1][0]), 0.0))


def _slope_interval(x: np.ndarray, y: np.ndarray, unit: str) -> Interval:
    """Least-squares slope of ``y`` on ``x`` with its t interval (``n - 2`` degrees of freedom)."""
    fit = stats.linregress(x, y)
    df = len(x) - 2
    if df < 1:
        return Interval(float(fit.slope), -math.inf, math.inf, f"{len(x)} {unit}", "least-squares slope (no interval)")
    h = float(stats.t.ppf(0.5 + CONFIDENCE / 2, df)) * float(fit.stderr)
    return Interval(float(fit.slope), fit.slope - h, fit.slope + h, f"{len(x)} {unit}", "t on the least-squares slope")


# ------------------------------------------------------------------------------------------- images
def _share_rows(sal: pd.DataFrame) -> pd.DataFrame:
    return sal[sal.metric == SHARE_METRIC]


def _pairs_aside(sal: pd.DataFrame) -> str:
    """The species-pair Fig. 5 runs' learned count, for a reason (they are never judged)."""
    rows = _share_rows(sal)
    rows = rows[rows.group == PAIRS] if "group" in rows.columns else rows.iloc[:0]
    if not len(rows) or not int(rows.iloc[0].n_runs):
        return ""
    r = rows.iloc[0]
    return f"; species-pair runs (not judged): {int(r.n_learned)} of {int(r.n_runs)} learned"


def check_runs_learned(t: Tables) -> Outcome:
    """Precondition: the share of the Fig. 5 runs above 95 % test accuracy (the paper: 0.70), on the species-group
    runs where the table has them, else the species-pair runs; the species-pair share named beside."""
    sal = t(SAL)
    rows = _share_rows(sal)
    if not len(rows):
        return Outcome(None, "not comparable", "the saliency table has no share-of-learned-runs row")
    groups = rows[rows.group == GROUPS] if "group" in rows.columns else rows.iloc[:0]
    row, which = (groups.iloc[0], "species-group") if len(groups) else (rows.iloc[0], "Fig. 5")
    k, n = int(row.n_learned), int(row.n_runs)
    aside = _pairs_aside(sal) if len(groups) else ""
    return precondition(share_interval(k, n), f"{k} of {n} {which} runs learned (test acc > {LEARNED_ACC:.2f}; "
                                              f"paper {PAPER_LEARNED:.2f} of its 100 runs){aside}")


@_judge
def check_learns_all_types(t: Tables) -> Outcome:
    """Every manipulation type is learned: per type, *learned* when at least one Fig. 5 species-group run
    (experiment ``er-groups``; not a species-group sweep) learned it, *not learned* when its share of learned runs
    lies wholly below half the paper's 0.70 (exact binomial)."""
    runs = t(RUNS)
    groups = runs[runs.protocol == "species groups"]
    if "experiment" in groups.columns:  # the Fig. 5 runs, not a species-group sweep
        groups = groups[groups.experiment == GROUPS]
    if not len(groups):
        raise _NotComparable("no species-group runs (the species-pair runs, 18-20 test images, are not judged)")
    cells, parts = {}, []
    for kind, g in groups.groupby("manipulation"):
        iv = share_interval(int(g.learned.sum()), len(g))
        learned = side(iv, 0.0, above=True) == "holds"
        cells[kind] = "holds" if learned else side(iv, PAPER_LEARNED / 2, above=True)
        parts.append(f"{kind} {int(g.learned.sum())}/{len(g)}")
    pairs = runs[(runs.protocol == "species pairs") & (runs.experiment == PAIRS)]
    aside = (f"; Fig. 5 species-pair runs (not judged): {int(pairs.learned.sum())} of {len(pairs)} learned"
             if len(pairs) else "")
    return by_cells(cells, what="manipulation", more="more species-group runs per manipulation",
                    detail=f"learned runs {', '.join(parts)}{aside}")


def _group_cells(t: Tables) -> tuple[pd.DataFrame, int, str]:
    """Attr% rows of the species-group runs (r = 0.5) with at least one learned run, the number of learned runs,
    and the species-pair aside; raises :class:`_NotComparable` without species-group runs or learned runs."""
    sal = t(SAL)
    aside = _pairs_aside(sal)
    if "group" not in sal.columns or not (sal.group == GROUPS).any():
        raise _NotComparable(f"no species-group runs in the saliency table{aside}")
    rows = sal[(sal.group == GROUPS) & (sal.metric == "attr_pct") & np.isclose(sal.r, 0.5)]
    n_learned = int(rows.groupby("manipulation").n_learned.max().sum()) if len(rows) else 0
    n_runs = int(rows.groupby("manipulation").n_runs.max().sum()) if len(rows) else 0
    if n_learned < MIN_LEARNED:
        raise _NotComparable(f"only {n_learned} of {n_runs} species-group runs learned the manipulation "
                             f"(test acc > {LEARNED_ACC:.2f}; at least {MIN_LEARNED} needed){aside}")
    return rows[rows.n_learned > 0], n_learned, aside


def _by_manipulation(cells: pd.DataFrame) -> pd.DataFrame:
    """Learned-run Attr% per manipulation (rows) and method (columns), the two classes averaged."""
    return cells.pivot_table(index="manipulation", columns="method", values="ours_learned", aggfunc="mean").dropna()


def _below_ideal_aggregated(t: Tables) -> Outcome:
    """Below-ideal on the aggregated table: per method, its learned-run Attr% (mean over the manipulations, t over
    them) lies below IDEAL."""
    cells, n, aside = _group_cells(t)
    wide = _by_manipulation(cells)
    ivs = {m: t_interval(wide[m], "manipulations") for m in wide.columns}
    best = max(ivs, key=lambda m: ivs[m].effect)
    return by_cells({m: side(iv, IDEAL, above=False) for m, iv in ivs.items()}, what="method", more=MORE_GROUP_RUNS,
                    detail=f"mean Attr% < {IDEAL} over {len(wide)} manipulations ({n} learned species-group runs); "
                           f"highest {best} {ivs[best].text()}{aside}")


def _shap_best_aggregated(t: Tables) -> Outcome:
    """SHAP-best on the aggregated table: its lead over the runner-up (the other method with the highest mean),
    paired over the manipulations with learned species-group runs, is above 0."""
    cells, n, aside = _group_cells(t)
    wide = _by_manipulation(cells)
    if "shap" not in wide.columns or wide.shape[1] < 2:
        raise _NotComparable("no SHAP and no other method among the learned species-group cells")
    runner = wide.drop(columns="shap").mean().idxmax()
    iv = paired_interval(wide["shap"], wide[runner], "manipulations")
    out = judge(iv, 0.0, what=f"SHAP - {runner} Attr%", more=MORE_GROUP_RUNS)
    return Outcome("shap" if iv.effect > 0 else runner, out.verdict,
                   f"{out.reason} ({n} learned species-group runs){aside}", iv)


def _watermark_presence_aggregated(t: Tables) -> Outcome:
    """Watermark presence on the aggregated table, per method: Welch t over the learned species-group watermark
    runs (unpaired, as the table aggregates the runs)."""
    cells, _, aside = _group_cells(t)
    wm = cells[cells.manipulation == "watermark"]
    if not len(wm) or int(wm.n_learned.max()) < 2:
        raise _NotComparable(f"fewer than two learned species-group watermark runs{aside}")
    out, parts = {}, []
    for method, g in wm.groupby("method"):
        pos, neg = g[g["class"] == "positive"], g[g["class"] == "negative"]
        if not len(pos) or not len(neg):
            continue
        p, q = pos.iloc[0], neg.iloc[0]
        iv = welch_interval(p.ours_learned, _learned_std(p), int(p.n_learned),
                            q.ours_learned, _learned_std(q), int(q.n_learned), "runs")
        out[method] = side(iv, 0.0, above=True)
        parts.append(f"{method} {iv.text()}")
    if not out:
        raise _NotComparable(f"no method with both classes among the learned watermark runs{aside}")
    return by_cells(out, what="method", more="more learned species-group watermark runs (or a per-run table)",
                    detail=f"positive - negative Attr% ({int(wm.n_learned.max())} learned runs): "
                           f"{'; '.join(parts)}{aside}")


def _saliency_runs(t: Tables) -> pd.DataFrame | None:
    """The per-run saliency table, or None where it has not been written."""
    try:
        return t(SAL_RUNS)
    except MissingTable:
        return None


def _as_bool(col: pd.Series) -> pd.Series:
    return col if col.dtype == bool else col.astype(str).str.strip().str.lower().isin(("true", "1", "1.0"))


def _learned_runs(runs: pd.DataFrame, kind: str | None = None) -> tuple[pd.DataFrame, int, str]:
    """Attr% rows (every method and class) of the learned species-group runs (r = 0.5; of manipulation ``kind``
    only, where given), the number of species-group runs they are among, and the species-pair aside; raises
    :class:`_NotComparable` where none learned."""
    runs = runs[runs.metric == "attr_pct"].assign(learned=lambda d: _as_bool(d.learned))
    pairs = runs[runs.group == PAIRS].drop_duplicates(["manipulation", "run"])
    aside = (f"; species-pair runs (not judged): {int(pairs.learned.sum())} of {len(pairs)} learned"
             if len(pairs) else "")
    rows = runs[(runs.group == GROUPS) & np.isclose(runs.r, 0.5)]
    if kind is not None:
        rows = rows[rows.manipulation == kind]
    n_all = len(rows.drop_duplicates(["manipulation", "run"]))
    what = f"species-group {kind} runs" if kind else "species-group runs"
    if not n_all:
        raise _NotComparable(f"no {what} in {SAL_RUNS}{aside}")
    learned = rows[rows.learned]
    if not len(learned):
        raise _NotComparable(f"0 of {n_all} {what} learned the manipulation (test acc > {LEARNED_ACC:.2f}): no "
                             f"attributions of a learned model to judge{aside}")
    return learned, n_all, aside


def _too_few(n: int, n_all: int, what: str) -> str:
    """The reason's note where fewer than MIN_LEARNED runs are compared (the claim stays inconclusive)."""
    return (f"only {n} of {n_all} {what} learned (test acc > {LEARNED_ACC:.2f}; at least {MIN_LEARNED} needed): "
            f"{MORE_RUNS} would decide it")


def _per_run_methods(learned: pd.DataFrame) -> pd.DataFrame:
    """Attr% per learned run (rows: manipulation, run) and method (columns), the two classes averaged."""
    return learned.pivot_table(index=["manipulation", "run"], columns="method", values="ours", aggfunc="mean")


def _below_ideal_runs(runs: pd.DataFrame) -> Outcome:
    learned, n_all, aside = _learned_runs(runs)
    wide = _per_run_methods(learned)
    ivs = {m: t_interval(wide[m].dropna(), "learned runs") for m in wide.columns}
    best = max(ivs, key=lambda m: ivs[m].effect)
    n = len(wide)
    head = f"highest {best} {ivs[best].text()} ({ivs[best].n})"
    if n < MIN_LEARNED:
        return by_cells({m: "covers" for m in ivs}, what="method", more=MORE_RUNS,
                        detail=f"{head}; {_too_few(n, n_all, 'species-group runs')}{aside}")
    return by_cells({m: side(iv, IDEAL, above=False) for m, iv in ivs.items()}, what="method", more=MORE_RUNS,
                    detail=f"each method's mean Attr% < {IDEAL} (t over {n} learned of {n_all} species-group runs, "
                           f"the classes averaged); {head}{aside}")


def _shap_best_runs(runs: pd.DataFrame) -> Outcome:
    learned, n_all, aside = _learned_runs(runs)
    wide = _per_run_methods(learned)
    if "shap" not in wide.columns or wide.shape[1] < 2:
        raise _NotComparable(f"no SHAP and no other method among the learned species-group runs{aside}")
    runner = wide.drop(columns="shap").mean().idxmax()
    both = wide[["shap", runner]].dropna()
    iv = paired_interval(both["shap"], both[runner], "learned runs")
    ours = "shap" if iv.effect > 0 else runner
    what = f"SHAP - {runner} Attr% per run"
    if len(both) < MIN_LEARNED:
        return Outcome(ours, "inconclusive", f"{what} {iv.text()} ({int(CONFIDENCE * 100)} %, {iv.how}, {iv.n}); "
                                             f"{_too_few(len(both), n_all, 'species-group runs')}{aside}", iv)
    out = judge(iv, 0.0, what=what, more=MORE_RUNS)
    return Outcome(ours, out.verdict, f"{out.reason}; {len(both)} learned of {n_all} species-group runs{aside}", iv)


def _watermark_presence_runs(runs: pd.DataFrame) -> Outcome:
    learned, n_all, aside = _learned_runs(runs, "watermark")
    cells, parts, n = {}, [], 0
    for method, g in learned.groupby("method"):
        both = g.pivot_table(index="run", columns="class", values="ours", aggfunc="mean")
        if not {"positive", "negative"} <= set(both.columns):
            continue
        both = both[["positive", "negative"]].dropna()
        if not len(both):
            continue
        iv = paired_interval(both.positive, both.negative, "learned runs")
        n = max(n, len(both))
        cells[method] = side(iv, 0.0, above=True) if len(both) >= MIN_LEARNED else "covers"
        parts.append(f"{method} {iv.text()}")
    if not cells:
        raise _NotComparable(f"no method with both classes among the learned species-group watermark runs{aside}")
    few = f"; {_too_few(n, n_all, 'species-group watermark runs')}" if n < MIN_LEARNED else ""
    return by_cells(cells, what="method", more=MORE_RUNS,
                    detail=f"positive - negative Attr% (paired t over {n} learned of {n_all} species-group watermark "
                           f"runs): {'; '.join(parts)}{few}{aside}")


@_judge
def check_below_ideal(t: Tables) -> Outcome:
    """No method consistently puts Attr% ~ 1 on the ER: per method, its Attr% lies below IDEAL -- t over the
    learned species-group runs (per-run table), else over the manipulations (aggregated table)."""
    runs = _saliency_runs(t)
    return _below_ideal_aggregated(t) if runs is None else _below_ideal_runs(runs)


@_judge
def check_shap_best(t: Tables) -> Outcome:
    """SHAP has the highest Attr%: its lead over the runner-up (the other method with the highest mean) is above 0,
    paired within the learned species-group runs (per-run table), else over the manipulations (aggregated)."""
    runs = _saliency_runs(t)
    return _shap_best_aggregated(t) if runs is None else _shap_best_runs(runs)


@_judge
def check_watermark_presence(t: Tables) -> Outcome:
    """Attr% on watermarked (positive) images above that on unmarked (negative) ones, per method: paired within
    the learned species-group watermark runs (per-run table), else Welch t over them (aggregated table)."""
    runs = _saliency_runs(t)
    return _watermark_presence_aggregated(t) if runs is None else _watermark_presence_runs(runs)


def _level_points(g: pd.DataFrame, x: str) -> tuple[np.ndarray, np.ndarray]:
    """``(x, Attr%)`` per value of ``x`` over the learned runs, the two classes averaged."""
    per = g.groupby(x).ours_learned.mean().dropna()
    return per.index.to_numpy(dtype=float), per.to_numpy(dtype=float)


@_judge
def check_visibility_trend(t: Tables) -> Outcome:
    """Except SHAP on watermark, no (manipulation, method) Attr% rises with visibility: the slope of its learned-run
    Attr% over the visibility levels of the species-pair sweep (t interval, at least 3 learned levels) lies below
    TREND_BAND."""
    sal = t(SAL)
    if "level" not in sal.columns:
        raise _NotComparable("the table pools the five visibility levels of each manipulation")
    group = sal.group.astype(str)
    pair_sweep = group.str.startswith("visibility-") & ~group.str.startswith("visibility-groups")
    rows = sal[pair_sweep & (sal.metric == "attr_pct") & (sal.n_learned > 0)]
    n = int(rows.groupby(["manipulation", "level"]).n_learned.max().sum()) if len(rows) else 0
    if n < MIN_LEARNED:
        raise _NotComparable(f"only {n} visibility runs learned (at least {MIN_LEARNED} needed)")
    cells, parts, exempt = {}, [], ""
    for (kind, method), g in rows.groupby(["manipulation", "method"]):
        x, y = _level_points(g, "level")
        if len(x) < 3:
            continue
        iv = _slope_interval(x, y, "levels")
        if (kind, method) == ("watermark", "shap"):
            exempt = f"; SHAP on watermark (the paper's exception) {iv.text()}"
            continue
        cells[f"{method}/{kind}"] = side(iv, TREND_BAND, above=False)
        parts.append(f"{method}/{kind} {iv.text()}")
    if not cells:
        raise _NotComparable(f"no manipulation has 3 learned visibility levels ({n} learned species-pair "
                             "visibility runs)")
    return by_cells(cells, what="pair", more="more learned visibility runs per level",
                    detail=f"slope of Attr% per level < {TREND_BAND} ({n} learned species-pair runs, t over "
                           f"levels): {'; '.join(parts)}{exempt}")


@_judge
def check_r_watermark_shap(t: Tables) -> Outcome:
    """SHAP's Attr% on the watermark ER falls with r: the slope of its learned-run Attr% over the r values (t
    interval, at least 3 r values) lies below 0."""
    sal = t(SAL)
    rows = sal[(sal.group == "r") & (sal.metric == "attr_pct") & (sal.manipulation == "watermark")]
    n = int(rows.groupby("r").n_learned.max().sum()) if len(rows) else 0
    n_runs = int(rows.groupby("r").n_runs.max().sum()) if len(rows) else 0
    if n < MIN_LEARNED:
        raise _NotComparable(f"only {n} of {n_runs} watermark r-sweep runs learned the manipulation "
                             f"(test acc > {LEARNED_ACC:.2f}; at least {MIN_LEARNED} needed)")
    x, y = _level_points(rows[(rows.method == "shap") & (rows.n_learned > 0)], "r")
    if len(x) < 3:
        raise _NotComparable(f"learned watermark runs at only {len(x)} r values (3 needed)")
    return judge(_slope_interval(x, y, "r values"), 0.0, above=False, what=f"slope of SHAP Attr% over r ({n} learned "
                 "species-pair runs)", more="more learned watermark runs per r")


# ------------------------------------------------------------------------------------------- attention
def _attention_row(t: Tables, dataset: str, region: str) -> pd.Series:
    att = t(ATT)
    rows = att[(att.dataset == dataset) & (att.method == "attention") & (att.region == region)]
    if not len(rows):
        raise _NotComparable(f"no attention row for {dataset} / {region}")
    return rows.iloc[0]


def _attention_interval(row: pd.Series) -> Interval:
    """The learned attention runs' interval of one row (:func:`_learned_interval`); ``not comparable`` with fewer
    than MIN_LEARNED learned runs."""
    nl, n = int(row.n_learned), int(row.n_runs)
    if nl < MIN_LEARNED:
        raise _NotComparable(f"only {nl} of {n} {row.dataset} attention runs learned (test acc > {TEXT_LEARNED_ACC}; "
                             f"at least {MIN_LEARNED} needed)")
    return _learned_interval(float(row.ours), float(row.ours_std), n, nl)


def _bounded_note(row: pd.Series) -> str:
    if int(row.n_learned) == int(row.n_runs):
        return ""
    return (f"; {int(row.n_runs) - int(row.n_learned)} of {int(row.n_runs)} runs did not learn and the table "
            f"aggregates all runs, so the learned runs' interval is bounded over their unknown Attr%")


def _gap_experiments(t: Tables) -> str:
    """What the attention-gap experiments (``attribution_gt_attention_gap``) found, for the reason text:
    the variant nearest the paper's 0.086 among the learned ones, and whether any is nearer than ours."""
    try:
        gap = t(GAP)
    except MissingTable:
        return ""
    gap = gap[gap["learned"] > 0]
    if len(gap) < 2:
        return ""
    base, rest = gap.iloc[0], gap.iloc[1:]
    near = rest.loc[(rest["ours"] - PAPER_ARTICLE_ATTR).abs().idxmin()]
    return (f"; of {len(rest)} variants run as experiments ({GAP}) the nearest to 0.086 is "
            f"'{near.variant}' at {near.ours:.3f} ({near.ours - PAPER_ARTICLE_ATTR:+.3f}; our setting rerun {base.ours:.3f})")


def _length_experiment(t: Tables) -> str:
    """What the review-length experiment (``attribution_gt_attention_length_fit``) found, for the reason text:
    the log-log slope of Attr% on review length with its interval."""
    try:
        fit = t(LENGTH_FIT)
    except MissingTable:
        return ""
    s = fit.iloc[0]
    return (f"; Attr% against review length ({LENGTH_FIT}): log-log slope {s.ours:+.2f} "
            f"[{s.ci_low:+.2f}, {s.ci_high:+.2f}] over {s.n}")


@_judge
def check_article_attention(t: Tables) -> Outcome:
    """Attention Attr% on the article words of the learned runs agrees with the paper's 0.086 within half its
    effect over the articles' 0.079 share."""
    row = _attention_row(t, "article", "corr")
    iv = _attention_interval(row)
    effect = PAPER_ARTICLE_ATTR - PAPER_ARTICLE_SHARE
    out = judge_agrees(iv, PAPER_ARTICLE_ATTR, effect / 2, claimed_effect=effect, what="attention Attr% on articles",
                       more="more learned runs")
    return Outcome(out.ours, out.verdict, out.reason + _bounded_note(row) + _gap_experiments(t) + _length_experiment(t),
                   iv)


@_judge
def check_barely_random(t: Tables) -> Outcome:
    """Attention Attr% on articles over their token share: above 1 (better than random) and below the paper's
    0.086 / 0.079 plus half its lead over 1 (barely)."""
    row = _attention_row(t, "article", "corr")
    iv = _attention_interval(row)
    share = float(row.uniform_share)
    ratio = Interval(iv.effect / share, iv.low / share, iv.high / share, iv.n, f"{iv.how}, over the token share")
    paper = PAPER_ARTICLE_ATTR / PAPER_ARTICLE_SHARE
    barely = paper + (paper - 1) / 2
    above, low = side(ratio, 1.0, above=True), side(ratio, barely, above=False)
    head = (f"Attr% / token share {ratio.text()} (95 %, {ratio.how}, {ratio.n}); better than random: > 1 "
            f"({above}); barely: < {barely:.3f} ({low})")
    if "covers" in (above, low):
        verdict, head = "inconclusive", head + ": more learned runs would decide it"
    elif above == "fails":
        verdict = "not reproduced"
    else:
        verdict = "reproduced" if low == "holds" else "partly"
    return Outcome(ratio.effect, verdict, head + _bounded_note(row), ratio)


@_judge
def check_noncorr_attention(t: Tables) -> Outcome:
    """On CN and NC, the learned runs' attention on non-correlating articles lies above their token share."""
    att = t(ATT)
    datasets = att[(att.method == "attention") & (att.region == "noncorr")].dataset.unique()
    if not len(datasets):
        raise _NotComparable("no CN / NC attention rows")
    cells, parts, skipped = {}, [], []
    for ds in datasets:
        row = _attention_row(t, ds, "noncorr")
        try:
            iv = _attention_interval(row)
        except _NotComparable as err:
            skipped.append(str(err))
            continue
        cells[ds] = side(iv, float(row.uniform_share), above=True)
        parts.append(f"{ds} {iv.text()} ({iv.n}) vs {float(row.uniform_share):.3f}")
    if not cells:
        raise _NotComparable("; ".join(skipped))
    return by_cells(cells, what="dataset", more="more learned runs",
                    detail="non-corr. attention vs token share: " + "; ".join(parts + skipped))


def check_text_learned(t: Tables) -> Outcome:
    """Precondition: the share of the text models (attention runs, rationale models) above 97 % test accuracy;
    the paper: all."""
    att = t(ATT)
    att = att[(att.method == "attention") & (att.region == "corr")]
    n_att, k_att = int(att.n_runs.sum()), int(att.n_learned.sum())  # the runs above the bound, one by one
    rat = t(RAT)
    acc = rat[rat.metric == "test_acc"]
    k_rat, n_rat = int((acc.ours > TEXT_LEARNED_ACC).sum()), len(acc)
    return precondition(share_interval(k_att + k_rat, n_att + n_rat, "models"),
                        f"attention {k_att} of {n_att}, rationales {k_rat} of {n_rat} above {TEXT_LEARNED_ACC} "
                        f"test accuracy (paper: all); the claims read the learned ones")


# ------------------------------------------------------------------------------------------- rationales
def _rationales(t: Tables) -> pd.DataFrame:
    """One row per rationale model: each metric's mean (``<metric>``) and std over seeds (``<metric>_std``),
    ``n_runs``, and the optima."""
    rat = t(RAT)
    keys = ["dataset", "model", "target_rate"]
    if "ours_std" not in rat.columns:
        rat = rat.assign(ours_std=np.nan)
    if "n_runs" not in rat.columns:
        rat = rat.assign(n_runs=1)
    wide = rat.pivot_table(index=keys, columns="metric", values="ours")
    std = rat.pivot_table(index=keys, columns="metric", values="ours_std", dropna=False)
    std.columns = [f"{c}_std" for c in std.columns]
    opt = rat[rat.metric.isin(["precision", "recall"])].pivot_table(index=keys, columns="metric", values="optimal")
    opt.columns = [f"optimal_{c}" for c in opt.columns]
    n = rat.groupby(keys).n_runs.max().rename("n_runs")
    return wide.join(std).join(opt).join(n).reset_index()


def _metric_interval(r, metric: str) -> Interval:
    """One model's metric: t over its seeds (infinite with one seed)."""
    return summary_interval(getattr(r, metric), getattr(r, f"{metric}_std", math.nan), int(r.n_runs), "seeds")


def _learned_models(w: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    learned = w[w.test_acc > TEXT_LEARNED_ACC]
    left = w[w.test_acc <= TEXT_LEARNED_ACC]
    note = "; not learned, left out: " + ", ".join(f"{r.dataset}/{r.model}@{r.target_rate:g} (acc {r.test_acc:.2f})"
                                                   for r in left.itertuples()) if len(left) else ""
    return learned, note


MORE_SEEDS = "more seeds per model (ours_std over n_runs in the rationale table)"


@_judge
def check_article_optimal(t: Tables) -> Outcome:
    """Article dataset, every learned model but CR at the lowest rate: precision and recall within NEAR of the
    optimum, each judged by its interval over the model's seeds."""
    w = _rationales(t)
    art = w[w.dataset == "article"]
    art = art[~((art.model == "cr") & (art.target_rate == art.target_rate.min()))]
    learned, note = _learned_models(art)
    if not len(learned):
        raise _NotComparable(f"no article rationale model above {TEXT_LEARNED_ACC} test accuracy")
    cells, parts = {}, []
    for r in learned.itertuples():
        sides = [side(_metric_interval(r, m), getattr(r, f"optimal_{m}") - NEAR, above=True)
                 for m in ("precision", "recall")]
        cells[f"{r.model}@{r.target_rate:g}"] = ("fails" if "fails" in sides else
                                                 "covers" if "covers" in sides else "holds")
        parts.append(f"{r.model}@{r.target_rate:g} {r.optimal_precision - r.precision:+.3f}/"
                     f"{r.optimal_recall - r.recall:+.3f}")
    return by_cells(cells, what="model", more=MORE_SEEDS,
                    detail=f"optimum - precision / recall (< {NEAR}; n_runs {int(learned.n_runs.min())}): "
                           f"{', '.join(parts)}{note}")


@_judge
def check_cr_first_words(t: Tables) -> Outcome:
    """CR at the lowest rate is faulty: it selects the first three words more often than RL at that rate (Welch t
    over seeds), and its precision lies more than NEAR below the optimum."""
    w = _rationales(t)
    art = w[w.dataset == "article"]
    low = art.target_rate.min()
    cr, rl = art[(art.model == "cr") & (art.target_rate == low)], art[(art.model == "rl") & (art.target_rate == low)]
    if not len(cr) or not len(rl):
        raise _NotComparable(f"no CR and RL model at the lowest rate {low:g}")
    cr, rl = next(cr.itertuples()), next(rl.itertuples())
    if cr.test_acc <= TEXT_LEARNED_ACC:
        return Outcome(float(cr.first3_selected_share), "not comparable",
                       f"our CR model at rate {low:g} did not learn (test acc {cr.test_acc:.3f} <= {TEXT_LEARNED_ACC}); "
                       "the paper's faulty CR model did")
    iv = welch_interval(cr.first3_selected_share, cr.first3_selected_share_std, int(cr.n_runs),
                        rl.first3_selected_share, rl.first3_selected_share_std, int(rl.n_runs), "seeds")
    first = side(iv, 0.0, above=True)
    below = side(_metric_interval(cr, "precision"), cr.optimal_precision - NEAR, above=False)
    reason = (f"first-3 share CR - RL {iv.text()} (95 %, {iv.how}, {iv.n}) > 0: {first}; CR precision "
              f"{cr.precision:.3f} < optimum {cr.optimal_precision:.3f} - {NEAR}: {below}")
    if "covers" in (first, below):
        verdict, reason = "inconclusive", f"{reason}: {MORE_SEEDS} would decide it"
    else:
        verdict = {2: "reproduced", 1: "partly", 0: "not reproduced"}[(first == "holds") + (below == "holds")]
    return Outcome(iv.effect, verdict, reason, iv)


def _cn_nc(t: Tables) -> tuple[pd.DataFrame, str]:
    w = _rationales(t)
    learned, note = _learned_models(w[w.dataset.isin(["cn", "nc"])])
    if not len(learned):
        raise _NotComparable(f"no CN / NC rationale model above {TEXT_LEARNED_ACC} test accuracy{note}")
    return learned, note


@_judge
def check_noncorr_selected(t: Tables) -> Outcome:
    """CN / NC: rationale models select non-correlating articles: their share of the selection, t over the learned
    models, lies above NEAR."""
    learned, note = _cn_nc(t)
    iv = t_interval(learned.noncorr_share_of_selection, "models")
    parts = ", ".join(f"{r.dataset}/{r.model} {r.noncorr_share_of_selection:.2f}" for r in learned.itertuples())
    out = judge(iv, NEAR, what="non-corr. share of selection", more="more models (seeds) on CN / NC")
    return Outcome(out.ours, out.verdict, f"{out.reason}; {parts}{note}", iv)


@_judge
def check_precision_below_optimal(t: Tables) -> Outcome:
    """CN / NC: precision on correlating articles markedly below the dataset-wide optimum: optimum - precision,
    t over the learned models, lies above NEAR."""
    learned, note = _cn_nc(t)
    gap = learned.optimal_precision - learned.precision
    iv = t_interval(gap, "models")
    parts = ", ".join(f"{r.dataset}/{r.model} {g:.2f}" for r, g in zip(learned.itertuples(), gap))
    out = judge(iv, NEAR, what="optimum - precision", more="more models (seeds) on CN / NC")
    return Outcome(out.ours, out.verdict, f"{out.reason}; {parts}{note}", iv)


@_judge
def check_rl_worse(t: Tables) -> Outcome:
    """CN / NC: RL's share of non-correlating articles in the selection above CR's, per dataset where both learned
    (Welch t over seeds)."""
    learned, note = _cn_nc(t)
    cells, parts = {}, []
    for ds, g in learned.groupby("dataset"):
        rl, cr = g[g.model == "rl"], g[g.model == "cr"]
        if not len(rl) or not len(cr):
            continue
        rl, cr = next(rl.itertuples()), next(cr.itertuples())
        iv = welch_interval(rl.noncorr_share_of_selection, rl.noncorr_share_of_selection_std, int(rl.n_runs),
                            cr.noncorr_share_of_selection, cr.noncorr_share_of_selection_std, int(cr.n_runs), "seeds")
        cells[ds] = side(iv, 0.0, above=True)
        parts.append(f"{ds} RL - CR {iv.text()} ({iv.n})")
    if not cells:
        raise _NotComparable(f"no CN / NC dataset where both RL and CR learned{note}")
    return by_cells(cells, what="dataset", more=MORE_SEEDS,
                    detail=f"non-corr. share of selection: {'; '.join(parts)}{note}")


CLAIMS = [
    Claim("image-runs-learned", "70% of the image runs reach test accuracy over 95% (learn the manipulation)",
          "Sec. 5.1", PAPER_LEARNED, check_runs_learned),
    Claim("image-learns-all-types", "The models successfully learn all manipulation types", "Sec. 5.1",
          "all 5", check_learns_all_types),
    Claim("saliency-attr-below-ideal", "No saliency method consistently puts Attr% ~ 1 on the ER of a "
          "(near-)perfect model", "Sec. 5.1, Fig. 5", "no method ~1", check_below_ideal),
    Claim("shap-best-saliency", "SHAP gives the highest Attr% of the five saliency methods",
          "Sec. 5.1, Fig. 5", "SHAP", check_shap_best),
    Claim("watermark-presence-better", "A watermark's presence is better attributed than its absence "
          "(Attr% positive > negative)", "Sec. 5.1", "positive > negative", check_watermark_presence),
    Claim("visibility-no-trend", "Except SHAP on watermark, no method's Attr% rises consistently with "
          "manipulation visibility", "Sec. 5.3, Fig. 7", "none but SHAP/watermark", check_visibility_trend),
    Claim("r-shap-watermark-falls", "For the watermark, SHAP's Attr% decreases as r increases",
          "Sec. 5.4, Fig. 8", "decreasing", check_r_watermark_shap),
    Claim("article-attention-attr", "Attention Attr% on the article words is 8.6%", "Sec. 6.1", PAPER_ARTICLE_ATTR,
          check_article_attention),
    Claim("article-attention-barely", "Attention on articles is better than random, but barely "
          "(8.6% vs their 7.9% token share)", "Sec. 6.1", round(PAPER_ARTICLE_ATTR / PAPER_ARTICLE_SHARE, 3),
          check_barely_random),
    Claim("noncorr-attention-above", "Attention puts more than random weight on non-correlating articles (CN, NC)",
          "Sec. 6.2, Fig. 1 (left)", "above token share", check_noncorr_attention),
    Claim("text-models-over-97", "All attention and rationale models reach over 97% test accuracy",
          "Secs. 6.1, 6.2, 7.1, 7.2", 1.0, check_text_learned),
    Claim("rationale-article-optimal", "Except CR at the lowest rate, rationales are near the dataset-wide "
          "optimal precision and recall", "Sec. 7.1, Fig. 12", "near optimal", check_article_optimal),
    Claim("cr-lowest-rate-first-words", "CR at the lowest rate is faulty: it selects the first few words",
          "Sec. 7.1, Fig. 12 (bottom)", "faulty", check_cr_first_words),
    Claim("rationale-noncorr-selected", "On CN / NC, rationales select misleading non-correlating articles",
          "Sec. 7.2, Fig. 13", "selected", check_noncorr_selected),
    Claim("rationale-precision-gap", "On CN / NC, rationale precision is markedly below the dataset-wide optimum",
          "Sec. 7.2, Fig. 13", "markedly below", check_precision_below_optimal),
    Claim("rl-more-misleading", "Selecting non-correlating articles is more severe with RL than with CR",
          "Secs. 7.2, 7.3", "RL > CR", check_rl_worse),
]
