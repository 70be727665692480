"""Ge et al.'s ground truth and Omission under their readings, the tau ceiling, the per-seed tables and
Algorithm 2's alpha sweep, on hand-made cases (numbers worked out in the comments)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xaibench.data.feature_data import FeatureSpec
from xaibench.evaluation.cf_faithfulness import metrics as cfm
from xaibench.evaluation.cf_faithfulness import runner
from xaibench.evaluation.cf_faithfulness import tables as T
from xaibench.explainers.feature import make_feature_explainer
from xaibench.explainers.feature.simple import delete_words
from xaibench.tables import aggregate_seeds

from tests.test_cf_faithfulness import hand_lr, sig  # the hand-built logistic regression


@pytest.fixture()
def lr_ref():
    """3 features with values a (the reference category, first) and b; ids f0: 1, 2; f1: 3, 4; f2: 5, 6.
    Embeddings a/b: f0 1.0/0.2, f1 0/1, f2 -2/-0.5; w = (2, -1, 0.5), b = -0.4."""
    return hand_lr({1: 1.0, 2: 0.2, 3: 0.0, 4: 1.0, 5: -2.0, 6: -0.5}, (2.0, -1.0, 0.5), -0.4)


XB = np.array([[2, 4, 6]])           # all b: shares 0.4, -1, -0.25; z = -1.25 -> class 0
TRAIN = np.array([[1, 3, 5], [2, 4, 6]])


def test_molnar_reference_effects_differ_from_zero_deletion_by_hand(lr_ref):
    assert lr_ref.logit_z(XB)[0] == pytest.approx(-1.25)
    # reference shares (value a): 2 * 1.0, -1 * 0, 0.5 * -2; effects = share - reference share
    assert lr_ref.reference_shares("reference").tolist() == pytest.approx([2.0, 0.0, -1.0])
    assert lr_ref.effects(XB, "reference")[0].tolist() == pytest.approx([-1.6, -1.0, 0.75])
    # training means 0.6, 0.5, -1.25 -> shares 1.2, -0.5, -0.625
    assert lr_ref.effects(XB, "train_mean", TRAIN)[0].tolist() == pytest.approx([-0.8, -0.5, 0.375])
    assert lr_ref.effects(XB, "zero")[0].tolist() == pytest.approx([0.4, -1.0, -0.25])
    # towards class 0: zero 1st = f1 (1.0); reference 1st = f0 (1.6); train mean 1st = f0 (0.8)
    assert cfm.ground_truth_selection(lr_ref, XB, 1, reference="zero").tolist() == [[1]]
    assert cfm.ground_truth_selection(lr_ref, XB, 1).tolist() == [[0]]                 # default: reference
    assert cfm.ground_truth_selection(lr_ref, XB, 1, reference="train_mean", train_X=TRAIN).tolist() == [[0]]
    # Omission (zero embedding) ranks by the zero shares: it selects f1, recall 0 under Molnar's reading
    om = make_feature_explainer("omission").fit(lr_ref, TRAIN).explain_ids(XB)
    sel = cfm.top_k(om, XB, 1)
    assert sel.tolist() == [[1]]
    assert cfm.ground_truth_recall(sel, cfm.ground_truth_selection(lr_ref, XB, 1)).tolist() == [0.0]
    assert cfm.ground_truth_recall(sel, cfm.ground_truth_selection(lr_ref, XB, 1, reference="zero")).tolist() == [1.0]
    # the LR's own explanation is the ground truth of each reading
    for r in ("reference", "zero", "train_mean"):
        lr = make_feature_explainer("logistic_regression", reference=r).fit(lr_ref, TRAIN).explain_ids(XB)
        assert lr[0].tolist() == pytest.approx((-lr_ref.effects(XB, r, TRAIN))[0].tolist())
    with pytest.raises(ValueError, match="reference must be one of"):
        cfm.ground_truth_selection(lr_ref, XB, 1, reference="mode")


@pytest.fixture()
def text_lr():
    """3 word positions, 1-d embeddings good 1, bad -1, film 0.5; w = (1, 2, 3) per position, b = 0."""
    spec = FeatureSpec("text", ["w0", "w1", "w2"], vocab=["<pad>", "<unk>", "good", "bad", "film"])
    return hand_lr({2: 1.0, 3: -1.0, 4: 0.5}, (1.0, 2.0, 3.0), 0.0, spec=spec)


def test_omission_delete_takes_the_word_out_and_the_rest_moves_up(text_lr):
    X = np.array([[2, 3, 4]])         # good bad film: z = 1 - 2 + 1.5 = 0.5 -> class 1
    assert delete_words(X).tolist() == [[3, 4, 0], [2, 4, 0], [2, 3, 0]]
    p = sig(0.5)
    dele = make_feature_explainer("omission").fit(text_lr).explain_ids(X)
    zero = make_feature_explainer("omission", removal="zero").fit(text_lr).explain_ids(X)
    # deleted: bad film (-1 + 1 = 0), good film (1 + 1 = 2), good bad (1 - 2 = -1)
    assert dele[0].tolist() == pytest.approx([p - sig(0.0), p - sig(2.0), p - sig(-1.0)])
    # zeroed in place: -2 + 1.5, 1 + 1.5, 1 - 2
    assert zero[0].tolist() == pytest.approx([p - sig(-0.5), p - sig(2.5), p - sig(-1.0)])
    # the ground truth (a word against 0: its share 1, -2, 1.5) picks w2; deletion picks w2 too, zero picks w0
    assert cfm.ground_truth_selection(text_lr, X, 1).tolist() == [[2]]
    assert cfm.top_k(dele, X, 1).tolist() == [[2]] and cfm.top_k(zero, X, 1).tolist() == [[2]]
    assert np.argsort(-dele[0]).tolist() == [2, 0, 1] and np.argsort(-zero[0]).tolist() == [2, 0, 1]
    Y = np.array([[4, 2, 0]])         # film good <pad>: z = 0.5 + 2 = 2.5; deleting film: good -> 1
    d = make_feature_explainer("omission").fit(text_lr).explain_ids(Y)[0]
    assert d.tolist() == pytest.approx([sig(2.5) - sig(1.0), sig(2.5) - sig(0.5), 0.0])
    assert text_lr.reference_shares("reference").tolist() == [0.0, 0.0, 0.0]


def test_tau_ceiling_counts_the_ground_truths_ties():
    assert cfm.tau_ceiling([1.0, 1.0, 0.5, 0.2]) == pytest.approx(5 / 6)
    six = [1.0, 1.0, 0.65, 0.23, 0.32, 0.07]                        # Omission tied with LR
    assert cfm.tau_ceiling(six) == pytest.approx(14 / 15)
    assert cfm.kendall_tau(np.arange(6.0), six) <= cfm.tau_ceiling(six)
    assert cfm.kendall_tau(np.array([6, 5, 4, 2, 3, 1.0]), six) == pytest.approx(14 / 15)
    assert cfm.tau_ceiling([0.1, 0.2, 0.3]) == 1.0


def test_min_flip_distance_is_the_margin_over_the_weight_norm(lr_ref):
    # z = -1.25; one feature: |z| / |w_j|; two: |z| / sqrt(w_0^2 + w_1^2); nothing selected: NaN
    d = cfm.min_flip_distance(lr_ref, np.repeat(XB, 3, 0), np.array([[0, -1], [0, 1], [-1, -1]]))
    assert d[0] == pytest.approx(1.25 / 2) and d[1] == pytest.approx(1.25 / np.sqrt(5)) and np.isnan(d[2])
    # Algorithm 2 that flips lands no closer than the bound
    cf = cfm.continuous_counterfactuals(lr_ref, XB, np.array([[0]]), np.array([0]), alpha=50.0, steps=300)
    assert cf.flipped[0] and cf.dist[0] >= 1.25 / 2 - 1e-6


# ------------------------------------------------------------------------------------------- tables
GT = dict(zip(runner.PAPER_ORDER, (0.07, 0.10, 0.65, 0.23, 0.32, 1.0)))


def _res(seeds=(1, 2, 3)) -> pd.DataFrame:
    """Per seed: ground_truth (the default reading) and ground_truth_<reading>, c_disc = GT plus seed noise,
    comp_del reversed, the LR and Omission variants."""
    rng = np.random.default_rng(0)
    rows = []
    names = (*runner.PAPER_ORDER, "omission_zero", "omission_train_mean", "logistic_regression_zero",
             "logistic_regression_train_mean")
    for s in seeds:
        for e in names:
            g = GT.get(e, {"omission_zero": 0.3, "omission_train_mean": 0.2}.get(e, 0.9))
            # zero reading: Omission (on Adult deletion is the zero embedding) is the LR (1.0)
            gz = {"omission": 1.0, "omission_zero": 1.0, "logistic_regression_zero": 1.0}.get(
                e, 0.5 if e == "logistic_regression" else g)
            vals = {"ground_truth": g, "ground_truth_reference": g, "ground_truth_zero": gz,
                    "ground_truth_train_mean": g if e != "logistic_regression_train_mean" else 1.0,
                    "c_disc": g + rng.normal(0, 0.01), "comp_del": 1 - g + 0.01 * s, "suff_del": 1 - g}
            rows += [{"dataset": "adult", "seed": s, "selection": "supporting", "explainer": e, "k": 1,
                      "metric": m, "value": v} for m, v in vals.items()]
    return pd.DataFrame(rows)


def test_per_seed_tables_aggregate_to_the_committed_ones():
    res = _res()
    sc, scs = T.scores_table(res, 1, runner.PAPER_ORDER), T.scores_seeds_table(res, 1, runner.PAPER_ORDER)
    keys = ["dataset", "selection", "k", "metric", "explainer"]
    again = aggregate_seeds(scs, keys, value="ours").rename(columns={"ours": "m", "ours_std": "s"})
    both = sc.merge(again, on=keys)
    assert len(both) == len(sc) == len(scs) / 3 and scs["ours_std"].isna().all()
    assert np.allclose(both["ours"], both["m"]) and np.allclose(both["ours_std"].astype(float), both["s"].astype(float))
    co, cos = T.table2(res), T.table2(res, per_seed=True)
    keys = ["dataset", "selection", "k", "explainers", "metric", "statistic"]
    again = aggregate_seeds(cos, keys, value="ours").rename(columns={"ours": "m", "ours_std": "s"})
    both = co.merge(again, on=keys)
    assert len(both) == len(co) and np.allclose(both["ours"], both["m"]) and np.allclose(both["ours_std"].astype(float), both["s"].astype(float))
    assert (co["tau_ceiling"] == 1.0).all()                          # no tie in GT


def test_readings_tables_swap_the_lr_and_pick_the_best_metrics():
    res = _res()
    g = T.ground_truth_readings_table(res)
    cell = lambda r, e: g[(g["ground_truth"] == r) & (g["explainer"] == e)].iloc[0]  # noqa: E731
    assert cell("zero", "logistic_regression")["ours"] == 1.0 and cell("zero", "omission")["ours"] == 1.0
    assert cell("reference", "omission")["ours"] == pytest.approx(0.10)
    assert cell("reference", "omission")["paper"] == pytest.approx(0.1033)
    assert cell("reference", "omission_zero")["paper"] == pytest.approx(0.1033)
    # a dataset without the LR variants (the de-duplicated Adult) has only the default reading
    dedup = res[~res["explainer"].str.startswith("logistic_regression_")].assign(dataset="adult_dedup")
    g2 = T.ground_truth_readings_table(pd.concat([res, dedup], ignore_index=True))
    assert set(g2[g2["dataset"] == "adult_dedup"]["ground_truth"]) == {"reference"}
    t = T.ground_truth_correlations_table(res)
    tau = t[t["statistic"] == "kendall_tau"]
    ref = tau[tau["ground_truth"] == "reference"].set_index("metric")
    # reference: c_disc follows GT up to noise 0.01 (tau 1), comp_del reversed (-1), suff_del agrees (1)
    assert ref.loc["c_disc", "ours"] == pytest.approx(1.0) and ref.loc["comp_del", "ours"] == pytest.approx(-1.0)
    assert ref.loc["best_erasure", "best"] == "suff_del" and ref.loc["best_counterfactual", "best"] == "c_disc"
    assert ref.loc["erasure_minus_counterfactual", "ours"] == pytest.approx(0.0)
    # zero: Omission and the LR tie at 1.0 -> ceiling 14/15; every metric's tau drops with the LR variant's
    zero = tau[tau["ground_truth"] == "zero"].set_index("metric")
    assert zero.loc["c_disc", "tau_ceiling"] == pytest.approx(14 / 15)
    assert zero.loc["erasure_minus_counterfactual", "ours"] == pytest.approx(
        zero.loc["best_erasure", "ours"] - zero.loc["best_counterfactual", "ours"])


def _sweep(validity: dict[float, float]) -> pd.DataFrame:
    rows = []
    for s in (1, 2):
        for e in runner.PAPER_ORDER:
            g = GT[e]
            rows.append({"dataset": "rt-polarity", "seed": s, "alpha": np.nan, "steps": np.nan, "explainer": e,
                         "metric": "ground_truth", "value": g})
            for a, v in validity.items():
                for m, val in (("validity_cont", v + (0.01 * g if s == 1 else -0.01 * g)), ("c_cont", -g),
                               ("proximity_cont", 1.5)):
                    rows.append({"dataset": "rt-polarity", "seed": s, "alpha": a, "steps": 100, "explainer": e,
                                 "metric": m, "value": val})
    return pd.DataFrame(rows)


def test_sweep_table_and_the_alpha_criterion():
    t = T.sweep_table(_sweep({1.0: 0.3, 50.0: 0.88, 1000.0: 0.99}))
    v = t[(t["metric"] == "validity_cont") & (t["statistic"] == "mean_over_explainers")].set_index("alpha")
    assert v.loc[50.0, "ours"] == pytest.approx(0.88) and v.loc[50.0, "paper_min"] == pytest.approx(0.8743)
    tau = t[(t["statistic"] == "kendall_tau")].set_index(["alpha", "metric"])
    assert tau.loc[(1.0, "c_cont"), "ours"] == pytest.approx(-1.0)          # C ranks GT upside down
    assert tau.loc[(1.0, "validity_cont"), "ours_std"] == pytest.approx(np.std([1.0, -1.0], ddof=1))
    assert tau.loc[(1.0, "c_cont"), "paper"] == pytest.approx(0.8666)
    assert T.choose_alpha(t)[0] == 50.0                                     # the smallest alpha with >= 0.8743
    low = T.sweep_table(_sweep({1.0: 0.3, 50.0: 0.6, 1000.0: 0.5}))
    alpha, why = T.choose_alpha(low)
    assert alpha == 50.0 and why.startswith("no alpha reaches")
