"""Attention Attr% against review length (attribution_gt.attention_length): known values of the per-length
table, the log-log fit and its reading; the within-run length correlation."""
import math

import numpy as np
import pandas as pd
import pytest

from xaibench.evaluation.attribution_gt import attention_gap as ag
from xaibench.evaluation.attribution_gt import attention_length as al


def _runs(attr: dict[int, list[float]], tokens: dict[int, float], acc: float = 0.99) -> pd.DataFrame:
    names = {c: n for n, c in ((n, al._concat(ch)) for n, ch in al.length_variants(list(attr)).items())}
    rows = []
    for c, values in attr.items():
        for seed, v in enumerate(values):
            rows.append({"variant": names[c], "seed": seed, "concat": c, "tokens_per_review": tokens[c],
                         "attr_articles": v, "article_share": 0.09, "test_acc": acc, "rho_length_attr": -0.2})
    return pd.DataFrame(rows)


def test_length_rho_is_spearman_and_nan_without_spread():
    assert ag.length_rho(np.array([10, 20, 30, 40]), np.array([0.1, 0.3, 0.2, 0.9])) == pytest.approx(0.8)
    assert ag.length_rho(np.array([10, 20, 30]), np.array([0.9, 0.5, 0.1])) == pytest.approx(-1.0)
    assert math.isnan(ag.length_rho(np.array([30, 30, 30]), np.array([0.9, 0.5, 0.1])))
    with pytest.raises(ValueError, match="3 lengths but 2"):
        ag.length_rho(np.array([1, 2, 3]), np.array([0.1, 0.2]))


def test_length_variants_share_the_attention_gap_runs():
    v = al.length_variants((1, 4, 8))
    assert list(v.values()) == [{}, {"concat": 4}, {"concat": 8}]
    assert v["reviews as they are"] == ag.VARIANTS["ours: hidden 64, 7,000 reviews"]
    assert v["4 reviews joined"] == ag.VARIANTS["longer reviews (4 concatenated)"]
    with pytest.raises(ValueError, match=">= 1"):
        al.length_variants((0,))


def test_length_table_t_interval_over_learned_seeds():
    runs = _runs({1: [0.5, 0.6, 0.7], 2: [0.4, 0.4, 0.4]}, {1: 35.0, 2: 70.0})
    runs.loc[len(runs)] = {**runs.iloc[0].to_dict(), "seed": 9, "attr_articles": 0.05, "test_acc": 0.6}  # not learned
    tab = al.length_table(runs, al.length_variants((1, 2))).set_index("concat")
    one = tab.loc[1]
    # mean 0.6, sd 0.1 over 3 learned seeds: half width t(0.975, 2) * 0.1 / sqrt(3) = 4.3027 * 0.057735 = 0.24841
    assert (one["n_seeds"], one["learned"]) == (4, 3)
    assert one["ours"] == pytest.approx(0.6) and one["ours_std"] == pytest.approx(0.1)
    assert (one["ci_low"], one["ci_high"]) == pytest.approx((0.6 - 0.24841, 0.6 + 0.24841), abs=1e-5)
    assert one["attr_over_share"] == pytest.approx(0.6 / 0.09)
    assert one["paper"] == ag.PAPER_ATTR and one["rho_length_attr"] == pytest.approx(-0.2)
    assert tab.loc[2, "ci_low"] == tab.loc[2, "ci_high"] == pytest.approx(0.4)  # no spread


def test_fit_recovers_a_power_law_and_where_it_reaches_the_paper():
    tokens = {1: 36.0, 2: 72.0, 4: 144.0}
    law = lambda t: 2.0 * t ** -0.5  # noqa: E731
    runs = _runs({c: [law(t)] * 2 for c, t in tokens.items()}, tokens)
    fit = al.fit_table(runs, n_resamples=500).set_index("quantity")
    slope = fit.iloc[0]
    assert slope["ours"] == pytest.approx(-0.5)
    assert slope["ci_low"] <= -0.5 + 1e-9 and slope["ci_high"] >= -0.5 - 1e-9
    assert slope["ci_high"] - slope["ci_low"] < 0.6  # exact data: only resamples of one length (slope 0) move it
    at = fit.iloc[1]
    assert at["ours"] == pytest.approx((2.0 / ag.PAPER_ATTR) ** 2, rel=1e-6)  # 2 t^-0.5 = 0.086 at t = 540.8
    assert slope["runs"] == "learned runs"
    text = al.reading(al.length_table(runs, al.length_variants(tuple(tokens))), fit.reset_index())
    assert text[0].startswith("Attr% falls with review length")
    assert "144 tokens" in text[1] and "above the paper's 0.086" in text[1]
    assert "about 541 tokens" in text[2]


def test_fit_reads_no_trend_when_the_interval_covers_zero_and_refuses_one_length():
    tokens = {1: 36.0, 2: 72.0, 4: 144.0}
    runs = _runs({1: [0.5, 0.7, 0.6], 2: [0.7, 0.5, 0.6], 4: [0.55, 0.65, 0.6]}, tokens, acc=0.7)
    fit = al.fit_table(runs, n_resamples=500)
    assert fit["runs"].iloc[0].startswith("all runs")  # none learned: the smoke-run fallback, said so
    assert fit["ci_low"].iloc[0] < 0 < fit["ci_high"].iloc[0]
    text = al.reading(al.length_table(runs, al.length_variants(tuple(tokens))), fit)
    assert text[0].startswith("No trend") and len(text) == 2
    with pytest.raises(ValueError, match="at least 2 review lengths"):
        al.fit_table(_runs({1: [0.5, 0.6, 0.7]}, {1: 35.0}))
