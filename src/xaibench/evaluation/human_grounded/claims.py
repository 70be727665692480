"""Headline claims of Lertvittayakumjorn & Toni (2019) beside our simulated-participant results.

Every check reads the committed tables ``human_grounded_models`` (the CNNs' macro-F1) and
``human_grounded_tasks`` (average scores of tasks 1-3 and Fleiss' kappa) and the paper's printed
numbers (``xaibench/resources/human_grounded.csv``).  Our participants are simulated readers
(bag-of-n-grams classifiers, :mod:`.readers`), so a claim about how *people* behave (their
agreement, what they prefer) is ``not comparable``; a claim about how the methods *order* on a
task is checked by comparing the orderings of our scores and the paper's.

Two score levels recur in the rules, both read off the paper's own wording of task 1: it calls
scores up to 0.12 (its best task-1 column A) "not impressive" and the 0.22-0.24 of LRP (N) and
DeepLIFT (N) on correct arXiv predictions "fairly work"; :data:`WORKS` = 0.15 lies between them.

``ours_std`` is the spread over the simulated readers (bootstrap resamples), not over seeds.  Two
methods scored on the same questions are compared by the sign of their difference (the readers'
spread of each score says little about a paired difference); the correct (✓) and incorrect (✗)
columns are different questions, so their difference must exceed the combined spread.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..claims import Claim, Outcome, Tables, by_share
from .methods import PAPER_METHODS, method_label

PAPER = "Human-grounded evaluations (Lertvittayakumjorn & Toni 2019)"

DATASETS = ("amazon", "arxiv")
#: an average score at or above this "works" (between the paper's 0.12 "not impressive" and 0.22 "fairly work")
WORKS = 0.15
#: |Spearman rho| over nine methods above which a rank correlation is significant at 5 % (two-sided)
RHO_SIGNIFICANT = 0.68
#: a CNN's macro-F1 within this of the paper's counts as the same
F1_TOL = 0.05
RANDOM = ("random_w", "random_n")
PROPAGATION = ("lrp_w", "lrp_n", "deeplift_w", "deeplift_n")


# ---------------------------------------------------------------- reading ours and the paper's
def _ours(tables: Tables) -> pd.DataFrame:
    t = tables("human_grounded_tasks")
    t = t[t["metric"] == "avg_score"].copy()
    t["ours_std"] = pd.to_numeric(t["ours_std"], errors="coerce").fillna(0.0)
    return t


def _paper() -> pd.DataFrame:
    from ...tables import paper_values

    return paper_values("human_grounded", metric="avg_human_score").rename(columns={"value": "paper"})


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


def _column(df: pd.DataFrame, task: str, dataset: str, subset: str = "all", value: str = "ours") -> pd.Series:
    """One column of a task table (the nine methods in the paper's order), e.g. task 2, Amazon, column A."""
    s = df[(df["task"] == task) & (df["dataset"] == dataset) & (df["subset"] == subset)]
    s = s.set_index("method")[value].astype(float)
    missing = [m for m in PAPER_METHODS if m not in s.index or pd.isna(s[m])]
    if missing:
        which = "any method" if len(missing) == len(PAPER_METHODS) else _labels(missing)
        raise _NoCell(f"{task} {dataset} {subset} for {which}")
    return s.reindex(list(PAPER_METHODS))


def _std(df: pd.DataFrame, task: str, dataset: str, subset: str = "all") -> pd.Series:
    return _column(df, task, dataset, subset, "ours_std")


def _rank(s: pd.Series, method: str) -> int:
    """1 = the highest score (ties share the better rank)."""
    return int((s > s[method]).sum()) + 1


def _labels(methods) -> str:
    return ", ".join(method_label(m) for m in methods)


def _f1(tables: Tables, condition: str) -> dict[str, tuple[float, float]]:
    t = tables("human_grounded_models")
    t = t[t["model_condition"] == condition]
    out = {r.dataset: (float(r.ours), float(r.paper)) for r in t.itertuples()}
    missing = [ds for ds in DATASETS if ds not in out]
    if missing:
        raise _NoCell(f"the {condition} CNN of {', '.join(missing)}")
    return out


# ---------------------------------------------------------------- checks
def _cnn_f1(tables: Tables) -> Outcome:
    f1 = _f1(tables, "well_trained")
    ok = [ds for ds in DATASETS if ds in f1 and abs(f1[ds][0] - f1[ds][1]) <= F1_TOL]
    ours = " / ".join(f"{f1[ds][0]:.2f}" for ds in DATASETS if ds in f1)
    detail = "; ".join(f"{ds} {f1[ds][0]:.3f} vs {f1[ds][1]:.2f}" for ds in DATASETS if ds in f1)
    out = by_share(len(ok) / len(DATASETS), "dataset")
    return Outcome(ours, out.verdict, f"{detail}: within {F1_TOL} of the paper in {len(ok)}/{len(DATASETS)} datasets")


def _worse_gap(tables: Tables) -> Outcome:
    well, worse = _f1(tables, "well_trained"), _f1(tables, "worse")
    gaps = {ds: (well[ds][0] - worse[ds][0], well[ds][1] - worse[ds][1]) for ds in DATASETS}
    worse_in_all = all(g[0] > 0 for g in gaps.values())
    same_size = all(abs(g[0] - g[1]) <= F1_TOL for g in gaps.values())
    ours = " / ".join(f"{g[0]:.2f}" for g in gaps.values())
    detail = "; ".join(f"{ds} gap {g[0]:.3f} vs {g[1]:.2f}" for ds, g in gaps.items())
    if worse_in_all and same_size:
        return Outcome(ours, "reproduced", f"{detail}: worse everywhere, gaps within {F1_TOL} of the paper's")
    if worse_in_all:
        return Outcome(ours, "partly", f"{detail}: worse everywhere, but a gap differs from the paper's by > {F1_TOL}")
    return Outcome(ours, "not reproduced", f"{detail}: the worse model is not worse on every dataset")


def _t1_none_works(tables: Tables) -> Outcome:
    ours = _ours(tables)
    best = {ds: _column(ours, "task_1", ds) for ds in DATASETS}
    best = {ds: (s.idxmax(), float(s.max())) for ds, s in best.items()}
    ok = [ds for ds, (_, v) in best.items() if v < WORKS]
    detail = "; ".join(f"{ds} best {method_label(m)} {v:+.2f}" for ds, (m, v) in best.items())
    out = by_share(len(ok) / len(DATASETS), "dataset")
    return Outcome(" / ".join(f"{v:+.2f}" for _, v in best.values()), out.verdict,
                   f"{detail}: below {WORKS} in {len(ok)}/{len(DATASETS)} datasets")


def _t1_ngram_arxiv(tables: Tables) -> Outcome:
    s = _column(_ours(tables), "task_1", "arxiv", "correct")
    vals = {m: float(s[m]) for m in ("lrp_n", "deeplift_n")}
    ok = [m for m, v in vals.items() if v >= WORKS]
    out = by_share(len(ok) / len(vals), "method")
    return Outcome(" / ".join(f"{v:+.2f}" for v in vals.values()), out.verdict,
                   "; ".join(f"{method_label(m)} {v:+.2f}" for m, v in vals.items())
                   + f" (paper +0.24 / +0.22): >= {WORKS} for {len(ok)}/2")


def _t2_lime_best(tables: Tables) -> Outcome:
    ours = _ours(tables)
    cols = {ds: _column(ours, "task_2", ds).sort_values(ascending=False, kind="stable") for ds in DATASETS}
    best = {ds: s.index[0] for ds, s in cols.items()}
    ok = [ds for ds, m in best.items() if m == "lime"]
    detail = "; ".join(f"{ds} {method_label(s.index[0])} {s.iloc[0]:+.2f} (next {method_label(s.index[1])} "
                       f"{s.iloc[1]:+.2f})" for ds, s in cols.items())
    out = by_share(len(ok) / len(DATASETS), "dataset")
    return Outcome(" / ".join(method_label(m) for m in best.values()), out.verdict,
                   f"best in task 2 (A): {detail}; LIME best in {len(ok)}/{len(DATASETS)} datasets")


def _t2_ranking(tables: Tables) -> Outcome:
    from ...tables import join_paper
    from ..agreement import rank_agreement

    ours = _ours(tables)
    for ds in DATASETS:
        _column(ours, "task_2", ds)  # all nine methods or not comparable
    both = join_paper(ours, "human_grounded", ["task", "dataset", "method", "subset"],
                      metric="avg_human_score")
    both = both[(both["task"] == "task_2") & (both["subset"] == "all")]
    agree = rank_agreement(both, ["dataset"], item="method").set_index("dataset")
    rho = {ds: float(agree.loc[ds, "spearman"]) for ds in DATASETS if ds in agree.index}
    ok = [ds for ds, r in rho.items() if r >= RHO_SIGNIFICANT]
    out = by_share(len(ok) / len(DATASETS), "dataset")
    return Outcome(" / ".join(f"{r:+.2f}" for r in rho.values()), out.verdict,
                   "Spearman rho over 9 methods: " + "; ".join(f"{ds} {r:+.2f}" for ds, r in rho.items())
                   + f"; >= {RHO_SIGNIFICANT} (5 % significance) in {len(ok)}/{len(DATASETS)}")


def _t2_justify_incorrect(tables: Tables) -> Outcome:
    ours = _ours(tables)
    cells, ok, miss = 0, 0, []
    for ds in DATASETS:
        s = _column(ours, "task_2", ds, "incorrect")
        bar = float(s.reindex(RANDOM).max())
        for m in ("lime", "gradcam_text", "dt"):
            cells += 1
            if s[m] > bar:
                ok += 1
            else:
                miss.append(f"{ds} {method_label(m)} {s[m]:+.2f} <= random {bar:+.2f}")
    out = by_share(ok / cells, "cell")
    return Outcome(f"{ok}/{cells}", out.verdict, f"column ✗ above both random baselines in {ok}/{cells} "
                   "(method, dataset) cells" + (f"; fails: {'; '.join(miss)}" if miss else ""))


def _t2_propagation_correct_only(tables: Tables) -> Outcome:
    ours = _ours(tables)
    cells, ok, miss = 0, 0, []
    for ds in DATASETS:
        c, x = _column(ours, "task_2", ds, "correct"), _column(ours, "task_2", ds, "incorrect")
        sc, sx = _std(ours, "task_2", ds, "correct"), _std(ours, "task_2", ds, "incorrect")
        for m in PROPAGATION:
            cells += 1
            gap, std = float(c[m] - x[m]), float(np.hypot(sc[m], sx[m]))
            if gap > std:
                ok += 1
            else:
                miss.append(f"{ds} {method_label(m)} {gap:+.2f}")
    out = by_share(ok / cells, "cell")
    return Outcome(f"{ok}/{cells}", out.verdict, f"✓ minus ✗ above its reader std in {ok}/{cells} (method, dataset) "
                   "cells" + (f"; not: {', '.join(miss)}" if miss else ""))


def _ngram_beats_word(tables: Tables) -> Outcome:
    ours = _ours(tables)
    cells, ok, miss = 0, 0, []
    for task in ("task_2", "task_3"):
        for ds in DATASETS:
            s = _column(ours, task, ds)
            for fam in ("lrp", "deeplift"):
                cells += 1
                if s[f"{fam}_n"] > s[f"{fam}_w"]:
                    ok += 1
                else:
                    miss.append(f"{task} {ds} {fam}")
    out = by_share(ok / cells, "cell")
    return Outcome(f"{ok}/{cells}", out.verdict, f"(N) > (W) in column A in {ok}/{cells} (task, dataset, method) "
                   "cells" + (f"; not: {', '.join(miss)}" if miss else ""))


def _t2_random_worst(tables: Tables) -> Outcome:
    ours = _ours(tables)
    worst = {ds: _column(ours, "task_2", ds).idxmin() for ds in DATASETS}
    ok = [ds for ds, m in worst.items() if m in RANDOM]
    out = by_share(len(ok) / len(DATASETS), "dataset")
    return Outcome(" / ".join(method_label(m) for m in worst.values()), out.verdict,
                   "lowest in task 2 (A): " + "; ".join(f"{ds} {method_label(m)}" for ds, m in worst.items())
                   + f"; a random baseline in {len(ok)}/{len(DATASETS)}")


def _t3_lrp_n_top(tables: Tables) -> Outcome:
    ours = _ours(tables)
    ranks = {ds: _rank(_column(ours, "task_3", ds), "lrp_n") for ds in DATASETS}
    ok = [ds for ds, r in ranks.items() if r <= 2]
    out = by_share(len(ok) / len(DATASETS), "dataset")
    return Outcome(" / ".join(str(r) for r in ranks.values()), out.verdict,
                   "LRP (N) rank of 9 in task 3 (A): " + "; ".join(f"{ds} {r}" for ds, r in ranks.items())
                   + f" (paper 2 / 1); top 2 in {len(ok)}/{len(DATASETS)}")


def _t3_dt_amazon_only(tables: Tables) -> Outcome:
    ours = _ours(tables)
    ranks = {ds: _rank(_column(ours, "task_3", ds), "dt") for ds in DATASETS}
    holds = [ranks["amazon"] <= 4, ranks["arxiv"] >= 6]
    out = by_share(sum(holds) / 2, "dataset")
    return Outcome(f"{ranks['amazon']} / {ranks['arxiv']}", out.verdict,
                   f"DTs rank of 9 in task 3 (A): amazon {ranks['amazon']} (top 4 wanted), arxiv {ranks['arxiv']} "
                   f"(bottom 4 wanted; paper 1 / 9)")


def _t3_lime_weak(tables: Tables) -> Outcome:
    ours = _ours(tables)
    ranks = {ds: _rank(_column(ours, "task_3", ds), "lime") for ds in DATASETS}
    ok = [ds for ds, r in ranks.items() if r >= 5]
    out = by_share(len(ok) / len(DATASETS), "dataset")
    return Outcome(" / ".join(str(r) for r in ranks.values()), out.verdict,
                   "LIME rank of 9 in task 3 (A): " + "; ".join(f"{ds} {r}" for ds, r in ranks.items())
                   + f" (paper 6 / 6); in the lower half (5-9) in {len(ok)}/{len(DATASETS)}")


def _more_evidence(tables: Tables) -> Outcome:
    return Outcome(None, "not comparable", "a preference of people; our readers weigh fragments by a classifier, "
                   "and no table records how many evidence texts an explanation had")


def _kappa(tables: Tables) -> Outcome:
    t = tables("human_grounded_tasks")
    k = t[(t["metric"] == "fleiss_kappa") & (t["dataset"] == "amazon") & (t["subset"] == "by_answer_full")]
    ours = " / ".join(f"{v:.2f}" for v in k.sort_values("task")["ours"])
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

__all__ = ["PAPER", "CLAIMS", "WORKS", "RHO_SIGNIFICANT", "F1_TOL"]
