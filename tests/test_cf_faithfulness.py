"""Counterfactual faithfulness (Ge et al.): every metric on a 3-feature LR computed by hand,
Algorithms 1 and 2, rank correlations against scipy, the Adult preprocessing, the explainers."""
from __future__ import annotations

import numpy as np
import pytest

from xaibench.data.feature_data import FeatureSpec
from xaibench.evaluation.cf_faithfulness import metrics as cfm
from xaibench.models.embedding_lr import EmbeddingLR


def sig(z):
    return 1.0 / (1.0 + np.exp(-z))


def hand_lr(emb: dict[int, float], w=(2.0, -1.0, 0.5), b=-0.4, values=None, spec=None) -> EmbeddingLR:
    """3 features (or ``spec``'s), 1-d embeddings set by hand: z = b + sum_j w_j e(x_j)."""
    import torch

    values = values or [["a", "b"]] * 3
    spec = spec or FeatureSpec("tabular", ["f0", "f1", "f2"], values=[list(v) for v in values])
    m = EmbeddingLR(spec=spec, emb_dim=1)
    with torch.no_grad():
        m.module.embedding.weight.zero_()
        for i, v in emb.items():
            m.module.embedding.weight[i, 0] = v
        m.module.head.linear.weight[:] = torch.tensor([list(w)])
        m.module.head.linear.bias[:] = b
    return m


@pytest.fixture()
def lr3():
    # ids: f0 -> 1 (a), 2 (b); f1 -> 3, 4; f2 -> 5, 6; value a embeds to 0, b to 1
    return hand_lr({1: 0.0, 2: 1.0, 3: 0.0, 4: 1.0, 5: 0.0, 6: 1.0})


X1 = np.array([[2, 4, 6]])  # all b: z = 2 - 1 + 0.5 - 0.4 = 1.1 -> class 1


def test_model_is_the_hand_written_lr(lr3):
    assert lr3.logit_z(X1)[0] == pytest.approx(1.1)
    assert np.allclose(lr3.contributions(X1), [[2.0, -1.0, 0.5]])
    assert lr3.predict_proba([lr3.spec.to_text(X1[0])])[0, 1] == pytest.approx(sig(1.1), abs=1e-6)


def test_ground_truth_and_top_k(lr3):
    assert cfm.ground_truth_selection(lr3, X1, 1).tolist() == [[0]]
    # supporting (default): only shares towards class 1 (2 and 0.5); absolute: |2| > |-1| > |0.5|
    assert cfm.ground_truth_selection(lr3, X1, 2).tolist() == [[0, 2]]
    assert cfm.ground_truth_selection(lr3, X1, 2, "absolute").tolist() == [[0, 1]]
    # padding and zero scores are never selected; missing slots are -1
    assert cfm.top_k(np.array([[0.0, -3.0, 1.0]]), np.array([[0, 4, 6]]), 3, "absolute").tolist() == [[1, 2, -1]]
    assert cfm.top_k(np.array([[0.0, -3.0, 1.0]]), np.array([[0, 4, 6]]), 3).tolist() == [[2, -1, -1]]
    assert cfm.ground_truth_recall(np.array([[2, 1]]), np.array([[0, 1]])).tolist() == [0.5]


def test_erasure_metrics_by_hand(lr3):
    er = cfm.erasure_scores(lr3, X1, np.array([[0]]), np.array([1]), "delete")
    assert er["comp"][0] == pytest.approx(sig(1.1) - sig(-0.9))    # f0 deleted: z = -0.9
    assert er["suff"][0] == pytest.approx(sig(1.1) - sig(1.6))     # only f0 kept: z = 2 - 0.4
    assert er["flip"][0] == 1.0
    er2 = cfm.erasure_scores(lr3, X1, np.array([[2]]), np.array([1]), "delete")
    assert er2["comp"][0] == pytest.approx(sig(1.1) - sig(0.6)) and er2["flip"][0] == 0.0
    with pytest.raises(ValueError, match="only text"):
        cfm.erasure_scores(lr3, X1, np.array([[0]]), np.array([1]), "mask")


def test_counterfactual_metrics_by_hand(lr3):
    X = np.vstack([X1, X1])
    sel = np.array([[0], [2]])          # row 0: f0 (flips), row 1: f2 (does not)
    t = np.array([1, 1])
    cf = cfm.discrete_counterfactuals(lr3, X, sel, t)
    assert cf.X_cf.tolist() == [[1, 4, 6], [2, 4, 5]]
    assert cf.flipped.tolist() == [True, False]
    s = cfm.counterfactual_scores(cf, "disc")
    d0, d1 = sig(1.1) - sig(-0.9), sig(1.1) - sig(0.6)
    assert s["validity_disc"] == pytest.approx(0.5)
    assert s["proximity_disc"] == pytest.approx(np.sqrt(2))        # one-hot distance, one change
    assert s["c_disc"] == pytest.approx(1 / (2 * np.sqrt(2)))       # sum flips / sum distances
    assert s["validity_soft_disc"] == pytest.approx((d0 + d1) / 2)
    assert s["proximity_soft_disc"] == pytest.approx(1.0)           # |e(a) - e(b)| = 1
    assert s["c_soft_disc"] == pytest.approx((d0 + d1) / 2)
    # the whole evaluation for the white box (K = 1) agrees
    ev = cfm.evaluate_selection(lr3, X1, np.array([[0]]), np.array([[0]]), continuous=False)
    assert ev["ground_truth"] == 1.0 and ev["validity_disc"] == 1.0 and ev["dfr"] == 1.0
    assert ev["c_disc"] == pytest.approx(1 / np.sqrt(2))


def test_algorithm1_finds_the_only_flipping_value():
    # f0 has three values; only 'c' (embedding 3, weight -1) pushes z = 1.1 below 0
    m = hand_lr({1: 0.0, 2: 0.2, 3: 3.0, 4: 0.0, 5: 1.0, 6: 0.0, 7: 1.0},
                w=(-1.0, 1.0, 1.0), b=-0.9, values=[["a", "b", "c"], ["a", "b"], ["a", "b"]])
    X = np.array([[1, 5, 7]])           # z = 0 + 1 + 1 - 0.9 = 1.1
    cf = cfm.discrete_counterfactuals(m, X, np.array([[0]]), np.array([1]))
    assert cf.X_cf.tolist() == [[3, 5, 7]] and cf.flipped.tolist() == [True]
    # K = 2 over f0 x f1 (product order (a,a), (b,a), (b,b), (c,a), (c,b)): the first flip is f0 = b,
    # f1 = a (z = -0.2 + 0 + 1 - 0.9 = -0.1); the largest drop is f0 = c with f1 = a
    cf2 = cfm.discrete_counterfactuals(m, X, np.array([[0, 1]]), np.array([1]))
    assert cf2.X_cf.tolist() == [[2, 4, 7]] and cf2.flipped.tolist() == [True]
    cf2m = cfm.discrete_counterfactuals(m, X, np.array([[0, 1]]), np.array([1]), rule="max_drop")
    assert cf2m.X_cf.tolist() == [[3, 4, 7]]
    assert cf2.dist_onehot[0] == pytest.approx(2.0)                 # sqrt(2 * 2 changes)


def test_algorithm2_converges_to_the_linear_optimum(lr3):
    from scipy.optimize import minimize_scalar

    alpha = 4.0
    cf = cfm.continuous_counterfactuals(lr3, X1, np.array([[0]]), np.array([1]), alpha=alpha, steps=3000,
                                        lr=0.01, init_std=0.0)
    # along w0 = 2: z(m) = 1.1 - 2 m; objective m^2 + alpha * sigmoid(z(m)), solved in closed form
    opt = minimize_scalar(lambda mm: mm ** 2 + alpha * sig(1.1 - 2 * mm), bounds=(0, 5), method="bounded")
    assert cf.dist[0] == pytest.approx(opt.x, abs=2e-3)
    assert cf.p_cf[0] == pytest.approx(sig(1.1 - 2 * opt.x), abs=2e-3)
    assert cf.flipped[0] == (1.1 - 2 * opt.x < 0)
    # nothing selected -> nothing moves
    cf0 = cfm.continuous_counterfactuals(lr3, X1, np.array([[-1]]), np.array([1]), steps=50, init_std=0.0)
    assert cf0.dist[0] == 0.0 and not cf0.flipped[0]


def test_rank_correlations_match_scipy():
    from scipy.stats import kendalltau, spearmanr

    rng = np.random.default_rng(0)
    for _ in range(20):
        u, v = rng.normal(size=6), rng.normal(size=6)
        assert cfm.kendall_tau(u, v) == pytest.approx(kendalltau(u, v)[0])
        assert cfm.spearman_rho(u, v) == pytest.approx(spearmanr(u, v)[0])
    # the paper's printed Table 2 values for one swap among six: tau = 13/15, rho = 1 - 6*2/210
    assert cfm.kendall_tau([1, 2, 3, 4, 6, 5], [1, 2, 3, 4, 5, 6]) == pytest.approx(0.8667, abs=1e-4)
    assert cfm.spearman_rho([1, 2, 3, 4, 6, 5], [1, 2, 3, 4, 5, 6]) == pytest.approx(0.9429, abs=1e-4)


def test_spearman_rho_is_exact_with_ties():
    # ranks (1, 2.5, 2.5, 4) vs (1, 2, 3, 4): Pearson of the ranks = 4.5 / sqrt(4.5 * 5) = 3 / sqrt(10);
    # the no-ties shortcut 1 - 6 sum d^2 / (n (n^2 - 1)) would give 1 - 6 * 0.5 / 60 = 0.95
    assert cfm.spearman_rho([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(3 / np.sqrt(10), rel=1e-12)
    # two explainers tied in both rankings (as Omission and the LR's weights on a linear model)
    assert cfm.spearman_rho([0.1, 0.5, 0.5, 0.3, 0.2], [0.0, 1.0, 1.0, 0.4, 0.2]) == pytest.approx(1.0)
    assert cfm.spearman_rho([0.1, 0.5, 0.5, 0.3], [0.1, 0.2, 0.9, 0.9]) == pytest.approx(0.5, rel=1e-12)
    assert np.isnan(cfm.spearman_rho([0.2, 0.2, 0.2], [1, 2, 3]))  # a constant ranking has no rho


def test_metric_directions():
    assert cfm.METRICS["suff_del"].lower_is_better is True
    assert all(cfm.METRICS[m].lower_is_better is False for m in ("comp_del", "dfr", "c_disc", "c_soft_cont",
                                                                 "validity_cont", "ground_truth"))
    assert cfm.ranks(np.array([0.3, 0.1, 0.2]), "suff_del").tolist() == [3, 1, 2]
    ra = cfm.rank_agreement({"a": 0.1, "b": 0.3, "c": 0.2}, {"a": 1.0, "b": 0.0, "c": 0.5}, "suff_del")
    assert ra["kendall_tau"] == pytest.approx(1.0)


def test_feature_explainers_on_the_hand_lr(lr3):
    from xaibench.explainers.feature import make_feature_explainer

    X = np.array([[2, 4, 6], [1, 3, 6], [2, 3, 5]])
    train = np.array([[1, 3, 5], [2, 4, 6], [1, 4, 5], [2, 3, 6]] * 10)
    t = lr3.proba_ids(X).argmax(1)
    lr = make_feature_explainer("logistic_regression").fit(lr3, train).explain_ids(X)
    assert np.allclose(np.abs(lr), np.abs(lr3.contributions(X)))
    om = make_feature_explainer("omission").fit(lr3, train).explain_ids(X)
    p = lr3.proba_ids(X)[np.arange(3), t]
    assert om[0, 0] == pytest.approx(p[0] - lr3.proba_ids(np.array([[0, 4, 6]]))[0, t[0]])
    # Gradient x Input on a linear model with zero padding is the logit share: +-z/2 per class
    gxi = make_feature_explainer("grad_x_input").fit(lr3, train).explain_ids(X)
    assert np.allclose(gxi, lr / 2, atol=1e-6)
    r1 = make_feature_explainer("random").fit(lr3).explain_ids(X)
    assert np.array_equal(r1, make_feature_explainer("random").fit(lr3).explain_ids(X))  # deterministic
    db = make_feature_explainer("decision_boundary", n_samples=500).fit(lr3, train).explain_ids(X[:1])
    assert db[0, 0] > 0                         # the only single edit that flips row 0 is f0
    attrs = make_feature_explainer("lime", num_samples=200).fit(lr3, train).explain([lr3.spec.to_text(X[0])])
    assert attrs[0].tokens == ["f0=b", "f1=b", "f2=b"] and attrs[0].scores.shape == (3,)
    assert abs(attrs[0].scores[0]) == np.abs(attrs[0].scores).max()


def test_text_spec_roundtrip_and_masks():
    spec = FeatureSpec("text", ["w0", "w1", "w2"], vocab=["<pad>", "<unk>", "good", "film"])
    assert spec.from_text("good film").tolist() == [2, 3, 0]
    assert spec.from_text("good UNK zzz extra").tolist() == [2, 1, 1]   # masks and unknown words -> <unk>
    assert spec.to_text([2, 3, 0]) == "good film"
    with pytest.raises(ValueError, match="exhaustive search"):
        spec.candidates(0)


def test_adult_preprocessing_counts_and_anchor_equivalence(tmp_path):
    from xaibench import paths

    raw = paths.raw_dir() / "adult" / "adult.data"
    if not raw.exists():
        pytest.skip("data/raw/adult is missing (run `make data`)")
    from xaibench.data.adult import load_adult

    a = load_adult()
    assert a.X.shape == (15682, 12)
    assert np.bincount(a.y).tolist() == [7841, 7841]
    assert len(np.unique(a.source_rows)) < 15682            # drawn with replacement: repeated records
    assert a.values[2] == ["Associates", "Bachelors", "Doctorate", "Dropout", "High School grad", "Masters",
                           "Prof-School"]
    assert len(a.values[0]) == 4 and len(a.values[10]) == 3  # Age quartiles; Hours has 3 distinct edges
    d = load_adult(replace=False)
    assert len(np.unique(d.source_rows)) == 15682 and np.bincount(d.y).tolist() == [7841, 7841]
    pytest.importorskip("anchor")
    from anchor import utils

    # anchor-exp reads the UCI original (no header line)
    (tmp_path / "adult").mkdir()
    lines = raw.read_text().splitlines(keepends=True)
    (tmp_path / "adult" / "adult.data").write_text("".join(lines[1:] if lines[0].startswith("age,") else lines))
    ref = utils.load_dataset("adult", balance=True, dataset_folder=str(tmp_path) + "/")
    raw_ungrouped = load_adult(grouped=False)
    assert np.array_equal(raw_ungrouped.X, ref.data.astype(int)) and np.array_equal(raw_ungrouped.y, ref.labels)
