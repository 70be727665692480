"""Headline claims of Lertvittayakumjorn & Toni (2019) beside our simulated-participant results.

Every check reads notebook 21's per-seed tables -- ``human_grounded_tasks_seeds`` (average scores of
tasks 1-3 per CNN seed, with ``ours_std`` the readers' spread within that seed) and
``human_grounded_models_seeds`` (the CNNs' macro-F1 per seed) -- and the paper's printed numbers
(:func:`xaibench.tables.paper_values`).  Our participants are simulated readers (bag-of-n-grams
classifiers, :mod:`.readers`), so a claim about how *people* behave (their agreement, what they prefer) is
``not comparable``.

**Quantities and intervals.**  Each claim is split into cells (a dataset, a method, a (task, dataset,
method) triple); each cell's quantity is computed *per seed* and its 95 % interval taken over seeds, so a
seed left out (:func:`xaibench.evaluation.claims.stability`) recomputes it:

- a difference of two scores (✓ minus ✗, (N) minus (W)): paired over seeds (:func:`paired_interval`);
- a rank claim ("LRP (N) in the top 2", "DTs in the bottom 4", "LIME in the lower half") is judged by a
  score gap, never by a raw rank: for "``m`` in the top ``k``" the gap is ``m``'s score minus the ``k``-th
  highest score among the other eight methods of that seed (positive exactly when ``m`` is in the top
  ``k``); for "in the bottom ``k``" the ``k``-th lowest of the others minus ``m``'s score; "a random
  baseline is lowest" is the lowest non-random score minus the lowest random one; each gap is then
  paired over seeds;
- the ordering of the nine methods against the paper's is a Spearman rho per seed
  (:func:`scipy.stats.spearmanr`) with its t interval over seeds;
- a CNN's macro-F1 and the well-trained minus worse gap: t / paired t over seeds.

A cell holds when its interval lies on the claim's side of the threshold, fails when it lies on the other,
and is undecided when it covers it; :func:`by_cells` turns the cells into the verdict.

**One seed.**  With a single CNN seed an interval over seeds is infinite.  A score, or a difference or gap of
two scores, then falls back to the readers' spread within that seed: :func:`se_interval` with the row's
``ours_std`` (the sample std of the readers' mean scores) as its standard error, and for two scores their
stds combined in quadrature (``n`` reads "readers of one seed").  The std itself, not std/sqrt(readers), is
the standard error because the readers share one CNN and one question pool, so their spread leaves out the
CNN's training noise; even so this interval is narrower than the spread between retrained CNNs, and a
one-seed verdict is provisional.  A rank correlation and a macro-F1 have no readers' spread, so with one seed
their intervals stay infinite (``inconclusive``: more seeds decide them).

**Levels.**  Two score levels recur, both read off the paper's own wording of task 1: it calls scores up
to 0.12 (its best task-1 column A) "not impressive" and the 0.22-0.24 of LRP (N) and DeepLIFT (N) on
correct arXiv predictions "fairly work"; :data:`WORKS` = 0.15 lies between them, and the interval of a
score (or of the best score) is judged against it.  :data:`RHO_SIGNIFICANT` is about the rho a single
nine-method ordering needs to differ from a chance ordering at 5 % (two-sided); the interval of our mean
rho over seeds is judged against it, so "reproduced" means our expected ordering agrees with the paper's
beyond what nine methods ordered by chance would show.  :data:`F1_TOL`: the paper's worse CNNs, which its
task 1 treats as clearly worse models, lie 0.09 macro-F1 below its well-trained ones on both datasets; a
well-trained CNN within half that gap (0.045) of the paper's is nearer the paper's model than halfway to
its worse one.  The same tolerance, half the claimed 0.09, judges the worse CNNs' gap.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..claims import (CONFIDENCE, Claim, Interval, Outcome, Tables, by_cells, judge_agrees, paired_interval, se_interval, side,
                      t_interval)
from .methods import PAPER_METHODS, method_label

PAPER = "Human-grounded evaluations (Lertvittayakumjorn & Toni 2019)"

DATASETS = ("amazon", "arxiv")
#: an average score at or above this "works" (between the paper's 0.12 "not impressive" and 0.22 "fairly work")
WORKS = 0.15
#: about the |Spearman rho| over nine methods above which one ordering differs from chance at 5 % (two-sided)
RHO_SIGNIFICANT = 0.68
#: a CNN's macro-F1 (or well-trained minus worse gap) within this of the paper's agrees: half its 0.09 gap
F1_TOL = 0.045
RANDOM = ("random_w", "random_n")
PROPAGATION = ("lrp_w", "lrp_n", "deeplift_w", "deeplift_n")
#: the per-seed tables every check reads
TASKS_SEEDS = "human_grounded_tasks_seeds"
MODELS_SEEDS = "human_grounded_models_seeds"
_SIDE = {"reproduced": "holds", "not reproduced": "fails", "inconclusive": "covers"}


# ---------------------------------------------------------------- reading ours and the paper's
class _NoCell(LookupError):
    """A cell a claim needs is not in our table (e.g. a smoke run with few questions)."""


def _comparable_only_with_cells(check):
    """``check``, answering ``not comparable`` (naming the missing cell) when a cell is missing."""
    def wrapped(tables: Tables) -> Outcome:
        try:
            return check(tables)
        except _NoCell as err:
            return Outcome(None, "not comparable", f"our table lacks {err.args[0]}")
    wrapped.__name__ = check.__name__
    wrapped.__doc__ = check.__doc__
    return wrapped


def _scores(tables: Tables) -> pd.DataFrame:
    t = tables(TASKS_SEEDS)
    t = t[t["metric"] == "avg_score"].copy()
    for c in ("ours", "ours_std"):
        t[c] = pd.to_numeric(t[c], errors="coerce")
    return t


def _labels(methods) -> str:
    return ", ".join(method_label(m) for m in methods)


@dataclass(frozen=True)
class _Column:
    """One column of a task table (task, dataset, subset): the nine methods' scores and the readers' stds,
    seeds x methods (paper order)."""

    score: pd.DataFrame
    std: pd.DataFrame
    readers: int

    def mean(self) -> pd.Series:
        return self.score.mean()


def _column(df: pd.DataFrame, task: str, dataset: str, subset: str = "all") -> _Column:
    """E.g. task 2, Amazon, column A, every seed."""
    s = df[(df["task"] == task) & (df["dataset"] == dataset) & (df["subset"] == subset)
           & df["method"].isin(list(PAPER_METHODS))]
    if s.duplicated(["seed", "method"]).any():
        raise ValueError(f"{TASKS_SEEDS}: a seed appears twice for a method of {task} {dataset} {subset}")
    score = s.pivot(index="seed", columns="method", values="ours").reindex(columns=list(PAPER_METHODS))
    missing = [m for m in PAPER_METHODS if score.empty or score[m].isna().any()]
    if missing:
        which = "any method" if len(missing) == len(PAPER_METHODS) else _labels(missing)
        raise _NoCell(f"{task} {dataset} {subset} for {which}")
    std = s.pivot(index="seed", columns="method", values="ours_std").reindex(index=score.index,
                                                                             columns=list(PAPER_METHODS))
    readers = int(pd.to_numeric(s["n_participants"], errors="coerce").min())
    return _Column(score, std, readers)


def _paper_column(task: str, dataset: str, subset: str = "all") -> pd.Series:
    from ...tables import paper_values

    p = paper_values("human_grounded", metric="avg_human_score", task=task, dataset=dataset, subset=subset)
    return p.set_index("method")["value"].astype(float).reindex(list(PAPER_METHODS))


def _rank(s: pd.Series, method: str) -> int:
    """1 = the highest score (ties share the better rank)."""
    return int((s > s[method]).sum()) + 1


# ---------------------------------------------------------------- per-seed quantities and their intervals
@dataclass(frozen=True)
class _Gap:
    """A quantity ``a - b`` per seed, ``se`` the readers' spread of it within each seed (for one seed) and
    ``ref`` the method ``b`` was read from (an order statistic may read another method in each seed)."""

    a: pd.Series
    b: pd.Series
    se: pd.Series
    ref: pd.Series
    readers: int
    paired: bool = True

    def interval(self) -> Interval:
        if len(self.a) >= 2:
            return paired_interval(self.a, self.b) if self.paired else t_interval(self.a)
        return se_interval(float(self.a.iloc[0] - self.b.iloc[0]), float(self.se.iloc[0]),
                           f"{self.readers} readers of one seed", "normal, readers' std as se")

    def against(self) -> str:
        """The method ``b`` was read from, when it is the same in every seed."""
        refs = set(self.ref)
        return f" (vs {method_label(refs.pop())})" if len(refs) == 1 and "" not in refs else ""


def _no_ref(index: pd.Index) -> pd.Series:
    return pd.Series("", index=index)


def _level(col: _Column, method: str) -> _Gap:
    zero = pd.Series(0.0, index=col.score.index)
    return _Gap(col.score[method], zero, col.std[method], _no_ref(zero.index), col.readers, paired=False)


def _diff(x: _Column, m: str, y: _Column, n: str) -> _Gap:
    """``m``'s score in column ``x`` minus ``n``'s in column ``y``, over the seeds both columns have."""
    seeds = x.score.index.intersection(y.score.index)
    if seeds.empty:
        raise _NoCell(f"a seed with both {method_label(m)} and {method_label(n)}")
    xs, xd, ys, yd = x.score.loc[seeds, m], x.std.loc[seeds, m], y.score.loc[seeds, n], y.std.loc[seeds, n]
    return _Gap(xs, ys, np.hypot(xd, yd), _no_ref(seeds), min(x.readers, y.readers))


def _pick(col: _Column, ref: pd.Series) -> tuple[pd.Series, pd.Series]:
    """The score and std of the method ``ref`` names in each seed."""
    idx = list(ref.index)
    return (pd.Series([col.score.at[s, ref[s]] for s in idx], index=ref.index),
            pd.Series([col.std.at[s, ref[s]] for s in idx], index=ref.index))


def _vs_rank(col: _Column, method: str, k: int, top: bool = True) -> _Gap:
    """"``method`` in the top ``k``" (``top``): its score minus the ``k``-th highest of the other methods,
    per seed; "in the bottom ``k``": the ``k``-th lowest of the others minus its score.  Positive exactly
    when the claim holds in that seed."""
    others = col.score.drop(columns=[method])
    ref = others.apply(lambda r: r.sort_values(ascending=not top, kind="stable").index[k - 1], axis=1)
    r_score, r_std = _pick(col, ref)
    a, b = (col.score[method], r_score) if top else (r_score, col.score[method])
    return _Gap(a, b, np.hypot(col.std[method], r_std), ref, col.readers)


def _random_lowest(col: _Column) -> _Gap:
    """The lowest non-random score minus the lowest random one, per seed (positive: a random baseline is
    last)."""
    rest = col.score.drop(columns=list(RANDOM))
    low_rest, low_random = rest.idxmin(axis=1), col.score[list(RANDOM)].idxmin(axis=1)
    (a, sa), (b, sb) = _pick(col, low_rest), _pick(col, low_random)
    return _Gap(a, b, np.hypot(sa, sb), low_random, col.readers)


def _best(col: _Column) -> _Gap:
    """The best of the nine scores, per seed (its readers' spread that of the method that is best)."""
    arg = col.score.idxmax(axis=1)
    a, se = _pick(col, arg)
    zero = pd.Series(0.0, index=a.index)
    return _Gap(a, zero, se, _no_ref(a.index), col.readers, paired=False)


def _how(iv: Interval) -> str:
    return f"{int(CONFIDENCE * 100)} %, {iv.how}, {iv.n}"


def _cells(gaps: dict[str, _Gap], threshold: float = 0.0, above: bool = True) -> tuple[dict[str, str], str]:
    """Each cell's side of ``threshold`` and the detail text: every cell's estimate and interval, then how
    the intervals were made."""
    ivs = {k: g.interval() for k, g in gaps.items()}
    sides = {k: side(iv, threshold, above) for k, iv in ivs.items()}
    first = next(iter(ivs.values()))
    text = ", ".join(f"{k} {iv.text()}{gaps[k].against()}" for k, iv in ivs.items())
    return sides, f"{text} ({_how(first)})"


# ---------------------------------------------------------------- checks: the CNNs
def _f1(tables: Tables, condition: str) -> pd.DataFrame:
    """Macro-F1 of one model condition, seeds x datasets."""
    t = tables(MODELS_SEEDS)
    t = t[(t["model_condition"] == condition) & (t["metric"] == "macro_f1")]
    f1 = t.pivot(index="seed", columns="dataset", values="ours").astype(float)
    missing = [ds for ds in DATASETS if ds not in f1.columns or f1[ds].isna().any()]
    if missing:
        raise _NoCell(f"the {condition} CNN of {', '.join(missing)}")
    return f1


def _paper_f1(condition: str) -> dict[str, float]:
    from ...tables import paper_values

    p = paper_values("human_grounded", metric="macro_f1", paper_table="Model performance table (Macro-F1)",
                     model_condition=condition)
    return dict(zip(p["dataset"], p["value"].astype(float)))


def _agree_cells(ivs: dict[str, Interval], paper: dict[str, float], gap: dict[str, float]) -> tuple[dict, str]:
    outs = {ds: judge_agrees(iv, paper[ds], F1_TOL, claimed_effect=gap[ds]) for ds, iv in ivs.items()}
    first = next(iter(ivs.values()))
    text = ", ".join(f"{ds} {iv.text()} vs {paper[ds]:.2f}" for ds, iv in ivs.items())
    return ({ds: _SIDE[o.verdict] for ds, o in outs.items()},
            f"{text} ({_how(first)}); agrees within {F1_TOL:g} (half the paper's worse-CNN gap)")


def _cnn_f1(tables: Tables) -> Outcome:
    f1 = _f1(tables, "well_trained")
    paper, worse = _paper_f1("well_trained"), _paper_f1("worse")
    ivs = {ds: t_interval(f1[ds]) for ds in DATASETS}
    cells, detail = _agree_cells(ivs, paper, {ds: paper[ds] - worse[ds] for ds in DATASETS})
    return by_cells(cells, "dataset", ours=" / ".join(f"{f1[ds].mean():.2f}" for ds in DATASETS),
                    detail=f"macro-F1 {detail}")


def _worse_gap(tables: Tables) -> Outcome:
    well, worse = _f1(tables, "well_trained"), _f1(tables, "worse")
    seeds = well.index.intersection(worse.index)
    if seeds.empty:
        raise _NoCell("a seed with both CNNs")
    pw, px = _paper_f1("well_trained"), _paper_f1("worse")
    paper = {ds: pw[ds] - px[ds] for ds in DATASETS}
    ivs = {ds: paired_interval(well.loc[seeds, ds], worse.loc[seeds, ds]) for ds in DATASETS}
    cells, detail = _agree_cells(ivs, paper, paper)
    return by_cells(cells, "dataset", ours=" / ".join(f"{ivs[ds].effect:.2f}" for ds in DATASETS),
                    detail=f"well-trained minus worse macro-F1 {detail}")


# ---------------------------------------------------------------- checks: the tasks
def _t1_none_works(tables: Tables) -> Outcome:
    ours = _scores(tables)
    cols = {ds: _column(ours, "task_1", ds) for ds in DATASETS}
    gaps = {f"{ds} ({method_label(c.mean().idxmax())})": _best(c) for ds, c in cols.items()}
    cells, detail = _cells(gaps, WORKS, above=False)
    return by_cells(cells, "dataset", ours=" / ".join(f"{g.a.mean():+.2f}" for g in gaps.values()),
                    detail=f"best of the nine task-1 (A) scores below {WORKS:g}: {detail}")


def _t1_ngram_arxiv(tables: Tables) -> Outcome:
    col = _column(_scores(tables), "task_1", "arxiv", "correct")
    gaps = {method_label(m): _level(col, m) for m in ("lrp_n", "deeplift_n")}
    cells, detail = _cells(gaps, WORKS)
    return by_cells(cells, "method", ours=" / ".join(f"{g.a.mean():+.2f}" for g in gaps.values()),
                    detail=f"arxiv task-1 (✓) score >= {WORKS:g} (paper +0.24 / +0.22): {detail}")


def _t2_lime_best(tables: Tables) -> Outcome:
    ours = _scores(tables)
    cols = {ds: _column(ours, "task_2", ds) for ds in DATASETS}
    cells, detail = _cells({ds: _vs_rank(c, "lime", 1) for ds, c in cols.items()})
    return by_cells(cells, "dataset", ours=" / ".join(method_label(c.mean().idxmax()) for c in cols.values()),
                    detail=f"LIME minus the best other task-2 (A) score: {detail}")


def _rho(ours: pd.Series, paper: pd.Series) -> float:
    return float(stats.spearmanr(ours.to_numpy(), paper.to_numpy()).statistic)


def _t2_ranking(tables: Tables) -> Outcome:
    ours = _scores(tables)
    ivs = {}
    for ds in DATASETS:
        col, paper = _column(ours, "task_2", ds), _paper_column("task_2", ds)
        ivs[ds] = t_interval([_rho(col.score.loc[s], paper) for s in col.score.index])
    cells = {ds: side(iv, RHO_SIGNIFICANT) for ds, iv in ivs.items()}
    first = next(iter(ivs.values()))
    detail = ", ".join(f"{ds} {iv.text()}" for ds, iv in ivs.items()) + f" ({_how(first)})"
    return by_cells(cells, "dataset", ours=" / ".join(f"{iv.effect:+.2f}" for iv in ivs.values()),
                    detail=f"Spearman rho with the paper's task-2 (A) over 9 methods > {RHO_SIGNIFICANT:g}: {detail}")


def _t2_justify_incorrect(tables: Tables) -> Outcome:
    ours = _scores(tables)
    gaps = {}
    for ds in DATASETS:
        col = _column(ours, "task_2", ds, "incorrect")
        top_random = col.score[list(RANDOM)].idxmax(axis=1)
        r_score, r_std = _pick(col, top_random)
        for m in ("lime", "gradcam_text", "dt"):
            gaps[f"{ds} {method_label(m)}"] = _Gap(col.score[m], r_score, np.hypot(col.std[m], r_std), top_random,
                                                   col.readers)
    cells, detail = _cells(gaps)
    return by_cells(cells, "cell", detail=f"task-2 (✗) score minus the higher random baseline's: {detail}")


def _t2_propagation_correct_only(tables: Tables) -> Outcome:
    ours = _scores(tables)
    gaps = {}
    for ds in DATASETS:
        c, x = _column(ours, "task_2", ds, "correct"), _column(ours, "task_2", ds, "incorrect")
        for m in PROPAGATION:
            gaps[f"{ds} {method_label(m)}"] = _diff(c, m, x, m)
    cells, detail = _cells(gaps)
    return by_cells(cells, "cell", detail=f"task-2 ✓ minus ✗: {detail}")


def _ngram_beats_word(tables: Tables) -> Outcome:
    ours = _scores(tables)
    gaps = {}
    for task in ("task_2", "task_3"):
        for ds in DATASETS:
            col = _column(ours, task, ds)
            for fam in ("lrp", "deeplift"):
                gaps[f"{task[-1]} {ds} {fam}"] = _diff(col, f"{fam}_n", col, f"{fam}_w")
    cells, detail = _cells(gaps)
    return by_cells(cells, "cell", detail=f"(N) minus (W), column A, by task: {detail}")


def _t2_random_worst(tables: Tables) -> Outcome:
    ours = _scores(tables)
    cols = {ds: _column(ours, "task_2", ds) for ds in DATASETS}
    cells, detail = _cells({ds: _random_lowest(c) for ds, c in cols.items()})
    return by_cells(cells, "dataset", ours=" / ".join(method_label(c.mean().idxmin()) for c in cols.values()),
                    detail=f"lowest non-random minus lowest random task-2 (A) score: {detail}")


def _rank_claim(tables: Tables, method: str, want: dict[str, tuple[int, bool]], what: str) -> Outcome:
    """``method`` in the top (``True``) or bottom ``k`` of task 3 (A) per dataset (``want``), judged by the gap
    to the method at the cut in each seed; ``ours`` is its rank of the mean scores."""
    ours = _scores(tables)
    cols = {ds: _column(ours, "task_3", ds) for ds in want}
    gaps = {ds: _vs_rank(cols[ds], method, k, top) for ds, (k, top) in want.items()}
    cells, detail = _cells(gaps)
    return by_cells(cells, "dataset", ours=" / ".join(str(_rank(c.mean(), method)) for c in cols.values()),
                    detail=f"{what}: {detail}")


def _t3_lrp_n_top(tables: Tables) -> Outcome:
    return _rank_claim(tables, "lrp_n", {"amazon": (2, True), "arxiv": (2, True)},
                       "LRP (N) minus the 2nd-best other task-3 (A) score (top 2; paper ranks 2 / 1)")


def _t3_dt_amazon_only(tables: Tables) -> Outcome:
    return _rank_claim(tables, "dt", {"amazon": (4, True), "arxiv": (4, False)},
                       "DTs top 4 on amazon (DTs minus the 4th-best other), bottom 4 on arxiv (4th-lowest other "
                       "minus DTs) in task 3 (A; paper ranks 1 / 9)")


def _t3_lime_weak(tables: Tables) -> Outcome:
    return _rank_claim(tables, "lime", {"amazon": (5, False), "arxiv": (5, False)},
                       "5th-lowest other minus LIME in task 3 (A) (lower half, ranks 5-9; paper ranks 6 / 6)")


def _more_evidence(tables: Tables) -> Outcome:
    return Outcome(None, "not comparable", "a preference of people; our readers weigh fragments by a classifier, "
                   "and no table records how many evidence texts an explanation had")


def _kappa(tables: Tables) -> Outcome:
    t = tables(TASKS_SEEDS)
    k = t[(t["metric"] == "fleiss_kappa") & (t["dataset"] == "amazon") & (t["subset"] == "by_answer_full")]
    ours = " / ".join(f"{v:.2f}" for v in k.groupby("task")["ours"].mean())
    return Outcome(ours or None, "not comparable", "agreement between people; our readers are resamples of one "
                   "classifier on one split, so their kappa measures the simulation, not human agreement")


CLAIMS = [
    Claim("cnn-macro-f1", "The well-trained 1D CNNs reach macro-F1 0.90 (Amazon) and 0.94 (ArXiv)",
          "Experimental setup: Datasets and Models", "0.90 / 0.94", _comparable_only_with_cells(_cnn_f1)),
    Claim("worse-cnn-gap", "The worse CNNs of task 1 lose 0.09 macro-F1 on both datasets (0.81, 0.85)",
          "Experimental setup: Classification Models", "0.09 / 0.09", _comparable_only_with_cells(_worse_gap)),
    Claim("t1-none-impressive", "Revealing model behaviour is hard: no method achieves impressive task-1 scores",
          "Results: Task 1; Conclusion", "+0.07 / +0.12", _comparable_only_with_cells(_t1_none_works)),
    Claim("t1-ngram-arxiv-correct", "ArXiv: LRP (N) and DeepLIFT (N) fairly work in task 1 when both CNNs are right",
          "Results: Task 1", "+0.24 / +0.22", _comparable_only_with_cells(_t1_ngram_arxiv)),
    Claim("t1-more-evidence", "For explanations of similar quality, people prefer the one with more evidence texts",
          "Results: Task 1", None, _more_evidence),
    Claim("t2-lime-best", "LIME is the most class-discriminative method (best task-2 score)",
          "Results: Task 2; Conclusion", "LIME (W) / LIME (W)", _comparable_only_with_cells(_t2_lime_best)),
    Claim("t2-ranking", "Task-2 method ranking: LIME, Grad-CAM-Text and DTs first, LRP/DeepLIFT next, random last",
          "Results: Task 2", "LIME, Grad-CAM-T, DTs first", _comparable_only_with_cells(_t2_ranking)),
    Claim("t2-justify-incorrect", "LIME, Grad-CAM-Text and DTs justify predictions regardless of their correctness",
          "Results: Task 2", "6/6", _comparable_only_with_cells(_t2_justify_incorrect)),
    Claim("t2-lrp-dl-correct-only", "LRP and DeepLIFT give good reasons only for correct predictions (✓ > ✗)",
          "Results: Task 2", "8/8", _comparable_only_with_cells(_t2_propagation_correct_only)),
    Claim("ngram-beats-word", "N-gram LRP/DeepLIFT beat their word versions: show relevant words with context",
          "Results: Task 2; Conclusion", "8/8", _comparable_only_with_cells(_ngram_beats_word)),
    Claim("t2-random-worst", "A random baseline is the least class-discriminative method in task 2",
          "Results: Task 2", "Random (W) / Random (W)", _comparable_only_with_cells(_t2_random_worst)),
    Claim("t3-lrp-n-works", "LRP (N) works fairly well for investigating uncertain predictions (task 3)",
          "Results: Task 3; Conclusion", "2 / 1", _comparable_only_with_cells(_t3_lrp_n_top)),
    Claim("t3-dt-amazon-only", "In task 3 the decision trees performed well on Amazon but not on ArXiv",
          "Results: Task 3", "1 / 9", _comparable_only_with_cells(_t3_dt_amazon_only)),
    Claim("t3-lime-weak", "LIME does not work well in task 3 (evidence for both classes leaves people undecided)",
          "Results: Task 3", "6 / 6", _comparable_only_with_cells(_t3_lime_weak)),
    Claim("kappa-human-agreement", "Agreement between MTurk workers is low (Fleiss kappa, Amazon, tasks 1/2/3)",
          "Results: Tasks 1-3 (Fleiss kappa)", "0.050 / 0.274 / 0.212", _kappa),
]

__all__ = ["PAPER", "CLAIMS", "WORKS", "RHO_SIGNIFICANT", "F1_TOL", "TASKS_SEEDS", "MODELS_SEEDS"]
