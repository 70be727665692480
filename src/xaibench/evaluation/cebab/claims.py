"""CEBaB's headline claims, each checked against our committed tables (:mod:`xaibench.evaluation.claims`).

The claims come from §5 (dataset), §6 and Figure 2 (5-way BERT), Appendix C (Table 8) and Appendix D
(Figures 10-12, Table 10).  Our transformer is MiniLM, compared with the paper's BERT rows (the
``paper_model`` column); where a claim is about BERT, the check reads the rows compared with BERT, and
where it is about "every model", every model of our table.

The evidence under each verdict:

- **The released data** (counts, the review-majority share, the empirical ATEs of Table 3d) are
  deterministic: their interval has zero width.  A printed count or share agrees with ours when ours rounds
  to it (within half a unit of its last printed digit: 0.5 for a count, 0.005 for a two-decimal share); an
  ATE agrees when ours lies within half the printed ATE of it (the most a tolerance may be).
- **Seeds** (Tables 4, 8 and 10): a t interval over the seeds of a cell.  The *lead* of explainer a over b
  in a setting (task, model, distance) is ``error(b) - error(a)`` (ICaCE-Error: lower is better).  Its
  interval is paired over seeds when the per-seed table :data:`ICACE_SEEDS` exists (one row per task,
  model, explainer, metric and seed: column ``ours`` holds that seed's mean ICaCE-Error), else Welch over
  the seeds from ``ours``, ``ours_std`` and ``n_seeds`` of :data:`ICACE`, whose ``ours_std`` is the
  population std (``runner.SEED_DDOF``), turned into the sample std first.  A CaCE (Table 4) must lie on
  the side of 0 of our empirical ATE; a macro-F1 (Table 8) must lie within half the smallest fall of the
  printed macro-F1 from one task to the next of the paper's; a row with one seed has no interval.
- **"Best"**: a set S of explainers holds the best of a setting when one member leads every explainer
  outside S (each interval above 0); the setting contradicts it when one explainer outside S leads every
  member; otherwise (some lead's interval covers 0: a tie) the setting is undecided.  "X is best" is S = {X}.
- **No-difference claims** ("no better than Random"; "ties with the best"; Approx's wins on NormDiff, which
  the paper says S-Learner matches a few times, so best or tied): the lead in question must lie below a
  margin, half the smallest effect the paper reports between two explainers of the setting (the smallest gap
  between two printed means that exceeds the sum of their printed stds; INLP's 0.59 (± .03) is, to the
  paper, a tie with Approx's 0.61 (± .01)).  Below the margin: holds; wholly above: fails; otherwise
  undecided.
- **Rankings**: the Kendall tau between our order of the eight explainers and Table 10's; the paper's own
  order has tau 1, so an order agrees when its tau lies within 0.5 of 1.  Per seed (from
  :data:`ICACE_SEEDS`) the interval is a t interval over the seeds' taus; without per-seed rows it is the
  normal interval whose standard error the stored Kendall test implies (``|tau| / z(p)``, over the eight
  explainers).

Cells (counts, settings, explainer pairs) are combined with :func:`~xaibench.evaluation.claims.by_cells`.
"""
from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np
import pandas as pd
from scipy import stats

from ...data.cebab import PAPER_MODEL
from ..agreement import rank_agreement
from ..claims import (Claim, Interval, MissingTable, Outcome, Tables, by_cells, judge_agrees, paired_interval,
                      se_interval, side, summary_interval, t_interval, welch_interval)
from .runner import EXPLAINERS as PAPER_EXPLAINERS
from .runner import SEED_DDOF

PAPER = "CEBaB (Abraham et al. 2022)"

STATS = "cebab_dataset_stats"
CACE = "cebab_cace"
F1 = "cebab_model_performance"
TAU = "cebab_kendall_tau"
ICACE = "cebab_icace_error"
#: per-seed Table 10 (``task, model, explainer, metric, seed, ours``): leads paired over seeds when present
ICACE_SEEDS = "cebab_icace_error_per_seed"
BERT = "bert-base-uncased"
#: the methods that get the direction of the edit (Table 2): Approx, CONEXP, S-Learner
DIRECTION_AWARE = ("approx", "conexp", "s-learner")
#: the methods §7 names as the best (or tied) on Figure 2's metrics
SOTA = ("approx", "inlp", "s-learner")
#: half a unit of the last printed digit: a count, a two-decimal share
COUNT_TOL, SHARE_TOL = 0.5, 0.005
#: a ranking agrees with Table 10's when its Kendall tau lies within this of 1 (half the paper's own tau)
ORDER_TOL = 0.5
_SIDE = {"reproduced": "holds", "not reproduced": "fails", "inconclusive": "covers"}
_MORE_SEEDS = f"more seeds, or per-seed rows ({ICACE_SEEDS}) for leads paired over seeds"


class _NoCells(ValueError):
    """A table exists but holds none of the cells a claim needs (e.g. a run over other models)."""


def _guard(check: Callable[[Tables], Outcome]) -> Callable[[Tables], Outcome]:
    """``check``, with "no cells to check" turned into ``not comparable`` naming what is missing."""
    @functools.wraps(check)
    def run(tables: Tables) -> Outcome:
        try:
            return check(tables)
        except _NoCells as err:
            return Outcome(None, "not comparable", f"our tables hold no {err}")
    return run


def _need(cells: dict, what: str) -> dict:
    if not cells:
        raise _NoCells(what)
    return cells


def _exact(value: float, how: str = "exact count") -> Interval:
    """The zero-width interval of a statistic of the released data (nothing varies it)."""
    return Interval(float(value), float(value), float(value), "the released data", how)


def _agrees(iv: Interval, paper: float, tol: float, claimed_effect: float | None = None) -> str:
    """``holds`` / ``fails`` / ``covers`` for "our number agrees with the paper's within ``tol``"."""
    return _SIDE[judge_agrees(iv, paper, tol, claimed_effect).verdict]


def _sample_std(std: float, n: float, ddof: int = SEED_DDOF) -> float:
    """The sample std (ddof 1) of values whose std a table holds with ``ddof`` (0: population std)."""
    std, n = float(std), int(n)
    return std * math.sqrt(n / (n - 1)) if ddof == 0 and n > 1 else std


def _label(key: Iterable) -> str:
    return "/".join(str(k) for k in key)


def _text(iv: Interval) -> str:
    """An interval as text; an infinite one (a single seed) as its estimate and "one seed"."""
    return iv.text() if np.isfinite(iv.low) and np.isfinite(iv.high) else f"{iv.effect:+.3f} (one seed)"


# ---------------------------------------------------------------- Table 10 settings
@dataclass(frozen=True)
class _Setting:
    """One setting of Table 10 (task, model, distance): our ICaCE-Error per explainer, the paper's, and
    (``seeds``, seed x explainer) our per-seed errors when the per-seed table holds them."""

    key: tuple[str, str, str]
    mean: pd.Series
    std: pd.Series  # sample std over seeds
    n: pd.Series
    paper: pd.Series
    paper_std: pd.Series
    seeds: pd.DataFrame | None

    @property
    def label(self) -> str:
        return _label(self.key)

    @property
    def explainers(self) -> list[str]:
        return list(self.mean.index)

    def lead(self, a: str, b: str) -> Interval:
        """The lead of ``a`` over ``b`` (``error(b) - error(a)``), its interval over seeds."""
        if self.seeds is not None:
            both = self.seeds[[a, b]].dropna()
            return paired_interval(both[b], both[a])
        return welch_interval(self.mean[b], self.std[b], self.n[b], self.mean[a], self.std[a], self.n[a])

    def top(self, among: Iterable[str]) -> str:
        """The explainer of ``among`` with the lowest mean error."""
        return str(self.mean[[e for e in self.explainers if e in set(among)]].idxmin())

    def margin(self) -> float:
        """Half the smallest effect the paper reports between two explainers of this setting: the smallest
        gap between two printed means larger than the sum of their printed stds (NaN if none)."""
        p = self.paper.dropna()
        sd = self.paper_std.reindex(p.index).fillna(0.0)
        gaps = [round(abs(p[a] - p[b]), 2) for a, b in itertools.combinations(p.index, 2)
                if round(abs(p[a] - p[b]), 2) > round(sd[a] + sd[b], 2)]
        return min(gaps) / 2 if gaps else math.nan


def _per_seed(tables: Tables) -> pd.DataFrame | None:
    """The per-seed Table 10 rows of the paper's eight explainers, or None when the table is absent."""
    try:
        ps = tables(ICACE_SEEDS)
    except MissingTable:
        return None
    # the key columns and each seed's error (the saved table also carries the tidy value columns, all empty)
    ps = ps[["task", "model", "explainer", "metric", "seed", "ours"]]
    return ps[ps["explainer"].isin(PAPER_EXPLAINERS)].dropna(subset=["ours"])


def _settings(tables: Tables, metric: str | None = None, task: str | None = None,
              paper_model: str | None = None) -> list[_Setting]:
    """The settings of Table 10 (only the paper's eight explainers: the claims are about them), filtered;
    per-seed errors from :data:`ICACE_SEEDS` where it holds the setting."""
    t = tables(ICACE)
    t = t[t["explainer"].isin(PAPER_EXPLAINERS)].dropna(subset=["ours"])
    for col, v in (("metric", metric), ("task", task), ("paper_model", paper_model)):
        if v is not None:
            t = t[t[col] == v]
    ps = _per_seed(tables)
    out = []
    for key, g in t.groupby(["task", "model", "metric"], sort=True):
        g = g.set_index("explainer")
        wide = None
        if ps is not None:
            p = ps[(ps["task"] == key[0]) & (ps["model"] == key[1]) & (ps["metric"] == key[2])]
            p = p[p["explainer"].isin(g.index)]
            if len(p):
                wide = p.pivot(index="seed", columns="explainer", values="ours")
        if wide is not None:
            mean, std, n = wide.mean(), wide.std(ddof=1), wide.count()
        else:
            n = g["n_seeds"].fillna(1).astype(int)
            mean = g["ours"]
            std = pd.Series([_sample_std(s, k) for s, k in zip(g["ours_std"], n)], index=g.index)
        out.append(_Setting(tuple(str(k) for k in key), mean, std, n, g["paper"],
                            g["paper_std"] if "paper_std" in g.columns else g["paper"] * 0.0, wide))
    return out


def _more(settings: list[_Setting]) -> str:
    return "more seeds" if settings and all(s.seeds is not None for s in settings) else _MORE_SEEDS


def _best_in(s: _Setting, group: Iterable[str]) -> tuple[str, str] | None:
    """Whether the best of ``s`` lies in ``group`` (``holds``/``fails``/``covers``, see the module
    docstring), with a cell name giving the lead of the group's top explainer over the top one outside it;
    None when the setting has no explainer of ``group``."""
    group = set(group)
    inside = [e for e in s.explainers if e in group]
    outside = [e for e in s.explainers if e not in group]
    if not inside:
        return None
    if not outside:
        return "holds", f"{s.label} (every explainer in the set)"
    a, m = s.top(inside), s.top(outside)
    name = f"{s.label}: {a} over {m} {s.lead(a, m).text()}"
    if any(all(side(s.lead(x, o), 0.0) == "holds" for o in outside) for x in inside):
        return "holds", name
    if any(all(side(s.lead(o, x), 0.0) == "holds" for x in inside) for o in outside):
        return "fails", name
    return "covers", name


def _best_claim(settings: list[_Setting], group: Iterable[str], what: str) -> Outcome:
    cells = dict(c[::-1] for c in (_best_in(s, group) for s in settings) if c is not None)
    return by_cells(_need(cells, what), "setting", more=_more(settings),
                    detail="lead = the other's ICaCE-Error minus the named explainer's, interval over seeds")


def _ties_best(s: _Setting, x: str) -> tuple[str, str] | None:
    """Whether ``x`` is the best of ``s`` or ties with it: every other explainer's lead over ``x`` below the
    setting's margin (``holds``), one of them wholly above it (``fails``), else ``covers``; with a cell name
    giving the lead of the top other explainer.  None when ``x`` or a margin is missing."""
    margin = s.margin()
    others = [e for e in s.explainers if e != x]
    if x not in s.explainers or not others or not np.isfinite(margin):
        return None
    sides = [side(s.lead(o, x), margin, above=False) for o in others]
    b = s.top(others)
    name = f"{s.label}: {b} leads {x} by {s.lead(b, x).text()}, margin {margin:g}"
    return ("fails" if "fails" in sides else "holds" if set(sides) == {"holds"} else "covers"), name


def _ties_claim(settings: list[_Setting], x: str, what: str) -> Outcome:
    cells = dict(c[::-1] for c in (_ties_best(s, x) for s in settings) if c is not None)
    return by_cells(_need(cells, what), "setting", more=_more(settings),
                    detail=f"{x} is the best or ties with it when every explainer's lead over it (interval over "
                           f"seeds) lies below the margin: half the smallest gap the paper reports between two "
                           f"explainers of the setting")


# ---------------------------------------------------------------- dataset (notebook 01)
def _dataset_counts(tables: Tables) -> Outcome:
    d = tables(STATS)
    d = d[d["table"].isin(["Table 3a", "Table 3b", "Table 5a", "Table 5b", "Table 5c"]) & (d["metric"] == "count")]
    d = d.dropna(subset=["ours", "paper"])
    d = d.assign(**{k: d[k].astype(object).where(d[k].notna(), "") for k in ("aspect", "label")})
    cells = {" ".join(f"{r.table} {r.aspect} {r.label}".split()) + f": {r.ours:.0f} vs {r.paper:.0f}":
             _agrees(_exact(r.ours), float(r.paper), COUNT_TOL) for r in d.itertuples()}
    return by_cells(_need(cells, "Table 3a/3b/5 counts"), "count",
                    detail="a count agrees when it is the printed one (released data: exact)")


def _review_majority(tables: Tables) -> Outcome:
    d = tables(STATS)
    d = d[(d["table"] == "Table 3b") & (d["metric"] == "count")]
    if d.empty:
        raise _NoCells("Table 3b counts")
    share = 1.0 - d.loc[d["label"] == "no_majority", "ours"].sum() / d["ours"].sum()
    return judge_agrees(_exact(share, "exact share"), 0.88, SHARE_TOL, claimed_effect=0.88,
                        what="share of texts with a review-level majority (Table 3b); tolerance: half a unit "
                             "of the paper's second decimal;")


def _ate(tables: Tables) -> Outcome:
    d = tables(STATS)
    d = d[(d["table"] == "Table 3d") & (d["metric"] == "ate")].dropna(subset=["ours", "paper"])
    d = d[d["paper"] != 0]
    cells = {f"{r.aspect} {r.direction}: {r.ours:+.2f} vs {r.paper:+.2f}":
             _agrees(_exact(r.ours, "exact mean over the released edit pairs"), float(r.paper),
                     abs(float(r.paper)) / 2, claimed_effect=float(r.paper)) for r in d.itertuples()}
    mad = float((d["ours"] - d["paper"]).abs().mean()) if len(d) else math.nan
    return by_cells(_need(cells, "Table 3d ATE"), "ATE",
                    detail=f"an ATE agrees when ours lies within half the printed ATE of it (same direction); "
                           f"mean abs. difference {mad:.2f} stars (our edit-pair set is not the paper's)")


# ---------------------------------------------------------------- Table 4 (notebook 20)
def _cace_aligned(tables: Tables) -> Outcome:
    c = tables(CACE)
    d = tables(STATS)
    ate = d[(d["table"] == "Table 3d") & (d["metric"] == "ate")][["aspect", "direction", "ours", "paper"]]
    c = c[c["model"].isin([m for m in c["model"].unique() if PAPER_MODEL.get(m) == BERT])]
    j = c.merge(ate.rename(columns={"ours": "ate", "paper": "paper_ate"}), on=["aspect", "direction"])
    j = j.dropna(subset=["ours", "ate"])
    j = j[j["ate"] != 0]
    cells = {}
    for r in j.itertuples():
        iv = summary_interval(r.ours, _sample_std(r.ours_std, r.n_seeds), int(r.n_seeds))
        cells[f"{r.model} {r.aspect} {r.direction} {iv.text()}"] = side(iv, 0.0, above=r.ate > 0)
    _need(cells, "Table 4 cell of a model compared with BERT, with an empirical ATE beside it")
    rho = float(stats.spearmanr(j["ours"], j["ate"]).statistic)
    paper_rho = float(stats.spearmanr(j["paper"], j["paper_ate"]).statistic) if j["paper"].notna().all() else math.nan
    return by_cells(cells, "cell", detail=f"CaCE (interval over seeds) on the side of 0 of our empirical ATE; "
                                          f"Spearman with the ATE {rho:.2f} (paper's Table 4 vs 3d: {paper_rho:.2f})")


# ---------------------------------------------------------------- Table 8 (notebook 03)
_TASK_STEPS = (("binary", "ternary"), ("ternary", "5-way"))


def _f1_rows(tables: Tables) -> pd.DataFrame:
    t = tables(F1).dropna(subset=["ours"]).copy()
    t["n_seeds"] = t["n_seeds"].fillna(1).astype(int)
    return t


def _f1_levels(tables: Tables) -> Outcome:
    t = _f1_rows(tables).dropna(subset=["paper"])
    steps = [round(v[hi] - v[lo], 2) for _, g in t.groupby(["model", "condition", "split"])
             for v in [g.set_index("task")["paper"]] for hi, lo in _TASK_STEPS if hi in v.index and lo in v.index]
    if t.empty or not steps:
        raise _NoCells("Table 8 row with a printed macro-F1 for two adjacent tasks")
    step = min(steps)
    tol = step / 2
    cells = {}
    for r in t.itertuples():
        iv = summary_interval(r.ours, r.ours_std, r.n_seeds)
        cells[f"{r.model}/{r.condition}/{r.split}/{r.task} {_text(iv.shifted(-r.paper))}"] = \
            _agrees(iv, float(r.paper), tol, claimed_effect=step)
    return by_cells(cells, "cell", detail=f"ours - paper, interval over seeds (one seed: none); tolerance {tol:g}, "
                                          f"half the smallest fall of the printed macro-F1 from one task to the "
                                          f"next ({step:g}); MiniLM beside BERT's values")


def _f1_order(tables: Tables) -> Outcome:
    t = _f1_rows(tables)
    cells = {}
    for key, g in t.groupby(["model", "condition", "split"], sort=True):
        v = g.set_index("task")
        for hi, lo in _TASK_STEPS:
            if hi in v.index and lo in v.index:
                iv = welch_interval(v.at[hi, "ours"], v.at[hi, "ours_std"], v.at[hi, "n_seeds"],
                                    v.at[lo, "ours"], v.at[lo, "ours_std"], v.at[lo, "n_seeds"])
                cells[f"{_label(key)} {hi} - {lo} {_text(iv)}"] = side(iv, 0.0)
    return by_cells(_need(cells, "Table 8 row with two adjacent tasks"), "step",
                    detail="macro-F1 of a task minus the next harder one's, Welch over seeds (one seed: none)")


# ---------------------------------------------------------------- Table 10 / Figures 2, 10-12 (notebook 20)
def _approx_best_fig2(tables: Tables) -> Outcome:
    settings = [s for m in ("cosine", "normdiff") for s in _settings(tables, m, "5-way", BERT)]
    return _best_claim(settings, {"approx"}, "5-way cosine/NormDiff setting of the BERT-compared model")


def _approx_slearner_beat(tables: Tables) -> Outcome:
    settings = _settings(tables, task="5-way", paper_model=BERT)
    cells = {}
    for s in settings:
        for a, b in itertools.product(("approx", "s-learner"), ("conexp", "tcav", "conceptshap", "causalm")):
            if a in s.mean.index and b in s.mean.index:
                iv = s.lead(a, b)
                cells[f"{a} over {b} {s.key[1]}/{s.key[2]} {iv.text()}"] = side(iv, 0.0)
    return by_cells(_need(cells, "5-way setting of the BERT-compared model"), "pair", more=_more(settings),
                    detail="lead = the other's ICaCE-Error minus Approx's or S-Learner's, interval over seeds")


def _inlp_ties_cosine(tables: Tables) -> Outcome:
    return _ties_claim(_settings(tables, "cosine", "5-way", BERT), "inlp",
                       "5-way cosine setting of the BERT-compared model with INLP and printed values")


def _direction_aware_cosine(tables: Tables) -> Outcome:
    return _best_claim(_settings(tables, "cosine"), DIRECTION_AWARE, "cosine setting with a direction-aware method")


def _tcav_cshap_random(tables: Tables) -> Outcome:
    settings = _settings(tables, "cosine")
    cells = {}
    for s in settings:
        margin = s.margin()
        if "random" not in s.mean.index or not np.isfinite(margin):
            continue
        for e in ("tcav", "conceptshap"):
            if e in s.mean.index:
                iv = s.lead(e, "random")
                cells[f"{e} {s.key[0]}/{s.key[1]} {iv.text()} vs margin {margin:g}"] = side(iv, margin, above=False)
    return by_cells(_need(cells, "cosine setting with Random, TCAV or ConceptSHAP and printed values"), "cell",
                    more=_more(settings),
                    detail="lead over Random = Random's ICaCE-Error minus the method's, interval over seeds; "
                           "no better than Random: below the margin (half the smallest gap the paper reports "
                           "between two explainers of the setting)")


def _approx_wins_normdiff(tables: Tables) -> Outcome:
    return _ties_claim(_settings(tables, "normdiff"), "approx", "NormDiff setting with Approx and printed values")


def _slearner_best_l2(tables: Tables) -> Outcome:
    return _best_claim(_settings(tables, "l2", "5-way"), {"s-learner"}, "5-way L2 setting with S-Learner")


def _sota_methods(tables: Tables) -> Outcome:
    return _best_claim(_settings(tables, task="5-way", paper_model=BERT), SOTA,
                       "5-way setting of the BERT-compared model")


# ---------------------------------------------------------------- ranking (Table 10, Kendall tau)
def _tau_from_test(tau: float, p: float, n: object) -> Interval:
    """The normal interval of a Kendall tau whose standard error the stored test implies: ``|tau| / z``,
    ``z`` the normal quantile of the two-sided ``p`` (infinite when the test says nothing)."""
    z = float(stats.norm.isf(p / 2)) if np.isfinite(p) else 0.0
    se = abs(tau) / z if z > 0 and tau != 0 else math.inf
    return se_interval(tau, se, f"{n} explainers", "normal, standard error from the Kendall test's p-value")


def _tau_cells(tables: Tables) -> tuple[dict[str, Interval], str]:
    """The Kendall tau of each setting with its interval, and what the intervals are over."""
    ps = _per_seed(tables)
    if ps is not None and len(ps):
        paper = tables(ICACE)[["task", "model", "explainer", "metric", "paper"]]
        j = ps.merge(paper, on=["task", "model", "explainer", "metric"]).dropna(subset=["paper"])
        taus = rank_agreement(j, ["task", "model", "metric", "seed"], item="explainer", lower_is_better=True)
        taus = taus.dropna(subset=["kendall"])
        return ({_label(k): t_interval(g["kendall"]) for k, g in taus.groupby(["task", "model", "metric"])},
                "each seed's tau, t over seeds")
    k = tables(TAU).dropna(subset=["ours"])
    cells = {}
    for r in k.itertuples():
        std, n = getattr(r, "ours_std", math.nan), getattr(r, "n_seeds", math.nan)
        if np.isfinite(std) and np.isfinite(n) and n >= 2:
            cells[_label((r.task, r.model, r.metric))] = summary_interval(r.ours, std, int(n))
        else:
            cells[_label((r.task, r.model, r.metric))] = _tau_from_test(r.ours, r.p_value, r.n_explainers)
    return cells, "tau of the mean ranking, normal interval from its Kendall test over the explainers"


def _ranking(tables: Tables) -> Outcome:
    ivs, how = _tau_cells(tables)
    _need(ivs, "setting with a Kendall tau")
    cells = {f"{k} {iv.text()}": _agrees(iv, 1.0, ORDER_TOL, claimed_effect=1.0) for k, iv in ivs.items()}
    mean_tau = float(np.mean([iv.effect for iv in ivs.values()]))
    return by_cells(cells, "setting", ours=mean_tau,
                    more=f"per-seed rows ({ICACE_SEEDS}: each seed's tau, t over seeds)",
                    detail=f"{how}; an order agrees when its tau lies within {ORDER_TOL:g} of 1 (the paper's own "
                           f"order); mean tau {mean_tau:.2f}")


CLAIMS: list[Claim] = [
    Claim("dataset-counts", "CEBaB's aspect labels, review ratings and restaurant metadata have the printed counts",
          "§5 Table 3a-b, App. B Table 5", "as printed", _guard(_dataset_counts)),
    Claim("review-majority-88pct", "88% of the texts have a review-level majority rating",
          "§5, Table 3b", 0.88, _guard(_review_majority)),
    Claim("edit-ate-table3d", "Aspect edits move the overall rating systematically: the empirical ATE of Table 3d",
          "§5 Table 3d", "12 printed ATEs", _guard(_ate)),
    Claim("cace-aligned-with-ate", "The 5-way model's CaCE is intuitive and well aligned with the empirical ATE",
          "§6 Table 4 vs Table 3d", "same signs", _guard(_cace_aligned)),
    Claim("f1-table8-levels", "Standard classifiers reach the printed macro-F1 on every task (exclusive/inclusive)",
          "App. C.3 Table 8", "Table 8", _guard(_f1_levels)),
    Claim("f1-binary-ternary-5way", "Macro-F1 falls from binary to ternary to 5-way for every model and condition",
          "App. C.3 Table 8", "every row", _guard(_f1_order)),
    Claim("approx-best-fig2", "Approx is the best method at capturing both direction (cosine) and magnitude (NormDiff)",
          "§6 Figure 2 (5-way BERT)", "best on both", _guard(_approx_best_fig2)),
    Claim("approx-slearner-beat-others", "Approx and S-Learner outperform CONEXP, TCAV, ConceptSHAP and CausaLM",
          "§6 Figure 2 (5-way BERT)", "24/24 pairs", _guard(_approx_slearner_beat)),
    Claim("inlp-ties-best-cosine", "INLP ties with the best method on cosine despite seeing no direction or labels",
          "§6 Figure 2 (5-way BERT)", "tie (0.59 vs 0.61)", _guard(_inlp_ties_cosine)),
    Claim("direction-aware-win-cosine", "Methods given the edit's direction (Approx, CONEXP, S-Learner) win on cosine",
          "App. D Figure 10", "every model", _guard(_direction_aware_cosine)),
    Claim("tcav-cshap-not-above-random", "TCAV and ConceptSHAP are no better than Random on cosine in any setting",
          "App. D Figure 10", "every setting", _guard(_tcav_cshap_random)),
    Claim("approx-wins-normdiff", "Approx wins on NormDiff across the board; S-Learner matches it only a few times",
          "App. D Figure 11", "across the board", _guard(_approx_wins_normdiff)),
    Claim("slearner-best-l2-5way", "S-Learner is consistently the best on L2 in the 5-way setting",
          "App. D Figure 12", "every model", _guard(_slearner_best_l2)),
    Claim("sota-only-approx-inlp-slearn", "Only Approx, INLP and S-Learner are best (or tied) on any metric",
          "§7 Conclusion (Figure 2, 5-way BERT)", "Approx, INLP, S-Learner", _guard(_sota_methods)),
    Claim("ranking-matches-table10", "The order of the eight explainers per task, model and distance (Table 10)",
          "App. D Table 10", "its own order (tau = 1)", _guard(_ranking)),
]

__all__ = ["PAPER", "CLAIMS", "ICACE_SEEDS"]
