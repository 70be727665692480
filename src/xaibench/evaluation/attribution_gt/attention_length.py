"""Attention Attr% on the article words against review length (Zhou et al. 2022, Sec. 6.1).

Our beer reviews hold only the appearance section of each BeerAdvocate review (about 35 tokens); the
paper's are whole reviews (its examples in App. C run to 100-150 words; it prints no mean length). The
attention-gap variants (:mod:`.attention_gap`) found Attr% 0.28 on reviews four times as long against
0.77 on ours, so length is the most likely cause of the gap to the paper's 8.6 % that one run could not
settle. This experiment trains the article dataset's attention model on reviews made 1, 2 and 4 times
longer (same-label reviews joined, cut at 256 tokens: ``concat`` of :func:`.attention_gap.run_variant`,
whose stored runs it shares; ``--concats 1 2 4 8`` adds reviews 8 times as long, about 15 minutes per
epoch on 2 CPU cores) on three seeds each and reports

* per length (``attribution_gt_attention_length``): the test Attr% on the articles with its t interval
  over the learned seeds, the articles' token share, Attr% over that share (how far attention concentrates
  on the articles beyond their number), and the Spearman correlation, inside each run, between a test
  review's length and its Attr% (mean over seeds);
* the fit (``attribution_gt_attention_length_fit``): the slope of log Attr% on log tokens per review over
  the learned runs and the review length at which the fit reaches the paper's 8.6 %, each with a
  percentile bootstrap interval over runs;

and :func:`reading` states from those intervals what the data support.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from .attention_gap import PAPER_ATTR, VARIANT_SEEDS, gap_table, run_variants

#: review lengths tried: how many same-label reviews are joined into one (1: the reviews as they are)
LENGTH_CONCATS = (1, 2, 4)
#: a run counts as learned above this test accuracy (as in :func:`.attention_gap.gap_summary`)
LEARNED_ACC = 0.95
TABLE = "attribution_gt_attention_length"
FIT_TABLE = "attribution_gt_attention_length_fit"
#: the longest review length the fit's extrapolation is reported up to (the model reads at most 256 tokens,
#: beyond that the fit says where a trend would lead, not what a model does)
MAX_EXTRAPOLATE = 10_000.0


def length_variants(concats: Sequence[int] = LENGTH_CONCATS) -> dict[str, dict]:
    """``{name: changes}`` of :func:`.attention_gap.run_variants` per review length; the unchanged reviews and
    four joined use the changes of the attention-gap variants, so their stored runs are shared."""
    out = {}
    for c in concats:
        if int(c) < 1:
            raise ValueError(f"a review length multiple must be >= 1; got {c}")
        out["reviews as they are" if c == 1 else f"{c} reviews joined"] = {} if c == 1 else {"concat": int(c)}
    return out


def _concat(changes: dict) -> int:
    return int(changes.get("concat", 1))


def length_table(runs: pd.DataFrame, variants: dict[str, dict]) -> pd.DataFrame:
    """One row per review length from the per-run rows of :func:`.attention_gap.run_variants` (columns
    ``variant``, ``seed``, ``tokens_per_review``, ``attr_articles``, ``article_share``, ``test_acc`` and
    ``rho_length_attr``): Attr% (``ours``: mean over the learned runs, ``ours_std`` their std) with its t
    interval, the token share, Attr% over the share, the within-run correlation of length and Attr%."""
    from ...checks import check_columns
    from ..claims import t_interval

    check_columns(runs, ("variant", "seed", "tokens_per_review", "attr_articles", "article_share", "test_acc"),
                  "runs", "the per-run rows of attention_gap.run_variants")
    out = []
    for name, changes in variants.items():
        g = runs[runs["variant"] == name]
        if not len(g):
            continue
        learned = g[g["test_acc"] > LEARNED_ACC]
        use = learned if len(learned) else g
        iv = t_interval(use["attr_articles"], unit="seeds")
        rho = use["rho_length_attr"].dropna() if "rho_length_attr" in use else pd.Series(dtype=float)
        out.append({"variant": name, "concat": _concat(changes), "tokens_per_review": float(g["tokens_per_review"].mean()),
                    "n_seeds": len(g), "learned": len(learned), "metric": "attention_attr_pct_on_articles",
                    "ours": iv.effect, "ours_std": float(use["attr_articles"].std(ddof=1)) if len(use) > 1 else np.nan,
                    "ci_low": iv.low, "ci_high": iv.high, "article_share": float(use["article_share"].mean()),
                    "attr_over_share": float((use["attr_articles"] / use["article_share"]).mean()),
                    "rho_length_attr": float(rho.mean()) if len(rho) else np.nan,
                    "paper": PAPER_ATTR, "lower_is_better": False})
    return pd.DataFrame(out)


def _fit(log_tokens: np.ndarray, log_attr: np.ndarray) -> tuple[float, float]:
    slope, intercept = np.polyfit(log_tokens, log_attr, 1)
    return float(slope), float(intercept)


def _log_tokens_at_paper(log_tokens: np.ndarray, log_attr: np.ndarray) -> float:
    """log10 of the review length at which the fit reaches :data:`PAPER_ATTR`, within [0, log10 of
    :data:`MAX_EXTRAPOLATE`] (a flat or rising fit never reaches it: the upper end)."""
    slope, intercept = _fit(log_tokens, log_attr)
    top = math.log10(MAX_EXTRAPOLATE)
    if slope >= 0:
        return top
    return float(np.clip((math.log(PAPER_ATTR) - intercept) / slope / math.log(10), 0.0, top))


def fit_table(runs: pd.DataFrame, n_resamples: int = 2000) -> pd.DataFrame:
    """The log-log fit of Attr% on review length over the learned runs: its slope and the review length at
    which it reaches the paper's 8.6 % (capped at :data:`MAX_EXTRAPOLATE`), each with a percentile bootstrap
    interval over runs (:func:`~xaibench.evaluation.claims.bootstrap_interval`, runs resampled whole)."""
    from ..claims import bootstrap_interval

    runs = runs[runs["attr_articles"] > 0]
    learned = runs[runs["test_acc"] > LEARNED_ACC]
    # the learned runs; all runs where fewer than 3 learned (a smoke run), which the ``runs`` column says
    use, which = (learned, "learned runs") if len(learned) >= 3 else (runs, "all runs (fewer than 3 learned)")
    n_lengths = use["tokens_per_review"].round(0).nunique()
    if len(use) < 3 or n_lengths < 2:
        raise ValueError(f"the length fit needs at least 3 runs over at least 2 review lengths; "
                         f"got {len(use)} runs over {n_lengths} lengths")
    x, y = np.log(use["tokens_per_review"].to_numpy(float)), np.log(use["attr_articles"].to_numpy(float))

    def slope(a, b):
        return _fit(a, b)[0] if np.ptp(a) > 0 else 0.0

    def at_paper(a, b):
        return _log_tokens_at_paper(a, b) if np.ptp(a) > 0 else math.log10(MAX_EXTRAPOLATE)

    s = bootstrap_interval((x, y), slope, unit="runs", n_resamples=n_resamples)
    p = bootstrap_interval((x, y), at_paper, unit="runs", n_resamples=n_resamples)
    return pd.DataFrame([
        {"quantity": "slope of log Attr% on log tokens per review", "ours": s.effect, "ours_std": np.nan, "ci_low": s.low,
         "ci_high": s.high, "n": s.n, "how": s.how, "runs": which},
        {"quantity": "tokens per review at which the fit reaches 8.6 %", "ours": 10 ** p.effect, "ours_std": np.nan,
         "ci_low": 10 ** p.low, "ci_high": 10 ** p.high, "n": p.n, "how": p.how + f" (capped at {MAX_EXTRAPOLATE:g})",
         "runs": which},
    ]).assign(paper=np.nan)


def reading(table: pd.DataFrame, fit: pd.DataFrame) -> list[str]:
    """What the length tables support, one sentence each, from their intervals alone: whether Attr% falls
    with review length, whether the longest reviews still sit above the paper's 8.6 %, and where the fit
    reaches it."""
    out = []
    s = fit.iloc[0]
    if s["ci_high"] < 0:
        out.append(f"Attr% falls with review length: log-log slope {s['ours']:.2f} [{s['ci_low']:.2f}, {s['ci_high']:.2f}].")
    elif s["ci_low"] > 0:
        out.append(f"Attr% rises with review length: log-log slope {s['ours']:.2f} [{s['ci_low']:.2f}, {s['ci_high']:.2f}].")
    else:
        out.append(f"No trend of Attr% with review length is measurable: log-log slope {s['ours']:.2f} "
                   f"[{s['ci_low']:.2f}, {s['ci_high']:.2f}] covers 0.")
    longest = table.loc[table["tokens_per_review"].idxmax()]
    where = ("above" if longest["ci_low"] > PAPER_ATTR else "below" if longest["ci_high"] < PAPER_ATTR
             else "not distinguishable from")
    out.append(f"At the longest reviews ({longest['tokens_per_review']:.0f} tokens) Attr% is {longest['ours']:.3f} "
               f"[{longest['ci_low']:.3f}, {longest['ci_high']:.3f}] over {int(longest['learned'])} learned seeds: "
               f"{where} the paper's {PAPER_ATTR:.3f}.")
    if s["ci_high"] < 0:
        t = fit.iloc[1]
        cap = "" if t["ci_high"] < MAX_EXTRAPOLATE else f" (or beyond {MAX_EXTRAPOLATE:g})"
        out.append(f"Extrapolated, the fit reaches {PAPER_ATTR:.3f} at about {t['ours']:.0f} tokens per review "
                   f"[{t['ci_low']:.0f}, {t['ci_high']:.0f}{cap}].")
    return out


def save_length_tables(profile: str = "full", seeds: Sequence[int] = VARIANT_SEEDS,
                       concats: Sequence[int] = LENGTH_CONCATS, stored_only: bool = False
                       ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Run (or read, ``stored_only``) the length variants on ``seeds`` in ``profile``'s text configuration
    and write :data:`TABLE`, :data:`FIT_TABLE` and the per-run rows (``attribution_gt_attention_length_runs``);
    returns the three tables."""
    from ... import tables
    from ...config import use_profile
    from ...data.loaders import load
    from .text_runner import TextConfig

    prof = use_profile(profile)
    cfg = TextConfig.for_profile(prof.name)
    variants = length_variants(concats)
    if prof.name == "quick":
        seeds = list(seeds)[:2]
    runs = run_variants(None if stored_only else load("beer"), cfg, variants, seeds, stored_only=stored_only)
    if not len(runs):
        raise ValueError(f"no stored length run of profile {prof.name!r}: run without --stored-only")
    per_run = gap_table(runs).drop(columns=["per_epoch"]).merge(
        runs[["variant", "seed", "rho_length_attr", "concat"]], on=["variant", "seed"], how="left")
    table = length_table(runs, variants)
    fit = fit_table(runs)
    tables.save_table(table, TABLE, title="Attention Attr% on the article words against review length: reviews "
                      "joined 1-8 times, t interval over seeds, beside the paper's 8.6 % (Zhou et al. 2022, Sec. 6.1)")
    tables.save_table(fit, FIT_TABLE, title="Log-log fit of attention Attr% on tokens per review over the learned "
                      "runs, bootstrap intervals over runs")
    tables.save_table(per_run, TABLE + "_runs", title="Attention Attr% against review length, one row per run")
    table.attrs["computed"] = runs.attrs.get("computed", 0)  # cells trained by this call
    return table, fit, per_run


def main(argv: Sequence[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m xaibench.evaluation.attribution_gt.attention_length",
                                 description="Train the attention model on longer reviews and write the length tables.")
    ap.add_argument("--profile", default="full", choices=("full", "quick"))
    ap.add_argument("--seeds", type=int, nargs="+", default=list(VARIANT_SEEDS))
    ap.add_argument("--concats", type=int, nargs="+", default=list(LENGTH_CONCATS),
                    help="how many reviews to join per review length (default: %(default)s)")
    ap.add_argument("--stored-only", action="store_true", help="write the tables from the stored runs; train nothing")
    args = ap.parse_args(argv)
    from ... import steps

    with steps.timed_step("attention-length", {"seeds": list(args.seeds), "concats": list(args.concats)}) as step:
        table, fit, _ = save_length_tables(args.profile, args.seeds, args.concats, stored_only=args.stored_only)
        step.computed = table.attrs.get("computed", 0)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.round(3).to_string(index=False))
        print(fit.to_string(index=False))
    print("\n".join(reading(table, fit)))


__all__ = ["LENGTH_CONCATS", "length_variants", "length_table", "fit_table", "reading", "save_length_tables"]


if __name__ == "__main__":
    main()
