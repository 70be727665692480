"""Article datasets: every changed token lies inside the ER; label-reassignment statistics."""
import numpy as np
import pandas as pd
import pytest

from xaibench.evaluation.attribution_gt import check_inside_er
from xaibench.evaluation.attribution_gt import text_data as td

REVIEWS = ["a : pours a hazy gold with an off-white head . the lacing is great",
           "appearance : dark brown , the head is thin",
           "a : clear copper , nice head and good lacing",  # no article: dropped
           "pours an amber color with a thick head . the retention is ok . lacing on the glass"] * 50


def _df():
    return pd.DataFrame({"text": REVIEWS, "label": [0, 1, 0, 1] * 50})


def test_header_is_not_an_article():
    assert td.clean_review("a : pours a gold") == ["pours", "a", "gold"]
    assert td.clean_review("appearance : dark") == ["dark"]


@pytest.mark.parametrize("kind", td.KINDS)
def test_changes_stay_inside_er_and_follow_label(kind):
    ds = td.build_article_dataset(_df(), kind=kind, seed=1, n_train=70, n_val=10, n_test=20)
    assert ds.n_dropped == (50 if kind != "nc" else 100)  # article-free review (+ one whose 2nd half has none)
    for sp in (ds.train, ds.val, ds.test):
        for i in range(len(sp)):
            new, orig = np.array(sp.tokens(i)), np.array(sp.orig_tokens[i])
            joint = sp.corr[i] | sp.noncorr[i]
            check_inside_er(orig, new, joint)
            want = "the" if sp.labels[i] == 1 else "a"
            assert (new[sp.corr[i]] == want).all() and sp.corr[i].any()
            if kind != "article":
                n = len(new)
                first = np.arange(n) < (n + 1) // 2
                corr_half = first if kind == "cn" else ~first
                assert not (sp.corr[i] & ~corr_half).any() and not (sp.noncorr[i] & corr_half).any()
                assert len(set(new[sp.noncorr[i]])) <= 1  # one coin per review


def test_noncorrelating_articles_are_independent_of_label():
    df = pd.DataFrame({"text": ["the beer is a gold one and a bit hazy with a head"] * 4000,
                       "label": np.arange(4000) % 2})
    ds = td.build_article_dataset(df, kind="nc", seed=0, n_train=3000, n_val=500, n_test=500)
    sp = ds.train
    nc_the = np.array([np.array(sp.tokens(i))[sp.noncorr[i]][0] == "the" for i in range(len(sp))])
    # P(the | y) = 0.5 for both labels (4 sd at n=1500 is ~0.05)
    for y in (0, 1):
        assert abs(nc_the[sp.labels == y].mean() - 0.5) < 0.06
    # r = 0.5: the new labels are independent of the original ones
    agree = (sp.labels == sp.orig_labels).mean()
    assert abs(agree - 0.5) < 0.04


# --- Figs. 10-11 bar colours (text_plots) ---------------------------------------------------------

def test_attention_bar_colours_follow_token_roles():
    from xaibench.evaluation.attribution_gt import text_plots as tp

    corr = np.array([True, False, False, True])
    noncorr = np.array([False, True, False, False])
    assert tp.role_colours(corr, noncorr).tolist() == ["tab:orange", "tab:red", "tab:green", "tab:orange"]
    with pytest.raises(ValueError, match="one flag per token"):
        tp.role_colours(corr, noncorr[:3])


def test_plot_attention_draws_one_bar_per_token_and_rejects_misaligned_weights():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex
    from xaibench.evaluation.attribution_gt import text_plots as tp

    fig, ax = plt.subplots()
    tokens, w = ["the", "beer", "is", "a", "stout"], [0.5, 0.1, 0.0, 0.3, 0.1]
    corr = np.array([1, 0, 0, 0, 0], bool)
    noncorr = np.array([0, 0, 0, 1, 0], bool)
    tp.plot_attention(ax, tokens, w, corr, noncorr, "t")
    bars = ax.patches
    assert [b.get_height() for b in bars] == w
    assert [to_hex(b.get_facecolor()) for b in bars] == [to_hex(c) for c in
                                                        ("tab:orange", "tab:green", "tab:green", "tab:red", "tab:green")]
    assert [t.get_text() for t in ax.get_xticklabels()] == tokens
    with pytest.raises(ValueError, match="5 tokens but 4"):
        tp.plot_attention(ax, tokens, w[:4], corr, noncorr, "t")
    plt.close(fig)


def test_panel_reviews_prefers_readable_lengths():
    from xaibench.evaluation.attribution_gt import text_plots as tp

    class Split:
        def __init__(self, lengths):
            self.lengths = lengths

        def __len__(self):
            return len(self.lengths)

        def tokens(self, i):
            return ["w"] * self.lengths[i]

    assert tp.panel_reviews(Split([5, 20, 60, 30, 40]), 2) == [1, 3]
    assert tp.panel_reviews(Split([5, 80, 3]), 2) == [0, 1]  # none readable: the first ones
    assert tp.panel_reviews(Split([5]), 2) == [0]
