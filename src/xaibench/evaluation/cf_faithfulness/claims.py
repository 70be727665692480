"""Headline claims of Ge et al. ("Counterfactual evaluation for explainable AI"), checked against our
committed tables ``cf_faithfulness_correlations`` (Table 2), ``cf_faithfulness_two_features`` (Table 3),
``cf_faithfulness_scores`` (Table 1) and ``cf_faithfulness_models`` (Sec. 4.2).

The paper's numbers come from ``xaibench/resources/cf_faithfulness.csv``, joined to our metrics by
:data:`.tables.PAPER_KEYS` (so Adults' "C_soft (cont.)" of Tables 2 and 3 is compared with our
``c_soft_disc``: the paper ran only the discrete search on Adults).  Claims on Adult use the paper's
preprocessing (``adult``), not the de-duplicated variant.  Every claim is checked under the paper's
conventions: the features of an explanation are those that push towards the predicted class
(``selection == "supporting"``, :data:`SELECTION`), Algorithm 1 returns the first flipping candidate,
and a row an explainer abstains on counts as a failed counterfactual (the runner's defaults).

Verdict rules:

* **a tau value** (``τ ours`` vs ``τ paper``): one discordant pair of n explainers moves Kendall's tau by
  ``2 / (n (n - 1) / 2)`` (0.13 for six, 0.33 for four explainers).  Reproduced when our mean over seeds
  is within one pair of the paper's; partly when it is farther but has the paper's sign (the metric
  still agrees with the ground truth, less well); not reproduced otherwise.
* **"A agrees better than B"**: the difference of our mean taus against its standard error over seeds
  ``sqrt(std_A^2 + std_B^2) / sqrt(n_seeds)``: reproduced when the difference exceeds one standard
  error, partly when it is positive but within it, not reproduced when it is not positive; a claim over
  several cells (datasets, baselines) is reproduced when every cell is, partly when some are.
* **an ordering or a rank**: compared directly on our seed means (ties count as holding); for
  "Comp. and Suff. disagree", single seeds that disagree give partly.
* **an accuracy**: within 2 percentage points.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...tables import paper_values
from ..claims import Claim, Outcome, Tables
from .runner import PAPER_DATASET, PAPER_ORDER
from .tables import COUNTERFACTUAL, ERASURE, PAPER_KEYS, TABLE3_EXPLAINERS, paper_key

PAPER = "Counterfactual evaluation (Ge et al. 2021)"
SIX = " ".join(PAPER_ORDER)
LABEL = {"adult": "Adult", "rt-polarity": "Movie Reviews"}
NAME = {"comp_del": "Comp. (del.)", "suff_del": "Suff. (del.)", "comp_mask": "Comp. (mask)", "suff_mask": "Suff. (mask)",
        "dfr": "DFR", "c_disc": "C (disc.)", "c_soft_disc": "C_soft (disc.)", "c_cont": "C (cont.)",
        "c_soft_cont": "C_soft (cont.)"}
ACCURACY_TOL = 0.02
#: the selection rule the claims are checked under (the paper's: features supporting the prediction)
SELECTION = "supporting"


def _selected(t: pd.DataFrame) -> pd.DataFrame:
    """Rows of ``t`` under :data:`SELECTION` (a table without a ``selection`` column is taken as is)."""
    return t[t["selection"] == SELECTION] if "selection" in t.columns else t


def _paper(table: str, dataset: str, metric: str, statistic: str = "kendall_tau") -> float:
    """The paper's printed value for our ``metric`` on our ``dataset`` (NaN where it printed none)."""
    key = paper_key(table, dataset, metric)
    if not key:
        return float("nan")
    hit = paper_values("cf_faithfulness", paper_table=table, dataset=PAPER_DATASET[dataset], metric=key,
                       statistic=statistic)
    return float(hit["value"].iloc[0]) if len(hit) else float("nan")


def _pair_step(n: int) -> float:
    """How much one discordant pair of ``n`` items moves Kendall's tau (Eq. 11)."""
    return 2.0 / (n * (n - 1) / 2)


class _NoRow(LookupError):
    pass


def _tau(tables: Tables, dataset: str, metric: str, k: int = 1, statistic: str = "kendall_tau") -> pd.Series:
    """Our row (ours, ours_std, n_seeds) of a rank-agreement statistic: Table 2 (K=1, six explainers) or
    Table 3 (K=2, four explainers)."""
    if k == 1:
        t = _selected(tables("cf_faithfulness_correlations"))
        t = t[(t["k"] == 1) & (t["explainers"] == SIX)]
    else:
        t = _selected(tables("cf_faithfulness_two_features"))
        t = t[t["k"] == 2]
    hit = t[(t["dataset"] == dataset) & (t["metric"] == metric) & (t["statistic"] == statistic)]
    if hit.empty or not np.isfinite(hit["ours"].iloc[0]):
        raise _NoRow(f"no {statistic} of {metric} on {dataset} (K = {k}) in our tables")
    return hit.iloc[0]


def _std(r: pd.Series) -> float:
    s = float(r["ours_std"])
    return s if np.isfinite(s) else 0.0


def _not_comparable(err: Exception) -> Outcome:
    return Outcome(None, "not comparable", str(err))


# ---------------------------------------------------------------- rule: a tau value
def tau_claim(dataset: str, metric: str, k: int = 1):
    """Check of "``metric`` agrees with GroundTruth on ``dataset`` with the paper's tau"."""
    n = len(PAPER_ORDER) if k == 1 else len(TABLE3_EXPLAINERS)
    table = "Table 2" if k == 1 else "Table 3"

    def check(tables: Tables) -> Outcome:
        paper = _paper(table, dataset, metric)
        try:
            r = _tau(tables, dataset, metric, k)
        except _NoRow as err:
            return _not_comparable(err)
        ours, step = float(r["ours"]), _pair_step(n)
        try:
            rho = _tau(tables, dataset, metric, k, "spearman_rho")
            rho_txt = f"; ρ ours {rho['ours']:.2f} vs paper {_paper(table, dataset, metric, 'spearman_rho'):.2f}"
        except _NoRow:
            rho_txt = ""
        head = f"τ ours {ours:.2f} ± {_std(r):.2f} ({int(r['n_seeds'])} seeds) vs paper {paper:.2f}"
        diff = abs(ours - paper)
        if diff <= step + 1e-9:
            return Outcome(ours, "reproduced", f"{head}: |diff| {diff:.2f} <= {step:.2f} (one of {n} explainers' "
                                               f"pairs){rho_txt}")
        if np.sign(ours) == np.sign(paper) and ours != 0:
            return Outcome(ours, "partly", f"{head}: |diff| {diff:.2f} > {step:.2f} (one pair), same sign{rho_txt}")
        return Outcome(ours, "not reproduced", f"{head}: |diff| {diff:.2f} > {step:.2f} (one pair) and the sign "
                                               f"differs{rho_txt}")

    return check


# ---------------------------------------------------------------- rule: A agrees better than B
def beats(a: pd.Series, b: pd.Series) -> tuple[str, float, float]:
    """(verdict, difference of means, its standard error over seeds) of "a's tau exceeds b's"."""
    n = max(int(min(a["n_seeds"], b["n_seeds"])), 1)
    diff = float(a["ours"]) - float(b["ours"])
    se = math.sqrt(_std(a) ** 2 + _std(b) ** 2) / math.sqrt(n)
    if diff > se:
        return "reproduced", diff, se
    return ("partly" if diff > 0 else "not reproduced"), diff, se


def _combine(cells: list[tuple[str, str]], ours: float | str | None = None) -> Outcome:
    """One outcome from per-cell (verdict, text): all reproduced -> reproduced; none holding (no cell
    reproduced or partly) -> not reproduced; else partly.  ``ours``: default the share of cells reproduced."""
    verdicts = [v for v, _ in cells]
    if all(v == "reproduced" for v in verdicts):
        verdict = "reproduced"
    elif all(v == "not reproduced" for v in verdicts):
        verdict = "not reproduced"
    else:
        verdict = "partly"
    held = sum(v == "reproduced" for v in verdicts)
    share = held / len(cells)
    return Outcome(share if ours is None else ours, verdict,
                   f"beyond 1 s.e. in {held}/{len(cells)}: " + "; ".join(t for _, t in cells))


def beats_claim(pairs: list[tuple[str, str, str]], k: int = 1):
    """Check of "metric A agrees better with GroundTruth than metric B" for each (dataset, A, B)."""

    def check(tables: Tables) -> Outcome:
        cells, diffs = [], []
        for dataset, a, b in pairs:
            try:
                ra, rb = _tau(tables, dataset, a, k), _tau(tables, dataset, b, k)
            except _NoRow as err:
                return _not_comparable(err)
            v, diff, se = beats(ra, rb)
            diffs.append(diff)
            where = f"{LABEL.get(dataset, dataset)} " if len({p[0] for p in pairs}) > 1 else ""
            cells.append((v, f"{where}{NAME[a]} {ra['ours']:.2f} vs {NAME[b]} {rb['ours']:.2f} "
                             f"(diff {diff:+.2f}, s.e. {se:.2f})"))
        return _combine(cells, diffs[0] if len(diffs) == 1 else None)

    return check


# ---------------------------------------------------------------- rule: orderings and ranks
def _computed(dataset: str, family: tuple[str, ...]) -> list[str]:
    """Our metrics of ``family`` for which the paper's Table 2 has a value on ``dataset``."""
    keys = PAPER_KEYS[("Table 2", PAPER_DATASET[dataset])]
    return [m for m in family if m in keys]


def _best(tables: Tables, dataset: str, family: tuple[str, ...]) -> tuple[str, float]:
    vals = {m: float(_tau(tables, dataset, m)["ours"]) for m in _computed(dataset, family)}
    m = max(vals, key=vals.get)
    return m, vals[m]


def check_ce_best(tables: Tables) -> Outcome:
    cells = []
    for d in ("adult", "rt-polarity"):
        try:
            (cm, cv), (em, ev) = _best(tables, d, COUNTERFACTUAL), _best(tables, d, ERASURE)
        except _NoRow as err:
            return _not_comparable(err)
        cells.append((cv > ev, f"{LABEL[d]}: best C {cv:.2f} ({NAME[cm]}) vs best erasure {ev:.2f} ({NAME[em]})"))
    held = sum(h for h, _ in cells)
    verdict = "reproduced" if held == len(cells) else "partly" if held else "not reproduced"
    return Outcome(held / len(cells), verdict, f"highest in {held}/{len(cells)} datasets "
                   "(the cells the paper computed): " + "; ".join(t for _, t in cells))


def check_comp_del_strongest(tables: Tables) -> Outcome:
    cells = []
    for d in ("adult", "rt-polarity"):
        try:
            comp = float(_tau(tables, d, "comp_del")["ours"])
            em, ev = _best(tables, d, ERASURE)
        except _NoRow as err:
            return _not_comparable(err)
        cells.append((comp >= ev, f"{LABEL[d]}: Comp. (del.) {comp:.2f}, best erasure {ev:.2f} ({NAME[em]})"))
    held = sum(h for h, _ in cells)
    verdict = "reproduced" if held == len(cells) else "partly" if held else "not reproduced"
    return Outcome(held / len(cells), verdict, f"strongest in {held}/{len(cells)} datasets: "
                   + "; ".join(t for _, t in cells))


def _ranks(tables: Tables, dataset: str, metric: str) -> pd.Series:
    t = _selected(tables("cf_faithfulness_scores"))
    t = t[(t["dataset"] == dataset) & (t["k"] == 1) & (t["metric"] == metric) & t["explainer"].isin(PAPER_ORDER)]
    if t.empty or t["rank"].isna().any():
        raise _NoRow(f"no ranks of {metric} on {dataset} in cf_faithfulness_scores")
    return t.set_index("explainer")["rank"].reindex(list(PAPER_ORDER))


def check_comp_suff_disagree(tables: Tables) -> Outcome:
    """Reproduced when Comp. and Suff. rank the seed means differently (as the paper's Table 1 does);
    partly when only single seeds disagree (their mean taus differ, which identical rankings in every
    seed could not give); not reproduced otherwise."""
    cells = []
    for comp, suff in (("comp_del", "suff_del"), ("comp_mask", "suff_mask")):
        try:
            rc, rs = _ranks(tables, "rt-polarity", comp), _ranks(tables, "rt-polarity", suff)
            tc, ts = _tau(tables, "rt-polarity", comp), _tau(tables, "rt-polarity", suff)
        except _NoRow as err:
            return _not_comparable(err)
        moved = int((rc != rs).sum())
        seeds_differ = not math.isclose(float(tc["ours"]), float(ts["ours"]), abs_tol=1e-9)
        v = "reproduced" if moved else "partly" if seeds_differ else "not reproduced"
        cells.append((v, f"{NAME[comp]} vs {NAME[suff]}: {moved} of {len(rc)} explainers ranked differently by the "
                         f"seed means, mean τ {tc['ours']:.2f} vs {ts['ours']:.2f}"))
    verdicts = [v for v, _ in cells]
    verdict = ("reproduced" if all(v == "reproduced" for v in verdicts) else "not reproduced"
               if all(v == "not reproduced" for v in verdicts) else "partly")
    return Outcome(sum(v == "reproduced" for v in verdicts) / len(cells), verdict,
                   "Movie Reviews, " + "; ".join(t for _, t in cells))


def check_lr_first(tables: Tables) -> Outcome:
    cells = []
    for d, metrics in (("adult", ("c_disc", "c_soft_disc")), ("rt-polarity", ("c_cont", "c_soft_cont"))):
        for m in metrics:
            try:
                r = _ranks(tables, d, m)
            except _NoRow as err:
                return _not_comparable(err)
            cells.append((r["logistic_regression"] == 1, f"{LABEL[d]} {NAME[m]} {int(r['logistic_regression'])}"))
    held = sum(h for h, _ in cells)
    verdict = "reproduced" if held == len(cells) else "partly" if held else "not reproduced"
    return Outcome(held / len(cells), verdict, f"LR ranked 1st in {held}/{len(cells)} (its rank: "
                   + ", ".join(t for _, t in cells) + ")")


def accuracy_claim(dataset: str):
    def check(tables: Tables) -> Outcome:
        t = tables("cf_faithfulness_models")
        hit = t[(t["dataset"] == dataset) & (t["metric"] == "test_accuracy")]
        if hit.empty:
            return Outcome(None, "not comparable", f"no test accuracy of {dataset} in cf_faithfulness_models")
        r = hit.iloc[0]
        paper = float(paper_values("cf_faithfulness", paper_table="Sec 4.2", dataset=PAPER_DATASET[dataset],
                                   metric="test_accuracy")["value"].iloc[0])
        ours, diff = float(r["ours"]), abs(float(r["ours"]) - paper)
        ok = diff <= ACCURACY_TOL
        return Outcome(ours, "reproduced" if ok else "not reproduced",
                       f"ours {ours:.3f} ± {_std(r):.3f} vs paper {paper:.3f}: |diff| {diff:.3f} "
                       f"{'<=' if ok else '>'} {ACCURACY_TOL}")

    return check


def _p(table: str, dataset: str, metric: str) -> float:
    return _paper(table, dataset, metric)


CLAIMS: list[Claim] = [
    Claim("c-disc-agrees-adult", "C (disc.) ranks the six explainers exactly as GroundTruth on Adults",
          "Table 2", _p("Table 2", "adult", "c_disc"), tau_claim("adult", "c_disc")),
    Claim("c-soft-agrees-adult", "C_soft ranks them exactly as GroundTruth on Adults (printed '(cont.)', a discrete search)",
          "Table 2", _p("Table 2", "adult", "c_soft_disc"), tau_claim("adult", "c_soft_disc")),
    Claim("c-cont-agrees-movies", "C (cont.) agrees with the GroundTruth ranking on Movie Reviews",
          "Table 2", _p("Table 2", "rt-polarity", "c_cont"), tau_claim("rt-polarity", "c_cont")),
    Claim("c-soft-cont-agrees-movies", "C_soft (cont.) agrees with the GroundTruth ranking on Movie Reviews",
          "Table 2", _p("Table 2", "rt-polarity", "c_soft_cont"), tau_claim("rt-polarity", "c_soft_cont")),
    Claim("c-disc-beats-dfr", "With predicted labels only, C (disc.) agrees with GroundTruth far better than DFR (Adults)",
          "Sec. 4.6 (1), Table 2", f"τ {_p('Table 2', 'adult', 'c_disc'):.2f} vs {_p('Table 2', 'adult', 'dfr'):.2f}",
          beats_claim([("adult", "c_disc", "dfr")])),
    Claim("c-cont-beats-comp-del", "C (cont.) agrees better than Comp. (del.), the strongest baseline, on both datasets",
          "Sec. 4.6 (2), Table 2",
          f"τ {_p('Table 2', 'rt-polarity', 'c_cont'):.2f} vs {_p('Table 2', 'rt-polarity', 'comp_del'):.2f} "
          "(Movie Reviews; Adults not computed)",
          beats_claim([("adult", "c_cont", "comp_del"), ("rt-polarity", "c_cont", "comp_del")])),
    Claim("comp-del-best-erasure", "Comp. (del.) is the strongest erasure baseline (highest τ of the erasure metrics)",
          "Sec. 4.6 (2), Table 2", "both datasets", check_comp_del_strongest),
    Claim("comp-suff-disagree-movies", "On Movie Reviews Comp. and Suff. rank the explainers differently",
          "Sec. 4.6 (2), Tables 1-2", "yes (del. and mask)", check_comp_suff_disagree),
    Claim("ce-highest-agreement", "A counterfactual score (C or C_soft) agrees best with GroundTruth on each dataset",
          "Table 2, Sec. 5", "both datasets", check_ce_best),
    Claim("lr-first-on-ce", "The LR's own explanation ranks 1st on every C and C_soft score",
          "Table 1", "4 of 4", check_lr_first),
    Claim("k2-c-soft-agrees-adult", "With two features per explanation, C_soft ranks the four explainers as GroundTruth",
          "Table 3, Sec. 4.6 (3)", _p("Table 3", "adult", "c_soft_disc"), tau_claim("adult", "c_soft_disc", k=2)),
    Claim("k2-c-soft-beats-erasure", "With two features, C_soft agrees far better than Comp. (del.), Suff. (del.), DFR",
          "Table 3, Sec. 4.6 (3)",
          f"τ {_p('Table 3', 'adult', 'c_soft_disc'):.2f} vs {_p('Table 3', 'adult', 'comp_del'):.2f} each",
          beats_claim([("adult", "c_soft_disc", b) for b in ("comp_del", "suff_del", "dfr")], k=2)),
    Claim("lr-accuracy-adult", "The white-box LR reaches 77.57% test accuracy on Adults", "Sec. 4.2",
          float(paper_values("cf_faithfulness", paper_table="Sec 4.2", dataset="adults")["value"].iloc[0]),
          accuracy_claim("adult")),
    Claim("lr-accuracy-movies", "The white-box LR reaches 71.20% test accuracy on Movie Reviews", "Sec. 4.2",
          float(paper_values("cf_faithfulness", paper_table="Sec 4.2", dataset="movie_reviews")["value"].iloc[0]),
          accuracy_claim("rt-polarity")),
]
