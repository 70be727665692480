"""A result-identical shortcut of the editor chains (Filandrianos et al. 2023): the tf-idf logistic regression scores
texts that differ from one text by a splice from that text's n-gram counts (``predict_proba_splices``, used for
TextFooler's word-importance deletions), checked bit for bit against featurising every such text."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.helpers.toy_text import NEG, POS, TEXTS, sentiment_logreg, toy_vectors, toy_wordnet
from xaibench.evaluation.cf_feedback import metrics as cf
from xaibench.models.logreg import LogRegClassifier

#: texts with what the tokenizer and the runs between whitespace make hard: punctuation glued to words,
#: apostrophes, digits, several kinds of whitespace (tab, newline, no-break and em spaces), leading and trailing blanks
TRICKY = ["  A great film,wonderful!!! I loved it... 10/10 \n", "i hated\tthe awful music - a terrible movie.",
          "Don't stop: it's great\u00a0and wonderful\u2003acting (really) ",
          "great", "", "terrible terrible terrible awful awful film film"]
NEWS = ["", " ", "great", "awful film", "n't", "!", "wonderful,", " loved ", "\n", "it's", "a\u00a0b"]


def _splices(text: str, rng: np.random.Generator, n: int = 40) -> list[tuple[int, int, str]]:
    out = [(0, len(text), ""), (0, 0, "great "), (len(text), len(text), " awful"), (0, len(text), "loved it")]
    for _ in range(n):
        start = int(rng.integers(0, len(text) + 1))
        out.append((start, min(len(text), start + int(rng.integers(0, 9))), str(rng.choice(NEWS))))
    return out


@pytest.mark.parametrize("ngram_max", [1, 2, 3])
def test_spliced_texts_get_the_full_paths_probabilities_bit_for_bit(ngram_max):
    rng = np.random.default_rng(ngram_max)
    clf = LogRegClassifier(2, cache=False, ngram_max=ngram_max, C=10.0).fit(POS + NEG + TRICKY[:2], [1] * 3 + [0] * 5)
    for text in TRICKY + TEXTS:
        splices = _splices(text, rng)
        got = clf.predict_proba_splices(text, splices)
        full = clf.predict_proba([text[:s] + new + text[e:] for s, e, new in splices])
        assert got.dtype == full.dtype and np.array_equal(got, full), text
    assert clf.predict_proba_splices(TEXTS[0], []).shape == (0, 2)
    with pytest.raises(ValueError, match=r"splice \(3, 99\) lies outside the text's 4 characters"):
        clf.predict_proba_splices("abcd", [(3, 99, "")])


def test_splices_of_a_many_class_model_match_and_an_unsupported_model_declines():
    texts = POS + NEG + ["the film was fine .", "an acting performance ."]
    clf = LogRegClassifier(3, cache=False, ngram_max=2).fit(texts, [0, 0, 1, 1, 2, 2, 1, 0])
    splices = _splices(TRICKY[2], np.random.default_rng(0))
    full = clf.predict_proba([TRICKY[2][:s] + new + TRICKY[2][e:] for s, e, new in splices])
    assert np.array_equal(clf.predict_proba_splices(TRICKY[2], splices), full)
    clf.vectorizer.lowercase = True  # a vectorizer configured otherwise: no shortcut
    assert clf.predict_proba_splices(TRICKY[2], splices) is None
    cached = sentiment_logreg()
    cached.cache = True  # an on-disk output cache answers through predict_proba
    assert cached.predict_proba_splices(TEXTS[0], [(0, 1, "")]) is None


def test_the_counting_predictor_memoises_and_counts_spliced_texts_as_predict_proba_does():
    clf = sentiment_logreg()
    text = TEXTS[0]
    splices = [(4, 9, ""), (4, 9, ""), (0, 4, ""), (len(text) - 1, len(text), "!")]
    texts = [text[:s] + new + text[e:] for s, e, new in splices]
    full, spliced = cf.CountingPredictor(clf), cf.CountingPredictor(clf)
    for pred in (full, spliced):
        pred.predict_proba([texts[2]])  # one of them memoised already
    a = full.predict_proba(texts)
    b = spliced.predict_proba_splices(text, splices, texts)
    assert np.array_equal(a, b) and a.dtype == b.dtype
    assert (full.n_calls, full.n_texts) == (spliced.n_calls, spliced.n_texts) == (2, 3)
    assert full.memo.keys() == spliced.memo.keys() and all(np.array_equal(full.memo[t], spliced.memo[t]) for t in texts)
    with pytest.raises(ValueError, match="2 splices for 1 texts"):
        spliced.predict_proba_splices(text, splices[:2], texts[:1])


def test_textfooler_chains_are_bit_for_bit_those_that_featurise_every_deleted_text(monkeypatch):
    from xaibench.explainers.counterfactual.textfooler import TextFooler

    clf = sentiment_logreg()
    texts = TEXTS + [" " + TRICKY[0], TRICKY[2] + " great film"]
    runs, used = {}, []
    real = LogRegClassifier.predict_proba_splices
    for shortcut in (True, False):
        with monkeypatch.context() as m:
            m.setattr(LogRegClassifier, "predict_proba_splices",
                      lambda self, *a, **k: used.append(len(a[1])) or real(self, *a, **k) if shortcut else None)
            pred = cf.CountingPredictor(clf)
            tf = TextFooler(vectors=toy_vectors(), wordnet=toy_wordnet(), min_similarity=0.0, min_cos=0.0).fit(pred)
            runs[shortcut] = (cf.run_chains(tf, pred, texts, n_steps=3), pred.n_calls, pred.n_texts, tf.swaps)
        if shortcut:
            assert used and sum(used) >= len(texts)  # the deletions went through the shortcut
    (fast, *fast_counts), (full, *full_counts) = runs[True], runs[False]
    pd.testing.assert_frame_equal(fast.drop(columns="seconds"), full.drop(columns="seconds"), check_exact=True)
    assert fast_counts == full_counts
    assert (fast.step > 0).any() and fast.loc[fast.step > 0, "flipped"].any()
