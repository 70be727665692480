"""Editor quality (cf_feedback.quality): known values on hand-made token NLLs, the polarity-reversal rule, the
per-token scorer against the per-text one, and the tidy table."""
import numpy as np
import pandas as pd
import pytest

from xaibench.evaluation.cf_feedback import quality as Q


def _scorer(nll_of_word):
    """A scorer whose LM tokens are the text's whitespace words: each word's NLL from ``nll_of_word``."""
    def score(text):
        ends, nll, pos = [], [], 0
        for w in text.split(" "):
            pos += len(w)
            ends.append(pos)
            nll.append(nll_of_word[w])
            pos += 1  # the space
        return np.array(ends), np.array(nll, dtype=float)
    return score


NLL = {"the": 1.0, "film": 2.0, "was": 1.0, "good": 3.0, "bad": 5.0, "truly": 4.0, "awful": 9.0, "fine": 2.0}
LEX = {"good": 1.9, "bad": -2.5, "awful": -2.0, "fine": 0.8}


def test_edited_tokens_against_the_tokens_they_replace():
    # "good" -> "truly awful": edited tokens 4 and 9 (mean 6.5) against the replaced 3: +3.5
    out = Q.edit_measures("the film was good", "the film was truly awful", _scorer(NLL), LEX)
    assert out["nll_delta_edited_token"] == pytest.approx(3.5)
    assert out["n_edited_tokens"] == 2 and out["n_replaced_tokens"] == 1
    assert out["polarity_reversal"]  # positive "good" for negative "awful"
    # two separate replacements: "the" -> "bad" (5 vs 1) and "good" -> "fine" (2 vs 3): (5 + 2) / 2 - (1 + 3) / 2
    out = Q.edit_measures("the film was good", "bad film was fine", _scorer(NLL), LEX)
    assert out["nll_delta_edited_token"] == pytest.approx(1.5) and not out["polarity_reversal"]


def test_insertions_or_deletions_alone_have_no_edited_token_value():
    out = Q.edit_measures("the film was good", "the film was truly good", _scorer(NLL), LEX)
    assert np.isnan(out["nll_delta_edited_token"]) and out["n_edited_tokens"] == 1 and out["n_replaced_tokens"] == 0
    out = Q.edit_measures("the film was good", "the film good", _scorer(NLL), LEX)
    assert np.isnan(out["nll_delta_edited_token"]) and out["n_replaced_tokens"] == 1
    assert not out["polarity_reversal"]


@pytest.mark.parametrize("edit, reversed_", [("the film was bad", True), ("the film was fine", False),
                                             ("the bad film was good", False), ("bad film was good", False)])
def test_polarity_reversal_needs_a_swap_of_signs(edit, reversed_):
    """good -> bad swaps signs; good -> fine keeps the sign; an inserted "bad" or one replacing a neutral word
    ("the") is no swap of a positive word."""
    a, b = Q.words("the film was good"), Q.words(edit)
    ops = Q.word_opcodes([w for w, _, _ in a], [w for w, _, _ in b])
    assert Q.polarity_reversal(a, b, ops, LEX) is reversed_


def test_vader_lexicon_signs():
    lex = Q.vader_lexicon()
    assert lex["good"] > 0 > lex["bad"] and "film" not in lex


def test_token_nlls_average_to_the_per_text_nll():
    """The per-token scorer and the fluency code's per-text scorer agree on a tiny causal LM."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from xaibench.models.lm import sequence_nll

    class CharTok:  # one token per character
        bos_token_id, eos_token_id, pad_token_id = 0, 0, 0

        def __call__(self, text, add_special_tokens=False, return_offsets_mapping=False):
            out = {"input_ids": [1 + ord(c) % 60 for c in text]}
            if return_offsets_mapping:
                out["offset_mapping"] = [(i, i + 1) for i in range(len(text))]
            return out

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=61, n_positions=64, n_embd=16, n_layer=1, n_head=2)).eval()
    texts = ["a short one", "and a somewhat longer text here"]
    per_text, _ = sequence_nll(texts, model, CharTok())
    for text, want in zip(texts, per_text):
        ends, nll = Q.token_nlls(text, model, CharTok())
        assert len(nll) == len(text) and list(ends) == list(range(1, len(text) + 1))
        assert nll.mean() == pytest.approx(want, abs=1e-5)
    ends, nll = Q.token_nlls(texts[1], model, CharTok(), max_tokens=11)  # BOS + 10 tokens
    assert len(nll) == len(ends) == 10


def test_quality_table_is_tidy_with_counts():
    pairs = pd.DataFrame({"dataset": "imdb", "editor": ["mice"] * 3 + ["textfooler"] * 2,
                          "nll_delta_text": [0.1, 0.3, 0.5, 0.0, 0.2],
                          "nll_delta_edited_token": [1.0, np.nan, 3.0, 2.0, 2.0],
                          "polarity_reversal": [True, False, False, False, False]})
    originals = pd.DataFrame({"dataset": "imdb", "text_id": [0, 0, 1, 1], "nll": [1.0, 3.0, 2.0, 6.0]})
    t = Q.quality_table(pairs, originals).set_index(["editor", "metric"])
    assert list(Q.quality_table(pairs, originals).columns) == Q.COLUMNS
    row = t.loc[("mice", "nll_delta_edited_token")]
    assert (row["ours"], row["ours_std"], row["n_texts"]) == (pytest.approx(2.0), pytest.approx(np.sqrt(2)), 2)
    assert t.loc[("mice", "nll_delta_text"), "ours"] == pytest.approx(0.3)
    assert t.loc[("mice", "polarity_reversal_share"), "ours"] == pytest.approx(1 / 3)
    assert np.isnan(t.loc[("mice", "polarity_reversal_share"), "ours_std"])
    assert t.loc[("textfooler", "nll_delta_edited_token"), "ours_std"] == 0.0
    assert t.loc[("original", "nll_token_mean"), "ours"] == pytest.approx(3.0)
    assert t.loc[("original", "nll_token_sd"), "ours"] == pytest.approx(np.std([1, 3, 2, 6], ddof=1))
    assert t.loc[("original", "nll_token_sd"), "n_texts"] == 2 and t["paper"].isna().all()


def test_diff_excerpt_marks_changes_and_elides_context():
    text = " ".join(f"w{i}" for i in range(30))
    edit = text.replace("w15", "new")
    out = Q.diff_excerpt(text, edit, context=2)
    assert out == "… w13 w14 ~~w15~~ **new** w16 w17 …"
    assert Q.diff_excerpt("a b", "b") == "~~a~~ b"


def test_sample_pairs_is_seeded_and_capped():
    pairs = pd.DataFrame({"dataset": "imdb", "editor": ["mice"] * 8 + ["polyjuice"] * 3, "text_id": list(range(8)) + [0, 1, 2]})
    a, b = Q.sample_pairs(pairs, 5, seed=1), Q.sample_pairs(pairs, 5, seed=1)
    assert a.equals(b) and a.groupby("editor").size().to_dict() == {"mice": 5, "polyjuice": 3}
    assert not a.equals(Q.sample_pairs(pairs, 5, seed=2))
