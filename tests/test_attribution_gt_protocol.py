"""Known-value and invariant tests of the image protocol of the attribution ground-truth experiments
(Zhou et al. 2022): which test images are explained, species groups, the saliency settings of the
authors (CAM ReLU, LIME's black hiding), and the ``learned`` / ``failed`` flags of the result tables."""
import numpy as np
import pandas as pd
import pytest

from xaibench.evaluation.attribution_gt import image_plots as ip
from xaibench.evaluation.attribution_gt import image_runner as ir
from xaibench.evaluation.attribution_gt import tables as at
from xaibench.evaluation.attribution_gt import text_plots as tp
from xaibench.evaluation.attribution_gt.metrics import shapley_manipulation_range


# ------------------------------------------------------------------ explained images, species groups
def test_balanced_subset_takes_half_of_each_class_in_shuffled_order():
    labels = np.array([0] * 30 + [1] * 30)  # the test split: class 0 first, as split_pair builds it
    idx = ir.balanced_subset(labels, 10, np.random.default_rng(0))
    assert len(idx) == 10 and len(set(idx)) == 10
    assert (labels[idx] == 1).sum() == 5 and (labels[idx] == 0).sum() == 5
    assert list(labels[idx]) != sorted(labels[idx])  # shuffled, not class 0 first
    assert np.array_equal(idx, ir.balanced_subset(labels, 10, np.random.default_rng(0)))  # seeded
    # the first 10 (the old choice) are all class 0; any subset must hold both classes
    for seed in range(20):
        assert set(labels[ir.balanced_subset(labels, 4, np.random.default_rng(seed))]) == {0, 1}


def test_balanced_subset_fills_up_from_the_larger_class_and_caps_at_the_test_set():
    labels = np.array([0] * 8 + [1] * 2)
    idx = ir.balanced_subset(labels, 6, np.random.default_rng(1))
    assert (labels[idx] == 1).sum() == 2 and (labels[idx] == 0).sum() == 4
    assert sorted(ir.balanced_subset(labels, 50, np.random.default_rng(1))) == list(range(10))


def test_species_groups_are_disjoint_with_the_requested_size():
    species = [f"s{i:02d}" for i in range(100)]
    for seed in range(5):
        a, b = ir.species_groups(species, 24, np.random.default_rng(seed))
        assert len(a) == len(b) == 24 and not set(a) & set(b) and set(a) | set(b) <= set(species)
    assert ir.species_groups(species, 24, np.random.default_rng(3)) == ir.species_groups(
        species, 24, np.random.default_rng(3))
    with pytest.raises(ValueError, match="group_size=51"):
        ir.species_groups(species, 51, np.random.default_rng(0))


def test_split_pools_the_species_of_a_group_and_caps_the_test_set():
    images = {f"s{i}": [np.full((8, 8, 3), 10 * i + k, np.uint8) for k in range(10)] for i in range(4)}
    cfg = ir.ImageConfig(n_train=12, n_val=2, n_test=3)
    sp = ir.split_pair(images, (("s0", "s1"), ("s2", "s3")), cfg, seed=0)
    assert list(np.bincount(sp["train"][1])) == [12, 12] and list(np.bincount(sp["test"][1])) == [3, 3]
    # class 0's images come from s0 / s1 only (values < 20), class 1's from s2 / s3
    for split in ("train", "val", "test"):
        imgs, y = sp[split]
        vals = np.array([im[0, 0, 0] for im in imgs])
        assert (vals[y == 0] < 20).all() and (vals[y == 1] >= 20).all()


def test_image_config_rejects_unknown_settings():
    with pytest.raises(ValueError, match="cam_negatives='square'"):
        ir.ImageConfig(cam_negatives="square")
    with pytest.raises(ValueError, match="lime_hide"):
        ir.ImageConfig(lime_hide="white")
    with pytest.raises(ValueError, match="shap_background"):
        ir.ImageConfig(shap_background="noise")
    defaults = ir.ImageConfig()
    assert (defaults.cam_negatives, defaults.lime_hide, defaults.shap_background) == ("relu", "black", "test")


@pytest.mark.slow
def test_run_one_explains_both_classes_and_reads_the_best_checkpoint():
    """A tiny run on synthetic 'species': the explained images hold both classes (the old first-n choice
    explained class 0 only), and the summary reports its sizes."""
    rng = np.random.default_rng(0)
    images = {f"s{i}": [rng.integers(0, 255, (20, 20, 3), dtype=np.uint8) for _ in range(8)] for i in range(4)}
    from xaibench.evaluation.attribution_gt import manipulations as mp

    cfg = ir.ImageConfig(canvas=16, widths=(4, 8), epochs=2, n_train=10, n_val=2, n_explain=4,
                         methods=("gradient", "cam"), best_checkpoint=True, stop_val_acc=0.97)
    s, fin, _ = ir.run_one(images, (("s0", "s1"), ("s2", "s3")), mp.R_SWEEP["noise"], 0.5, 0, cfg)
    assert s["n_explained"] == 4 and s["n_explained_positive"] == 2
    assert set(fin.label) == {0, 1} and s["n_train"] == 20 and s["n_test"] == 8
    assert 1 <= s["epoch_read"] <= s["epochs"] <= 2 and s["pair"] == "2 species / 2 species"


# ------------------------------------------------------------------ saliency as the authors ran it
class _MapNet:
    """Stand-in for SmallResNet with a fixed 2x2 feature map: CAM of class 0 = [[1, -2], [3, -4]]."""

    def __init__(self):
        import torch

        self.fc = torch.nn.Linear(1, 2)
        with torch.no_grad():
            self.fc.weight[:] = torch.tensor([[1.0], [-1.0]])

    def eval(self):
        return self

    def features(self, x):
        import torch

        return torch.tensor([[1.0, -2.0], [3.0, -4.0]]).expand(x.shape[0], 1, 2, 2)


def test_cam_zeroes_negative_values_like_the_authors_and_abs_is_optional():
    import torch

    from xaibench.explainers.saliency import cam

    x = torch.zeros(1, 3, 2, 2)  # same size as the map: no upsampling
    relu = cam(_MapNet(), x, torch.tensor([0]))
    assert np.allclose(relu[0], [[1, 0], [3, 0]])
    assert np.allclose(cam(_MapNet(), x, torch.tensor([1]))[0], [[0, 2], [0, 4]])  # class 1: weight -1
    assert np.allclose(cam(_MapNet(), x, torch.tensor([0]), negatives="abs")[0], [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="negatives='square'"):
        cam(_MapNet(), x, torch.tensor([0]), negatives="square")


def test_lime_hides_superpixels_with_the_given_colour():
    """Every input LIME feeds the model holds, outside the kept superpixels, the hide value (here the
    normalised black of the authors' ``hide_color=0``), never the default 0 (the ImageNet-mean grey)."""
    import torch

    from xaibench.evaluation.attribution_gt.image_runner import _hide
    from xaibench.explainers.saliency import lime

    seen = []

    class Record(torch.nn.Module):
        def forward(self, x):
            seen.append(x.detach().clone())
            return torch.stack([x.mean((1, 2, 3)), -x.mean((1, 2, 3))], 1)

    S = 8
    images = np.random.default_rng(0).integers(50, 200, (1, S, S, 3), dtype=np.uint8)
    from xaibench.models.resnet_small import normalise

    x = normalise(images)
    black = _hide(ir.ImageConfig(canvas=S))
    assert black.shape == (1, 3, S, S)
    lime(Record(), x, torch.tensor([0]), images=images, n_samples=20, n_segments=4, hide=black)
    batch = torch.cat(seen)
    hidden = ~torch.isclose(batch, x.expand_as(batch))
    assert hidden.any()
    assert torch.allclose(batch[hidden], black.expand_as(batch)[hidden])
    assert _hide(ir.ImageConfig(canvas=S, lime_hide="mean")) is None


# ------------------------------------------------------------------ learned / failed flags
def _runs():
    return pd.DataFrame([
        {"experiment": "er", "run": 0, "manipulation": "noise", "test_acc": 0.99, "n_test": 20, "n_train": 80},
        {"experiment": "er", "run": 1, "manipulation": "noise", "test_acc": 0.95, "n_test": 18, "n_train": 80},
        {"experiment": "er", "run": 2, "manipulation": "blur", "test_acc": 0.60, "n_test": 19, "n_train": 80},
        {"experiment": "er-groups", "run": 0, "manipulation": "noise", "test_acc": 0.97, "n_test": 600,
         "n_train": 2000},
        {"experiment": "er-groups", "run": 1, "manipulation": "blur", "test_acc": 0.96, "n_test": 580,
         "n_train": 2000}])


def test_image_runs_table_flags_learned_runs_strictly_above_95_percent():
    t = at.image_runs_table(_runs())
    assert list(t.learned) == [True, False, False, True, True]  # 0.95 itself is not "over 95 %"
    assert list(t.protocol) == ["species pairs"] * 3 + ["species groups"] * 2
    assert (t.ours == t.test_acc).all() and {"ours", "ours_std", "paper"} <= set(t.columns)


def test_image_learned_table_gives_share_and_test_size_per_manipulation():
    t = at.image_learned_table(_runs()).set_index(["protocol", "manipulation"])
    pairs_all = t.loc[("species pairs", "all")]
    assert pairs_all.ours == pytest.approx(1 / 3) and pairs_all.n_learned == 1 and pairs_all.n_runs == 3
    assert pairs_all.n_test_min == 18 and pairs_all.paper == pytest.approx(0.70)
    assert t.loc[("species pairs", "noise")].ours == pytest.approx(0.5)
    groups = t.loc[("species groups", "all")]
    assert groups.ours == 1.0 and groups.n_test_min == 580 and groups.n_test_mean == 590 and groups.n_train == 2000
    assert np.isnan(t.loc[("species groups", "noise")].paper)  # the paper's 0.70 is a share over all runs


def test_rationale_and_attention_tables_say_which_runs_learned():
    rat = pd.DataFrame([{"dataset": "nc", "model": m, "target_rate": 0.1, "precision": p, "recall": 0.5,
                         "noncorr_share_of_selection": 0.1, "rate": 0.1, "test_acc": acc, "first3_selected_share": 0.1,
                         "optimal_precision": 0.486, "optimal_recall": 1.0, "reached_target": False, "epochs": 5}
                        for m, p, acc in (("rl", 0.486, 0.989), ("cr", 0.0, 0.478))])
    t = at.rationale_table(rat)
    flags = t.drop_duplicates("model").set_index("model")
    assert flags.loc["rl", "learned"] and not flags.loc["rl", "failed"]
    assert flags.loc["cr", "failed"] and not flags.loc["cr", "learned"]
    assert list(tp.failed_rationales(rat)) == [False, True]
    att = pd.DataFrame([{"dataset": "article", "run": k, "method": "attention", "corr": 0.5, "noncorr": 0.0,
                         "other": 0.5, "test_acc": acc, "share_corr_tokens": 0.09, "share_noncorr_tokens": 0.0,
                         "n_reviews": 10} for k, acc in enumerate((0.99, 0.97, 0.98))])
    row = at.attention_table(att).iloc[0]
    assert row.n_learned == 2 and row.n_runs == 3  # 0.97 is not "over 97 %"


def test_rationale_figures_leave_failed_models_out_and_name_them():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rat = pd.DataFrame([{"dataset": d, "model": m, "target_rate": 0.1, "precision": 0.6, "optimal_precision": 0.8,
                         "noncorr_share_of_selection": 0.3, "rate": 0.08, "recall": 0.9,
                         "test_acc": 0.478 if (d, m) == ("nc", "cr") else 0.99}
                        for d in ("article", "cn", "nc") for m in ("rl", "cr")])
    fig = tp.rationale_cn_nc(rat)
    title = fig._suptitle.get_text()
    assert "3 of 4 models" in title and "NC CR at rate 0.1 (test acc 0.48)" in title
    plt.close(fig)
    fig = tp.rationale_precision_recall(rat, 0.09)
    assert "2 of 2 models" in fig._suptitle.get_text() and "failed" not in fig._suptitle.get_text()
    plt.close(fig)


def test_fig8_has_a_panel_row_per_class_and_a_shapley_bar_per_run_at_its_own_accuracy():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = pd.DataFrame([{"experiment": "r-similar", "run": 0, "test_acc": 0.99, "r": 0.5},
                         {"experiment": "r-similar", "run": 1, "test_acc": 0.80, "r": 0.8}])
    rows = [{"experiment": "r-similar", "run": run.run, "test_acc": run.test_acc, "manipulation": "noise",
             "method": "gradient", "label": label, "r": run.r, "er_size": 0.2, "attr_pct": 0.5}
            for run in runs.itertuples() for label in (0, 1)]
    fig = ip.fig8_attr_vs_r(pd.DataFrame(rows), runs)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 2 and "positive" in axes[0].get_ylabel() and "negative" in axes[1].get_ylabel()
    assert "Fig. 8" in fig._suptitle.get_text() and "1 of 2 runs learned" in fig._suptitle.get_text()
    bars = sorted(min(line.get_ydata()) for line in axes[0].get_lines() if line.get_color() == "g")
    assert bars == pytest.approx(sorted([shapley_manipulation_range(0.5, 0.99)[0],
                                         shapley_manipulation_range(0.8, 0.80)[0]]))
    plt.close(fig)


def test_attention_gap_table_reads_the_attr_at_the_first_epoch_reaching_0_9():
    import json

    from xaibench.evaluation.attribution_gt import attention_gap as ag

    hist = [{"epoch": 1, "dev_acc": 0.85, "val_attn_corr": 0.1}, {"epoch": 2, "dev_acc": 0.93, "val_attn_corr": 0.3},
            {"epoch": 3, "dev_acc": 0.975, "val_attn_corr": 0.5}]
    rows = pd.DataFrame([{"variant": "hidden 200", "seed": 0, "hidden": 200, "n_train": 7000, "attr_articles": 0.45,
                          "article_share": 0.09, "epochs": 3, "val_acc": 0.975, "test_acc": 0.97,
                          "epoch_history": json.dumps(hist)}])
    t = ag.gap_table(rows).iloc[0]
    assert t.ours == 0.45 and t.paper == pytest.approx(0.086) and t["val_attr_at_0.9"] == pytest.approx(0.3)
    assert t.per_epoch == "0.850:0.100; 0.930:0.300; 0.975:0.500"
    with pytest.raises(ValueError, match="cannot change \\['embedding'\\]"):
        ag.run_variant(None, None, 0, "x", embedding=200)


def test_runs_learned_is_a_precondition_read_from_the_species_group_runs_when_present():
    """How many image runs learned is a precondition (an exact binomial interval, no verdict): the species-group
    runs' share where they exist, the species-pair runs' otherwise, the other protocol named beside it."""
    from xaibench.evaluation.attribution_gt import claims as gc
    from xaibench.evaluation.claims import PRECONDITION, share_interval

    def share(group, k, n):
        return {"group": group, "metric": at.SHARE_METRIC, "ours": k / n, "n_runs": n, "n_learned": k}

    pairs_only = pd.DataFrame([share("er", 1, 20)])
    out = gc.check_runs_learned(lambda name: pairs_only)
    assert out.verdict == PRECONDITION and "1 of 20 Fig. 5 runs" in out.reason
    assert out.interval.low == pytest.approx(share_interval(1, 20).low)
    both = pd.DataFrame([share("er", 1, 20), share("er-groups", 8, 10)])
    out = gc.check_runs_learned(lambda name: both)
    assert out.ours == pytest.approx(0.8) and out.verdict == PRECONDITION
    assert (out.interval.low, out.interval.high) == pytest.approx((share_interval(8, 10).low, share_interval(8, 10).high))
    assert "8 of 10 species-group runs" in out.reason and "species-pair runs (not judged): 1 of 20" in out.reason


def test_run_one_accepts_species_groups_and_names_a_missing_species(monkeypatch):
    from xaibench.evaluation.attribution_gt import image_runner as ir
    from xaibench.evaluation.attribution_gt import manipulations as mp

    img = np.zeros((8, 8, 3), np.uint8)
    images = {"A": [img], "B": [img], "C": [img]}
    manip = mp.random_manipulation("blur", np.random.default_rng(0))
    cfg = ir.ImageConfig.for_profile("quick")

    class Validated(Exception):
        pass

    def stop(*a, **k):
        raise Validated

    monkeypatch.setattr(ir, "split_pair", stop)  # the checks passed: stop before any training
    with pytest.raises(Validated):
        ir.run_one(images, (("A", "B"), ("C",)), manip, 0.5, 0, cfg)
    with pytest.raises(Validated):
        ir.run_one(images, ("A", "C"), manip, 0.5, 0, cfg)
    with pytest.raises(ValueError, match="class 'D'"):
        ir.run_one(images, (("A", "B"), ("C", "D")), manip, 0.5, 0, cfg)


def _tiny_reviews(n: int = 40) -> pd.DataFrame:
    words = ["pours", "golden", "with", "the", "head", "a", "haze", "an", "amber", "glow"]
    rng = np.random.default_rng(3)
    return pd.DataFrame({"text": [" ".join(rng.choice(words, size=6)) + f" w{i} the end" for i in range(n)],
                         "label": [i % 2 for i in range(n)]})


def test_concatenated_reviews_append_distinct_reviews_of_the_same_label_and_leave_concat_1_unchanged():
    from xaibench.evaluation.attribution_gt import text_data as td

    df = _tiny_reviews()
    plain = td.build_article_dataset(df, "article", seed=5, n_train=20, n_val=5, n_test=5)
    again = td.build_article_dataset(df, "article", seed=5, n_train=20, n_val=5, n_test=5, concat=1)
    assert plain.train.texts == again.train.texts and (plain.train.labels == again.train.labels).all()
    long = td.build_article_dataset(df, "article", seed=5, n_train=20, n_val=5, n_test=5, concat=3)
    own = {f"w{i}": i for i in range(len(df))}
    for split in (long.train, long.val, long.test):
        for toks, orig in zip(split.orig_tokens, split.orig_labels):
            ids = [own[t] for t in toks if t in own]
            assert len(ids) == 3 and len(set(ids)) == 3  # itself and two distinct others
            assert {df.label[i] for i in ids} == {orig}  # all of its original label
            assert len(toks) == 3 * 9  # 6 words + "wI the end" per piece, nothing cut at max_length 256
    cut = td.build_article_dataset(df, "article", seed=5, n_train=20, n_val=5, n_test=5, concat=3, max_length=10)
    assert max(len(t) for t in cut.train.orig_tokens) == 10
    with pytest.raises(ValueError, match="concat"):
        td.build_article_dataset(df, "article", seed=5, n_train=20, n_val=5, n_test=5, concat=0)


def test_attention_gap_summary_averages_seeds_and_counts_learned_runs():
    from xaibench.evaluation.attribution_gt import attention_gap as ag

    runs = pd.DataFrame([{"variant": v, "seed": s, "hidden": 64, "n_train": 7000, "ours": o, "test_acc": acc,
                          "article_share": 0.09, "tokens_per_review": 30.0, "epochs": 4, "val_attr_at_0.9": o / 2}
                         for v, s, o, acc in [("b", 0, 0.4, 0.99), ("b", 1, 0.6, 0.90), ("a", 0, 0.2, 0.97)]])
    t = ag.gap_summary(runs)
    assert list(t.variant) == ["b", "a"]  # order of first appearance
    b = t.iloc[0]
    assert b.ours == pytest.approx(0.5) and b.ours_std == pytest.approx(0.1) and b.n_seeds == 2 and b.learned == 1
    assert b["val_attr_at_0.9"] == pytest.approx(0.25) and b.paper == pytest.approx(0.086)
    assert np.isnan(t.iloc[1].ours_std) and t.iloc[1].learned == 1  # one seed: no spread to report


@pytest.mark.parametrize("best_checkpoint", [True, False])
def test_an_untracked_run_reads_the_same_test_accuracy_as_a_tracked_one(best_checkpoint):
    """An untracked run measures the test accuracy of the read epoch only (after training), a tracked run every
    epoch's: both give the same summary and attributions, and the read one is the tracked epoch's."""
    from xaibench.evaluation.attribution_gt import manipulations as mp

    rng = np.random.default_rng(1)
    images = {f"s{i}": [rng.integers(0, 255, (20, 20, 3), dtype=np.uint8) for _ in range(8)] for i in range(2)}
    cfg = ir.ImageConfig(canvas=16, widths=(4, 8), epochs=3, n_train=5, n_val=1, n_explain=2, methods=("gradient",),
                         track_methods=("gradient",), best_checkpoint=best_checkpoint, stop_val_acc=0)
    s_tr, fin_tr, track = ir.run_one(images, ("s0", "s1"), mp.R_SWEEP["noise"], 0.5, 0, cfg, track=True)
    s_un, fin_un, none = ir.run_one(images, ("s0", "s1"), mp.R_SWEEP["noise"], 0.5, 0, cfg, track=False)
    assert none.empty and len(track.epoch.unique()) == 3
    timing = {"train_seconds"}
    assert {k: v for k, v in s_tr.items() if k not in timing} == {k: v for k, v in s_un.items() if k not in timing}
    assert s_un["test_acc"] == track.loc[track.epoch == s_un["epoch_read"], "test_acc"].iloc[0]
    pd.testing.assert_frame_equal(fin_tr.drop(columns=["seconds_per_image", "train_seconds"]),
                                  fin_un.drop(columns=["seconds_per_image", "train_seconds"]))


# ------------------------------------------------------------------ the training images' preparation (a speed lever)

def test_normalise_looks_up_every_level_bit_for_bit_as_the_arithmetic_gives_it():
    """Every uint8 level in every channel (known values at the ends), with and without a reused buffer."""
    import torch

    from xaibench.models.resnet_small import normalise, normalise_arithmetic

    levels = np.arange(256, dtype=np.uint8).reshape(16, 16)
    images = np.stack([np.stack([np.roll(levels, k + c, axis=1) for c in range(3)], axis=-1) for k in range(3)])
    ref = normalise_arithmetic(images)
    assert torch.equal(normalise(images), ref)
    buf = torch.full((3, 3, 16, 16), 7.0)
    assert normalise(images, out=buf) is buf and torch.equal(buf, ref)
    # level 0 of red: (0 - 0.485) / 0.229; level 255 of blue: (1 - 0.406) / 0.225, in float32
    black_red = np.float32(np.float32(0.0) - np.float32(0.485)) / np.float32(0.229)
    white_blue = np.float32(np.float32(1.0) - np.float32(0.406)) / np.float32(0.225)
    assert normalise(np.zeros((1, 2, 2, 3), np.uint8))[0, 0, 0, 0].item() == pytest.approx(-2.1179039, abs=1e-6)
    assert normalise(np.zeros((1, 2, 2, 3), np.uint8))[0, 0, 0, 0].item() == float(black_red)
    assert normalise(np.full((1, 2, 2, 3), 255, np.uint8))[0, 2, 1, 1].item() == float(white_blue)
    with pytest.raises(ValueError, match="contiguous float32 CPU tensor of shape"):
        normalise(images, out=torch.empty((3, 3, 16, 15)))


@pytest.mark.parametrize("kind", ["blur", "brightness", "hue", "noise", "watermark"])
def test_manipulation_maps_kept_once_give_the_bytes_of_maps_computed_per_image(kind):
    from xaibench.evaluation.attribution_gt import manipulations as mp

    rng = np.random.default_rng(3)
    imgs = [rng.integers(0, 256, (56, 56, 3), dtype=np.uint8) for _ in range(4)]
    manip = mp.random_manipulation(kind, np.random.default_rng(5))
    mp._FIXED.clear()
    kept = [manip(img, np.random.default_rng(j)) for j, img in enumerate(imgs)]
    assert any(key[1] == kind for key in mp._FIXED)  # the maps were kept
    with mp.maps_per_image():
        n = len(mp._FIXED)
        fresh = [manip(img, np.random.default_rng(j)) for j, img in enumerate(imgs)]
        assert len(mp._FIXED) == n  # computed, not kept
    assert all(np.array_equal(a, b) for a, b in zip(kept, fresh))
    er = manip.er(56)  # the caller's own copy: changing it leaves the kept map alone
    er[:] = ~er
    assert np.array_equal(manip.er(56), ~er) and manip.er(56).flags.writeable


def test_run_one_is_bit_for_bit_the_run_with_maps_per_image_and_arithmetic_normalisation(monkeypatch):
    """The training run (tracked, every saliency method) with the kept maps and the looked-up normalisation into a
    reused buffer against the path they replace."""
    from xaibench.evaluation.attribution_gt import manipulations as mp
    from xaibench.models import resnet_small

    rng = np.random.default_rng(1)
    images = {f"s{i}": [rng.integers(0, 255, (20, 20, 3), dtype=np.uint8) for _ in range(8)] for i in range(2)}
    cfg = ir.ImageConfig(canvas=16, widths=(4, 8), epochs=3, n_train=5, n_val=1, n_explain=2, smoothgrad_samples=2,
                         lime_samples=8, lime_segments=4, shap_samples=2, stop_val_acc=0)
    timing = ["seconds_per_image", "train_seconds"]
    for kind in ("brightness", "watermark"):
        manip = mp.random_manipulation(kind, np.random.default_rng(2))
        s_new, fin_new, tr_new = ir.run_one(images, ("s0", "s1"), manip, 0.5, 0, cfg, track=True)
        with monkeypatch.context() as m, mp.maps_per_image():
            m.setattr(resnet_small, "normalise", lambda x, out=None: resnet_small.normalise_arithmetic(x))
            s_old, fin_old, tr_old = ir.run_one(images, ("s0", "s1"), manip, 0.5, 0, cfg, track=True)
        assert {k: v for k, v in s_new.items() if k not in timing} == {k: v for k, v in s_old.items() if k not in timing}
        pd.testing.assert_frame_equal(fin_new.drop(columns=timing), fin_old.drop(columns=timing), check_exact=True)
        pd.testing.assert_frame_equal(tr_new.drop(columns=timing, errors="ignore"),
                                      tr_old.drop(columns=timing, errors="ignore"), check_exact=True)


def test_run_one_steps_adam_with_the_multi_tensor_step_and_trains_the_weights_of_the_per_parameter_loop(monkeypatch):
    """The image runs build Adam with foreach=True (one kernel per operation over all tensors): the read checkpoint's
    weights, every table and the Attr% of every method are bit for bit those of torch's per-parameter loop."""
    import torch

    from tests.helpers.optim import differing, record_adam
    from xaibench.evaluation.attribution_gt import manipulations as mp

    monkeypatch.delenv("XAIBENCH_LEVERS", raising=False)
    rng = np.random.default_rng(3)
    images = {f"s{i}": [rng.integers(0, 255, (20, 20, 3), dtype=np.uint8) for _ in range(8)] for i in range(2)}
    cfg = ir.ImageConfig(canvas=16, widths=(4, 8), epochs=3, n_train=5, n_val=1, n_explain=2, smoothgrad_samples=2,
                         lime_samples=8, lime_segments=4, shap_samples=2, stop_val_acc=0, best_checkpoint=True)
    manip = mp.random_manipulation("noise", np.random.default_rng(2))
    timing = ["seconds_per_image", "train_seconds"]
    runs = {}
    for force in ({}, {"foreach": False}):
        seen: list = []
        with monkeypatch.context() as m:
            record_adam(m, seen, **force)
            s, fin, tr = ir.run_one(images, ("s0", "s1"), manip, 0.5, 0, cfg, track=True)
        assert len(seen) == 1
        runs["loop" if force else "foreach"] = (*seen[0], s, fin, tr)  # (keywords, parameters, tables...)
    kw, params, s, fin, tr = runs["foreach"]
    _, loop_params, s_loop, fin_loop, tr_loop = runs["loop"]
    assert kw.get("foreach") is True and not kw.get("fused")
    assert differing(params, loop_params) == [] and len(params) > 4
    nudged = [p.detach().clone() for p in params]  # the comparison sees a one-ulp change
    nudged[0].view(-1)[0] = torch.nextafter(nudged[0].view(-1)[0], torch.tensor(np.inf))
    assert differing(nudged, params) == [0]
    assert {k: v for k, v in s.items() if k not in timing} == {k: v for k, v in s_loop.items() if k not in timing}
    pd.testing.assert_frame_equal(fin.drop(columns=timing), fin_loop.drop(columns=timing), check_exact=True)
    pd.testing.assert_frame_equal(tr.drop(columns=timing, errors="ignore"), tr_loop.drop(columns=timing, errors="ignore"),
                                  check_exact=True)
