"""Paper-comparison tables: aggregation over seeds and the join with the paper's numbers."""
import numpy as np
import pandas as pd
import pytest

from xaibench.evaluation.cebab import runner
from xaibench.evaluation.cebab.tables import cebab_performance_table


def _per_pair():
    rows = []
    # two seeds x two pairs; l2 per pair chosen so seed means are 0.5 and 0.7 (mean 0.6, population std 0.1)
    for seed, vals in [(42, (0.4, 0.6)), (43, (0.6, 0.8))]:
        for v in vals:
            for explainer, scale in [("approx", 1.0), ("random", 2.0)]:
                rows.append({"task": "5-way", "model": "minilm", "explainer": explainer, "seed": seed,
                             "l2": v * scale, "cosine": 0.5 * scale, "normdiff": 0.1 * scale})
    return pd.DataFrame(rows)


def test_icace_error_table_means_stds_and_paper_join():
    t = runner.icace_error_table(_per_pair())
    row = t[(t.explainer == "approx") & (t.metric == "l2")].iloc[0]
    assert row.ours == pytest.approx(0.6)
    assert row.ours_std == pytest.approx(0.1)  # population std (ddof=0), as the paper's ±
    assert row.n_seeds == 2 and row.n_pairs == 2
    assert row.table == "Table 10a" and row.paper_model == "bert-base-uncased"
    assert row.paper == pytest.approx(0.81) and row.paper_std == pytest.approx(0.01)  # Table 10a BERT approx L2
    rnd = t[(t.explainer == "random") & (t.metric == "cosine")].iloc[0]
    assert rnd.ours == pytest.approx(1.0) and rnd.ours_std == pytest.approx(0.0)
    assert bool(rnd.lower_is_better)


def test_kendall_agreement_on_a_known_ranking():
    t = pd.DataFrame({"task": "5-way", "model": "minilm", "metric": "l2",
                      "explainer": ["a", "b", "c", "d"], "ours": [1, 2, 3, 4], "paper": [4, 3, 2, 1.0]})
    k = runner.kendall_agreement(t).iloc[0]
    assert k.kendall_tau == pytest.approx(-1.0)
    assert k.best_ours == "a" and k.best_paper == "d"


def test_performance_table_uses_paper_rows_per_model():
    runs = pd.DataFrame({"model": ["minilm", "minilm", "lstm"], "task": ["binary"] * 3,
                         "split": ["exclusive"] * 3, "seed": [42, 43, 42],
                         "dev_macro_f1": [0.9, 0.8, 0.7], "test_macro_f1": [0.85, 0.85, 0.6]})
    t = cebab_performance_table(runs)
    dev = t[(t.model == "minilm") & (t.split == "dev")].iloc[0]
    assert dev.ours == pytest.approx(0.85) and dev.n_seeds == 2
    assert dev.paper == pytest.approx(0.97)  # Table 8, BERT, binary, exclusive, dev
    lstm = t[(t.model == "lstm") & (t.split == "test")].iloc[0]
    assert lstm.paper == pytest.approx(0.94) and np.isnan(lstm.ours_std)
    assert set(t.columns) >= {"ours", "ours_std", "paper", "n_seeds"}


def test_per_aspect_table_averages_pairs_then_seeds():
    from xaibench.evaluation.cebab import plots as cebab_plots

    pp = _per_pair()
    pp["aspect"] = ["food", "food", "noise", "noise"] * 2  # rows alternate approx/random per pair
    t = cebab_plots.per_aspect_table(pp)
    # approx, l2: the first pair of each seed is "food" -> seed values 0.4 and 0.6
    food = t[(t.explainer == "approx") & (t.aspect == "food") & (t.metric == "l2")].iloc[0]
    assert food.ours == pytest.approx(0.5) and food.ours_std == pytest.approx(0.1)
    noise = t[(t.explainer == "random") & (t.aspect == "noise") & (t.metric == "l2")].iloc[0]
    assert noise.ours == pytest.approx(2 * 0.7) and noise.n_seeds == 2 and noise.n_pairs == 1


def test_best_index_skips_missing_values_and_follows_direction():
    from xaibench.evaluation.cebab.plots import best_index

    assert best_index([0.3, np.nan, 0.1, 0.2]) == 2
    assert best_index([0.3, np.nan, 0.1, 0.2], lower_is_better=False) == 0
    assert best_index([np.nan, np.nan]) is None


def test_best_method_follows_lower_is_better():
    g = pd.DataFrame({"explainer": ["a", "b", "c"], "ours": [0.2, 0.9, 0.5], "metric": "l2"})
    assert runner.best_method(g, "ours") == "a"
    assert runner.best_method(g.assign(lower_is_better=False), "ours") == "b"


def test_icace_error_table_recomputes_with_a_rounding_convention():
    pp = pd.DataFrame({"task": "5-way", "model": "minilm", "explainer": "approx", "seed": [42, 42],
                       "icace": [np.array([3e-5, -2e-5]), np.array([0.2, 0.1])],
                       "estimate": [np.array([0.1, -0.1]), np.array([0.4, 0.2])]})
    paper = runner.icace_error_table(pp, rounding=4).set_index("metric")
    raw = runner.icace_error_table(pp, rounding=None).set_index("metric")
    assert paper.loc["cosine", "ours"] == pytest.approx(0.5)
    assert raw.loc["cosine", "ours"] == pytest.approx((1 - 5 / np.sqrt(26)) / 2)
    assert paper.loc["cosine", "n_pairs"] == 2 and np.isclose(paper.loc["cosine", "ours_std"], 0.0)


def test_icace_error_table_rounds_each_seed_mean_to_4_decimals_as_the_authors():
    # one pair per seed; l2 = 0.123456 unrounded (truth and estimate differ in one entry only)
    pp = pd.DataFrame({"task": "5-way", "model": "minilm", "explainer": "approx", "seed": [42, 43],
                       "icace": [np.array([0.0, 0.0]), np.array([0.0, 0.0])],
                       "estimate": [np.array([0.123456, 0.0]), np.array([0.123444, 0.0])]})
    t = runner.icace_error_table(pp, rounding=4).set_index("metric")
    assert t.loc["l2", "ours"] == pytest.approx((0.1235 + 0.1234) / 2)  # seed means rounded, then averaged
    raw = runner.icace_error_table(pp, rounding=None).set_index("metric")
    assert raw.loc["l2", "ours"] == pytest.approx((0.123456 + 0.123444) / 2)


def test_rounding_conventions_table_differences():
    pp = pd.DataFrame({"task": "5-way", "model": "minilm", "explainer": "approx", "seed": [42, 42],
                       "icace": [np.array([0.1, -0.1]), np.array([0.2, 0.1])],
                       "estimate": [np.array([3e-5, -2e-5]), np.array([0.4, 0.2])]})
    conv = runner.rounding_conventions_table(pp).set_index(["convention", "metric"])
    authors = conv.loc[("authors: true ICaCE rounded", "cosine")]
    both = conv.loc[("both vectors rounded (earlier)", "cosine")]
    assert authors["ours"] == pytest.approx(round((1 - 5 / np.sqrt(26)) / 2, 4))
    assert both["ours"] == pytest.approx(0.5)  # the near-zero estimate rounds to zero: distance 1
    assert both["diff_vs_authors"] == pytest.approx(0.5 - round((1 - 5 / np.sqrt(26)) / 2, 4))
    assert authors["diff_vs_authors"] == 0.0


def test_metric_grid_and_per_aspect_figures_draw(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from xaibench.evaluation.cebab import plots as cebab_plots

    t10 = runner.icace_error_table(_per_pair())
    g = cebab_plots.plot_metric_grid(t10, "l2", runner.EXPLAINERS)
    g.savefig(tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 0
    assert cebab_plots.plot_metric_grid(t10, "no-such-metric") is None
    pp = _per_pair().assign(aspect="food")
    g2 = cebab_plots.plot_per_aspect(cebab_plots.per_aspect_table(pp), "minilm", "5-way", runner.EXPLAINERS)
    assert set(g2.axes_dict) == {"cosine", "l2", "normdiff"}


def test_per_aspect_figure_draws_the_papers_table10_beside_ours():
    """Figure 2: the paper prints no per-aspect number, so its Table 10 value (BERT, 5-way, pooled over the
    aspects) stands as red ticks in the extra all-aspects group, beside our Table 10 bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from xaibench.evaluation.cebab import plots as cebab_plots

    t10 = runner.icace_error_table(_per_pair())
    per_aspect = cebab_plots.per_aspect_table(_per_pair().assign(aspect="food"))
    g = cebab_plots.plot_per_aspect(per_aspect, "minilm", "5-way", runner.EXPLAINERS, t10=t10)
    # Table 10a, BERT (src/xaibench/resources/cebab.csv): random, approx
    printed = {"l2": [0.94, 0.81], "cosine": [1.00, 0.61], "normdiff": [0.67, 0.44]}
    for metric, ax in g.axes_dict.items():
        [paper] = [c for c in ax.collections if c.get_label() == "paper"]
        xy = paper.get_offsets()
        assert xy[:, 1].tolist() == pytest.approx(printed[metric])
        assert xy[:, 0].tolist() == pytest.approx([1 - 0.4 + 0.2, 1 - 0.4 + 0.6])  # the all-aspects group
        assert [t.get_text() for t in ax.get_xticklabels()] == ["food", cebab_plots.ALL_ASPECTS]
        ours = t10[(t10.metric == metric)].set_index("explainer")["ours"]
        heights = sorted(round(b.get_height(), 6) for b in ax.patches if abs(b.get_x() + b.get_width() / 2 - 1) < 0.4)
        assert heights == sorted(round(ours[e], 6) for e in ("random", "approx"))
    legend = [t.get_text() for leg in g.figure.legends for t in leg.get_texts()]
    assert any("paper: Table 10 (bert-base-uncased)" in t and "no per-aspect number printed" in t for t in legend)
    plt.close(g.figure)
    # a model the paper has no row for: nothing drawn, and the legend says so
    g = cebab_plots.plot_per_aspect(per_aspect.assign(model="mystery"), "mystery", "5-way", runner.EXPLAINERS)
    ax = g.axes_dict["l2"]
    assert not [c for c in ax.collections if c.get_label() == "paper"]
    assert any(t.get_text().startswith("paper: no number printed") for leg in g.figure.legends for t in leg.get_texts())
    plt.close(g.figure)


def test_result_store_keys_on_the_convention(tmp_path, monkeypatch):
    """Results of an older convention (data/results/cebab/<model>/...) are never read back."""
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    from xaibench import paths

    per = pd.DataFrame({"split": "test", "aspect": "food", "explainer": "random", "l2": [0.5],
                        "icace": [np.array([0.1, -0.1])], "estimate": [np.array([0.0, 0.0])]})
    old = paths.results_dir() / "cebab" / "lstm" / "5-way" / "seed42" / "random.parquet"
    old.parent.mkdir(parents=True)
    per.assign(icace=[[0.1, -0.1]], estimate=[[0.0, 0.0]]).to_parquet(old)
    assert runner.load_results(["lstm"], ["5-way"], [42], ["random"]).empty
    dest = runner.save_result(per, "lstm", "5-way", 42, "random")
    assert runner.CONVENTION in dest.parts and dest != old
    back = runner.load_results(["lstm"], ["5-way"], [42], ["random"])
    assert len(back) == 1 and back["convention"].iloc[0] == runner.CONVENTION
    # the explained-model CausaLM variant is stored beside, never instead of, the factual one
    assert runner.result_path("lstm", "5-way", 42, "causalm", causalm_baseline="explained").name == \
        "causalm-e2@explained.parquet"
    # the paper staging (default) never reads results of the earlier staging, stored as causalm.parquet
    assert runner.result_path("lstm", "5-way", 42, "causalm").name == "causalm-e2.parquet"
    assert runner.result_name("causalm", causalm_staging="explained") == "causalm"
    assert runner.result_name("causalm", "explained", "explained") == "causalm@explained"
    assert runner.explainer_kwargs("causalm", 0)["staging"] == runner.CAUSALM_STAGING == "paper"


def test_grouped_bars_draws_means_and_std_error_bars_at_the_bar_centres():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from xaibench.plotting import grouped_bars

    d = pd.DataFrame({"x": ["a", "a", "b", "b", "a"], "h": ["p", "q", "p", "q", "p"],
                      "y": [1.0, 2.0, 3.0, 4.0, 3.0], "e": [0.5, np.nan, 0.25, 1.0, 0.5]})
    fig, ax = plt.subplots()
    grouped_bars(d, "x", "y", "h", "e", ax)
    bars = sorted((round(p.get_x() + p.get_width() / 2, 6), p.get_height()) for p in ax.patches if p.get_height())
    # a/p averages its two rows (1 and 3 -> 2); centres at -0.2 / +0.2 around each x position
    assert bars == [(-0.2, 2.0), (0.2, 2.0), (0.8, 3.0), (1.2, 4.0)]
    segs = sorted(tuple(np.round(s, 6).ravel()) for c in ax.containers if hasattr(c, "lines") and c.lines[2]
                  for s in c.lines[2][0].get_segments())
    # error bars: a/p 2 +- 0.5, a/q none (NaN -> 0), b/p 3 +- 0.25, b/q 4 +- 1
    assert segs == [(-0.2, 1.5, -0.2, 2.5), (0.2, 2.0, 0.2, 2.0), (0.8, 2.75, 0.8, 3.25), (1.2, 3.0, 1.2, 5.0)]
    with pytest.raises(ValueError, match="columns"):
        grouped_bars(d, "x", "y", "h", "std", ax)
    plt.close(fig)
