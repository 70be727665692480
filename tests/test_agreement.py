"""evaluation.agreement.rank_agreement: known values (by hand and scipy) and the metric's direction."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xaibench.evaluation.agreement import rank_agreement


def _table(ours, paper, group="g1", item="method"):
    return pd.DataFrame({"task": group, item: [f"m{i}" for i in range(len(ours))], "ours": ours, "paper": paper})


def test_known_values_by_hand():
    # ranks ours 1 2 3 4, paper 1 3 2 4: one discordant pair of six -> tau = (5 - 1) / 6;
    # rank differences 0 1 -1 0 -> rho = 1 - 6 * 2 / (4 * (16 - 1)) = 0.8
    r = rank_agreement(_table([1.0, 2.0, 3.0, 4.0], [10.0, 30.0, 20.0, 40.0]), ["task"]).iloc[0]
    assert r["kendall"] == pytest.approx(4 / 6)
    assert r["spearman"] == pytest.approx(0.8)
    assert r["n_methods"] == 4
    assert 0.0 < r["kendall_p"] < 1.0 and 0.0 < r["spearman_p"] < 1.0


def test_matches_scipy_with_ties_and_p_values():
    from scipy.stats import kendalltau, spearmanr

    ours, paper = [0.3, 0.1, 0.1, 0.9, 0.5, 0.2], [1.0, 2.0, 0.5, 3.0, 3.0, 0.1]
    r = rank_agreement(_table(ours, paper), ["task"]).iloc[0]
    assert r["kendall"] == pytest.approx(kendalltau(ours, paper).statistic)
    assert r["kendall_p"] == pytest.approx(kendalltau(ours, paper).pvalue)
    assert r["spearman"] == pytest.approx(spearmanr(ours, paper).statistic)
    assert r["spearman_p"] == pytest.approx(spearmanr(ours, paper).pvalue)


def test_best_follows_lower_is_better():
    t = _table([0.1, 0.5, 0.9], [0.2, 0.8, 0.4])
    hi = rank_agreement(t, ["task"]).iloc[0]
    assert (hi["best_ours"], hi["best_paper"], hi["same_best"]) == ("m2", "m1", False)
    lo = rank_agreement(t, ["task"], lower_is_better=True).iloc[0]
    assert (lo["best_ours"], lo["best_paper"], lo["same_best"]) == ("m0", "m0", True)
    # direction from a column, one per group
    t2 = pd.concat([t.assign(metric="err", lib=True), t.assign(metric="acc", lib=False)])
    r = rank_agreement(t2, ["task", "metric"], lower_is_better="lib").set_index("metric")
    assert r.loc["err", "best_ours"] == "m0" and r.loc["acc", "best_ours"] == "m2"
    with pytest.raises(ValueError, match="both directions"):
        rank_agreement(t2, ["task"], lower_is_better="lib")


def test_groups_small_constant_and_missing():
    t = pd.concat([_table([1.0, 2.0, 3.0], [3.0, 2.0, 1.0], "rev"),
                   _table([1.0, 2.0], [1.0, 2.0], "two"),
                   _table([1.0, 1.0, 1.0], [1.0, 2.0, 3.0], "flat"),
                   _table([1.0, 2.0, np.nan, 4.0], [1.0, 2.0, 3.0, 4.0], "nan")])
    r = rank_agreement(t, ["task"]).set_index("task")
    assert r.loc["rev", "kendall"] == pytest.approx(-1.0) and r.loc["rev", "spearman"] == pytest.approx(-1.0)
    assert np.isnan(r.loc["two", "kendall"]) and r.loc["two", "n_methods"] == 2   # fewer than min_items
    assert np.isnan(r.loc["flat", "spearman"])                                      # ours constant
    assert r.loc["nan", "n_methods"] == 3 and r.loc["nan", "kendall"] == pytest.approx(1.0)
    assert list(rank_agreement(t, ["task"], item="explainer").columns[:2]) == ["task", "n_explainers"]
    with pytest.raises(KeyError, match="paper"):
        rank_agreement(t.drop(columns="paper"), ["task"])


def test_best_position_is_the_one_best_rule():
    from xaibench.evaluation.agreement import best_position

    assert best_position([0.3, np.nan, 0.1, 0.2]) == 2
    assert best_position([0.3, np.nan, 0.1, 0.2], lower_is_better=False) == 0
    assert best_position([0.2, 0.1, 0.1]) == 1  # the first on a tie
    assert best_position([np.nan, np.nan]) is None and best_position([]) is None


def test_cebab_kendall_agreement_is_rank_agreement():
    from xaibench.evaluation.cebab import runner

    t = pd.DataFrame({"task": "5-way", "model": "minilm", "metric": ["l2"] * 4 + ["cosine"] * 2,
                      "explainer": ["a", "b", "c", "d", "a", "b"], "ours": [1, 2, 4, 3, 0.5, 0.6],
                      "paper": [1, 3, 2, 4.0, 0.7, 0.6], "lower_is_better": True})
    k = runner.kendall_agreement(t)
    r = rank_agreement(t, ["task", "model", "metric"], item="explainer", lower_is_better="lower_is_better")
    assert list(k["metric"]) == ["l2"]  # the two-explainer setting is left out
    assert k["kendall_tau"].iloc[0] == pytest.approx(r.set_index("metric").loc["l2", "kendall"])
    assert k["best_ours"].iloc[0] == "a" and k["p_value"].iloc[0] == r.set_index("metric").loc["l2", "kendall_p"]
