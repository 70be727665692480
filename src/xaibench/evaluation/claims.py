"""Claims tables: each paper's headline claims, ours beside them, and a verdict computed from our tables.

Every paper package has a ``claims`` module defining ``PAPER`` (its title) and ``CLAIMS``, a list of
:class:`Claim`.  A claim holds the paper's statement (short), where the paper makes it, the paper's
number where there is one, and a ``check`` function that reads *our committed tables* (through a
:class:`Tables` reader, never a running experiment) and returns an :class:`Outcome`.  :func:`claims_table`
evaluates every claim of a paper; :func:`save_claims` writes ``figures/tables/<paper>_claims.csv`` and ``.md``.

**Evidence.**  A check states the quantity its claim is about (a difference, a tau, a share, a rank gap)
and gets an :class:`Interval` for it from the data that exist, at :data:`CONFIDENCE`: a t interval over
seeds (:func:`t_interval`, :func:`paired_interval`, :func:`summary_interval`, :func:`welch_interval`), a
bootstrap over examples (:func:`bootstrap_interval`, :func:`se_interval` for a stored bootstrap spread),
an exact binomial interval for a share of runs (:func:`share_interval`).  The verdict follows from where
the interval lies (:func:`judge`, :func:`judge_agrees`, :func:`by_cells`):

- ``reproduced``: the interval lies on the claim's side of its threshold (for a number: inside the paper's
  value +- the rule's tolerance, a tolerance at most half the effect the paper claims);
- ``not reproduced``: the interval lies on the other side;
- ``inconclusive``: the interval covers the threshold; the reason says what more evidence would decide it;
- ``partly``: a claim over several cells whose cells, each judged with its interval, are decided in both
  directions (undecided cells count for neither side);
- ``not comparable``: our setting cannot test it (the reason says why); a missing table gives this too.

Rows whose check returns :func:`precondition` are preconditions (how many runs learned, whether the
models pass the paper's accuracy bar): reported with their interval, without a verdict, and never
counted among the claims.
"""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from .. import io, paths

#: the confidence level of every interval a claim is judged by
CONFIDENCE = 0.95
VERDICTS = ("reproduced", "partly", "inconclusive", "not reproduced", "not comparable")
#: what a precondition row carries in the verdict column (it is not a verdict)
PRECONDITION = "precondition"
#: verdicts that need an interval under them
JUDGED = ("reproduced", "partly", "inconclusive", "not reproduced")
PAPERS = ("cebab", "human_grounded", "cf_feedback", "cf_faithfulness", "attribution_gt")
COLUMNS = ["claim", "where", "statement", "paper", "ours", "effect", "ci_low", "ci_high", "n", "confidence",
           "verdict", "reason"]


# ---------------------------------------------------------------- intervals
@dataclass(frozen=True)
class Interval:
    """An estimate of the quantity a claim is about, with its :data:`CONFIDENCE` interval.

    ``n`` says what the interval is over ("5 seeds", "5 seeds x 200 pairs", "10 runs", "4 cells");
    ``how`` names the method ("t over seeds", "bootstrap over texts", "exact binomial", ...).
    An interval with nothing to vary over (one seed, no spread) is infinite: it decides nothing.
    """

    effect: float
    low: float
    high: float
    n: str
    how: str = ""

    def __post_init__(self) -> None:
        if any(isinstance(v, float) and math.isnan(v) for v in (self.effect, self.low, self.high)):
            raise ValueError(f"an interval needs numbers; got {self.effect}, [{self.low}, {self.high}]")
        if not self.low <= self.high:
            raise ValueError(f"interval low {self.low} exceeds high {self.high}")

    def text(self, digits: int = 3) -> str:
        return f"{self.effect:+.{digits}f} [{_fmt(self.low, digits)}, {_fmt(self.high, digits)}]"

    def shifted(self, by: float) -> "Interval":
        return Interval(self.effect + by, self.low + by, self.high + by, self.n, self.how)


def _fmt(v: float, digits: int) -> str:
    return ("-inf" if v < 0 else "+inf") if math.isinf(v) else f"{v:+.{digits}f}"


def _t(df: float, confidence: float = CONFIDENCE) -> float:
    return float(stats.t.ppf(0.5 + confidence / 2, df))


def _z(confidence: float = CONFIDENCE) -> float:
    return float(stats.norm.ppf(0.5 + confidence / 2))


def summary_interval(mean: float, std: float, n: int, unit: str = "seeds",
                     confidence: float = CONFIDENCE) -> Interval:
    """t interval of a mean from its sample std over ``n`` independent values (seeds):
    ``mean +- t_{n-1} * std / sqrt(n)``; infinite with fewer than two values."""
    mean, std, n = float(mean), float(std), int(n)
    if n < 2 or not np.isfinite(std):
        return Interval(mean, -math.inf, math.inf, f"{n} {unit}", f"t over {unit} (one value: no interval)")
    h = _t(n - 1, confidence) * std / math.sqrt(n)
    return Interval(mean, mean - h, mean + h, f"{n} {unit}", f"t over {unit}")


def t_interval(values: Iterable[float], unit: str = "seeds", confidence: float = CONFIDENCE) -> Interval:
    """t interval of the mean of ``values`` (one per seed or run)."""
    v = np.asarray(list(values), dtype=float)
    if v.size == 0:
        raise ValueError("t_interval needs at least one value")
    if v.size < 2:
        return summary_interval(float(v[0]), math.nan, 1, unit, confidence)
    if np.ptp(v) == 0:
        return Interval(float(v[0]), float(v[0]), float(v[0]), f"{v.size} {unit}", f"t over {unit} (no spread)")
    res = stats.ttest_1samp(v, 0.0).confidence_interval(confidence)
    return Interval(float(v.mean()), float(res.low), float(res.high), f"{v.size} {unit}", f"t over {unit}")


def paired_interval(a: Iterable[float], b: Iterable[float], unit: str = "seeds",
                    confidence: float = CONFIDENCE) -> Interval:
    """t interval of the mean paired difference ``a - b`` (same seeds, same examples)."""
    a, b = np.asarray(list(a), dtype=float), np.asarray(list(b), dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired values need the same length; got {a.size} and {b.size}")
    iv = t_interval(a - b, unit, confidence)
    return Interval(iv.effect, iv.low, iv.high, iv.n, f"paired {iv.how}")


def welch_interval(m1: float, s1: float, n1: int, m2: float, s2: float, n2: int, unit: str = "seeds",
                   confidence: float = CONFIDENCE) -> Interval:
    """Welch t interval of ``m1 - m2`` from two means with their sample stds over ``n1`` and ``n2`` values
    (unpaired: wider than a paired interval, so it errs towards ``inconclusive``)."""
    d = float(m1) - float(m2)
    n = f"{int(n1)}+{int(n2)} {unit}" if n1 != n2 else f"{int(n1)} {unit} each"
    if min(n1, n2) < 2 or not (np.isfinite(s1) and np.isfinite(s2)):
        return Interval(d, -math.inf, math.inf, n, f"Welch t over {unit} (one value: no interval)")
    v1, v2 = float(s1) ** 2 / n1, float(s2) ** 2 / n2
    if v1 + v2 == 0:
        return Interval(d, d, d, n, f"Welch t over {unit} (no spread)")
    df = (v1 + v2) ** 2 / (v1 ** 2 / (n1 - 1) + v2 ** 2 / (n2 - 1))
    h = _t(df, confidence) * math.sqrt(v1 + v2)
    return Interval(d, d - h, d + h, n, f"Welch t over {unit}")


def se_interval(estimate: float, se: float, n: str, how: str = "normal, bootstrap spread",
                confidence: float = CONFIDENCE) -> Interval:
    """``estimate +- z * se`` for a standard error measured by resampling (e.g. a stored bootstrap std)."""
    e, se = float(estimate), float(se)
    if not np.isfinite(se):
        return Interval(e, -math.inf, math.inf, n, f"{how} (no spread measured)")
    h = _z(confidence) * se
    return Interval(e, e - h, e + h, n, how)


def bootstrap_interval(data: Sequence[np.ndarray] | np.ndarray, statistic: Callable, unit: str = "examples",
                       paired: bool = True, n_resamples: int = 2000, seed: int = 0,
                       confidence: float = CONFIDENCE) -> Interval:
    """Percentile bootstrap interval (:func:`scipy.stats.bootstrap`, fixed seed) of ``statistic`` over
    examples; ``data`` is one array or several resampled together (``paired``)."""
    arrays = (np.asarray(data, dtype=float),) if isinstance(data, np.ndarray) else tuple(
        np.asarray(d, dtype=float) for d in data)
    n = arrays[0].shape[-1]
    effect = float(statistic(*arrays))
    if n < 2:
        return Interval(effect, -math.inf, math.inf, f"{n} {unit}", f"bootstrap over {unit} (one value)")
    res = stats.bootstrap(arrays, statistic, paired=paired, vectorized=False, n_resamples=n_resamples,
                          confidence_level=confidence, method="percentile", rng=np.random.default_rng(seed))
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    lo, hi = (lo if np.isfinite(lo) else effect), (hi if np.isfinite(hi) else effect)
    return Interval(effect, min(lo, effect), max(hi, effect), f"{n} {unit}", f"bootstrap over {unit}")


def share_interval(k: int, n: int, unit: str = "runs", confidence: float = CONFIDENCE) -> Interval:
    """Exact (Clopper-Pearson) interval of a share ``k / n``."""
    k, n = int(k), int(n)
    if not 0 <= k <= n or n == 0:
        raise ValueError(f"a share needs 0 <= k <= n and n > 0; got {k} of {n}")
    ci = stats.binomtest(k, n).proportion_ci(confidence, method="exact")
    return Interval(k / n, float(ci.low), float(ci.high), f"{n} {unit}", "exact binomial")


# ---------------------------------------------------------------- verdicts from intervals
@dataclass(frozen=True)
class Outcome:
    """What a claim's check found: our value (number or short text), the verdict, a one-line reason, and the
    interval of the quantity judged (required for every verdict but ``not comparable``)."""

    ours: float | str | None
    verdict: str
    reason: str
    interval: Interval | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS + (PRECONDITION,):
            raise ValueError(f"verdict must be one of {VERDICTS}; got {self.verdict!r}")
        if not self.reason or "\n" in self.reason:
            raise ValueError(f"a verdict needs a one-line reason; got {self.reason!r}")
        if self.verdict in JUDGED + (PRECONDITION,) and self.interval is None:
            raise ValueError(f"verdict {self.verdict!r} needs the interval of the quantity it judges")


def side(iv: Interval, threshold: float, above: bool = True) -> str:
    """Where ``iv`` lies against ``threshold`` for a claim that the quantity is above it (``above``) or
    below it: ``"holds"``, ``"fails"`` or ``"covers"`` (the interval contains the threshold)."""
    lo, hi = (iv.low, iv.high) if above else (-iv.high, -iv.low)
    t = threshold if above else -threshold
    if lo > t:
        return "holds"
    if hi < t:
        return "fails"
    return "covers"


_BY_SIDE = {"holds": "reproduced", "fails": "not reproduced", "covers": "inconclusive"}


def judge(iv: Interval, threshold: float, above: bool = True, what: str = "", more: str = "more seeds",
          ours: float | str | None = None) -> Outcome:
    """The verdict of a claim that the quantity of ``iv`` is above (``above``) or below ``threshold``.

    The reason gives the estimate, its interval and what it is over; an ``inconclusive`` one says what
    more evidence (``more``) would decide it."""
    s = side(iv, threshold, above)
    rel = ">" if above else "<"
    reason = f"{what + ' ' if what else ''}{iv.text()} ({int(CONFIDENCE * 100)} %, {iv.how}, {iv.n}); claim: {rel} {threshold:g}"
    if s == "covers":
        reason += f"; the interval covers {threshold:g}: {more} would decide it"
    return Outcome(iv.effect if ours is None else ours, _BY_SIDE[s], reason, iv)


def judge_agrees(iv: Interval, paper: float, tol: float, claimed_effect: float | None = None, what: str = "",
                 more: str = "more seeds", ours: float | str | None = None) -> Outcome:
    """The verdict of "our number agrees with the paper's": ``reproduced`` when the interval lies inside
    ``paper +- tol``, ``not reproduced`` when it lies wholly outside, else ``inconclusive``.

    ``claimed_effect`` is the size of the effect the paper's number claims (its distance from the null or
    the baseline it is compared with); a tolerance above half of it is a defect of the rule."""
    if tol < 0:
        raise ValueError(f"a tolerance must be >= 0; got {tol}")
    if claimed_effect is not None and tol > abs(claimed_effect) / 2 + 1e-12:
        raise ValueError(f"tolerance {tol} exceeds half the claimed effect {claimed_effect}: the rule cannot "
                         f"tell the paper's effect from none")
    lo, hi = paper - tol, paper + tol
    head = f"{what + ' ' if what else ''}{iv.text()} ({int(CONFIDENCE * 100)} %, {iv.how}, {iv.n}); paper {paper:g} +- {tol:g}"
    if lo <= iv.low and iv.high <= hi:
        return Outcome(iv.effect if ours is None else ours, "reproduced", head, iv)
    if iv.high < lo or iv.low > hi:
        return Outcome(iv.effect if ours is None else ours, "not reproduced", head, iv)
    return Outcome(iv.effect if ours is None else ours, "inconclusive",
                   f"{head}; the interval reaches past the tolerance: {more} would decide it", iv)


def by_cells(cells: dict[str, str], what: str = "cell", more: str = "more seeds",
             ours: float | str | None = None, detail: str = "") -> Outcome:
    """The verdict of a claim over several cells, each already judged ``holds``/``fails``/``covers``
    (:func:`side`).  All decided cells hold -> ``reproduced``; all fail -> ``not reproduced``; both ->
    ``partly``; undecided cells count for neither side (the reason names them, and the interval of the share
    of cells that hold shows how many), but a claim with more than half its cells undecided is ``inconclusive``:
    the evidence does not decide it.

    The interval is of the share of cells that hold: from the cells decided for it (low) to those decided
    for it or undecided (high)."""
    if not cells:
        raise ValueError("by_cells needs at least one cell")
    bad = {k: v for k, v in cells.items() if v not in ("holds", "fails", "covers")}
    if bad:
        raise ValueError(f"cell outcomes must be holds, fails or covers; got {bad}")
    n = len(cells)
    k_hold = sum(v == "holds" for v in cells.values())
    k_fail = sum(v == "fails" for v in cells.values())
    k_open = n - k_hold - k_fail
    iv = Interval(k_hold / n, k_hold / n, (k_hold + k_open) / n, f"{n} {what}s", f"share of {what}s holding")
    names = lambda s: ", ".join(k for k, v in cells.items() if v == s)  # noqa: E731
    parts = [f"holds in {k_hold}/{n} {what}s"]
    if k_fail:
        parts.append(f"fails in {k_fail} ({names('fails')})")
    if k_open:
        parts.append(f"undecided in {k_open} ({names('covers')})")
    reason = "; ".join(parts) + (f"; {detail}" if detail else "")
    if 2 * k_open > n:
        verdict = "inconclusive"
        reason += f": {more} would decide the undecided {what}s"
    elif k_fail == 0:
        verdict = "reproduced"
    elif k_hold == 0:
        verdict = "not reproduced"
    else:
        verdict = "partly"
    return Outcome(f"{k_hold}/{n}" if ours is None else ours, verdict, reason, iv)


def precondition(iv: Interval, reason: str, ours: float | str | None = None) -> Outcome:
    """A precondition row (a training yield, an accuracy bar): reported with its interval, no verdict."""
    return Outcome(iv.effect if ours is None else ours, PRECONDITION, reason, iv)


# ---------------------------------------------------------------- claims and the tables they read
@dataclass(frozen=True)
class Claim:
    """One headline claim of a paper.  ``check(tables) -> Outcome`` computes ours from committed tables."""

    id: str  # a short slug naming the claim (it is what the README lists), e.g. "approx-beats-conexp"
    statement: str
    where: str
    paper: float | str | None
    check: Callable[["Tables"], Outcome]


class MissingTable(FileNotFoundError):
    """A table a claim needs has not been generated (its notebook has not run)."""


class Tables:
    """Reads result tables (``<name>.csv``) from a tables folder, once each.

    ``root`` defaults to the run profile's ``figures/tables``; tests point it at a folder of
    hand-made tables.  A missing table raises :class:`MissingTable` naming the file.

    ``leave_out`` (``{column: value}``, e.g. ``{"seed": 43}``) drops the matching rows of every table that
    has the column: the claims recomputed without one seed (:func:`stability`).  ``left_out`` counts the
    rows dropped since the last :meth:`reset`, so a caller can tell whether a claim read per-seed rows;
    ``read`` names the tables read since then.
    """

    def __init__(self, root: Path | str | None = None, leave_out: dict[str, object] | None = None) -> None:
        self.root = Path(root) if root is not None else paths.tables_dir()
        self.leave_out = dict(leave_out or {})
        self._cache: dict[str, pd.DataFrame] = {}
        self.left_out = 0
        self.read: set[str] = set()

    def reset(self) -> None:
        self.left_out = 0
        self.read = set()

    def __call__(self, name: str) -> pd.DataFrame:
        if name not in self._cache:
            path = self.root / f"{name}.csv"
            if not path.is_file():
                raise MissingTable(f"table {path} does not exist yet; run the notebook that writes it")
            self._cache[name] = pd.read_csv(path)
        self.read.add(name)
        df = self._cache[name]
        for col, value in self.leave_out.items():
            if col in df.columns:
                keep = df[col].astype(str) != str(value)
                self.left_out += int((~keep).sum())
                df = df[keep]
        return df.copy()


def evaluate(claim: Claim, tables: Tables) -> Outcome:
    """``claim.check(tables)``; a missing table gives ``not comparable`` naming the table."""
    try:
        out = claim.check(tables)
    except MissingTable as err:
        return Outcome(None, "not comparable", f"no result yet: {err}")
    if not isinstance(out, Outcome):
        raise TypeError(f"claim {claim.id}: check must return an Outcome, got {type(out).__name__}")
    return out


def paper_claims(paper: str) -> tuple[str, list[Claim]]:
    """``(title, claims)`` of a paper, from ``xaibench.evaluation.<paper>.claims``."""
    if paper not in PAPERS:
        raise KeyError(f"unknown paper {paper!r}; choose one of {list(PAPERS)}")
    mod = importlib.import_module(f"xaibench.evaluation.{paper}.claims")
    claims = list(mod.CLAIMS)
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{paper}: claim ids must be unique; got {ids}")
    return mod.PAPER, claims


def row(claim: Claim, out: Outcome) -> dict:
    """One claims-table row: the claim, our value, the interval of the quantity judged, the verdict."""
    iv = out.interval
    num = lambda v: "" if iv is None else _text(float(v))  # noqa: E731
    return {"claim": claim.id, "where": claim.where, "statement": claim.statement, "paper": _text(claim.paper),
            "ours": _text(out.ours), "effect": num(iv and iv.effect), "ci_low": num(iv and iv.low),
            "ci_high": num(iv and iv.high), "n": "" if iv is None else iv.n,
            "confidence": "" if iv is None else f"{CONFIDENCE:.2f}", "verdict": out.verdict, "reason": out.reason}


def claims_table(paper: str, tables: Tables | None = None) -> pd.DataFrame:
    """One row per claim (:data:`COLUMNS`); preconditions carry ``precondition`` in the verdict column."""
    tables = tables if tables is not None else Tables()
    _, claims = paper_claims(paper)
    return pd.DataFrame([row(c, evaluate(c, tables)) for c in claims], columns=COLUMNS)


def _text(v: float | str | None, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{float(v):.{digits}f}"
    return str(v)


def to_markdown(df: pd.DataFrame, title: str | None = None) -> str:
    body = df.to_markdown(index=False, disable_numparse=True)
    return (f"# {title}\n\n" if title else "") + body + "\n"


def save_claims(paper: str, tables: Tables | None = None, out_dir: Path | None = None) -> pd.DataFrame:
    """Evaluate a paper's claims and write ``<paper>_claims.csv`` and ``.md`` (atomically)."""
    title, _ = paper_claims(paper)
    df = claims_table(paper, tables)
    out_dir = Path(out_dir) if out_dir is not None else paths.tables_dir()
    io.write_csv(out_dir / f"{paper}_claims.csv", df)
    io.write_text(out_dir / f"{paper}_claims.md", to_markdown(df, f"Claims of {title}: ours beside the paper's"))
    return df


def verdict_counts(df: pd.DataFrame) -> dict[str, int]:
    """How many claims got each verdict (every verdict listed, zeros included; preconditions apart)."""
    out = {v: int((df["verdict"] == v).sum()) for v in VERDICTS}
    out[PRECONDITION] = int((df["verdict"] == PRECONDITION).sum())
    return out


# ---------------------------------------------------------------- stability of the verdicts
STABILITY_COLUMNS = ["paper", "claim", "kind", "left_out", "n_seeds", "verdict_all", "verdict", "changed", "defect"]


def stability(paper: str, root: Path | None = None, seed_column: str = "seed") -> pd.DataFrame:
    """Each claim's verdict with each seed left out in turn (the claims that read per-seed rows).

    One row per (claim, left-out seed): ``claim, left_out, verdict, verdict_all, changed, defect``; a claim
    that reads no per-seed rows, or fewer than three seeds, has no rows.  ``defect``: a verdict other than
    ``inconclusive`` changed when one seed was left out (the rule decides by noise)."""
    _, claims = paper_claims(paper)
    full = Tables(root)
    rows = []
    for c in claims:
        base = evaluate(c, full)
        seeds = _seeds_read(c, root, seed_column)
        if len(seeds) < 3:
            continue
        for s in seeds:
            t = Tables(root, {seed_column: s})
            out = evaluate(c, t)
            if t.left_out == 0:
                break
            rows.append({"paper": paper, "claim": c.id, "kind": "leave one seed out", "left_out": str(s),
                         "n_seeds": len(seeds), "verdict_all": base.verdict, "verdict": out.verdict,
                         "changed": out.verdict != base.verdict,
                         "defect": out.verdict != base.verdict and base.verdict != "inconclusive"})
    return pd.DataFrame(rows, columns=STABILITY_COLUMNS)


def _seeds_read(claim: Claim, root: Path | None, seed_column: str) -> list:
    rec = Tables(root)
    evaluate(claim, rec)  # a table that is missing (MissingTable) is not recorded
    seeds: set = set()
    for name in sorted(rec.read):
        df = rec(name)
        if seed_column in df.columns:
            seeds |= set(df[seed_column].dropna().astype(str))
    return sorted(seeds)


# ---------------------------------------------------------------- shared rules
def same_order(ours: Sequence[str], paper: Sequence[str]) -> bool:
    """Whether the items both lists share appear in the same order."""
    common = [x for x in ours if x in set(paper)]
    return common == [x for x in paper if x in set(common)]


VERDICT_MEANINGS = (
    "Each verdict judges the quantity a claim is about (a difference, a tau, a share, a rank gap) by its "
    f"{int(CONFIDENCE * 100)} % interval over seeds and, where the tables hold them, examples: "
    "**reproduced**: the interval lies on the claim's side of its threshold (for a number: within the "
    "rule's tolerance of the paper's, a tolerance at most half the paper's effect); **not reproduced**: it "
    "lies on the other side; **inconclusive**: it covers the threshold, so more runs or examples would "
    "decide it; **partly**: a claim over several cells holds in some and fails in others; **not "
    "comparable**: our setting cannot test it. Preconditions (how many runs learned) are listed apart, "
    "without a verdict."
)


def readme_status(papers: Sequence[str] = PAPERS, root: Path | None = None) -> str:
    """The README's status section: what the verdicts mean, then one compact table per paper (claims by
    verdict, preconditions apart), from the claims CSVs."""
    root = Path(root) if root is not None else paths.tables_dir()
    parts = [VERDICT_MEANINGS + "\n"]
    for paper in papers:
        title, _ = paper_claims(paper)
        path = root / f"{paper}_claims.csv"
        if not path.is_file():
            parts.append(f"**{title}**: no claims table yet (`{path.name}`).\n")
            continue
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
        rows = [{"verdict": f"{v} ({int((df['verdict'] == v).sum())})",
                 "claims": "; ".join(df.loc[df["verdict"] == v, "claim"])} for v in VERDICTS + (PRECONDITION,)
                if (df["verdict"] == v).any()]
        table = "\n".join(["| verdict | claims |", "|:--|:--|"] +
                          [f"| {r['verdict']} | {r['claims']} |" for r in rows])  # unpadded: the README stays short
        n_claims = int((df["verdict"] != PRECONDITION).sum())
        n_open = int((df["verdict"] == "inconclusive").sum())
        parts.append(f"**{title}** ([claims table](figures/tables/{paper}_claims.md)): {n_claims} claims, "
                     f"{n_open} inconclusive\n\n{table}\n")
    return "\n".join(parts)


STATUS_BEGIN = "<!-- claims-status:begin (generated by `python -m xaibench.reports readme-status`) -->"
STATUS_END = "<!-- claims-status:end -->"


def replace_status(readme: str, status: str) -> str:
    """``readme`` with the text between the status markers replaced by ``status``."""
    return replace_between(readme, STATUS_BEGIN, STATUS_END, status)


def replace_between(readme: str, begin: str, end: str, body: str) -> str:
    """``readme`` with the text between the marker lines ``begin`` and ``end`` replaced by ``body``."""
    if begin not in readme or end not in readme:
        raise ValueError(f"README has no markers for this generated section; add the lines\n{begin}\n{end}")
    head, rest = readme.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body.rstrip()}\n{end}{tail}"
