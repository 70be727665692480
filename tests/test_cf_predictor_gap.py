"""TextFooler against two predictors (cf_feedback.predictor_gap): known values of the table from hand-made chains
and the reading in each of its three cases."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from xaibench.evaluation.cf_feedback import predictor_gap as G

LEX = {"boring": -1.3, "terrific": 2.1, "dull": -1.7, "good": 1.9}


def _chains(predictor, first_edits, flips, distances):
    """Chains of 3 steps (0, 1, 2) per text: step 1 is ``first_edits[i]``, step 2 goes back to the original."""
    rows = []
    for i, (edit, flip, (d1, d2)) in enumerate(zip(first_edits, flips, distances)):
        orig = "the film was boring"
        rows += [{"text_id": i, "step": 0, "text": orig, "minimality": 0, "flipped": False},
                 {"text_id": i, "step": 1, "text": edit, "minimality": d1, "flipped": flip},
                 {"text_id": i, "step": 2, "text": orig, "minimality": d2, "flipped": flip}]
    return pd.DataFrame(rows).assign(predictor=predictor, max_train=None)


def _table():
    lr = _chains("logreg", ["the film was terrific"] * 3 + ["the film was dull"], [True] * 4,
                 [(1, 1), (1, 3), (1, 2), (2, 1)])
    mini = _chains("minilm", ["the film was terrific", "the film was dull", "the film was boring", "a film was boring"],
                   [True, False, False, False], [(1, 2), (1, 1), (0, 0), (1, 1)])
    return G.gap_table(pd.concat([lr, mini], ignore_index=True), {"logreg": 0.9, "minilm": 0.8}, n_steps=2,
                       max_eval=100, lexicon=LEX)


def test_gap_table_known_values():
    t = _table().set_index(["predictor", "metric"])
    assert t.loc[("logreg", "test_accuracy"), "ours"] == 0.9 and t.loc[("minilm", "test_accuracy"), "n_texts"] == 100
    # flip rate after the first edit: 4 of 4 and 1 of 4, with exact binomial intervals
    assert t.loc[("logreg", "flip_rate@1"), "ours"] == 1.0
    assert t.loc[("logreg", "flip_rate@1"), "ci_low"] == pytest.approx(0.025 ** 0.25)
    ci = stats.binomtest(1, 4).proportion_ci(0.95, method="exact")
    assert t.loc[("minilm", "flip_rate@1"), ["ours", "ci_low", "ci_high"]].tolist() == pytest.approx([0.25, ci.low, ci.high])
    assert t.loc[("logreg", "flip_rate@1"), "paper"] == pytest.approx(0.6195)  # the paper's IMDb TextFooler flip@1
    # inc@1 = relu(d2 - d1): logreg 0, 2, 1, 0 -> mean 0.75; minilm 1, 0, 0, 0 -> 0.25
    assert t.loc[("logreg", "inc@1"), "ours"] == pytest.approx(0.75)
    assert t.loc[("logreg", "inc@1"), "ours_std"] == pytest.approx(np.std([0, 2, 1, 0], ddof=1))
    assert t.loc[("minilm", "inc@1"), "ours"] == pytest.approx(0.25)
    # polarity reversal of the first edits: boring -> terrific reverses, boring -> dull does not; minilm's third
    # chain did not move (left out), its fourth changed a word without sentiment
    assert t.loc[("logreg", "polarity_reversal_share"), ["ours", "n_texts"]].tolist() == [0.75, 3 + 1]
    assert t.loc[("minilm", "polarity_reversal_share"), ["ours", "n_texts"]].tolist() == pytest.approx([1 / 3, 3])


def _flip_rows(a, b, paper=0.62):
    return pd.DataFrame([{"predictor": p, "metric": "flip_rate@1", "ours": v, "ci_low": lo, "ci_high": hi,
                          "paper": paper, "n_texts": 100} for p, (v, lo, hi) in (("logreg", a), ("minilm", b))])


def test_reading_supports_the_predictor_when_the_intervals_separate():
    text = G.reading(_flip_rows((1.0, 0.96, 1.0), (0.6, 0.5, 0.7)))
    assert "support the predictor as a cause" in text and "agrees with the paper" in text
    text = G.reading(_flip_rows((1.0, 0.96, 1.0), (0.85, 0.77, 0.91)))
    assert "explains only part of the gap" in text


def test_reading_is_undecided_when_the_intervals_overlap_and_refutes_when_reversed():
    assert "intervals overlap" in G.reading(_flip_rows((0.98, 0.93, 1.0), (0.95, 0.89, 0.98)))
    assert "do not support" in G.reading(_flip_rows((0.5, 0.4, 0.6), (0.9, 0.82, 0.95)))


def test_predictor_gap_refuses_bad_arguments():
    with pytest.raises(ValueError, match="predictors is empty"):
        G.predictor_gap(predictors={})
    with pytest.raises(ValueError, match="n_steps"):
        G.predictor_gap(n_steps=1)


def test_add_fluency_scores_more_texts_at_the_named_steps(monkeypatch):
    """base_more: steps 1 and 2 on the first 3 texts, every step on the first text; the base LM sees each scored
    text once, and the per-text table holds exactly the scored (step, text) cells of both LMs."""
    from xaibench.evaluation.cf_feedback import runner as R

    class Fine:
        def nll(self, words):
            return float(len(words))

    seen = []

    def fake_nll(texts, base_lm, dtype, dataset):
        seen.extend(texts)
        return {t: float(len(t)) for t in texts}, 0

    monkeypatch.setattr(R, "cached_nll", fake_nll)
    monkeypatch.setattr("xaibench.explainers.counterfactual.mice.cached_infiller", lambda *a, **k: Fine())
    monkeypatch.setattr("xaibench.models.cf_predictors.get_predictor", lambda *a, **k: None)
    chains = pd.DataFrame([{"dataset": "imdb", "editor": "textfooler", "text_id": i, "step": s,
                            "text": f"text {i} step {s}", "minimality": s, "flipped": False}
                           for i in range(4) for s in range(3)])
    out = R.add_fluency(chains, "imdb", steps=[0, 1, 2], base_max_texts=1, base_more={1: 3, 2: 3})
    scored = set(map(tuple, out.loc[out["nll_base"].notna(), ["text_id", "step"]].to_numpy()))
    assert scored == {(0, 0), (0, 1), (0, 2), (1, 1), (2, 1), (1, 2), (2, 2)}
    assert sorted(seen) == sorted(f"text {i} step {s}" for i, s in scored)
    assert out["nll_fine"].notna().all()  # the in-domain LM scores every row
    per_text = R.fluency_texts_table(out)
    assert len(per_text[per_text.lm == "base"]) == 7 and len(per_text[per_text.lm == "fine"]) == 12
    row = per_text[(per_text.lm == "base") & (per_text.step == 2) & (per_text.text_id == 2)]
    assert row["ours"].tolist() == [len("text 2 step 2")] and row["paper"].isna().all()
    with pytest.raises(ValueError, match="must be >= 0"):
        R.add_fluency(chains, "imdb", base_more={1: -1})
