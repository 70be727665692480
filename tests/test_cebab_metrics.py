"""Known-value tests for the CEBaB metrics (xaibench.evaluation.cebab)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from xaibench.evaluation.cebab import metrics as cb

from tests.helpers.basic_models import TablePredictor


# ----------------------------------------------------------------------------------------------
# distances
# ----------------------------------------------------------------------------------------------
def test_l2_known_values():
    assert cb.l2_distance([0.1, -0.1], [0.0, 0.0]) == pytest.approx(math.sqrt(0.02))
    assert cb.l2_distance([1.0, 2.0, 3.0], [1.0, 0.0, 3.0]) == pytest.approx(2.0)
    rows = cb.l2_distance(np.array([[3.0, 4.0], [0.0, 0.0]]), np.zeros((2, 2)))
    np.testing.assert_allclose(rows, [5.0, 0.0])


def test_cosine_known_values():
    assert cb.cosine_distance([0.0, 0.0], [0.3, -0.1]) == 1.0  # zero vector -> 1 by definition
    assert cb.cosine_distance([0.3, -0.1], [0.0, 0.0]) == 1.0
    assert cb.cosine_distance([0.0, 0.0], [0.0, 0.0]) == 1.0
    assert cb.cosine_distance([0.2, -0.2], [0.4, -0.4]) == pytest.approx(0.0, abs=1e-12)
    assert cb.cosine_distance([0.2, -0.2], [-0.1, 0.1]) == pytest.approx(2.0)
    assert cb.cosine_distance([1.0, 0.0], [0.0, 1.0]) == pytest.approx(1.0)
    # 45 degrees: 1 - cos(pi/4)
    assert cb.cosine_distance([1.0, 0.0], [1.0, 1.0]) == pytest.approx(1 - math.sqrt(0.5))


def test_rounding_conventions_on_hand_made_vectors():
    """The authors' convention (true ICaCE rounded to 4 decimals, estimate not) vs both rounded vs
    unrounded, computed by hand."""
    near_zero, b = [3e-5, -2e-5], [0.1, -0.1]
    # a near-zero TRUE effect rounds to the zero vector -> cosine distance 1 by definition
    assert cb.cosine_distance(near_zero, b) == 1.0
    assert cb.cosine_distance(near_zero, b, rounding=4) == 1.0
    # a near-zero ESTIMATE is not rounded: cos = (3e-6 + 2e-6) / (sqrt(13)e-5 * sqrt(2)e-1) = 5 / sqrt(26)
    assert cb.cosine_distance(b, near_zero) == pytest.approx(1 - 5 / math.sqrt(26))
    # ... unless the estimate is rounded too (the convention this project used before)
    assert cb.cosine_distance(b, near_zero, round_estimate=True) == 1.0
    # unrounded, the near-zero true effect has a direction as well
    assert cb.cosine_distance(near_zero, b, rounding=None) == pytest.approx(1 - 5 / math.sqrt(26))
    # a vector of norm <= 1e-12 is zero in the unrounded convention too
    assert cb.cosine_distance([1e-13, 0.0], b, rounding=None) == 1.0
    # l2 / normdiff see the rounded true entries: 0.12344 -> 0.1234, 0.00004 -> 0
    assert cb.l2_distance([0.12344, 0.5], [0.0, 0.0]) == pytest.approx(math.sqrt(0.1234 ** 2 + 0.25))
    assert cb.l2_distance([0.0, 0.0], [0.12344, 0.5]) == pytest.approx(math.sqrt(0.12344 ** 2 + 0.25))
    assert cb.l2_distance([0.0, 0.0], [0.12344, 0.5], round_estimate=True) == pytest.approx(math.sqrt(0.1234 ** 2 + 0.25))
    assert cb.l2_distance([0.12344, 0.5], [0.0, 0.0], rounding=None) == pytest.approx(math.sqrt(0.12344 ** 2 + 0.25))
    assert cb.normdiff_distance([4e-5, 0.0], [0.0, 0.0]) == 0.0
    assert cb.normdiff_distance([0.0, 0.0], [4e-5, 0.0]) == pytest.approx(4e-5)
    assert cb.normdiff_distance([4e-5, 0.0], [0.0, 0.0], rounding=None) == pytest.approx(4e-5)
    # Eq. 3 over two pairs: (1 + 0) / 2 rounded, ((1 - 5/sqrt 26) + 0) / 2 unrounded
    t, e = np.array([near_zero, [0.2, 0.1]]), np.array([b, [0.4, 0.2]])
    assert cb.icace_error(t, e, "cosine") == pytest.approx(0.5)
    assert cb.icace_error(t, e, "cosine", rounding=None) == pytest.approx((1 - 5 / math.sqrt(26)) / 2)
    # swapped roles: the near-zero vector is the estimate, kept under the authors' convention
    assert cb.icace_error(e, t, "cosine") == pytest.approx((1 - 5 / math.sqrt(26)) / 2)
    assert cb.icace_error(e, t, "cosine", round_estimate=True) == pytest.approx(0.5)


def test_recompute_metrics_follows_the_convention():
    pp = pd.DataFrame({"icace": [np.array([0.1, -0.1])], "estimate": [np.array([3e-5, -2e-5])],
                       "cosine": [0.123], "l2": [0.0], "normdiff": [0.0]})
    authors = cb.recompute_metrics(pp)
    assert authors.loc[0, "cosine"] == pytest.approx(1 - 5 / math.sqrt(26))
    assert authors.loc[0, "l2"] == pytest.approx(math.sqrt((0.1 - 3e-5) ** 2 + (0.1 - 2e-5) ** 2))
    assert authors.loc[0, "rounding"] == 4 and not authors.loc[0, "round_estimate"]
    both = cb.recompute_metrics(pp, round_estimate=True)
    assert both.loc[0, "cosine"] == 1.0 and both.loc[0, "round_estimate"]
    assert pp.loc[0, "cosine"] == 0.123  # the input is not modified


def test_recompute_metrics_mixes_tasks_of_different_class_counts():
    """Binary (2-vector) and 3-class rows in one table: each row gets its own distances."""
    pp = pd.DataFrame({"icace": [np.array([0.3, -0.3]), np.array([0.0, 0.6, -0.6]), np.array([0.1, 0.0])],
                       "estimate": [np.array([0.0, 0.4]), np.array([0.0, 0.6, -0.6]), np.array([0.1, 0.0])]})
    out = cb.recompute_metrics(pp)
    np.testing.assert_allclose(out["l2"], [math.sqrt(0.09 + 0.49), 0.0, 0.0])
    np.testing.assert_allclose(out["cosine"], [1 - (-0.12) / (math.sqrt(0.18) * 0.4), 0.0, 0.0], atol=1e-12)
    bad = pd.DataFrame({"icace": [np.array([0.1, 0.2])], "estimate": [np.array([0.1, 0.2, 0.3])]})
    with pytest.raises(ValueError, match="differ in shape"):
        cb.recompute_metrics(bad)


def test_normdiff_known_values():
    assert cb.normdiff_distance([3.0, 4.0], [0.0, 1.0]) == pytest.approx(4.0)
    assert cb.normdiff_distance([0.1, -0.1], [-0.1, 0.1]) == pytest.approx(0.0)  # ignores direction
    assert cb.normdiff_distance([0.1, -0.1], [0.0, 0.0]) == pytest.approx(math.sqrt(0.02))


def test_distance_shape_errors():
    with pytest.raises(ValueError, match="same shape"):
        cb.l2_distance([1.0, 2.0], [1.0, 2.0, 3.0])


def test_metrics_registry():
    assert set(cb.METRICS) == {"l2", "cosine", "normdiff"}
    assert all(m.lower_is_better for m in cb.METRICS.values())
    assert cb.METRICS["cosine"].fn([0, 0], [1, 0]) == 1.0
    with pytest.raises(KeyError, match="unknown metric"):
        cb.icace_error([[0.0, 0.0]], [[0.0, 0.0]], dist="l1")


# ----------------------------------------------------------------------------------------------
# effects
# ----------------------------------------------------------------------------------------------
def test_icace_and_error():
    p_base = np.array([[0.7, 0.3], [0.5, 0.5]])
    p_cf = np.array([[0.2, 0.8], [0.5, 0.5]])
    t = cb.icace(p_base, p_cf)
    np.testing.assert_allclose(t, [[-0.5, 0.5], [0.0, 0.0]])
    est = np.array([[-0.5, 0.5], [0.1, -0.1]])
    # pair 1 exact (0), pair 2: L2 = sqrt(0.02); mean = sqrt(0.02)/2
    assert cb.icace_error(t, est, "l2") == pytest.approx(math.sqrt(0.02) / 2)
    # cosine: pair 1 -> 0, pair 2 true vector is zero -> 1; mean 0.5
    assert cb.icace_error(t, est, "cosine") == pytest.approx(0.5)
    # normdiff: pair 1 -> 0, pair 2 -> |0 - sqrt(0.02)|
    assert cb.icace_error(t, est, "normdiff") == pytest.approx(math.sqrt(0.02) / 2)


def test_cace_vector_and_scalar():
    v = np.array([[0.1, -0.1, 0.0], [0.3, -0.2, -0.1]])
    np.testing.assert_allclose(cb.cace(v), [0.2, -0.15, -0.05])
    p_base = np.array([[0.6, 0.3, 0.1, 0.0], [0.0, 0.1, 0.8, 0.1]])   # argmax 0, 2
    p_cf = np.array([[0.0, 0.1, 0.2, 0.7], [0.1, 0.1, 0.7, 0.1]])     # argmax 3, 2
    assert cb.cace_scalar(p_base, p_cf, "argmax") == pytest.approx(1.5)
    # expected index: base 0.5, 2.0 ; cf 2.6, 1.8 -> deltas 2.1, -0.2 -> mean 0.95
    assert cb.cace_scalar(p_base, p_cf, "expected") == pytest.approx(0.95)
    with pytest.raises(ValueError, match="mode"):
        cb.cace_scalar(p_base, p_cf, "median")


def test_acace_known_value():
    caces = {("Negative", "Positive"): [0.2, -0.2], ("Positive", "Negative"): [-0.2, 0.2],
             ("Negative", "unknown"): [0.1, -0.3]}
    np.testing.assert_allclose(cb.acace(caces), [0.15, 0.25])
    with pytest.raises(ValueError, match="does not change"):
        cb.acace({("unknown", "unknown"): [0.0]})


def _pairs() -> pd.DataFrame:
    rows = [
        # aspect, base_value, cf_value, base_label, cf_label, base_text, cf_text
        ("food", "Negative", "Positive", 0, 4, "b1", "c1"),
        ("food", "Negative", "Positive", 1, 3, "b2", "c2"),
        ("food", "Positive", "unknown", 4, 3, "b3", "c3"),
        ("service", "Negative", "unknown", 2, -1, "b4", "c4"),
        ("service", "Negative", "unknown", 1, 2, "b5", "c5"),
    ]
    df = pd.DataFrame(rows, columns=["aspect", "base_value", "cf_value", "base_label", "cf_label", "base_text",
                                     "cf_text"])
    df["split"] = "dev"
    df["original_id"] = [f"o{i}" for i in range(len(df))]
    df["base_id"] = [f"b{i}" for i in range(len(df))]
    df["cf_id"] = [f"c{i}" for i in range(len(df))]
    df["direction"] = [cb.direction_name(b, c) for b, c in zip(df.base_value, df.cf_value)]
    for a in cb.ASPECTS:
        df[f"base_{a}_majority"] = "unknown"
    return df


def test_empirical_ate_known_values():
    from xaibench.data.cebab import empirical_ate

    t = empirical_ate(_pairs(), task="5-way").dropna(subset=["ate"])
    got = {(r.aspect, r.direction): (r.ate, r.n) for r in t.itertuples()}
    assert got[("food", "neg_to_pos")] == (pytest.approx(3.0), 2)       # (4 + 2) / 2
    assert got[("food", "pos_to_unk")] == (pytest.approx(-1.0), 1)
    assert got[("service", "neg_to_unk")] == (pytest.approx(1.0), 1)    # the pair with cf_label -1 is skipped
    assert list(t["aspect"]) == ["food", "food", "service"]
    b = empirical_ate(_pairs(), task="binary").dropna(subset=["ate"])  # 3-star base b4 drops out
    assert {(r.aspect, r.direction): r.n for r in b.itertuples()} == {("food", "neg_to_pos"): 2,
                                                                      ("food", "pos_to_unk"): 1}


def _model() -> TablePredictor:
    return TablePredictor({
        "b1": [0.9, 0.1], "c1": [0.2, 0.8], "b2": [0.6, 0.4], "c2": [0.1, 0.9], "b3": [0.3, 0.7],
        "c3": [0.5, 0.5], "b4": [0.5, 0.5], "c4": [0.5, 0.5], "b5": [0.8, 0.2], "c5": [0.7, 0.3],
    })


class ZeroExplainer:
    name = "zero"

    def explain(self, queries):
        assert "cf_text" not in queries.columns and "cf_value" in queries.columns and "text" in queries.columns
        return np.zeros((len(queries), 2))


def test_true_icace_and_queries():
    pairs, model = _pairs(), _model()
    t = cb.true_icace(model, pairs)
    np.testing.assert_allclose(t[0], [-0.7, 0.7])
    np.testing.assert_allclose(t[3], [0.0, 0.0])
    assert len(model.calls) == 10  # every distinct text once
    q = cb.make_queries(pairs)
    assert "cf_text" not in q.columns and "cf_label" not in q.columns and "cf_id" not in q.columns
    assert list(q["text"]) == list(pairs["base_text"]) and list(q["cf_value"]) == list(pairs["cf_value"])


def test_evaluate_zero_explainer_gives_norms():
    pairs, model = _pairs(), _model()
    per = cb.evaluate_explainer(model, ZeroExplainer(), pairs)
    norms = np.linalg.norm(np.stack(per["icace"]), axis=1)
    np.testing.assert_allclose(per["l2"], norms)
    np.testing.assert_allclose(per["normdiff"], norms)
    np.testing.assert_allclose(per["cosine"], 1.0)
    s = cb.summarize(per)
    assert s.set_index("metric").loc["l2", "value"] == pytest.approx(norms.mean())
    assert set(s["metric"]) == {"l2", "cosine", "normdiff"} and (s["n_pairs"] == 5).all()
    by = cb.summarize(per, by=["aspect"]).set_index(["aspect", "metric"])["value"]
    assert by[("service", "l2")] == pytest.approx(norms[3:].mean())


def test_evaluate_oracle_explainer_is_perfect():
    pairs, model = _pairs(), _model()
    truth = {(b, a, c): np.subtract(model.table[cf], model.table[b])
             for b, a, c, cf in zip(pairs.base_text, pairs.aspect, pairs.cf_value, pairs.cf_text)}

    class Oracle:
        def explain(self, q):
            return np.stack([truth[(t, a, c)] for t, a, c in zip(q.text, q.aspect, q.cf_value)])

    per = cb.evaluate_explainer(model, Oracle(), pairs)
    np.testing.assert_allclose(per["l2"], 0.0, atol=1e-12)
    np.testing.assert_allclose(per["normdiff"], 0.0, atol=1e-12)
    # cosine is 0 except for the pair whose true effect is the zero vector (defined as 1)
    np.testing.assert_allclose(per["cosine"], [0, 0, 0, 1, 0], atol=1e-12)


def test_evaluate_rejects_bad_estimates():
    class Bad:
        def explain(self, q):
            return np.zeros((len(q), 3))

    with pytest.raises(ValueError, match="expected \\(5, 2\\)"):
        cb.evaluate_explainer(_model(), Bad(), _pairs())


def test_cace_tables():
    pairs, model = _pairs(), _model()
    per = cb.evaluate_explainer(model, ZeroExplainer(), pairs)
    ct = cb.cace_table(per).set_index(["aspect", "direction"])
    # food neg->pos: icace [-0.7, 0.7] and [-0.5, 0.5] -> mean [-0.6, 0.6]
    np.testing.assert_allclose(ct.loc[("food", "neg_to_pos"), "cace"], [-0.6, 0.6])
    at = cb.acace_table(per).set_index("aspect")
    # food: |[-0.6, 0.6]| and |[0.2, -0.2]| over two value pairs -> [0.4, 0.4]
    np.testing.assert_allclose(at.loc["food", "acace"], [0.4, 0.4])
    st = cb.cace_scalar_table(model, pairs).set_index(["aspect", "direction"])
    # argmax: b1 0 -> c1 1, b2 0 -> c2 1 => +1 ; b3 1 -> c3 0 (tie -> index 0) => -1
    assert st.loc[("food", "neg_to_pos"), "cace"] == pytest.approx(1.0)
    assert st.loc[("food", "pos_to_unk"), "cace"] == pytest.approx(-1.0)


def test_missing_columns_error():
    with pytest.raises(ValueError, match="cf_text"):
        cb.true_icace(_model(), _pairs().drop(columns=["cf_text"]))
