"""Known-value tests of the attribution ground-truth result tables and figures (attribution_gt.tables,
image_plots, text_plots) on tiny hand-made run results."""
import json

import numpy as np
import pandas as pd
import pytest

from xaibench.evaluation.attribution_gt import image_plots as ip
from xaibench.evaluation.attribution_gt import tables as at
from xaibench.evaluation.attribution_gt import text_plots as tp


def _att():
    hist = json.dumps([{"epoch": 1, "dev_acc": 0.9, "val_attn_corr": 0.2, "val_attn_noncorr": 0.0},
                       {"epoch": 2, "dev_acc": 0.98, "val_attn_corr": 0.5, "val_attn_noncorr": 0.0},
                       {"epoch": 3, "dev_acc": 0.99, "val_attn_corr": 0.6, "val_attn_noncorr": 0.0}])
    base = {"n_reviews": 100, "share_noncorr_tokens": 0.0, "noncorr": 0.0, "epoch_history": hist}
    return pd.DataFrame([
        {**base, "dataset": "article", "run": 0, "method": "attention", "corr": 0.6, "other": 0.4, "test_acc": 0.99,
         "share_corr_tokens": 0.1},
        {**base, "dataset": "article", "run": 1, "method": "attention", "corr": 0.8, "other": 0.2, "test_acc": 0.97,
         "share_corr_tokens": 0.1},
        {**base, "dataset": "article", "run": 0, "method": "lime", "corr": 0.3, "other": 0.7, "test_acc": 0.99,
         "share_corr_tokens": 0.1},
        {**base, "dataset": "cn", "run": 0, "method": "attention", "corr": 0.5, "noncorr": 0.2, "other": 0.3,
         "test_acc": 0.98, "share_corr_tokens": 0.06, "share_noncorr_tokens": 0.04},
    ])


def test_attention_table_known_values_and_paper_join():
    t = at.attention_table(_att())
    row = t[(t.dataset == "article") & (t.method == "attention") & (t.region == "corr")].iloc[0]
    assert row.ours == pytest.approx(0.7) and row.ours_std == pytest.approx(np.std([0.6, 0.8], ddof=1))
    assert row.paper == pytest.approx(0.086) and row.paper_uniform_share == pytest.approx(0.079)
    assert row.test_acc == pytest.approx(0.98) and row.test_acc_min == pytest.approx(0.97) and row.n_runs == 2
    lime = t[(t.method == "lime") & (t.region == "corr")].iloc[0]
    assert np.isnan(lime.paper) and lime.paper_uniform_share == pytest.approx(0.079)  # only attention has 8.6 %
    assert not ((t.dataset == "article") & (t.region == "noncorr")).any()
    cn = t[t.dataset == "cn"].set_index("region")
    assert cn.loc["noncorr", "uniform_share"] == pytest.approx(0.04)
    assert cn.loc["other", "uniform_share"] == pytest.approx(0.9)
    assert cn["paper"].isna().all() and cn["paper_uniform_share"].isna().all()  # never 0 where the paper is silent
    assert list(t.lower_is_better) == [r != "corr" for r in t.region]


def test_attention_epochs_table_marks_the_stop_epoch():
    ep = at.attention_epochs_table(_att())
    assert len(ep) == 3 * 3  # three attention runs, three epochs each; the explainer row is skipped
    run0 = ep[(ep.dataset == "article") & (ep.run == 0)]
    assert list(run0.crossed) == [False, True, False]
    assert list(run0.val_attn_corr) == [0.2, 0.5, 0.6]


def test_rationale_table_joins_the_accuracy_bound():
    rat = pd.DataFrame([{"dataset": d, "model": "rl", "target_rate": 0.1, "precision": 0.9, "recall": 0.8,
                         "noncorr_share_of_selection": 0.1, "rate": 0.09, "test_acc": 0.99,
                         "first3_selected_share": 0.2, "optimal_precision": 1.0, "optimal_recall": 0.85,
                         "reached_target": True, "epochs": 3} for d in ("article", "cn")])
    t = at.rationale_table(rat)
    assert len(t) == 2 * len(at.RATIONALE_METRICS)
    acc = t[t.metric == "test_acc"]
    assert (acc.paper == 0.97).all() and (acc.paper_bound == ">").all()
    other = t[t.metric != "test_acc"]
    assert other.paper.isna().all() and (other.paper_bound == "").all()
    prec = t[(t.dataset == "cn") & (t.metric == "precision")].iloc[0]
    assert prec.ours == 0.9 and prec.optimal == 1.0
    assert t[(t.metric == "recall")].optimal.tolist() == [0.85, 0.85]


def _images():
    """Four runs: two Fig. 5 runs (one learned), two visibility levels of noise (the second learned)."""
    runs = pd.DataFrame([{"experiment": "er", "run": 0, "test_acc": 0.99}, {"experiment": "er", "run": 1, "test_acc": 0.6},
                         {"experiment": "visibility-noise-0-0", "run": 2, "test_acc": 0.5},
                         {"experiment": "visibility-noise-0-1", "run": 3, "test_acc": 1.0}])
    rows = []
    for _, run in runs.iterrows():
        for method in ("gradient", "shap"):
            for label, a in ((1, 0.8), (0, 0.4)):
                for img in range(2):  # two images per class: Attr% a +- 0.1 (mean a)
                    rows.append({"experiment": run.experiment, "run": run.run, "test_acc": run.test_acc,
                                 "manipulation": "noise", "method": method, "label": label, "r": 0.5,
                                 "er_size": 0.3, "attr_pct": a + (0.1 if img else -0.1) + 0.1 * run.run})
    return runs, pd.DataFrame(rows)


def test_saliency_table_counts_learned_runs_and_levels():
    runs, attr = _images()
    t = at.saliency_table(runs, attr)
    er = t[(t.group == "er") & (t.metric == "attr_pct") & (t.method == "shap") & (t["class"] == "positive")].iloc[0]
    assert er.n_runs == 2 and er.n_learned == 1
    assert er.ours == pytest.approx(0.85)  # runs 0 and 1: 0.8 and 0.9
    assert er.ours_learned == pytest.approx(0.8)  # run 0 only
    assert np.isnan(er.level) and np.isnan(er.paper)
    vis = t[(t.group == "visibility-noise") & (t.method == "gradient") & (t["class"] == "negative")]
    assert list(vis.level) == [0, 1] and list(vis.n_learned) == [0, 1]
    assert np.isnan(vis.ours_learned.iloc[0]) and vis.ours_learned.iloc[1] == pytest.approx(0.7)
    share = t[t.metric == at.SHARE_METRIC].iloc[0]
    assert share.ours == pytest.approx(0.5) and share.n_learned == 1 and share.n_runs == 2
    assert share.paper == pytest.approx(0.70)


def test_group_and_level_parsing():
    e = pd.Series(["er", "visibility-hue-2-4", "r-similar", "r-distinct"])
    assert list(at.experiment_group(e)) == ["er", "visibility-hue", "r", "r"]
    lv = at.visibility_level(e)
    assert lv.iloc[1] == 4 and lv.drop(1).isna().all()


def test_image_figures_name_the_paper_figure_and_learned_runs():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs, attr = _images()
    fig = ip.fig5_attr_vs_er(attr)
    title = fig._suptitle.get_text()
    assert title.startswith("Zhou et al. 2022, Fig. 5") and "2 runs" in title and "1 of 2 runs learned" in title
    assert [ax.get_title() for ax in fig.axes[:2]] == ["Gradient", "SHAP"]
    assert fig.axes[0].get_ylabel() == ip.ATTR_LABEL
    plt.close(fig)
    fig = ip.fig7_attr_vs_visibility(attr)
    assert "Fig. 7" in fig._suptitle.get_text() and "1 of 2 runs learned" in fig._suptitle.get_text()
    assert fig.axes[0].get_xlabel() == "visibility level (0 = least visible)"
    plt.close(fig)
    assert ip.fig8_attr_vs_r(attr, runs) is None and ip.fig6_attr_vs_acc(pd.DataFrame()) is None
    track = attr[attr.experiment == "er"].assign(epoch=1)
    fig = ip.fig6_attr_vs_acc(pd.concat([track, track.assign(epoch=2)]))
    assert "Fig. 6" in fig._suptitle.get_text() and fig.axes[0].get_xlabel() == "test accuracy after the epoch"
    plt.close(fig)


def test_fig5_puts_the_papers_learned_share_beside_ours_and_says_it_prints_no_attr():
    """Fig. 5: the paper's 70 % of 100 runs (Sec. 5.1) beside our learned runs; its one Attr% number (SHAP's
    average, Sec. 5.1) is missing from our copy of the text, and the legend says that none is drawn."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    assert ip.fig5_paper_share() == (pytest.approx(0.70), 100)
    fig = ip.fig5_attr_vs_er(_images()[1])
    assert "1 of 2 runs learned the manipulation (test accuracy > 95%) (paper: 70% of its 100 runs)" in \
        fig._suptitle.get_text()
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "paper: 70% of 100 runs learned\n(Sec. 5.1)" in legend and ip.FIG5_NO_PAPER_ATTR in legend
    assert ip.FIG5_NO_PAPER_ATTR.startswith("paper: no Attr% number")
    plt.close(fig)


def test_manipulation_grid_has_a_colour_scale_for_the_effective_regions():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0)
    fig = ip.manipulation_grid([rng.integers(0, 256, (64, 64, 3), dtype=np.uint8) for _ in range(2)], size=48)
    [cbar] = [ax._colorbar for ax in fig.axes if hasattr(ax, "_colorbar")]
    assert cbar.ax.get_xlabel() == ip.ER_COLOUR_LABEL and (cbar.vmin, cbar.vmax) == (0, 1)
    plt.close(fig)


def test_shapley_band_known_values():
    lo = ip.shapley_band(np.array([0.5, 1.0]), 1.0)
    assert lo[0] == pytest.approx(1.0)  # random labels: only the manipulation can explain the accuracy
    assert lo[1] == pytest.approx(0.5)  # r = 1: the original features explain it as well as the manipulation


def test_attention_attr_bars_draw_the_papers_8_6_and_7_9_percent():
    """Sec. 6.1: attention Attr% on the article dataset's articles is 8.6 %, articles are 7.9 % of all words;
    both are drawn in red beside our bars (the tick on the attention / article bar)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = tp.attr_bars(at.attention_table(_att()))
    ax = fig.axes[0]
    [tick] = [c for c in ax.collections if c.get_label().startswith("paper")]
    assert tick.get_label() == "paper (Sec. 6.1): attention on the article dataset, 8.6%"
    assert tick.get_offsets()[0].tolist() == pytest.approx([0 - 0.4 + 0.2, 0.086])  # attention, first of 2 datasets
    [share] = [ln for ln in ax.lines if ln.get_label().startswith("paper")]
    assert share.get_label() == "paper (Sec. 6.1): articles are 7.9% of all words"
    assert list(share.get_ydata()) == pytest.approx([0.079, 0.079])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert tick.get_label() in legend and share.get_label() in legend
    plt.close(fig)


def test_text_figures_have_readable_titles():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = at.attention_table(_att())
    fig = tp.attr_bars(t)
    assert "Fig. 1 (left)" in fig.axes[0].get_title() and "2 attention runs" in fig.axes[0].get_title()
    plt.close(fig)
    fig = tp.attr_bars(t.assign(paper=np.nan))  # no bar the paper prints a number for: only its 7.9 % share
    assert not [c for c in fig.axes[0].collections if c.get_label().startswith("paper")]
    assert [ln.get_label() for ln in fig.axes[0].lines if ln.get_label().startswith("paper")] == [
        "paper (Sec. 6.1): articles are 7.9% of all words"]
    plt.close(fig)
    fig = tp.attention_training_curves(at.attention_epochs_table(_att()), 0.1)
    assert fig.axes[0].get_xlabel() == "validation accuracy after the epoch"
    plt.close(fig)
    rat = pd.DataFrame([{"dataset": d, "model": m, "target_rate": 0.1, "precision": 0.6, "optimal_precision": 0.8,
                         "noncorr_share_of_selection": 0.3, "rate": 0.08, "recall": 0.9}
                        for d in ("article", "cn", "nc") for m in ("rl", "cr")])
    fig = tp.rationale_precision_recall(rat, 0.09)
    assert "Fig. 12 (top)" in fig._suptitle.get_text() and "2 models" in fig._suptitle.get_text()
    plt.close(fig)
    fig = tp.rationale_cn_nc(rat)
    assert "Fig. 13 (top)" in fig._suptitle.get_text() and "4 models" in fig._suptitle.get_text()
    assert {ax.get_title() for ax in fig.axes} == {"RL", "CR"}
    plt.close(fig)
    assert tp.rationale_cn_nc(rat[rat.dataset == "article"]) is None


def test_watermark_glyph_table_pairs_runs_by_glyph_size():
    from xaibench.evaluation.attribution_gt import tables as gt

    group = pd.DataFrame({"run": [0, 8, 9, 10], "manipulation": ["blur", "watermark", "watermark", "watermark"],
                          "glyph_px": [None, 13, 13, 13], "test_acc": [0.99, 0.985, 0.96, 0.97], "epochs": [3, 2, 1, 1]})
    glyph = pd.DataFrame({"run": [8, 9], "manipulation": "watermark", "glyph_px": [6, 6], "test_acc": [0.5, 0.57],
                          "epochs": [20, 20]})
    t = gt.watermark_glyph_table(group, glyph)
    # the blur run is not part of it, nor watermark run 10, which only one glyph size trained
    assert list(zip(t.run, t.glyph_px)) == [(8, 6), (8, 13), (9, 6), (9, 13)]
    assert list(t.learned) == [False, True, False, True] and list(t.ours) == [0.5, 0.985, 0.57, 0.96]
    assert t.paper.isna().all() and t.metric.eq("test_acc").all()
    assert gt.learned_summary(t, "glyph_px", "glyphs of ") == (
        "glyphs of 6: 0 of 2 runs learn (run 8: 0.500 after 20 epochs, run 9: 0.570 after 20 epochs). "
        "glyphs of 13: 2 of 2 runs learn (run 8: 0.985 after 2 epochs, run 9: 0.960 after 1 epoch).")


def test_stages_table_pairs_runs_and_states_receptive_fields():
    """One row per (run, model) for the runs more than one model trained; rf_px from receptive_field (47 px for three
    stages, 95 for four: 47 / 112 and 95 / 112 of the canvas); n_params counted by hand for widths (2,) and (2, 4):
    stem 3*2*9 + 2*2 = 58; block 2->2: 2 * (2*2*9 + 2*2) = 80; head 2*2 + 2 = 6 -> 144; block 2->4 (stride 2):
    2*4*9 + 8 + 4*4*9 + 8 + shortcut 2*4 + 8 = 248, head 4*2 + 2 = 10 -> 58 + 80 + 248 + 10 = 396;
    learned = test accuracy over 0.95."""
    import pandas as pd

    from xaibench.evaluation.attribution_gt.tables import stages_table

    three = pd.DataFrame({"run": [0, 1, 2], "manipulation": ["blur", "brightness", "hue"], "test_acc": [0.98, 0.94, 0.9],
                          "epochs": [5, 40, 40]})
    four = pd.DataFrame({"run": [0, 1], "manipulation": ["blur", "brightness"], "test_acc": [0.97, 0.96],
                         "epochs": [4, 37]})
    wide = pd.DataFrame({"run": [1], "manipulation": ["brightness"], "test_acc": [0.948], "epochs": [40]})
    t = stages_table({(16, 32, 64): three, (16, 32, 64, 128): four, (32, 64, 128): wide}, canvas=112)
    assert list(zip(t["run"], t["widths"])) == [(0, "16/32/64"), (0, "16/32/64/128"), (1, "16/32/64"),
                                                (1, "32/64/128"), (1, "16/32/64/128")]
    assert list(t["rf_px"]) == [47, 95, 47, 47, 95] and t["rf_share"].round(4).tolist()[:2] == [0.4196, 0.8482]
    assert list(t["learned"]) == [True, True, False, False, True] and list(t["ours"]) == [0.98, 0.97, 0.94, 0.948, 0.96]
    small = stages_table({(2,): three, (2, 4): four}, canvas=112)
    assert list(small["n_params"]) == [144, 396, 144, 396]


def test_saliency_runs_table_is_each_runs_mean_over_its_images():
    attr = pd.DataFrame({"experiment": ["er-groups"] * 4, "manipulation": ["blur"] * 4, "method": ["gradient"] * 4,
                         "label": [1, 1, 0, 0], "r": [0.5] * 4, "run": [3, 3, 3, 3], "attr_pct": [0.2, 0.4, 0.1, 0.3],
                         "test_acc": [0.97] * 4, "er_size": [0.1] * 4})
    t = at.saliency_runs_table(attr).set_index("class")
    assert t.loc["positive", "ours"] == pytest.approx(0.3) and t.loc["negative", "ours"] == pytest.approx(0.2)
    assert (t["n_images"] == 2).all() and t["learned"].all() and (t["run"] == 3).all()
