"""Known-value tests for the ground-truth attribution framework (Zhou et al. 2022)."""
import math

import numpy as np
import pytest

from xaibench.evaluation import attribution_gt as gt


def test_binary_reassignment_keeps_share_r():
    y = np.array([0, 1] * 5000)
    for r in (0.5, 0.8, 1.0):
        new = gt.reassign_labels_binary(y, r, seed=0)
        kept = (new == y).mean()
        # binomial sd at n=10000 is <= 0.005; 4 sd
        assert abs(kept - r) < 0.02
    assert (gt.reassign_labels_binary(y, 1.0, seed=1) == y).all()
    assert (gt.reassign_labels_binary(y, 0.0, seed=1) == 1 - y).all()


def test_matrix_reassignment_follows_rows():
    R = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]])
    y = np.repeat([0, 1, 2], 4000)
    new = gt.reassign_labels(y, R, seed=3)
    assert (new[y == 0] == 0).all() and (new[y == 1] == 2).all()
    assert set(np.unique(new[y == 2])) == {0, 1}
    assert abs((new[y == 2] == 0).mean() - 0.5) < 0.03
    with pytest.raises(ValueError, match="probability"):
        gt.reassign_labels(y, np.array([[0.5, 0.6], [0.5, 0.5]]))


def test_accuracy_bounds():
    assert gt.accuracy_bound_binary(0.5) == 0.5
    assert gt.accuracy_bound_binary(0.8) == 0.8
    assert gt.accuracy_bound_binary(0.3) == 0.7
    # by hand: (1 + 1 + 0.5) / 3
    R = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]])
    assert gt.accuracy_bound(R) == pytest.approx(2.5 / 3)
    assert gt.accuracy_bound(gt.binary_reassignment_matrix(0.7)) == pytest.approx(0.7)
    assert gt.accuracy_bound(R, prior=[0, 0, 1]) == pytest.approx(0.5)


def test_finite_test_tail():
    # Hoeffding: exp(-2 * 100 * 0.1^2) = exp(-2)
    assert gt.finite_test_tail(100, 0.5, 0.6) == pytest.approx(math.exp(-2))
    assert gt.finite_test_tail(100, 0.5, 0.4) == 1.0
    # exact binomial: P(Bin(4, 0.5) >= 3) = (4 + 1) / 16
    assert gt.finite_test_tail(4, 0.5, 0.75, exact=True) == pytest.approx(5 / 16)
    assert gt.finite_test_tail(4, 0.5, 0.75, exact=True) <= gt.finite_test_tail(4, 0.5, 0.75) + 1e-12


def test_joint_er_and_inside_check():
    a = np.array([1, 0, 0, 0], bool)
    b = np.array([0, 0, 1, 0], bool)
    assert gt.joint_er([a, b, np.zeros(4, bool)]).tolist() == [True, False, True, False]
    orig = np.array(["a", "good", "the", "beer"])
    gt.check_inside_er(orig, np.array(["the", "good", "the", "beer"]), a)
    with pytest.raises(AssertionError, match="outside the ER"):
        gt.check_inside_er(orig, np.array(["a", "bad", "the", "beer"]), a)
    img = np.zeros((2, 2, 3))
    img2 = img.copy(); img2[0, 1, 2] = 5
    assert gt.changed_mask(img, img2).tolist() == [[False, True], [False, False]]


def test_attr_pct_known_values():
    s = np.array([0.5, -0.25, 0.25, 0.0])
    er = np.array([True, True, False, False])
    assert gt.attr_pct(s, er) == pytest.approx(0.75)  # (0.5 + 0.25) / 1.0
    assert math.isnan(gt.attr_pct(np.zeros(4), er))
    assert gt.METRICS["attr_pct"].lower_is_better is False


def test_precision_recall_known_values():
    sel = np.array([1, 1, 1, 0, 0], bool)
    er = np.array([1, 0, 0, 1, 0], bool)
    p, r = gt.precision_recall(sel, er)
    assert p == pytest.approx(1 / 3) and r == pytest.approx(1 / 2)
    assert gt.METRICS["precision"].lower_is_better is False and gt.METRICS["recall"].lower_is_better is False


def test_shapley_values_and_range():
    # v0=0.5, vM=1, vO=0.8, vMO=1: sM = (0.5 + 0.2)/2 = 0.35, sO = (0.3 + 0)/2 = 0.15
    sm, so = gt.shapley_two_player(0.5, 1.0, 0.8, 1.0)
    assert (sm, so) == pytest.approx((0.35, 0.15))
    # range at p = 1: [(2 - 0.5 - r) / 1, 1] = [1.5 - r, 1]
    assert gt.shapley_manipulation_range(0.5, 1.0) == pytest.approx((1.0, 1.0))
    assert gt.shapley_manipulation_range(0.8, 1.0) == pytest.approx((0.7, 1.0))
    assert gt.shapley_manipulation_range(1.0, 1.0) == pytest.approx((0.5, 1.0))
    # the lower end is the Shapley value at v(O) = r, v(M) = p
    sm, so = gt.shapley_two_player(0.5, 0.96, 0.8, 0.96)
    assert gt.shapley_manipulation_range(0.8, 0.96)[0] == pytest.approx(sm / (sm + so))
    with pytest.raises(ValueError):
        gt.shapley_manipulation_range(0.8, 0.5)
