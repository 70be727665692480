"""Headline claims of Filandrianos et al. (2023), checked against our committed tables.

Each check reads only the tables notebook 22 writes (``cf_feedback_inconsistency``, ``_flip_rate``,
``_fluency``, ``_sample_size``, ``_per_step``) and states the rule's numbers in its reason.

Two settings decide what can be compared at all:

* **Fluency values.**  The authors' ``perplexity.py`` passes one text (a string) to
  ``compute_ppl(sentences, ...)``, which encodes ``"\\n\\n".join(sentences)``: the text's *characters*
  joined by blank lines.  The paper's Table 3 values (about 4-9 under GPT-2) are therefore
  per-character perplexities, not the per-token perplexities of the texts that we compute; only
  orderings and trends are compared, never values.
* **In-domain fluency.**  Our in-domain LM is the bigram model that the MiCE-style infiller and the
  Polyjuice-style ``resemantic``/``insert`` codes sample from: for both editors it is circular (it scores
  agreement with their own generator), so the in-domain fluency claim is ``not comparable``.
* **Polyjuice's erasure.**  Our Polyjuice-style rule set always offers one random sentence of the
  text (the whole-text blank) as a candidate, so the "extreme erasure" the paper observes is built
  into our editor; the paper's findings that rest on it are ``not comparable``.
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np
import pandas as pd

from ..claims import Claim, Outcome, Tables, by_share, same_order
from .runner import EDITOR_ORDER

PAPER = "Counterfactuals of counterfactuals (Filandrianos et al. 2023)"

EDITORS = ("mice", "polyjuice", "textfooler")
NAMES = {"mice": "MiCE", "polyjuice": "Polyjuice", "textfooler": "TextFooler"}
ALPHA = 0.05

FLUENCY_VALUES_REASON = ("the paper's perplexity.py passes one string to compute_ppl, which joins its elements with "
                         "blank lines: GPT-2 scores the text's characters one per line, so the paper's Table 3 values "
                         "are per-character perplexities; ours are per-token")
ERASURE_REASON = ("our Polyjuice-style rule set always offers one random sentence of the text as a candidate, "
                  "so erasure is built into our editor")
FINE_LM_REASON = ("our in-domain LM is the bigram model that our MiCE infiller and Polyjuice-style "
                  "resemantic/insert codes sample from, so for both editors it is circular: it scores agreement "
                  "with their own generator, not fluency")


# ---------------------------------------------------------------------------------------------- helpers
class _NoCells(LookupError):
    """The table has none of the cells a claim covers (e.g. a quick run's two texts and two steps)."""


def _cells(check: Callable[[Tables], Outcome]) -> Callable[[Tables], Outcome]:
    """A check whose table lacks the cells it needs gives ``not comparable`` naming what is missing."""
    @functools.wraps(check)
    def wrapped(t: Tables) -> Outcome:
        try:
            return check(t)
        except (KeyError, IndexError, _NoCells) as err:
            return Outcome(None, "not comparable", f"the table lacks the cells this claim needs ({err})")
    return wrapped


def _share(holds: list[bool], what: str) -> Outcome:
    """:func:`by_share` over the cells a claim covers (none: raises :class:`_NoCells`)."""
    if not holds:
        raise _NoCells(f"no {what} in the table")
    return by_share(float(np.mean(holds)), what)


def _paper_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Only the paper's three editors' rows: the claims are about them (an editor added through ``editors`` /
    Make's ``EXPLAINERS``, marked "(added)", is left out)."""
    for col in ("editor", "comparison_editor"):
        if col in df.columns:
            df = df[df[col].isin(EDITOR_ORDER)]
    return df


def _inc(t: Tables) -> pd.DataFrame:
    """Table 1 as ``(dataset, n, editor) -> ours, paper``."""
    df = _paper_rows(t("cf_feedback_inconsistency"))
    df["n"] = df["metric"].str.removeprefix("inc@").astype(int)
    return df.set_index(["dataset", "n", "editor"])[["ours", "paper"]]


def _order(values: dict[str, float]) -> list[str]:
    """Editors from the highest value to the lowest."""
    return sorted(values, key=lambda e: -values[e])


def _fmt_order(values: dict[str, float]) -> str:
    return " > ".join(f"{NAMES[e]} {values[e]:.2f}" for e in _order(values))


def _step_inc(inc: pd.DataFrame, dataset: str, editor: str, col: str) -> dict[int, float]:
    """Per-step inc of steps 1-3 from Table 1's running means (``inc@n`` is the mean of the per-step
    means over steps 1..n, so step k = k * inc@k - (k-1) * inc@(k-1))."""
    v = {n: float(inc.loc[(dataset, n, editor), col]) for n in (1, 2, 3)}
    return {1: v[1], 2: 2 * v[2] - v[1], 3: 3 * v[3] - 2 * v[2]}


def _flip(t: Tables) -> pd.DataFrame:
    df = _paper_rows(t("cf_feedback_flip_rate"))
    df["n"] = df["metric"].str.removeprefix("flip_rate@").astype(int)
    return df


def _first_last(df: pd.DataFrame, dataset: str, editor: str, col: str) -> tuple[float, float, int, int]:
    """(value at the first step, value at the last step, n texts, last step) of a flip-rate frame."""
    g = df[(df["dataset"] == dataset) & (df["editor"] == editor)].sort_values("n")
    first, last = g.iloc[0], g.iloc[-1]
    return float(first[col]), float(last[col]), int(first["n_texts"]), int(last["n"])


def _fluency(t: Tables, lm: str = "base", quantity: str = "nll") -> pd.DataFrame:
    df = _paper_rows(t("cf_feedback_fluency"))
    return df[(df["lm"] == lm) & (df["quantity"] == quantity)].set_index(["dataset", "step", "editor"])


def _pairs_significant(t: Tables, dataset: str, min_size: int, col: str) -> tuple[int, int]:
    """(cells with p < 0.05, cells) over editor pairs x steps at sample sizes >= ``min_size``."""
    df = _paper_rows(t("cf_feedback_sample_size"))
    df = df[(df["dataset"] == dataset) & (df["sample_size"] >= min_size) & (df["editor"] < df["comparison_editor"])]
    v = df[col].dropna()
    return int((v < ALPHA).sum()), int(len(v))


# ---------------------------------------------------------------------------------------------- checks
@_cells
def _imdb_inc9_order(t: Tables) -> Outcome:
    inc = _inc(t)
    ours = {e: float(inc.loc[("imdb", 9, e), "ours"]) for e in EDITORS}
    paper = {e: float(inc.loc[("imdb", 9, e), "paper"]) for e in EDITORS}
    want = _order(paper)
    same = same_order(_order(ours), want) and all(ours[a] > ours[b] for a, b in zip(want, want[1:]))  # no ties
    return Outcome(_fmt_order(ours), "reproduced" if same else "not reproduced",
                   f"ordering by inc@9: ours {_fmt_order(ours)}, paper {' > '.join(NAMES[e] for e in want)}: "
                   f"{'same strict' if same else 'not the same strict'} order")


@_cells
def _news_mice_vs_polyjuice(t: Tables) -> Outcome:
    inc = _inc(t)
    m, p = (float(inc.loc[("newsgroups", 1, e), "ours"]) for e in ("mice", "polyjuice"))
    st = _paper_rows(t("cf_feedback_sample_size"))
    st = st[(st["dataset"] == "newsgroups") & (st["step"] == 1) & (st["editor"] == "mice")
            & (st["comparison_editor"] == "polyjuice")]
    row = st.sort_values("sample_size").iloc[-1]
    pv, size = float(row["ours"]), int(row["sample_size"])
    ours = f"MiCE {m:.2f} vs Polyjuice {p:.2f}"
    why = f"inc@1 MiCE {m:.2f} vs Polyjuice {p:.2f}, t-test p = {pv:.2g} on {size} texts"
    if m > p and pv < ALPHA:
        return Outcome(ours, "reproduced", f"{why}: MiCE significantly higher")
    if m > p:
        return Outcome(ours, "partly", f"{why}: MiCE higher but p >= {ALPHA}")
    return Outcome(ours, "not reproduced", f"{why}: MiCE is not higher")


@_cells
def _textfooler_lowest(t: Tables) -> Outcome:
    inc = _inc(t)
    cells = sorted({(d, n) for d, n, _ in inc.index})
    holds = [all(inc.loc[(d, n, "textfooler"), "ours"] < inc.loc[(d, n, e), "ours"] for e in ("mice", "polyjuice"))
             for d, n in cells]
    out = _share(holds, "(dataset, inc@n) cell")
    return Outcome(out.ours, out.verdict, f"TextFooler has the lowest inc@n in {sum(holds)}/{len(holds)} "
                                          f"(dataset, n) cells: {out.reason}")


@_cells
def _inc_converges(t: Tables) -> Outcome:
    inc = _inc(t)
    cells = sorted({(d, e) for d, _, e in inc.index})
    late = {c: abs(inc.loc[(c[0], 9, c[1]), "ours"] - inc.loc[(c[0], 3, c[1]), "ours"]) for c in cells}
    early = {c: abs(inc.loc[(c[0], 3, c[1]), "ours"] - inc.loc[(c[0], 1, c[1]), "ours"]) for c in cells}
    holds = [late[c] < early[c] for c in cells]
    out = _share(holds, "(dataset, editor)")
    return Outcome(out.ours, out.verdict, f"|inc@9 - inc@3| < |inc@3 - inc@1| in {sum(holds)}/{len(holds)} "
                                          f"(dataset, editor) cells: {out.reason}")


@_cells
def _mice_even_odd(t: Tables) -> Outcome:
    inc = _inc(t)
    s = _step_inc(inc, "imdb", "mice", "ours")
    p = _step_inc(inc, "imdb", "mice", "paper")
    ours = f"steps 1-3: {s[1]:.2f}, {s[2]:.2f}, {s[3]:.2f}"
    why = (f"per-step inc from Table 1's running means, ours {s[1]:.2f}, {s[2]:.2f}, {s[3]:.2f} "
           f"(paper {p[1]:.2f}, {p[2]:.2f}, {p[3]:.2f})")
    if s[2] > s[1] and s[2] > s[3]:
        return Outcome(ours, "reproduced", f"{why}: even step 2 above odd steps 1 and 3")
    if s[2] > s[1] or s[2] > s[3]:
        return Outcome(ours, "partly", f"{why}: even step 2 above only one of odd steps 1 and 3")
    return Outcome(ours, "not reproduced", f"{why}: even step 2 above neither odd step")


@_cells
def _polyjuice_erasure(t: Tables) -> Outcome:
    inc = _inc(t)
    a, b = (float(inc.loc[("imdb", n, "polyjuice"), "ours"]) for n in (1, 9))
    return Outcome(f"inc@1 {a:.2f} -> inc@9 {b:.2f}", "not comparable", ERASURE_REASON)


@_cells
def _minimality_decreases(t: Tables) -> Outcome:
    df = _paper_rows(t("cf_feedback_per_step"))
    df = df[(df["metric"] == "minimality") & (df["step"] >= 1)]
    holds, parts = [], []
    for (d, e), g in df.groupby(["dataset", "editor"]):
        g = g.sort_values("step")
        first, last = float(g["ours"].iloc[0]), float(g["ours"].iloc[-1])
        holds.append(last < first)
        parts.append(f"{d} {NAMES.get(e, e)} {first:.1f}->{last:.1f}")
    out = _share(holds, "(dataset, editor)")
    return Outcome(out.ours, out.verdict, f"mean minimality first -> last step: {'; '.join(parts)}: {out.reason}")


@_cells
def _mice_flip_falls(t: Tables) -> Outcome:
    f1, f9, n, last = _first_last(_flip(t), "imdb", "mice", "ours")
    p1, p9, _, _ = _first_last(_flip(t), "imdb", "mice", "paper")
    se = float(np.sqrt(f1 * (1 - f1) / n + f9 * (1 - f9) / n))
    drop = f1 - f9
    why = (f"IMDb MiCE flip rate @1 {f1:.3f} -> @{last} {f9:.3f} (paper {p1:.3f} -> {p9:.3f}); "
           f"drop {drop:.3f} vs 1.96 x SE {1.96 * se:.3f} on {n} texts")
    ours = f"{f1:.3f} -> {f9:.3f}"
    if drop > 1.96 * se and drop > 0:
        return Outcome(ours, "reproduced", f"{why}: significant fall")
    if drop > 0:
        return Outcome(ours, "partly", f"{why}: falls, not significantly")
    return Outcome(ours, "not reproduced", f"{why}: no fall")


@_cells
def _pj_tf_flip_rises(t: Tables) -> Outcome:
    df = _flip(t)
    holds, parts = [], []
    for d in ("imdb", "newsgroups"):
        for e in ("polyjuice", "textfooler"):
            if not ((df["dataset"] == d) & (df["editor"] == e)).any():
                continue
            f1, f9, _, _ = _first_last(df, d, e, "ours")
            holds.append(f9 > f1)
            parts.append(f"{d} {NAMES[e]} {f1:.3f}->{f9:.3f}")
    out = _share(holds, "(dataset, editor)")
    return Outcome(out.ours, out.verdict, f"flip rate @1 -> @9: {'; '.join(parts)}: {out.reason}")


def _ttest(dataset: str, min_size: int):
    @_cells
    def check(t: Tables) -> Outcome:
        k, n = _pairs_significant(t, dataset, min_size, "ours")
        kp, np_ = _pairs_significant(t, dataset, min_size, "paper")
        if not n:
            raise _NoCells(f"no {dataset} p-values at sample sizes >= {min_size}")
        out = by_share(k / n, "(size, pair, step) cell")
        return Outcome(out.ours, out.verdict, f"p < {ALPHA} in {k}/{n} (sample size >= {min_size}, editor pair, "
                                              f"step) cells (paper's Table: {kp}/{np_}): {out.reason}")
    return check


@_cells
def _fluency_textfooler_best(t: Tables) -> Outcome:
    fl = _fluency(t)
    holds, parts = [], []
    for d, step in sorted({(d, s) for d, s, _ in fl.index if s >= 1}):
        v = {e: float(fl.loc[(d, step, e), "ours"]) for e in EDITORS}
        holds.append(min(v, key=v.get) == "textfooler")
        parts.append(f"{d}@{step} lowest {NAMES[min(v, key=v.get)]}")
    out = _share(holds, "(dataset, step)")
    return Outcome(out.ours, out.verdict, f"base-LM mean token NLL, ordering only ({'; '.join(parts)}); "
                                          f"the paper's values are per-character: {out.reason}")


@_cells
def _fluency_base_worsens(t: Tables) -> Outcome:
    fl = _fluency(t)
    steps = sorted({s for d, s, _ in fl.index if d == "imdb" and s >= 1})
    holds, parts = [], []
    for e in ("mice", "polyjuice"):
        a, b = (float(fl.loc[("imdb", s, e), "ours"]) for s in (steps[0], steps[-1]))
        holds.append(b > a)
        parts.append(f"{NAMES[e]} {a:.2f} -> {b:.2f}")
    out = _share(holds, "editor")
    return Outcome("; ".join(parts), out.verdict, f"IMDb base-LM mean token NLL @{steps[0]} -> @{steps[-1]}, trend only "
                                          f"({'; '.join(parts)}): {out.reason}")


@_cells
def _fluency_fine(t: Tables) -> Outcome:
    fl = _fluency(t, lm="fine")
    steps = sorted({s for d, s, _ in fl.index if d == "imdb" and s >= 1})
    parts = [f"{NAMES[e]} {fl.loc[('imdb', steps[0], e), 'ours']:.2f} -> {fl.loc[('imdb', steps[-1], e), 'ours']:.2f}"
             for e in ("mice", "polyjuice")]
    return Outcome("; ".join(parts), "not comparable", FINE_LM_REASON)


@_cells
def _ppl_values(t: Tables) -> Outcome:
    fl = _fluency(t, quantity="ppl")
    return Outcome(float(fl.loc[("imdb", 1, "textfooler"), "ours"]), "not comparable", FLUENCY_VALUES_REASON)


CLAIMS: list[Claim] = [
    Claim("imdb-inc9-order", "IMDb inc@9 orders the editors MiCE > Polyjuice > TextFooler", "Table 1",
          "MiCE 4.73 > Polyjuice 2.22 > TextFooler 0.49", _imdb_inc9_order),
    Claim("news-mice-above-polyjuice", "On Newsgroups MiCE is far more inconsistent than Polyjuice at the first step",
          "Table 1, Sec. 5", "MiCE 11.11 vs Polyjuice 0.99", _news_mice_vs_polyjuice),
    Claim("textfooler-lowest-inc", "TextFooler is the most consistent editor: lowest inc@n on both datasets",
          "Table 1, Sec. 5", 1.0, _textfooler_lowest),
    Claim("inc-converges-from-3", "From inc@3 on, inc@n values start to converge on both datasets",
          "Table 1, Sec. 5", 1.0, _inc_converges),
    Claim("mice-even-steps-costlier", "MiCE's inc is higher on even steps (back to the original class) on IMDb",
          "Fig. 3b, Sec. 5", "steps 1-3: 0.86, 11.04, 2.05", _mice_even_odd),
    Claim("polyjuice-early-erasure", "Polyjuice's high early inc on IMDb comes from erasing most of long texts",
          "Sec. 5, App. D", "inc@1 6.21 -> inc@9 2.22; >70% erased in 83% of steps 1-2", _polyjuice_erasure),
    Claim("minimality-decreases", "Minimality tends to decrease over the feedback steps",
          "Fig. 3a, Fig. 5", None, _minimality_decreases),
    Claim("mice-flip-falls", "MiCE flips every IMDb text at step 1, but its flip rate falls after feedback",
          "Table 2, Sec. 6.1", "1.000 -> 0.856", _mice_flip_falls),
    Claim("pj-tf-flip-rises", "The flip rates of Polyjuice and TextFooler increase for later feedback steps",
          "Table 2, Sec. 6.1", 1.0, _pj_tf_flip_rises),
    Claim("ttest-imdb-from-100", "IMDb: every editor pair differs (p < 0.05) at every step from 100 texts on",
          "Table 4, App. E", 1.0, _ttest("imdb", 100)),
    Claim("ttest-news-from-200", "Newsgroups: every editor pair differs (p < 0.05) at every step from 200 texts on",
          "Table 5, App. E", 47 / 48, _ttest("newsgroups", 200)),
    Claim("fluency-textfooler-best", "Under the base LM TextFooler's edits are the most fluent",
          "Table 3, Sec. 6.2", 1.0, _fluency_textfooler_best),
    Claim("fluency-base-worsens", "Base-LM perplexity increases with feedback for MiCE and Polyjuice (IMDb)",
          "Fig. 3d, Sec. 6.2",
          "rising for both in Fig. 3d (Table 3: MiCE 4.25 -> 4.45; Polyjuice 7.45 -> 7.38)", _fluency_base_worsens),
    Claim("fluency-fine-mice-falls", "Under the in-domain LM MiCE's perplexity falls with feedback, Polyjuice's rises",
          "Fig. 3e, Sec. 6.2",
          "MiCE falls, Polyjuice rises in Fig. 3e (Table 3: 16.53 -> 14.61; 33.48 -> 27.81)", _fluency_fine),
    Claim("ppl-values", "Base-LM perplexities of the edits are about 4-9 (TextFooler IMDb @1: 4.12)",
          "Table 3", 4.1178, _ppl_values),
]
