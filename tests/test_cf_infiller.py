"""MiCE's two-sided infiller (:class:`TwoSidedLM`): hand-computed probabilities on a three-sentence corpus,
the backward message of a two-word span, label conditioning, and the editor with ``infiller="two-sided"``."""
import numpy as np
import pytest

from xaibench.explainers.counterfactual.mice import MiCE
from xaibench.explainers.counterfactual.ngram import BigramLM, TwoSidedLM

from tests.helpers.toy_text import NEG, POS, TEXTS, count_tokenizer_pipes, sentiment_logreg

# "a" is followed by "b" twice and by "c" once; only "c" is ever followed by "y"
CORPUS = [["a", "b", "x"], ["a", "b", "x"], ["a", "c", "y"]]


@pytest.fixture(scope="module")
def two():
    return TwoSidedLM(alpha=1.0, min_count=1, temperature=1.0).fit(CORPUS)


def test_left_only_bigram_prefers_b_after_a():
    lm = BigramLM(alpha=1.0, min_count=1).fit(CORPUS)
    assert lm.successors[None]["a"][0][0] == "b"  # the left-only sampler's most likely word after "a"
    assert lm.logprob("a", "b") > lm.logprob("a", "c")


def test_two_sided_picks_the_word_that_fits_the_right_context(two):
    # unigram over next tokens (</s> included): a 3, b 2, x 2, </s> 3, c 1, y 1 -> 12 tokens
    pu = {"b": 2 / 12, "c": 1 / 12, "x": 2 / 12, "y": 1 / 12}
    left = {w: (c + pu[w]) / (3 + 1) for w, c in (("b", 2), ("c", 1), ("x", 0))}  # P(w | a), alpha = 1
    right = {"b": (0 + pu["y"]) / (2 + 1), "c": (1 + pu["y"]) / (1 + 1), "x": (0 + pu["y"]) / (2 + 1)}  # P(y | w)
    q = {w: left[w] * right[w] for w in left}  # "a" (left) and "y" (right) are never candidates
    z = sum(q.values())
    words, p = two.distribution("a", "y", 1)
    assert list(words) == ["c", "b", "x"]
    np.testing.assert_allclose(p, [q["c"] / z, q["b"] / z, q["x"] / z], rtol=1e-12)
    assert np.isclose(two.logprob("a", "b"), np.log(left["b"]))


def test_two_word_span_uses_the_backward_message(two):
    # <s> _ _ x: beta_1(w) = sum_v P(v | w) P(x | v) over the candidate words v (those a span is made of);
    # the first word is "a" (every text starts with it)
    V = list(two.vocab)
    ok = two.candidate.copy()
    assert sorted(np.array(V)[ok]) == ["a", "b", "c", "x", "y"]  # no <s>, </s>, <unk>
    P = np.array([[np.exp(two.logprob(u, v)) for v in V] for u in V])
    beta1 = P[:, ok] @ P[ok, V.index("x")]
    q = P[V.index("<s>")] * beta1
    words, p = two.distribution("<s>", "x", 2)
    expect = {w: q[i] for i, w in enumerate(V) if ok[i]}
    z = sum(expect.values())
    assert words[0] == "a"
    np.testing.assert_allclose(p, [expect[str(w)] / z for w in words], rtol=1e-9)
    span = two.sample_span("<s>", "x", 2, np.random.default_rng(0))
    assert len(span) == 2 and span[1] != "x"  # no repeat of the right neighbour


def test_label_conditioning_and_no_repeats():
    lm = TwoSidedLM(alpha=0.01, min_count=1, temperature=1.0).fit([t.split() for t in POS + NEG], [1] * 3 + [0] * 3)
    # positive texts: "a great" twice, "a wonderful" once, but only "wonderful film" is seen; negative alike
    assert lm.distribution("a", "film", 1, label=1)[0][0] == "wonderful"
    assert lm.distribution("a", "film", 1, label=0)[0][0] == "awful"
    assert lm.distribution("a", "movie", 1, label=1)[0][0] == "great"
    words, _ = lm.distribution("great", "and", 1, label=1)
    assert "great" not in words and "and" not in words
    assert all(any(ch.isalnum() for ch in w) for w in words)  # no punctuation for a masked word


def test_temperature_and_candidate_cap(two):
    cold = TwoSidedLM(alpha=1.0, min_count=1, temperature=0.5).fit(CORPUS)
    _, p = two.distribution("a", "y", 1)
    _, pc = cold.distribution("a", "y", 1)
    np.testing.assert_allclose(pc, p ** 2 / (p ** 2).sum())
    with pytest.raises(ValueError, match="temperature=0"):
        TwoSidedLM(temperature=0)
    # only the 2 most frequent words may be infilled: a (3), then b or x (2 each; b comes first in the vocabulary)
    capped = TwoSidedLM(alpha=1.0, min_count=1, temperature=1.0, max_candidates=2).fit(CORPUS)
    assert sorted(capped.vocab[capped.cand_idx]) == ["a", "b"]
    words, p = capped.distribution("a", "y", 1)  # "a" is the left neighbour: only "b" remains
    assert list(words) == ["b"] and p.tolist() == [1.0]
    assert TwoSidedLM().max_candidates == 10000 and TwoSidedLM().temperature == 0.5  # the chosen design


def test_mice_two_sided_returns_targeted_edits():
    clf = sentiment_logreg()
    lm = TwoSidedLM(min_count=1).fit([t.split() for t in POS + NEG], [1] * 3 + [0] * 3)
    ed = MiCE(lm=lm, seed=1, infiller="two-sided").fit(clf)
    out = ed.explain(TEXTS, [0, 1])
    assert all(out) and all(c != t for t, cs in zip(TEXTS, out) for c in cs)
    assert any(clf.predict([c])[0] == 0 for c in out[0])
    assert ed.explain(TEXTS, [0, 1]) == out  # deterministic under its seed


def test_mice_infiller_setting_is_checked():
    with pytest.raises(ValueError, match="infiller='trigram'"):
        MiCE(lm=None, infiller="trigram")
    lm = BigramLM(min_count=1).fit([t.split() for t in POS + NEG], [1] * 3 + [0] * 3)
    with pytest.raises(ValueError, match="two-sided"):
        MiCE(lm=lm, infiller="two-sided").fit(sentiment_logreg())
    assert MiCE(lm=lm).infiller == "bigram"  # the default


def test_pickled_infiller_samples_the_same(two):
    import pickle

    again = pickle.loads(pickle.dumps(two))
    assert not again._cache and again.cand_idx.tolist() == two.cand_idx.tolist()
    for args in (("a", "y", 1), ("<s>", "x", 2), ("b", "</s>", 3)):
        w1, p1 = two.distribution(*args)
        w2, p2 = again.distribution(*args)
        assert list(w1) == list(w2) and np.allclose(p1, p2)
    assert two.sample_span("<s>", "x", 3, np.random.default_rng(5)) == again.sample_span("<s>", "x", 3, np.random.default_rng(5))


def test_the_bigram_and_two_sided_infillers_of_a_dataset_tokenise_its_texts_once(monkeypatch):
    """train_ngram shares the spaCy tokens and predicted labels of a training set between the two infiller kinds:
    each kind is the model it would be with its own tokenisation, and a new training set (other texts, another
    predictor) is tokenised again."""
    import pickle

    import pandas as pd

    from xaibench.data import cf_data
    from xaibench.explainers.counterfactual import ngram

    texts = [t for t in TEXTS] * 2
    frame = pd.DataFrame({"text": texts, "label": [i % 2 for i in range(len(texts))], "split": "train"})
    monkeypatch.setattr(cf_data, "load_cf_dataset", lambda name: frame.copy())
    piped, predicted = count_tokenizer_pipes(monkeypatch), []

    class Predictor:
        def __init__(self, fp):
            self.fp = fp

        def fingerprint(self):
            return self.fp

        def predict(self, xs):
            predicted.append(len(xs))
            return np.array([int("good" in x) for x in xs])

    monkeypatch.setattr(ngram, "_TRAINING_SET", {})
    shared = [ngram.train_ngram("imdb", Predictor("a"), max_texts=None, kind=k) for k in ("bigram", "two-sided")]
    assert piped == [len(texts)] and predicted == [len(texts)] and ngram._TRAINING_SET == {}  # released after both
    alone = []
    for k in ("bigram", "two-sided"):
        monkeypatch.setattr(ngram, "_TRAINING_SET", {})
        alone.append(ngram.train_ngram("imdb", Predictor("a"), max_texts=None, kind=k))
    assert [pickle.dumps(m) for m in shared] == [pickle.dumps(m) for m in alone]
    piped.clear(), predicted.clear()
    monkeypatch.setattr(ngram, "_TRAINING_SET", {})
    ngram.train_ngram("imdb", Predictor("a"), max_texts=None)
    ngram.train_ngram("imdb", Predictor("b"), max_texts=None, kind="two-sided")  # other labels: not shared
    ngram.train_ngram("imdb", None, max_texts=3, kind="two-sided")  # other texts, gold labels
    assert piped == [len(texts), len(texts), 3] and predicted == [len(texts), len(texts)]
    assert len(ngram._TRAINING_SET) == 1  # one training set held at a time
