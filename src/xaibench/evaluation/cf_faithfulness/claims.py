"""Headline claims of Ge et al. ("Counterfactual evaluation for explainable AI"), checked against our
committed tables ``cf_faithfulness_correlations`` (Table 2), ``cf_faithfulness_two_features`` (Table 3),
``cf_faithfulness_scores`` (Table 1) and ``cf_faithfulness_models`` (Sec. 4.2).

The paper's numbers come from ``xaibench/resources/cf_faithfulness.csv``, joined to our metrics by
:data:`.tables.PAPER_KEYS` (so Adults' "C_soft (cont.)" of Tables 2 and 3 is compared with our
``c_soft_disc``: the paper ran only the discrete search on Adults).  A claim is judged only on the cells
the paper computed (Table 2 prints no C (cont.) on Adults and no C (disc.) on Movie Reviews).  Claims on
Adult use the paper's preprocessing (``adult``), not the de-duplicated variant.  Every claim is checked
under the paper's conventions: the features of an explanation are those that push towards the predicted
class (``selection == "supporting"``, :data:`SELECTION`), Algorithm 1 returns the first flipping
candidate, and a row an explainer abstains on counts as a failed counterfactual (the runner's defaults).

**Where the values come from.**  A tau or a score is read per seed from the per-seed tables
:data:`CORR_SEEDS` (``dataset, selection, k, explainers, metric, statistic, seed, ours``; K = 1 and
K = 2 rows told apart by ``explainers``, optional ``tau_ceiling``) and :data:`SCORES_SEEDS`
(``dataset, selection, k, metric, explainer, seed, ours``) where they exist: then an interval is a t
interval over seeds, a difference is paired over the seeds both values share, and leaving a seed out
(:func:`..claims.stability`) recomputes it.  Without them the summaries (``ours``, ``ours_std`` over
``n_seeds``) give a t interval of a mean and, for a difference, the unpaired Welch interval, which is
wider than the paired one (it ignores that every metric is scored on the same seeds and rows), so it
errs towards ``inconclusive``.  With summaries only, two values with the same mean and std are taken as
tied in every seed; the per-seed table decides a tie exactly.

Verdict rules (every interval at 95 %):

* **a tau value** ("``metric`` ranks the explainers as GroundTruth", the paper's tau): our tau's interval
  against the paper's within a tolerance of one discordant pair of the n explainers (``2 / (n (n-1) / 2)``:
  0.13 for six, 0.33 for four), capped at half the paper's claimed effect, the lead of its tau over the
  best erasure baseline of the same table and dataset (:func:`..claims.judge_agrees`).  Where the table
  gives ``tau_ceiling`` (the largest tau a ranking can reach against our ground truth, which ties Omission
  with the LR explainer at rank 1, so 14/15 for six explainers), the target is ``min(paper, ceiling)``;
  without the column it is the paper's value.
* **"A agrees better than B"**: the difference of the taus, above 0; over several cells,
  :func:`..claims.by_cells`.
* **"A is the best" / "ranks 1st"**: A's lead over the runner-up, the best rival by mean that is not tied
  with A in every seed (a rival tied in every seed shares A's rank, as the tables' ranks do; the paper's
  own Table 2 ties Comp. (del.) with Suff. (del.) on Adults and with Comp. (mask) on Movie Reviews), above
  0, per dataset or score, then :func:`..claims.by_cells`.  A "best" is chosen among the cells the paper
  computed.
* **"Comp. and Suff. rank the explainers differently"**: the difference of their taus, whose size must
  exceed half the paper's difference (half a pair of six explainers) in either direction: it holds when
  the interval lies beyond +-half, fails when it lies inside, per removal (del., mask).
* **the LR's test accuracy** is a precondition (the model the explainers are evaluated on), reported with
  its interval over seeds beside the paper's, without a verdict.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ...tables import paper_values
from ..claims import (Claim, Interval, MissingTable, Outcome, Tables, by_cells, judge, judge_agrees,
                      paired_interval, precondition, side, summary_interval, t_interval, welch_interval)
from . import metrics as cfm
from .runner import PAPER_DATASET, PAPER_ORDER
from .tables import COUNTERFACTUAL, ERASURE, PAPER_KEYS, TABLE3_EXPLAINERS, paper_key

PAPER = "Counterfactual evaluation (Ge et al. 2021)"
SIX = " ".join(PAPER_ORDER)
LABEL = {"adult": "Adult", "rt-polarity": "Movie Reviews"}
NAME = {"comp_del": "Comp. (del.)", "suff_del": "Suff. (del.)", "comp_mask": "Comp. (mask)", "suff_mask": "Suff. (mask)",
        "dfr": "DFR", "c_disc": "C (disc.)", "c_soft_disc": "C_soft (disc.)", "c_cont": "C (cont.)",
        "c_soft_cont": "C_soft (cont.)", "random": "Random", "omission": "Omission", "lime": "LIME",
        "anchor": "Anchor", "decision_boundary": "Decision Boundary", "logistic_regression": "LR"}
#: the selection rule the claims are checked under (the paper's: features supporting the prediction)
SELECTION = "supporting"
CORR, TWO, SCORES, MODELS = ("cf_faithfulness_correlations", "cf_faithfulness_two_features", "cf_faithfulness_scores",
                             "cf_faithfulness_models")
#: per-seed tables read in preference to the summaries where they exist
CORR_SEEDS, SCORES_SEEDS = "cf_faithfulness_correlations_seeds", "cf_faithfulness_scores_seeds"


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


def _not_comparable(err: Exception) -> Outcome:
    return Outcome(None, "not comparable", str(err))


# ---------------------------------------------------------------- our values: per seed or summarised
@dataclass(frozen=True, eq=False)
class Values:
    """Our values of one cell (a tau or a score): per seed (``per_seed``: seed -> value) where a per-seed
    table has them, else a summary's mean, std and number of seeds; ``ceiling``: the table's
    ``tau_ceiling`` (mean over the seeds read) where it has the column."""

    mean: float
    std: float
    n: int
    per_seed: pd.Series | None = None
    ceiling: float | None = None

    @classmethod
    def of_seeds(cls, rows: pd.DataFrame) -> "Values":
        s = rows.set_index("seed")["ours"].astype(float).sort_index()
        if s.index.duplicated().any():
            raise ValueError(f"several rows per seed in a per-seed table: {sorted(s.index[s.index.duplicated()])}")
        return cls(float(s.mean()), float(s.std(ddof=1)) if len(s) > 1 else math.nan, len(s), s, _ceiling(rows))

    @classmethod
    def of_summary(cls, row: pd.Series) -> "Values":
        return cls(float(row["ours"]), float(row["ours_std"]), int(row["n_seeds"]), None,
                   _ceiling(row.to_frame().T))

    def interval(self) -> Interval:
        if self.per_seed is not None:
            return t_interval(self.per_seed.to_numpy())
        return summary_interval(self.mean, self.std, self.n)

    def tied(self, other: "Values") -> bool:
        """Equal in every seed (summaries: the same mean and std)."""
        if self.per_seed is not None and other.per_seed is not None:
            return (self.per_seed.index.equals(other.per_seed.index)
                    and np.allclose(self.per_seed.to_numpy(), other.per_seed.to_numpy(), rtol=0, atol=1e-12))
        return bool(np.isclose(self.mean, other.mean, rtol=0, atol=1e-12)
                    and np.isclose(self.std, other.std, rtol=0, atol=1e-12, equal_nan=True))


def _ceiling(rows: pd.DataFrame) -> float | None:
    if "tau_ceiling" not in rows.columns:
        return None
    c = pd.to_numeric(rows["tau_ceiling"], errors="coerce").dropna()
    return float(c.mean()) if len(c) else None


def _minus(a: Values, b: Values) -> Interval:
    """Interval of ``a - b``: paired over the seeds both have per seed, else Welch from the summaries."""
    if a.per_seed is not None and b.per_seed is not None:
        common = a.per_seed.index.intersection(b.per_seed.index)
        if len(common):
            return paired_interval(a.per_seed[common].to_numpy(), b.per_seed[common].to_numpy())
    return welch_interval(a.mean, a.std, a.n, b.mean, b.std, b.n)


def _more(*vals: Values, table: str = CORR_SEEDS) -> str:
    """What evidence would decide an undecided interval."""
    if all(v.per_seed is not None for v in vals):
        return "more seeds"
    return f"more seeds or the per-seed table {table} (paired intervals)"


def _per_seed(tables: Tables, name: str) -> pd.DataFrame | None:
    """The per-seed table ``name`` under :data:`SELECTION`, or None where it has not been written (looked up
    before it is read, so that a reader that records what a check reads records only tables that exist)."""
    if not (Path(tables.root) / f"{name}.csv").is_file():
        return None
    try:
        return _selected(tables(name))
    except MissingTable:
        return None


def _finite(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[np.isfinite(pd.to_numeric(rows["ours"], errors="coerce").astype(float))]


def _explainers(k: int) -> tuple[str, ...]:
    return PAPER_ORDER if k == 1 else TABLE3_EXPLAINERS


def _tau(tables: Tables, dataset: str, metric: str, k: int = 1, statistic: str = "kendall_tau") -> Values:
    """Our rank-agreement statistic of ``metric`` on ``dataset``: Table 2 (K = 1, six explainers) or Table 3
    (K = 2, four explainers); per seed from :data:`CORR_SEEDS` where it has the cell, else the summary."""
    expl = " ".join(_explainers(k))
    seeds = _per_seed(tables, CORR_SEEDS)
    if seeds is not None:
        hit = _finite(seeds[(seeds["dataset"] == dataset) & (seeds["k"] == k) & (seeds["explainers"] == expl)
                            & (seeds["metric"] == metric) & (seeds["statistic"] == statistic)])
        if len(hit):
            return Values.of_seeds(hit)
    if k == 1:
        t = _selected(tables(CORR))
        t = t[(t["k"] == 1) & (t["explainers"] == expl)]
    else:
        t = _selected(tables(TWO))
        t = t[t["k"] == 2]
    hit = _finite(t[(t["dataset"] == dataset) & (t["metric"] == metric) & (t["statistic"] == statistic)])
    if hit.empty:
        raise _NoRow(f"no {statistic} of {metric} on {dataset} (K = {k}) in our tables")
    return Values.of_summary(hit.iloc[0])


def _scores(tables: Tables, dataset: str, metric: str) -> dict[str, Values]:
    """Our Table 1 scores (K = 1) of the paper's six explainers, oriented so that larger is better; per seed
    from :data:`SCORES_SEEDS` where it has them all, else the summary."""
    sign = -1.0 if cfm.METRICS[metric].lower_is_better else 1.0
    seeds = _per_seed(tables, SCORES_SEEDS)
    if seeds is not None:
        hit = _finite(seeds[(seeds["dataset"] == dataset) & (seeds["k"] == 1) & (seeds["metric"] == metric)])
        if set(PAPER_ORDER) <= set(hit["explainer"]):
            return {e: Values.of_seeds(hit[hit["explainer"] == e].assign(ours=sign * hit["ours"]))
                    for e in PAPER_ORDER}
    t = _selected(tables(SCORES))
    t = _finite(t[(t["dataset"] == dataset) & (t["k"] == 1) & (t["metric"] == metric)])
    if not set(PAPER_ORDER) <= set(t["explainer"]):
        raise _NoRow(f"no scores of {metric} on {dataset} for all six explainers in {SCORES}")
    t = t.set_index("explainer")
    return {e: Values(sign * float(t.at[e, "ours"]), float(t.at[e, "ours_std"]), int(t.at[e, "n_seeds"]))
            for e in PAPER_ORDER}


# ---------------------------------------------------------------- rule: a tau value
def _paper_baseline(table: str, dataset: str) -> tuple[str, float]:
    """The paper's best erasure baseline (name, tau) in ``table`` on ``dataset``."""
    vals = {m: _paper(table, dataset, m) for m in ERASURE}
    vals = {m: v for m, v in vals.items() if np.isfinite(v)}
    m = max(vals, key=vals.get)
    return m, vals[m]


def tau_claim(dataset: str, metric: str, k: int = 1):
    """Check of "``metric`` agrees with GroundTruth on ``dataset`` with the paper's tau"."""
    n = len(_explainers(k))
    table = "Table 2" if k == 1 else "Table 3"

    def check(tables: Tables) -> Outcome:
        paper = _paper(table, dataset, metric)
        if not np.isfinite(paper):
            return Outcome(None, "not comparable", f"the paper computed no τ of {metric} on {dataset} ({table})")
        try:
            v = _tau(tables, dataset, metric, k)
        except _NoRow as err:
            return _not_comparable(err)
        base, base_tau = _paper_baseline(table, dataset)
        effect = paper - base_tau
        if effect <= 0:
            raise ValueError(f"{table} {dataset}: the paper's {metric} τ {paper} does not exceed its baselines")
        step = _pair_step(n)
        tol = min(step, effect / 2)
        target = paper if v.ceiling is None else min(paper, v.ceiling)
        out = judge_agrees(v.interval(), target, tol, claimed_effect=effect, what=f"τ over {n} explainers",
                           more=_more(v), ours=v.mean)
        ceiling = ("no tau_ceiling column: target = paper" if v.ceiling is None
                   else f"target min(paper {paper:.3f}, our ceiling {v.ceiling:.3f})")
        note = (f"; tol: one pair ({step:.3f}) capped at half the paper's lead over {NAME[base]} "
                f"({effect:.3f}); {ceiling}")
        return Outcome(out.ours, out.verdict, out.reason + note, out.interval)

    return check


# ---------------------------------------------------------------- rule: A agrees better than B
def beats_claim(pairs: list[tuple[str, str, str]], k: int = 1):
    """Check of "metric A agrees better with GroundTruth than metric B" for each (dataset, A, B): the
    difference of the taus above 0 (one pair: :func:`..claims.judge`; several: :func:`..claims.by_cells`)."""

    def check(tables: Tables) -> Outcome:
        cells, texts, vals, ivs = {}, [], [], []
        for dataset, a, b in pairs:
            try:
                va, vb = _tau(tables, dataset, a, k), _tau(tables, dataset, b, k)
            except _NoRow as err:
                return _not_comparable(err)
            iv = _minus(va, vb)
            where = f"{LABEL.get(dataset, dataset)} " if len({p[0] for p in pairs}) > 1 else ""
            name = f"{where}{NAME[a]} − {NAME[b]}"
            cells[name] = side(iv, 0.0)
            texts.append(f"{name} {iv.text(2)}")
            vals += [va, vb]
            ivs.append(iv)
        if len(pairs) == 1:
            dataset, a, b = pairs[0]
            return judge(ivs[0], 0.0, what=f"{LABEL.get(dataset, dataset)} τ {NAME[a]} − {NAME[b]}",
                         more=_more(*vals))
        return by_cells(cells, what="comparison", more=_more(*vals),
                        detail=f"τ differences ({ivs[0].how}, {ivs[0].n}): " + "; ".join(texts))

    return check


# ---------------------------------------------------------------- rule: a lead over the runner-up
def _lead(name: str, top: Values, rivals: dict[str, Values]) -> tuple[str, str, list[Values]]:
    """(side, text, values read) of "``top`` is the best": its lead over the best rival (by mean) not tied
    with it in every seed, above 0; a rival tied in every seed shares the first place."""
    tied = [r for r, v in rivals.items() if v.tied(top)]
    rest = {r: v for r, v in rivals.items() if r not in tied}
    tie_txt = f" (= {', '.join(NAME.get(r, r) for r in tied)} in every seed)" if tied else ""
    if not rest:
        return "holds", f"{name} tied with every rival{tie_txt}", [top]
    runner = max(rest, key=lambda r: rest[r].mean)
    iv = _minus(top, rest[runner])
    return side(iv, 0.0), f"{name} − {NAME.get(runner, runner)} {iv.text(3)}{tie_txt}", [top, rest[runner]]


def _lead_outcome(cells: dict[str, tuple[str, str, list[Values]]], what: str, prefix: str,
                  table: str = CORR_SEEDS) -> Outcome:
    vals = [v for _, _, vs in cells.values() for v in vs]
    return by_cells({k: s for k, (s, _, _) in cells.items()}, what=what, more=_more(*vals, table=table),
                    detail=prefix + "; ".join(t for _, t, _ in cells.values()))


def _computed(dataset: str, family: tuple[str, ...]) -> list[str]:
    """Our metrics of ``family`` for which the paper's Table 2 has a value on ``dataset``."""
    keys = PAPER_KEYS[("Table 2", PAPER_DATASET[dataset])]
    return [m for m in family if m in keys]


def check_comp_del_strongest(tables: Tables) -> Outcome:
    cells = {}
    for d in ("adult", "rt-polarity"):
        try:
            taus = {m: _tau(tables, d, m) for m in _computed(d, ERASURE)}
        except _NoRow as err:
            return _not_comparable(err)
        top = taus.pop("comp_del")
        cells[LABEL[d]] = _lead(f"{LABEL[d]}: Comp. (del.)", top, taus)
    return _lead_outcome(cells, "dataset", "lead in τ over the best other erasure metric the paper computed: ")


def check_ce_best(tables: Tables) -> Outcome:
    cells = {}
    for d in ("adult", "rt-polarity"):
        try:
            ce = {m: _tau(tables, d, m) for m in _computed(d, COUNTERFACTUAL)}
            er = {m: _tau(tables, d, m) for m in _computed(d, ERASURE)}
        except _NoRow as err:
            return _not_comparable(err)
        best = max(ce, key=lambda m: ce[m].mean)
        cells[LABEL[d]] = _lead(f"{LABEL[d]}: {NAME[best]}", ce[best], er)
    return _lead_outcome(cells, "dataset", "lead in τ of the best C / C_soft over the best erasure metric "
                                           "(the cells the paper computed): ")


def check_lr_first(tables: Tables) -> Outcome:
    cells = {}
    for d, metrics in (("adult", ("c_disc", "c_soft_disc")), ("rt-polarity", ("c_cont", "c_soft_cont"))):
        for m in metrics:
            try:
                sc = _scores(tables, d, m)
            except _NoRow as err:
                return _not_comparable(err)
            top = sc.pop("logistic_regression")
            cells[f"{LABEL[d]} {NAME[m]}"] = _lead(f"{LABEL[d]} {NAME[m]}: LR", top, sc)
    return _lead_outcome(cells, "score", "LR's lead in score over the runner-up of the six explainers: ",
                         table=SCORES_SEEDS)


# ---------------------------------------------------------------- rule: Comp. and Suff. differ
def _differs(iv: Interval, half: float) -> str:
    """``holds`` when the interval lies beyond +-``half``, ``fails`` when it lies inside, else ``covers``."""
    if side(iv, half) == "holds" or side(iv, -half, above=False) == "holds":
        return "holds"
    if side(iv, half, above=False) == "holds" and side(iv, -half) == "holds":
        return "fails"
    return "covers"


def check_comp_suff_disagree(tables: Tables) -> Outcome:
    d = "rt-polarity"
    cells, texts, vals = {}, [], []
    for comp, suff in (("comp_del", "suff_del"), ("comp_mask", "suff_mask")):
        try:
            vc, vs = _tau(tables, d, comp), _tau(tables, d, suff)
        except _NoRow as err:
            return _not_comparable(err)
        half = abs(_paper("Table 2", d, comp) - _paper("Table 2", d, suff)) / 2
        iv = _minus(vc, vs)
        name = f"{NAME[comp]} − {NAME[suff]}"
        cells[name] = _differs(iv, half)
        texts.append(f"{name} {iv.text(3)} vs ±{half:.3f}")
        vals += [vc, vs]
    return by_cells(cells, what="removal", more=_more(*vals),
                    detail="Movie Reviews τ differences beyond half the paper's: " + "; ".join(texts))


# ---------------------------------------------------------------- precondition: the LR's accuracy
def accuracy_claim(dataset: str):
    def check(tables: Tables) -> Outcome:
        t = tables(MODELS)
        hit = t[(t["dataset"] == dataset) & (t["metric"] == "test_accuracy")]
        if hit.empty:
            return Outcome(None, "not comparable", f"no test accuracy of {dataset} in {MODELS}")
        r = hit.iloc[0]
        paper = float(paper_values("cf_faithfulness", paper_table="Sec 4.2", dataset=PAPER_DATASET[dataset],
                                   metric="test_accuracy")["value"].iloc[0])
        iv = summary_interval(r["ours"], r["ours_std"], r["n_seeds"])
        return precondition(iv, f"LR test accuracy {iv.text()} (95 %, {iv.how}, {iv.n}) vs paper {paper:.3f} "
                                f"(ours − paper {iv.effect - paper:+.3f}): the model the explainers are scored on")

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
    Claim("c-cont-beats-comp-del", "C (cont.) agrees better than Comp. (del.), the strongest baseline (Movie Reviews)",
          "Sec. 4.6 (2), Table 2",
          f"τ {_p('Table 2', 'rt-polarity', 'c_cont'):.2f} vs {_p('Table 2', 'rt-polarity', 'comp_del'):.2f} "
          "(Adults: no C (cont.) computed)",
          beats_claim([("rt-polarity", "c_cont", "comp_del")])),
    Claim("comp-del-best-erasure", "Comp. (del.) is the strongest erasure baseline (highest τ of the erasure metrics)",
          "Sec. 4.6 (2), Table 2", "both datasets (tied)", check_comp_del_strongest),
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
