"""Ge et al. protocol conventions on a hand-built logistic regression where the right answer is known:
supporting-only feature selection, abstentions scored as failed counterfactuals, Algorithm 1's
first-flip rule, Omission's removal, the paper's "not computed" cells, and the result store keyed on
the full configuration."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from xaibench.evaluation.cf_faithfulness import metrics as cfm
from xaibench.evaluation.cf_faithfulness import runner
from xaibench.evaluation.cf_faithfulness import tables as T
from xaibench.explainers.feature import make_feature_explainer

from tests.test_cf_faithfulness import hand_lr, sig  # the hand-built logistic regression shared by both


X1 = np.array([[2, 4, 6]])  # all b: z = 2 - 1 + 0.5 - 0.4 = 1.1 -> class 1


@pytest.fixture()
def lr3():
    # z = -0.4 + 2 e(f0) - e(f1) + 0.5 e(f2); value a embeds to 0, b to 1 (ids 1/2, 3/4, 5/6)
    return hand_lr({1: 0.0, 2: 1.0, 3: 0.0, 4: 1.0, 5: 0.0, 6: 1.0})


# ---------------------------------------------------------------------------------- selection
def test_supporting_selection_picks_the_features_that_push_towards_the_prediction(lr3):
    X = np.array([[2, 4, 6],     # z = 1.1 -> class 1; shares (2, -1, 0.5): f1 argues against
                  [1, 4, 5]])    # z = -1.4 -> class 0; shares (0, -1, 0): only f1 supports class 0
    assert lr3.proba_ids(X).argmax(1).tolist() == [1, 0]
    assert cfm.ground_truth_selection(lr3, X, 2).tolist() == [[0, 2], [1, -1]]
    assert cfm.ground_truth_selection(lr3, X, 2, "absolute").tolist() == [[0, 1], [1, -1]]
    # the LR's own explanation (signed towards the explained class) selects exactly the ground truth
    S = make_feature_explainer("logistic_regression").fit(lr3).explain_ids(X)
    for sel in cfm.SELECTIONS:
        for k in (1, 2):
            assert np.array_equal(cfm.top_k(S, X, k, sel), cfm.ground_truth_selection(lr3, X, k, sel))
    # row 0, K = 2: the |score| rule takes f1, which pushes the prediction the other way
    assert 1 in cfm.top_k(S, X, 2, "absolute")[0] and 1 not in cfm.top_k(S, X, 2)[0]
    with pytest.raises(ValueError, match="selection must be one of 'supporting', 'absolute'; got 'abs'"):
        cfm.top_k(S, X, 1, "abs")


# ---------------------------------------------------------------------------------- abstentions
def test_an_abstention_counts_as_a_failed_counterfactual(lr3):
    X = np.vstack([X1, X1])                     # z = 1.1, class 1
    sel = np.array([[0], [-1]])                 # row 0: f0 (flips, sqrt(2) one-hot); row 1: abstains
    t = np.array([1, 1])
    cf = cfm.discrete_counterfactuals(lr3, X, sel, t)
    assert cf.abstained.tolist() == [False, True]
    d0 = sig(1.1) - sig(-0.9)
    fail = cfm.counterfactual_scores(cf, "disc")
    assert fail["validity_disc"] == pytest.approx(0.5)              # the abstention counts as no flip
    assert fail["proximity_disc"] == pytest.approx(np.sqrt(2))      # over the answered row
    assert fail["c_disc"] == pytest.approx(0.5 / np.sqrt(2))        # Validity / Proximity
    assert fail["validity_soft_disc"] == pytest.approx(d0 / 2)
    assert fail["c_soft_disc"] == pytest.approx(d0 / 2 / 1.0)
    skip = cfm.counterfactual_scores(cf, "disc", abstention="skip")
    assert skip["c_disc"] == pytest.approx(1 / np.sqrt(2))          # C on the answered row only
    assert skip["c_soft_disc"] == pytest.approx(d0)
    # an explainer that answers both rows with f0 has C = 1 / sqrt(2): the abstainer no longer ties it
    full = cfm.counterfactual_scores(cfm.discrete_counterfactuals(lr3, X, np.array([[0], [0]]), t), "disc")
    assert full["c_disc"] == pytest.approx(1 / np.sqrt(2)) and full["c_disc"] > fail["c_disc"]
    ev = cfm.evaluate_selection(lr3, X, sel, np.array([[0], [0]]), continuous=False)
    assert ev["abstentions"] == 1.0 and ev["c_disc"] == pytest.approx(0.5 / np.sqrt(2))
    # the continuous search scores abstentions the same way
    cc = cfm.continuous_counterfactuals(lr3, X, sel, t, steps=5, init_std=0.0)
    sc = cfm.counterfactual_scores(cc, "cont")
    assert sc["proximity_cont"] == pytest.approx(cc.dist[0])
    assert sc["c_cont"] == pytest.approx(cc.flipped[0] / 2 / cc.dist[0])
    with pytest.raises(ValueError, match="abstention must be one of"):
        cfm.counterfactual_scores(cf, "disc", abstention="ignore")


def test_abstentions_table_counts_rows_without_a_selection():
    rows = []
    for s in (1, 2):
        rows.append({"dataset": "adult", "seed": s, "selection": "", "explainer": "", "k": 0,
                     "metric": "n_explained", "value": 10.0})
        for e, n in (("decision_boundary", 3.0 if s == 1 else 1.0), ("logistic_regression", 0.0)):
            rows.append({"dataset": "adult", "seed": s, "selection": "supporting", "explainer": e, "k": 1,
                         "metric": "abstentions", "value": n})
    t = T.abstentions_table(pd.DataFrame(rows))
    db = t[t["explainer"] == "decision_boundary"].iloc[0]
    assert db["ours"] == 2.0 and db["abstentions_total"] == 4 and np.isnan(db["paper"])
    assert db["rows_explained_total"] == 20 and db["share"] == pytest.approx(0.2)
    assert t[t["explainer"] == "logistic_regression"]["abstentions_total"].iloc[0] == 0


# ---------------------------------------------------------------------------------- Algorithm 1
def test_algorithm1_returns_the_first_flip_and_the_largest_drop_only_when_nothing_flips():
    # f0: a (0), b (0.5), c (3), weight -1; z = 1.1 at f0 = a: b gives z = 0.6 (no flip), c gives z = -1.9
    m = hand_lr({1: 0.0, 2: 0.5, 3: 3.0, 4: 0.0, 5: 1.0, 6: 0.0, 7: 1.0},
                w=(-1.0, 1.0, 1.0), b=-0.9, values=[["a", "b", "c"], ["a", "b"], ["a", "b"]])
    X = np.array([[1, 5, 7]])
    t = np.array([1])
    # K = 2, f0 x f1 in order (a,a) z=0.1, (b,a) z=-0.4 flips first, (b,b), (c,a) z=-2.9 largest drop, (c,b)
    first = cfm.discrete_counterfactuals(m, X, np.array([[0, 1]]), t)
    assert first.X_cf.tolist() == [[2, 4, 7]] and first.p_cf[0] == pytest.approx(sig(-0.4))
    largest = cfm.discrete_counterfactuals(m, X, np.array([[0, 1]]), t, rule="max_drop")
    assert largest.X_cf.tolist() == [[3, 4, 7]] and largest.p_cf[0] == pytest.approx(sig(-2.9))
    # nothing flips when only f2 is searched (z = 0.1): both rules return the largest drop
    for rule in cfm.RULES:
        cf = cfm.discrete_counterfactuals(m, X, np.array([[2]]), t, rule=rule)
        assert cf.X_cf.tolist() == [[1, 5, 6]] and not cf.flipped[0]
    # Validity_soft differs with the rule: the paper's rule stops at the first flip
    vs = {r: cfm.counterfactual_scores(cfm.discrete_counterfactuals(m, X, np.array([[0, 1]]), t, rule=r),
                                       "disc")["validity_soft_disc"] for r in cfm.RULES}
    assert vs["first_flip"] == pytest.approx(sig(1.1) - sig(-0.4))
    assert vs["max_drop"] == pytest.approx(sig(1.1) - sig(-2.9))
    with pytest.raises(ValueError, match="rule must be one of 'first_flip', 'max_drop'; got 'best'"):
        cfm.discrete_counterfactuals(m, X, np.array([[0]]), t, rule="best")


# ---------------------------------------------------------------------------------- Omission
def test_omission_removal_zero_vs_training_mean(lr3):
    train = np.array([[1, 3, 5], [2, 4, 6]] * 5)       # every feature's mean embedding is 0.5
    zero = make_feature_explainer("omission").fit(lr3, train).explain_ids(X1)
    mean = make_feature_explainer("omission", removal="train_mean").fit(lr3, train).explain_ids(X1)
    p = sig(1.1)
    # zero: removing f_j's share; train mean: the share of value b (1) replaced by that of 0.5
    assert zero[0].tolist() == pytest.approx([p - sig(-0.9), p - sig(2.1), p - sig(0.6)])
    assert mean[0].tolist() == pytest.approx([p - sig(0.1), p - sig(1.6), p - sig(0.85)])
    assert runner.explainer_spec("omission_train_mean") == ("omission", {"removal": "train_mean"})
    with pytest.raises(ValueError, match="removal must be one of 'delete', 'zero', 'train_mean'; got 'mean'"):
        make_feature_explainer("omission", removal="mean")


# ---------------------------------------------------------------------------------- paper cells
def test_cells_the_paper_did_not_compute_are_empty():
    from xaibench.tables import paper_values

    t2 = paper_values("cf_faithfulness", paper_table="Table 2")
    not_computed = [("adults", "comp_mask"), ("adults", "suff_mask"), ("adults", "c_cont"), ("movie_reviews", "c_disc")]
    for d, m in not_computed:
        cells = t2[(t2["dataset"] == d) & (t2["metric"] == m)]
        assert len(cells) == 2 and cells["value"].isna().all(), (d, m)
    assert not (t2["value"] == 0).any()
    # our Adult discrete C_soft sits beside the paper's Adults C_soft (printed "(cont.)")
    assert T.paper_key("Table 2", "adult", "c_soft_disc") == "c_soft_cont"
    assert T.paper_key("Table 2", "adult", "c_soft_cont") == ""
    assert T.paper_key("Table 3", "adult", "c_soft_disc") == "c_soft_cont"


# ---------------------------------------------------------------------------------- run config, store
def test_default_rows_equal_the_notebooks():
    nb = json.load(open(runner.paths.project_root() / "notebooks" / "23_counterfactual_faithfulness.ipynb"))
    params = "".join(nb["cells"][1]["source"])
    ns: dict = {}
    exec(params, ns)
    assert runner.RunConfig().n_explain == ns["n_explain"] == runner.N_EXPLAIN
    with pytest.raises(ValueError, match="selections must be one of"):
        runner.RunConfig(selections=("supporting", "signed"))


def test_result_store_is_keyed_on_the_full_configuration(tmp_path, monkeypatch):
    monkeypatch.setattr(runner.paths, "results_dir", lambda: tmp_path)
    calls = []

    def fake_run_seed(name, seed, cfg):
        calls.append((name, seed, tuple(cfg.explainers), tuple(cfg.ks), dict(runner.EXPLAINER_KWARGS)))
        return pd.DataFrame([{"dataset": name, "seed": seed, "selection": "", "explainer": e, "k": 1,
                              "metric": "marker", "value": float(len(calls))} for e in cfg.explainers])

    monkeypatch.setattr(runner, "run_seed", fake_run_seed)
    cfg = runner.RunConfig(explainers=("random", "lime"))
    first = runner.run(["adult"], [1], cfg)
    assert len(calls) == 1 and set(first["value"]) == {1.0}
    again = runner.run(["adult"], [1], runner.RunConfig(explainers=("random", "lime")))
    assert len(calls) == 1 and again.equals(first)                   # same configuration: stored
    # another explainer list, other ks, another selection, rule or explainer setting: recomputed
    other = runner.run(["adult"], [1], runner.RunConfig(explainers=("random", "lime", "anchor")))
    assert len(calls) == 2 and set(other["explainer"]) == {"random", "lime", "anchor"}
    assert set(runner.run(["adult"], [1], runner.RunConfig(explainers=("random", "lime"), ks=(1,)))["value"]) == {3.0}
    runner.run(["adult"], [1], runner.RunConfig(explainers=("random", "lime"), selections=("absolute",)))
    runner.run(["adult"], [1], runner.RunConfig(explainers=("random", "lime"), rule="max_drop"))
    assert len(calls) == 5
    monkeypatch.setitem(runner.EXPLAINER_KWARGS, "lime", {"num_samples": 500})
    changed = runner.run(["adult"], [1], cfg)
    assert len(calls) == 6 and set(changed["value"]) == {6.0}        # not the stale first entry
    keys = {runner.store_config("adult", 1, c)["explainers"][1]["kwargs"].get("num_samples") for c in (cfg,)}
    assert keys == {500}
    # compute=False returns only what is stored for exactly this configuration
    with pytest.raises(FileNotFoundError):
        runner.run(["adult"], [1], runner.RunConfig(explainers=("random",)), compute=False)


def test_models_are_trained_with_the_seed_and_pinned_threads(monkeypatch):
    import torch

    from xaibench.data.feature_data import FeatureDataset, FeatureSpec
    from xaibench.device import thread_count

    rng = np.random.default_rng(0)
    spec = FeatureSpec("tabular", ["f0", "f1"], values=[["a", "b"], ["a", "b"]])
    X = rng.integers(0, 2, size=(60, 2)) + spec.offsets[None, :]
    ds = FeatureDataset("toy", spec, X.astype(np.int64), (X[:, 0] == spec.offsets[0] + 1).astype(np.int64))
    monkeypatch.setitem(runner.DATASETS, "toy", ({}, {"emb_dim": 2, "lr": 1e-2}))
    monkeypatch.setattr(runner, "load_dataset", lambda name: ds)
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(thread_count() + 1)
        m1, _ = runner.train_model("toy", 3, epochs=2)
        assert torch.get_num_threads() == thread_count()
        np.random.seed(123)                                          # disturbed global state
        m2, _ = runner.train_model("toy", 3, epochs=2)
        assert np.array_equal(m1.weights, m2.weights)
    finally:
        torch.set_num_threads(old)


def test_omission_removal_table_swaps_the_variant_into_omissions_place():
    from xaibench.evaluation.cf_faithfulness.runner import PAPER_ORDER

    gt = dict(zip(PAPER_ORDER, (0.0, 0.1, 0.2, 0.3, 0.4, 1.0)))   # Omission 2nd worst by GroundTruth
    variants = {"omission_zero": 0.35, "omission_train_mean": 0.35}  # the variants: between Anchor and DB
    rows = []
    for s in (1, 2):
        for e in (*PAPER_ORDER, *variants):
            g = gt.get(e, variants.get(e))
            c = {"omission_zero": 0.9}.get(e, g)                     # zero-removal Omission: C says best after LR
            for m, v in (("ground_truth", g), ("c_disc", c)):
                rows.append({"dataset": "adult", "seed": s, "selection": "supporting", "explainer": e, "k": 1,
                             "metric": m, "value": v})
    other = [{**r, "dataset": "adult_dedup"} for r in rows if r["explainer"] != "omission_train_mean"]
    t = T.omission_removal_table(pd.DataFrame(rows + other))
    assert set(t["dataset"]) == {"adult"}                            # the variant did not run on adult_dedup
    z = t[(t["metric"] == "c_disc") & (t["removal"] == "zero")].iloc[0]
    m = t[(t["metric"] == "c_disc") & (t["removal"] == "train_mean")].iloc[0]
    d = t[(t["metric"] == "c_disc") & (t["removal"] == "delete")].iloc[0]
    assert z["ours"] == pytest.approx(0.9) and z["rank"] == 2 and m["ours"] == pytest.approx(0.35) and m["rank"] == 3
    assert d["ours"] == pytest.approx(0.1) and d["rank"] == 5
    # zero: Omission (GT 3rd, 0.35) ranked 2nd by C passes DB: 1 discordant pair of 15; train mean: none
    assert z["tau"] == pytest.approx((15 - 2 * 1) / 15) and m["tau"] == pytest.approx(1.0)
    g = t[(t["metric"] == "ground_truth") & (t["removal"] == "train_mean")].iloc[0]
    assert g["ours"] == pytest.approx(0.35)
