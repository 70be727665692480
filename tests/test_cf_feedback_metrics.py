"""Known-value tests for the counterfactual-feedback metrics (Filandrianos et al. 2023)."""
import math

import numpy as np
import pandas as pd
import pytest

from xaibench.evaluation.cf_feedback import metrics as cf

from tests.helpers.basic_models import KeywordClassifier


def test_levenshtein_known_values():
    assert cf.levenshtein("kitten", "sitting") == 3
    assert cf.levenshtein([], ["a", "b"]) == 2
    assert cf.levenshtein(["this", "movie", "was", "fantastic", "!"], ["this", "movie", "was", "awful", "!"]) == 1
    # word level, unnormalised: deleting 3 of 5 words costs 3
    assert cf.levenshtein("a b c d e".split(), "a e".split()) == 3


def test_minimality_uses_spacy_tokens():
    # spaCy splits "awful!" into two tokens and "n't" off "wasn't"
    assert cf.minimality("This movie was fantastic!", "This movie was awful!") == 1
    assert cf.minimality("It was good.", "It wasn't good.") == 1


def test_inc_relu_and_steps():
    # d = 2, 5, 1, 1, 4  -> relu(3), relu(-4), relu(0), relu(3)
    np.testing.assert_allclose(cf.inc_steps([2, 5, 1, 1, 4]), [3, 0, 0, 3])
    assert cf.inc_at_n_chain([2, 5, 1, 1, 4], 1) == 3
    assert cf.inc_at_n_chain([2, 5, 1, 1, 4], 2) == 1.5
    assert cf.inc_at_n_chain([2, 5, 1, 1, 4], 9) == 1.5  # mean over the 4 existing steps
    assert math.isnan(cf.inc_at_n_chain([3], 1))        # one edit: no inconsistency step


def test_inc_odd_even_pattern_and_early_ended_chains():
    # an editor that needs 2 edits to leave the class and 6 to come back: inc on even steps only
    chain = [2, 6, 2, 6, 2, 6, 2, 6, 2]
    np.testing.assert_allclose(cf.inc_steps(chain), [4, 0, 4, 0, 4, 0, 4, 0])
    short = [1, 3]  # ended after two edits: only step 1 exists (inc = 2)
    t = cf.inc_table([chain, short])
    assert t.loc[t.step == 1, "mean"].item() == 3.0 and t.loc[t.step == 1, "n"].item() == 2
    assert t.loc[t.step == 2, "mean"].item() == 0.0 and t.loc[t.step == 2, "n"].item() == 1
    # inc@n pools the per-(text, step) values (the authors' inconsistency.py), not the per-step means:
    # inc@2 = mean(4, 0, 2) = 2 (per-step means: mean(3, 0) = 1.5); inc@9 = (4+0+4+0+4+0+4+0+2)/9 = 2
    assert cf.inc_at_n([chain, short], 2) == 2.0
    assert cf.inc_at_n([chain, short], 9) == 2.0


def test_inc_at_n_pools_text_step_values_by_hand():
    # chain a: d = 1, 3, 2 -> inc 2, 0; chain b: d = 5, 1 -> inc 0
    # pooled inc@2 = (2 + 0 + 0) / 3; the mean of per-step means would be ((2+0)/2 + 0) / 2 = 0.5
    assert cf.inc_at_n([[1, 3, 2], [5, 1]], 2) == pytest.approx(2 / 3)
    assert cf.inc_at_n([[1, 3, 2], [5, 1]], 1) == pytest.approx(1.0)  # step 1: (2 + 0) / 2
    # complete chains (every text every step): pooled = mean of per-step means
    chains = [[1, 4, 2, 6], [3, 3, 5, 1]]  # inc: 3, 0, 4 and 0, 2, 0
    assert cf.inc_at_n(chains, 3) == pytest.approx(9 / 6)
    assert cf.inc_at_n(chains, 3) == pytest.approx(cf.inc_table(chains, 4)["mean"].mean())
    assert math.isnan(cf.inc_at_n([[2], []], 3))


def test_flip_rate_counts_ended_chains_as_not_flipped():
    assert cf.flip_rate([True, False, True, True]) == 0.75
    assert cf.flip_rate([True, True], n_all=4) == 0.5
    assert cf.METRICS["flip_rate"].lower_is_better is False
    assert cf.METRICS["inc"].lower_is_better and cf.METRICS["minimality"].lower_is_better


def test_selection_rule():
    # candidates (pred, dist): the flipping ones are idx 1 (d=5) and 3 (d=2) -> 3
    assert cf.select_candidate(0, [0, 1, 0, 1], [1, 5, 0, 2]) == 3
    # nothing flips -> lowest minimality overall, first on ties
    assert cf.select_candidate(0, [0, 0, 0], [4, 2, 2]) == 1
    with pytest.raises(ValueError):
        cf.select_candidate(0, [], [])


class _SwapEditor:
    """Swaps good<->bad; offers a long noisy candidate too; returns nothing for 'stop'."""
    name = "swap"

    def explain(self, texts, targets=None):
        out = []
        for t in texts:
            if "stop" in t.split():
                out.append([])
                continue
            sw = " ".join({"good": "bad", "bad": "good"}.get(w, w) for w in t.split())
            out.append([t + " x y z", sw, t])
        return out


def test_run_chains_selection_flip_and_early_end():
    split = str.split
    ch = cf.run_chains(_SwapEditor(), cf.CountingPredictor(KeywordClassifier("good", p_hit=0.9, p_miss=0.2, tokenize=str.split)), ["a good film", "stop here"], n_steps=3,
                       tokenize=split)
    a = ch[ch.text_id == 0]
    assert a.text.tolist() == ["a good film", "a bad film", "a good film", "a bad film"]
    assert a.minimality.tolist()[1:] == [1, 1, 1] and a.flipped.tolist()[1:] == [True, True, True]
    # the editor returned nothing for "stop here": the chain keeps its last text at every step
    b = ch[ch.text_id == 1]
    assert b.step.tolist() == [0, 1, 2, 3] and b.text.tolist() == ["stop here"] * 4
    assert b.carried.tolist() == [False, True, True, True] and b.minimality.tolist()[1:] == [0, 0, 0]
    assert b.flipped.tolist()[1:] == [False, False, False] and b.n_candidates.tolist()[1:] == [0, 0, 0]
    assert not a.carried.any()
    assert cf.flip_rate_at(ch, 1) == 0.5
    assert cf.chain_distances(ch) == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]


class _StopsLater:
    """Appends a word until the text has ``stop_at`` words, then returns nothing; counts the texts it is asked."""
    name = "later"

    def __init__(self, stop_at):
        self.stop_at, self.asked = stop_at, []

    def explain(self, texts, targets=None):
        self.asked += list(texts)
        return [[t + " w"] if len(t.split()) < self.stop_at else [] for t in texts]


def test_run_chains_keeps_the_last_text_when_the_editor_stops_mid_chain():
    ed = _StopsLater(stop_at=3)
    model = cf.CountingPredictor(KeywordClassifier("good", p_hit=0.9, p_miss=0.2, tokenize=str.split))
    ch = cf.run_chains(ed, model, ["a", "good b c d"], n_steps=4, tokenize=str.split)
    assert len(ch) == 2 * 5 and ch.groupby("text_id").step.apply(list).tolist() == [[0, 1, 2, 3, 4]] * 2
    a = ch[ch.text_id == 0]
    assert a.text.tolist() == ["a", "a w", "a w w", "a w w", "a w w"]
    assert a.minimality.tolist()[1:] == [1, 1, 0, 0] and a.carried.tolist() == [False, False, False, True, True]
    # a text that got nothing is not submitted again (the editors are deterministic in their input)
    assert ed.asked.count("a w w") == 1 and ed.asked.count("good b c d") == 1
    # carried steps add inc 0 and count in the pooled mean: inc steps 0, 0, 0 (d = 1, 1, 0, 0)
    assert cf.inc_at_n(cf.chain_distances(ch), 3) == 0.0


def test_ttests_shape_and_identical_samples():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 8))
    res = cf.ttests({"a": x, "b": x + 5.0}, sample_sizes=[10, 20], steps=[1, 2])
    assert len(res) == 2 * 2 * 2
    assert (res.p_value < 1e-6).all()
    assert cf.per_text_inc_matrix(pd.DataFrame({"text_id": [0, 0, 0], "step": [0, 1, 2],
                                                "minimality": [np.nan, 1, 4]}))[0, 0] == 3


def _synthetic_chains():
    rows = []
    for e, dists in (("mice", [[2, 6, 2], [2, 2, 2]]), ("textfooler", [[1, 1, 1], [1, 1]])):
        for tid, d in enumerate(dists):
            rows.append({"dataset": "imdb", "editor": e, "text_id": tid, "step": 0, "minimality": np.nan,
                         "flipped": np.nan, "n_tokens": 10, "p_target": np.nan})
            for k, v in enumerate(d, 1):
                rows.append({"dataset": "imdb", "editor": e, "text_id": tid, "step": k, "minimality": v,
                             "flipped": k % 2 == 1, "n_tokens": 10, "p_target": 0.6})
    return pd.DataFrame(rows)


def test_result_tables_known_values():
    from xaibench.evaluation.cf_feedback import runner as R

    ch = _synthetic_chains()
    t1 = R.table_inconsistency(ch, ns=(1, 2))
    mice = t1[t1.editor == "mice"].set_index("metric")["ours"]
    # mice steps: text0 inc = [4, 0], text1 inc = [0, 0] -> step means 2, 0 -> inc@1 = 2, inc@2 = 1
    assert mice["inc@1"] == 2.0 and mice["inc@2"] == 1.0
    assert t1.loc[(t1.editor == "mice") & (t1.metric == "inc@1"), "paper"].item() == 0.86
    t2 = R.table_flip_rate(ch, ns=(1, 3))
    tf = t2[t2.editor == "textfooler"].set_index("metric")["ours"]
    assert tf["flip_rate@1"] == 1.0 and tf["flip_rate@3"] == 0.5  # text 1 ended after two edits
    t45 = R.table_sample_size(ch, sample_sizes=(2,))
    assert set(t45.columns) >= {"ours", "ours_std", "paper", "sample_size", "step"}


def test_step_plot_titles_count_texts_per_panel():
    """A panel scored on fewer texts than the others (base-LM fluency) says how many."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from xaibench.evaluation.cf_feedback import runner as R

    rows = [{"dataset": "imdb", "editor": e, "text_id": t, "step": s, "minimality": 0.1 * s,
             "nll_base": (1.0 + s) if t == 0 else float("nan")}
            for e in R.EDITOR_ORDER for t in (0, 1, 2) for s in (1, 2)]
    fig = R.plot_steps(pd.DataFrame(rows), "imdb", [("minimality", "(a) minimality"), ("nll_base", "(d) base-LM NLL")],
                       "Figure 3")
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["(a) minimality, symlog", "(d) base-LM NLL (1 text)"]
    assert fig._suptitle.get_text() == "Figure 3 (3 texts per editor)"
    plt.close(fig)
    # base-LM fluency on every text at step 1 (Table 3's step) but on one at step 2: the title gives the range
    rows = [{**r, "nll_base": 1.0 + r["step"] if (r["text_id"] == 0 or r["step"] == 1) else float("nan")} for r in rows]
    fig = R.plot_steps(pd.DataFrame(rows), "imdb", [("nll_base", "(d) base-LM NLL")], "Figure 3")
    assert [ax.get_title() for ax in fig.axes if ax.get_title()] == ["(d) base-LM NLL (1-3 texts by step)"]
    plt.close(fig)


def test_step_plot_shows_outliers_and_means_on_a_symlog_axis():
    """One text's step-1 inc of 40 among zeros (Polyjuice's early erasure) must stay visible, and the mean marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from xaibench.evaluation.cf_feedback import runner as R

    rows = [{"dataset": "imdb", "editor": e, "text_id": t, "step": 1,
             "inc": 40.0 if (e == "polyjuice" and t == 0) else 0.0} for e in R.EDITOR_ORDER for t in range(12)]
    fig = R.plot_steps(pd.DataFrame(rows), "imdb", [("inc", "(b) inc")], "Figure 3")
    ax = fig.axes[0]
    assert ax.get_yscale() == "symlog"
    assert ax.get_ylim()[0] == 0  # values are never negative: no empty negative range below the boxes
    ys = [y for line in ax.lines for y in np.atleast_1d(line.get_ydata())]
    assert 40.0 in ys  # the outlier is drawn (showfliers=False would hide it)
    assert any(abs(y - 40 / 12) < 1e-9 for y in ys)  # the mean marker of Polyjuice's box
    plt.close(fig)


def test_step_plot_draws_table1_inc_beside_ours_and_says_where_the_paper_has_none():
    """Figure 3 (b): the paper's Table 1 inc@n (IMDb) in red at step n on each editor's box, beside our inc@n
    (the pooled mean of steps 1..n); the caption says the other panels have no paper number drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from xaibench.evaluation.cf_feedback import runner as R

    incs = {1: [0.0, 2.0], 2: [4.0, 0.0], 3: [1.0, 1.0]}  # per step, the two texts' inc
    rows = [{"dataset": "imdb", "editor": e, "text_id": t, "step": s, "minimality": 1.0, "inc": incs[s][t],
             "p_target": 0.5} for e in R.EDITOR_ORDER for t in (0, 1) for s in (1, 2, 3)]
    fig = R.plot_steps(pd.DataFrame(rows), "imdb", [("minimality", "(a) minimality"), ("inc", "(b) inc"),
                                                    ("p_target", "(c) p(target)")], "Figure 3")
    ax = fig.axes[1]
    by_label = {c.get_label(): c.get_offsets() for c in ax.collections}
    paper = by_label["paper (Table 1): inc@n, mean of steps 1..n"]
    ours = by_label["ours: inc@n, mean of steps 1..n"]
    # src/xaibench/resources/cf_feedback.csv, Table 1, IMDb, inc@1..3: MiCE, Polyjuice, TextFooler
    printed = [0.86, 5.95, 4.65, 6.21, 4.65, 3.98, 0.01, 0.33, 0.36]
    assert paper[:, 1].tolist() == pytest.approx(printed)
    xs = [step - 0.4 + 0.8 / 3 * (j + 0.5) for j in range(3) for step in range(3)]
    assert paper[:, 0].tolist() == pytest.approx(xs) and ours[:, 0].tolist() == pytest.approx(xs)
    assert ours[:, 1].tolist() == pytest.approx([1.0, 1.5, 8 / 6] * 3)  # pooled means of steps 1..n
    legend = [t.get_text() for t in fig.axes[-1].get_legend().get_texts()]
    assert legend[:3] == list(R.EDITOR_ORDER) and "paper (Table 1): inc@n, mean of steps 1..n" in legend
    caption = " ".join(t.get_text() for t in fig.texts)
    assert "(a) minimality: paper: no number printed" in caption
    assert "(b) inc: red = paper (Table 1)" in caption and "(c) p(target): paper: no number printed" in caption
    plt.close(fig)


def test_notebook_22_defaults_are_the_full_sample_the_bench_times():
    """`make all` runs notebook 22 with its defaults; bench_editors times the same sample."""
    import json
    import re
    from pathlib import Path

    from xaibench.evaluation.cf_feedback.runner import FULL_SAMPLE

    nb = json.loads((Path(__file__).parents[1] / "notebooks" / "22_counterfactual_feedback.ipynb").read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    params: dict = {}
    exec("".join(cell["source"]), {}, params)
    assert {"imdb": params["n_imdb"], "newsgroups": params["n_newsgroups"]} == FULL_SAMPLE
    makefile = (Path(__file__).parents[1] / "Makefile").read_text()
    defaults = {k: int(v) for k, v in re.findall(r"^(CF_IMDB|CF_NEWSGROUPS) \?= (\d+)$", makefile, flags=re.M)}
    assert defaults == {"CF_IMDB": FULL_SAMPLE["imdb"], "CF_NEWSGROUPS": FULL_SAMPLE["newsgroups"]}
    assert FULL_SAMPLE["imdb"] == 500  # the paper's IMDb sample
    # the scorecard's cf_feedback protocol finds the chains notebook 22 stores only if its full settings are the
    # notebook's defaults (the notebook reads the caps and the quick steps from SETTINGS itself)
    from xaibench.evaluation.cf_feedback.protocol import SETTINGS

    full = SETTINGS["full"]
    assert (full["samples"], full["n_steps"], full["mice_infiller"], full["predictor"], full["max_words"]) == (
        FULL_SAMPLE, params["n_steps"], params["mice_infiller"], params["predictor"], params["max_words"])
    code = "".join(src for c in nb["cells"] if c["cell_type"] == "code" for src in c["source"])
    assert 'RUN = SETTINGS[prof.name]' in code and 'RUN["max_train"], RUN["lm_max_texts"]' in code


def test_per_step_table_known_values():
    from xaibench.evaluation.cf_feedback import runner as R

    ch = _synthetic_chains()
    ch.loc[(ch.editor == "mice") & (ch.text_id == 0) & (ch.step == 1), "n_tokens"] = 2  # keeps 2 of 10 tokens
    t = R.table_per_step(ch).set_index(["editor", "metric", "step"])
    # mice minimality: text 0 = 2, 6, 2; text 1 = 2, 2, 2
    assert t.loc[("mice", "minimality", 1), "ours"] == 2.0 and t.loc[("mice", "minimality", 2), "ours"] == 4.0
    # per-step inc (relu(d_{k+1} - d_k)): text 0 = 4, 0; text 1 = 0, 0 -> the means of Table 1's inc@1, inc@2
    assert t.loc[("mice", "inc", 1), "ours"] == 2.0 and t.loc[("mice", "inc", 2), "ours"] == 0.0
    assert ("mice", "inc", 3) not in t.index  # the last edit has no next step
    # text 0's first edit keeps 2 of 10 tokens (erased), its second edit grows from 2 to 10 tokens
    assert t.loc[("mice", "erased_over_70pct", 1), "ours"] == 0.5
    assert t.loc[("mice", "erased_over_70pct", 2), "ours"] == 0.0
    assert t.loc[("mice", "n_tokens", 0), "ours"] == 10.0 and t.loc[("mice", "n_tokens", 1), "ours"] == 6.0
    # textfooler text 1 ended after two edits: step 3 counts one chain
    assert t.loc[("textfooler", "minimality", 3), "n_texts"] == 1
    assert t["paper"].isna().all() and {"ours", "ours_std", "paper"} <= set(t.columns)
