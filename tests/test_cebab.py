"""CEBaB domain model: loading/validation, label schemes, datasets, edit pairs and statistics.

Known values come from the hand-built fixture ``tests/fixtures/cebab_mini`` (counted by hand
below); one fast test checks the real split sizes when the raw data is present.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xaibench.data import cebab as C
from xaibench.data.fetch import DataError

FIXTURE = Path(__file__).parent / "fixtures" / "cebab_mini"


@pytest.fixture(scope="module")
def mini() -> pd.DataFrame:
    return C.load_cebab(root=FIXTURE)


# --------------------------------------------------------------------------------------------
# loading and validation
# --------------------------------------------------------------------------------------------
def test_load_fixture_shape_and_columns(mini):
    assert list(mini.columns) == list(C.COLUMNS)
    assert mini.groupby("split").size().to_dict() == {
        "dev": 6, "test": 2, "train_exclusive": 2, "train_inclusive": 5, "train_observational": 2}
    row = mini[(mini["split"] == "dev") & (mini["id"] == "000001_000001")].iloc[0]
    assert row["text"].startswith("The pasta was superb")
    assert row["review_majority"] == "4" and row["label"] == 3
    assert row["edit_type"] == "food" and row["edit_goal"] == "Positive" and not row["is_original"]
    assert row["noise_majority"] == "" and row["ambiance_majority"] == "unknown"
    assert row["cuisine"] == "italian" and row["rating_overall"] == 4
    orig = mini[(mini["split"] == "dev") & mini["is_original"]].iloc[0]
    assert orig["edit_type"] == "" and orig["edit_goal"] == ""
    nm = mini[mini["id"] == "000003_000000"]
    assert set(nm["label"]) == {-1} and set(nm["food_majority"]) == {"no majority"}


def test_root_may_be_the_version_folder(mini):
    same = C.load_cebab(root=FIXTURE / "CEBaB-v1.1")
    pd.testing.assert_frame_equal(same, mini)


def _copy_fixture(tmp_path: Path) -> Path:
    dest = tmp_path / "cebab"
    shutil.copytree(FIXTURE, dest)
    return dest


def test_missing_required_field_names_file_record_and_field(tmp_path):
    root = _copy_fixture(tmp_path)
    f = root / "CEBaB-v1.1" / "test.json"
    recs = json.loads(f.read_text())
    del recs[1]["description"]
    f.write_text(json.dumps(recs))
    with pytest.raises(DataError) as e:
        C.load_cebab(root=root)
    msg = str(e.value)
    assert "test.json" in msg and "000004_000001" in msg and "'description'" in msg


def test_invalid_labels_are_rejected(tmp_path):
    root = _copy_fixture(tmp_path)
    f = root / "CEBaB-v1.1" / "dev.json"
    recs = json.loads(f.read_text())
    recs[0]["food_aspect_majority"] = "great"
    f.write_text(json.dumps(recs))
    with pytest.raises(DataError, match="dev.json.*000001_000000.*'great'"):
        C.load_cebab(root=root)
    recs[0]["food_aspect_majority"] = "Negative"
    recs[0]["review_majority"] = "6"
    f.write_text(json.dumps(recs))
    with pytest.raises(DataError, match="review_majority '6'"):
        C.load_cebab(root=root)


def test_aspect_labels_are_normalised(tmp_path):
    root = _copy_fixture(tmp_path)
    f = root / "CEBaB-v1.1" / "dev.json"
    recs = json.loads(f.read_text())
    recs[0]["food_aspect_majority"] = "negative"
    recs[0]["noise_aspect_majority"] = None
    recs[1]["service_aspect_majority"] = "Unknown"
    f.write_text(json.dumps(recs))
    df = C.load_cebab(root=root).set_index("id")
    dev = df[df["split"] == "dev"]
    assert dev.loc["000001_000000", "food_majority"] == "Negative"
    assert dev.loc["000001_000000", "noise_majority"] == ""
    assert dev.loc["000001_000001", "service_majority"] == "unknown"


def test_missing_split_file_is_a_clear_error(tmp_path):
    root = _copy_fixture(tmp_path)
    (root / "CEBaB-v1.1" / "test.json").unlink()
    with pytest.raises(DataError, match="missing: \\['test'\\]"):
        C.load_cebab(root=root)


# --------------------------------------------------------------------------------------------
# label schemes and datasets
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("task,expected", [
    ("binary", [0, 0, None, 1, 1]),
    ("ternary", [0, 0, 1, 2, 2]),
    ("5-way", [0, 1, 2, 3, 4]),
])
def test_review_label_schemes(task, expected):
    assert [C.review_label(str(s), task) for s in range(1, 6)] == expected
    assert [C.review_label(s, task) for s in range(1, 6)] == expected
    assert C.review_label("no majority", task) is None
    assert len(C.label_names(task)) == C.NUM_CLASSES[task]


def test_review_label_bad_input():
    with pytest.raises(ValueError, match="unknown task"):
        C.review_label("3", "7-way")
    with pytest.raises(ValueError, match="'0'"):
        C.review_label("0", "5-way")
    with pytest.raises(ValueError, match="outside 1..5"):
        C.review_label(6, "binary")
    assert C.review_label("4", "2-way") == 1  # the authors' task alias


def test_task_frame(mini):
    # dev ratings: 2, 4, 3, 5, 1, 2
    assert C.task_frame("dev", "5-way", mini)["label"].tolist() == [1, 3, 2, 4, 0, 1]
    assert C.task_frame("dev", "ternary", mini)["label"].tolist() == [0, 2, 1, 2, 0, 0]
    b = C.task_frame("dev", "binary", mini)
    assert b["label"].tolist() == [0, 1, 1, 0, 0]
    assert "000001_000002" not in set(b["id"])  # the 3-star text is dropped
    assert list(b.columns[:3]) == ["id", "text", "label"]
    # train_inclusive ratings: 5, 4, no majority, 5, no majority -> no-majority texts dropped
    tr = C.task_frame("train_inclusive", "5-way", mini)
    assert tr["id"].tolist() == ["000002_000000", "000002_000001", "000002_000003"]
    assert tr["label"].tolist() == [4, 3, 4]


def test_task_frame_no_majority_in_eval_split_is_an_error(mini):
    bad = mini.copy()
    bad.loc[(bad["split"] == "test") & (bad["id"] == "000004_000001"), "review_majority"] = "no majority"
    with pytest.raises(DataError, match="000004_000001"):
        C.task_frame("test", "5-way", bad)
    with pytest.raises(ValueError, match="unknown CEBaB split"):
        C.task_frame("train", "5-way", mini)


def test_absa_frame(mini):
    a = C.absa_frame("train_inclusive", mini)
    # B0: food+, service?, ambiance-, noise+ (4); B1: noise 'no majority' dropped (3);
    # B2: 4; B3: 4; C0: only food 'no majority' -> nothing.
    assert len(a) == 15
    assert a[a["id"] == "000002_000001"]["aspect"].tolist() == ["food", "service", "ambiance"]
    first = a[a["id"] == "000002_000000"]
    assert first["aspect"].tolist() == list(C.ASPECTS)
    assert first["label"].tolist() == [1, 2, 0, 1]
    assert [C.ABSA_LABELS[i] for i in first["label"]] == first["label_name"].tolist()
    assert list(a.columns[:4]) == ["id", "text", "aspect", "label"]


# --------------------------------------------------------------------------------------------
# edit pairs
# --------------------------------------------------------------------------------------------
def test_edit_pairs_dev_by_hand(mini):
    """Group A (dev), original A0: food Neg, service Pos, review 2.

    food edits A1 (Pos, 4), A2 (unk, 3), A3 (Pos, 5); service edits A4 (Neg, 1), A5 (Pos, 2;
    failed edit).  food: A0<->A1, A0<->A2, A0<->A3 (6), A1<->A2, A3<->A2 (4; A1/A3 are both Pos)
    = 10; service: A0<->A4, A4<->A5 (4; A0/A5 equal) = 4.  Food and service edits never pair.
    """
    p = C.edit_pairs("dev", mini)
    assert list(p.columns) == list(C.PAIR_COLUMNS)
    assert len(p) == 14
    assert p.groupby("aspect").size().to_dict() == {"food": 10, "service": 4}
    assert p.groupby("pair_kind").size().to_dict() == {"original-edit": 4, "edit-original": 4, "edit-edit": 6}
    food = p[p["aspect"] == "food"].groupby("direction").size().to_dict()
    assert food == {"neg_to_pos": 2, "pos_to_neg": 2, "neg_to_unk": 1, "unk_to_neg": 1,
                    "pos_to_unk": 2, "unk_to_pos": 2}
    pairs = set(zip(p["base_id"], p["cf_id"]))
    assert ("000001_000000", "000001_000005") not in pairs           # equal labels
    assert ("000001_000001", "000001_000003") not in pairs           # both Positive
    assert ("000001_000001", "000001_000004") not in pairs           # different edit types
    assert ("000001_000005", "000001_000004") in pairs
    row = p[(p["base_id"] == "000001_000002") & (p["cf_id"] == "000001_000001")].iloc[0]
    assert (row["pair_kind"], row["base_value"], row["cf_value"], row["direction"], row["pair_type"]) == \
        ("edit-edit", "unknown", "Positive", "unk_to_pos", "pos-unk")
    assert (row["base_label"], row["cf_label"]) == (2, 3)
    assert row["base_text"] == "The waiter was lovely." and row["base_service_majority"] == "Positive"
    # deterministic order and symmetric: every pair appears reversed
    assert p.equals(C.edit_pairs("dev", mini))
    assert pairs == {(c, b) for b, c in pairs}
    assert (p["base_id"] + p["cf_id"]).tolist() == sorted(p["base_id"] + p["cf_id"])


def test_edit_pairs_exclude_no_majority_aspects(mini):
    """Group B (train_inclusive): B1's noise is 'no majority' -> no pair with B1; B0<->B2 (noise
    Pos/Neg, B2 without review majority) and B0<->B3 (ambiance Neg/Pos) = 4 pairs."""
    p = C.edit_pairs("train_inclusive", mini)
    assert len(p) == 4
    assert "000002_000001" not in set(p["base_id"]) | set(p["cf_id"])
    noise = p[p["aspect"] == "noise"].set_index("base_id")
    assert noise.loc["000002_000000", "cf_label"] == -1
    assert noise.loc["000002_000000", "direction"] == "pos_to_neg"
    assert C.edit_pairs("train_exclusive", mini).empty
    assert C.edit_pairs("train_observational", mini).empty
    both = C.edit_pairs(["dev", "train_inclusive"], mini)
    assert both["split"].tolist() == ["train_inclusive"] * 4 + ["dev"] * 14  # SPLITS order


def test_edit_pair_counts(mini):
    c = C.edit_pair_counts(df=mini)
    assert len(c) == len(C.ASPECTS) * len(C.DIRECTIONS)
    got = c.set_index(["aspect", "direction"])["n"]
    assert got["food", "pos_to_unk"] == 2 and got["service", "neg_to_pos"] == 2
    assert got["ambiance", "neg_to_pos"] == 1   # B0 -> B3
    assert got["ambiance", "unk_to_neg"] == 1   # D0 -> D1 (test)
    assert got["noise", "neg_to_unk"] == 0
    assert c["n"].sum() == 14 + 4 + 2
    k = C.edit_pair_counts(df=mini, by_kind=True)
    assert k["n"].sum() == 20 and set(k["pair_kind"]) == set(C.PAIR_KINDS)


# --------------------------------------------------------------------------------------------
# statistics
# --------------------------------------------------------------------------------------------
def test_empirical_ate_by_hand(mini):
    """5-way: food neg->pos: A0->A1 (+2), A0->A3 (+3) = 2.5; neg->unk: A0->A2 (+1);
    pos->unk: A1->A2 (-1), A3->A2 (-2) = -1.5; service pos->neg: A0->A4, A5->A4 (-1, -1);
    noise pairs involve B2 (no review majority) -> excluded; ambiance neg->pos B0->B3 (0),
    unk->neg D0->D1 (-1).  Binary: the 3-star texts A2 and D0 drop out."""
    e = C.empirical_ate(df=mini).set_index(["aspect", "direction"])
    assert e.loc[("food", "neg_to_pos"), "ate"] == pytest.approx(2.5)
    assert e.loc[("food", "neg_to_pos"), "n"] == 2
    assert e.loc[("food", "neg_to_pos"), "std"] == pytest.approx(np.std([2, 3], ddof=1))
    assert e.loc[("food", "pos_to_neg"), "ate"] == pytest.approx(-2.5)
    assert e.loc[("food", "neg_to_unk"), "ate"] == pytest.approx(1.0)
    assert e.loc[("food", "pos_to_unk"), "ate"] == pytest.approx(-1.5)
    assert e.loc[("service", "pos_to_neg"), "ate"] == pytest.approx(-1.0)
    assert e.loc[("ambiance", "neg_to_pos"), "ate"] == pytest.approx(0.0)
    assert e.loc[("ambiance", "unk_to_neg"), "ate"] == pytest.approx(-1.0)
    assert e.loc[("noise", "pos_to_neg"), "n"] == 0 and np.isnan(e.loc[("noise", "pos_to_neg"), "ate"])
    b = C.empirical_ate(df=mini, task="binary").set_index(["aspect", "direction"])
    assert b.loc[("food", "neg_to_pos"), "ate"] == pytest.approx(1.0)
    assert b.loc[("food", "neg_to_unk"), "n"] == 0
    assert b.loc[("service", "pos_to_neg"), "ate"] == pytest.approx(0.0)
    assert b.loc[("ambiance", "unk_to_neg"), "n"] == 0


def test_label_counts(mini):
    a = C.aspect_label_counts(mini).set_index(["aspect", "label"])
    # combined = dev (6) + train_inclusive (5) + test (2)
    assert a.loc[("food", "positive"), "count"] == 2 + 4
    assert a.loc[("food", "negative"), "count"] == 3
    assert a.loc[("food", "unknown"), "count"] == 1
    assert a.loc[("food", "no_majority"), "count"] == 1
    assert a.loc[("food", "total"), "count"] == 11
    assert a.loc[("noise", "no_majority"), "count"] == 1
    # column shares: food holds 6 of the 14 Positive labels (service 5, ambiance 1, noise 2)
    pos = a.xs("positive", level="label")
    assert pos["proportion"].sum() == pytest.approx(1.0)
    assert pos["count"].sum() == 14 and pos.loc["food", "proportion"] == pytest.approx(6 / 14)
    r = C.review_rating_counts(mini).set_index("label")
    assert r["count"].to_dict() == {"1_star": 1, "2_star": 3, "3_star": 2, "4_star": 2, "5_star": 3,
                                    "no_majority": 2}
    assert r["proportion"].sum() == pytest.approx(1.0)


def test_metadata_counts(mini):
    # originals: A0 (italian, west, 4), B0 (seafood, northeast, 2), C0 (french, south, 5), D0 (italian)
    assert C.metadata_counts("cuisine", mini).values.tolist() == [["italian", 2], ["french", 1], ["seafood", 1]]
    assert C.metadata_counts("star_rating", mini)["label"].tolist() == ["2_star", "4_star", "5_star"]
    with pytest.raises(ValueError, match="unknown metadata field"):
        C.metadata_counts("zip", mini)


def test_levenshtein_known_values():
    assert C.levenshtein("kitten", "sitting") == 3
    assert C.levenshtein("", "abc") == 3 and C.levenshtein("abc", "") == 3
    assert C.levenshtein("flaw", "lawn") == 2
    assert C.levenshtein("café", "cafe") == 1
    assert C.normalized_edit_distance("kitten", "sitting") == pytest.approx(3 / 7)
    assert C.normalized_edit_distance("", "") == 0.0


def test_levenshtein_matches_reference_dp():
    rng = np.random.default_rng(0)

    def ref(a: str, b: str) -> int:
        d = list(range(len(b) + 1))
        for i, ca in enumerate(a, 1):
            prev, d[0] = d[:], i
            for j, cb in enumerate(b, 1):
                d[j] = min(prev[j] + 1, d[j - 1] + 1, prev[j - 1] + (ca != cb))
        return d[-1]

    for _ in range(200):
        a = "".join(rng.choice(list("abc"), size=rng.integers(0, 10)))
        b = "".join(rng.choice(list("abc"), size=rng.integers(0, 10)))
        assert C.levenshtein(a, b) == ref(a, b), (a, b)


def test_edit_distances(mini):
    d = C.edit_distances(mini).set_index("id")
    assert len(d) == 5 + 3 + 1  # edits of dev, train_inclusive, test
    assert d.loc["000001_000002", "distance"] == pytest.approx(
        C.normalized_edit_distance("The pasta was bland but the waiter was lovely.", "The waiter was lovely."))
    assert ((d["distance"] > 0) & (d["distance"] <= 1)).all()


def test_edit_distances_of_a_sample_are_rows_of_the_full_table(mini):
    full = C.edit_distances(mini)
    part = C.edit_distances(mini, max_edits=4, seed=1)
    assert len(part) == 4 and part.equals(C.edit_distances(mini, max_edits=4, seed=1))  # seeded
    assert part.id.is_unique and set(part.id) <= set(full.id)
    # the same rows, values and order as the full table's
    assert part.reset_index(drop=True).equals(full[full.id.isin(part.id)].reset_index(drop=True))
    assert C.edit_distances(mini, max_edits=len(full) + 5).equals(full)  # a cap above the count takes all


def test_dataset_stats_table_schema(mini):
    from xaibench.evaluation.cebab.tables import dataset_stats_table

    t = dataset_stats_table(mini)
    for col in ("table", "aspect", "direction", "group", "label", "ours", "ours_std", "paper"):
        assert col in t.columns
    assert set(t["table"]) == {"Table 3a", "Table 3b", "Table 3c", "Table 3d", "Table 7",
                               "Table 5a", "Table 5b", "Table 5c"}
    row = t[(t["table"] == "Table 3a") & (t["aspect"] == "food") & (t["label"] == "positive")
            & (t["metric"] == "count")]
    assert row["ours"].item() == 6 and row["paper"].item() == 5726
    c3 = t[(t["table"] == "Table 3c") & (t["aspect"] == "food") & (t["direction"] == "pos-unk")]
    assert c3["ours"].item() == 2 and c3["paper"].item() == 1291  # unordered pairs A1-A2, A3-A2
    d3 = t[(t["table"] == "Table 3d") & (t["aspect"] == "food") & (t["direction"] == "neg_to_pos")]
    assert d3["ours"].item() == pytest.approx(2.5) and d3["paper"].item() == pytest.approx(1.84)
    assert t["paper"].notna().sum() >= 90


# --------------------------------------------------------------------------------------------
# the real data (fast: parse + counts only)
# --------------------------------------------------------------------------------------------
def _real_root() -> Path | None:
    from xaibench import paths

    raw = paths.raw_dir() / "cebab"
    if (raw / "CEBaB-v1.1" / "test.json").exists():
        return raw
    return None


@pytest.mark.skipif(_real_root() is None, reason="CEBaB raw data not fetched (make data)")
def test_real_split_sizes_and_paper_counts():
    df = C.load_cebab(root=_real_root())
    assert df.groupby("split").size().to_dict() == {
        "train_exclusive": 1755, "train_inclusive": 11728, "train_observational": 1755,
        "dev": 1673, "test": 1689}
    a = C.aspect_label_counts(df).set_index(["aspect", "label"])["count"]
    assert a["food", "positive"] == 5726 and a["noise", "total"] == 9541  # Table 3a, exact
    assert C.metadata_counts("cuisine", df)["count"].tolist() == [1076, 654, 254, 202, 113]  # Table 5a
    for split in C.EVAL_SPLITS:
        assert (df.loc[df["split"] == split, "review_majority"] != "no majority").all()


# --------------------------------------------------------------------------------------------
# per-task pairs and fit rows (App. C.3)
# --------------------------------------------------------------------------------------------
THREE_STAR = "000001_000002"  # dev, food edit A2: review 3 stars, food unknown


def test_task_pairs_drop_three_star_texts_for_binary_only(mini):
    """A2 (3 stars) pairs with A0, A1 and A3 (food edits), both ways: 6 of the 14 dev pairs.  It has no
    binary class, so every pair touching it leaves the binary pair set; 5-way and ternary keep it."""
    pairs = C.edit_pairs("dev", mini)
    touches = (pairs["base_id"] == THREE_STAR) | (pairs["cf_id"] == THREE_STAR)
    assert touches.sum() == 6 and len(pairs) == 14
    binary = C.task_pairs(pairs, "binary")
    assert len(binary) == 14 - 6
    assert THREE_STAR not in set(binary["base_id"]) | set(binary["cf_id"])
    for task in ("5-way", "ternary"):
        kept = C.task_pairs(pairs, task)
        assert len(kept) == 14 and THREE_STAR in set(kept["base_id"])
    b = C.task_pairs(pairs, "binary")
    assert set(b["base_task_label"]) | set(b["cf_task_label"]) <= {0, 1}


def test_fit_frame_cleans_training_rows_per_task(mini):
    """'no majority' rows never enter the fit data; the 3-star text only for binary."""
    assert len(C.fit_frame("5-way", df=mini)) == 0  # both train_exclusive rows have no majority
    five = C.fit_frame("5-way", split="dev", df=mini)
    binary = C.fit_frame("binary", split="dev", df=mini)
    assert THREE_STAR in set(five["id"]) and THREE_STAR not in set(binary["id"])
    assert len(five) == 6 and len(binary) == 5
    assert list(binary["task_label"]) == list(C.task_label(binary["label"], "binary"))
    assert {"text", "food_majority", "label", "task_label"} <= set(binary.columns)


def test_vocabulary_has_one_order():
    assert C.CONCEPT_VALUES == ("Negative", "unknown", "Positive") and C.ASPECT_VALUES is C.CONCEPT_VALUES
    assert C.direction_name("Negative", "Positive") == "neg_to_pos"
    assert C.CONTROL_CONCEPTS == {"food": "service", "service": "food", "ambiance": "food", "noise": "food"}
    np.testing.assert_array_equal(C.task_label([0, 1, 2, 3, 4, -1], 5), [0, 1, 2, 3, 4, -1])
    np.testing.assert_array_equal(C.task_label([0, 1, 2, 3, 4, -1], 3), [0, 0, 1, 2, 2, -1])
    np.testing.assert_array_equal(C.task_label([0, 1, 2, 3, 4, -1], "binary"), [0, 0, -1, 1, 1, -1])
    with pytest.raises(ValueError, match="0..4"):
        C.task_label([5], 5)
    with pytest.raises(ValueError, match="2, 3 or 5"):
        C.task_label([1], 4)


@pytest.mark.skipif(_real_root() is None, reason="CEBaB raw data not fetched (make data)")
def test_real_pairs_and_fit_rows_per_task():
    """Test pairs and explainer fit rows per task on the real data (the n_pairs of Tables 4 and 10)."""
    df = C.load_cebab(root=_real_root())
    pairs = C.edit_pairs("test", df)
    assert {t: len(C.task_pairs(pairs, t)) for t in C.TASKS} == {"binary": 2294, "ternary": 3958, "5-way": 3958}
    fit = {t: C.fit_frame(t, df=df) for t in C.TASKS}
    assert {t: len(f) for t, f in fit.items()} == {"binary": 1072, "ternary": 1463, "5-way": 1463}
    assert (fit["binary"]["review_majority"] != "3").all() and (fit["5-way"]["review_majority"] == "3").any()
