"""Counterfactual editors: valid edits, determinism, counter-fitting (Filandrianos et al. 2023)."""
import numpy as np
import pytest

from xaibench.explainers.base import CounterfactualExplainer
from xaibench.explainers.counterfactual.counterfit import WordVectors, counter_fit
from xaibench.explainers.counterfactual.mice import MiCE
from xaibench.explainers.counterfactual.ngram import BigramLM
from xaibench.explainers.counterfactual.polyjuice import Polyjuice
from xaibench.explainers.counterfactual.textfooler import TextFooler
from xaibench.explainers.counterfactual.wordnet import wordnet_dir

from tests.helpers.toy_text import NEG, POS, TEXTS, sentiment_logreg, toy_vectors, toy_wordnet



@pytest.fixture(scope="module")
def clf():
    return sentiment_logreg()


@pytest.fixture(scope="module")
def lm():
    return BigramLM(min_count=1).fit([t.split() for t in POS + NEG], [1] * 3 + [0] * 3)


def _check(editor, clf):
    assert isinstance(editor, CounterfactualExplainer) and editor.output == "counterfactual"
    out = editor.explain(TEXTS, [0, 1])
    assert len(out) == len(TEXTS)
    for t, cands in zip(TEXTS, out):
        assert cands, f"{editor.name} returned nothing for {t!r}"
        assert all(isinstance(c, str) and c.strip() and c != t for c in cands)
    again = editor.explain(TEXTS, [0, 1])
    assert again == out  # deterministic under its seed
    return out


def test_textfooler_valid_deterministic_and_flips(clf):
    tf = TextFooler(vectors=toy_vectors(), wordnet=toy_wordnet(), min_similarity=0.0, min_cos=0.0).fit(clf)
    out = _check(tf, clf)
    p = clf.predict([out[0][0]])[0]
    assert p != clf.predict([TEXTS[0]])[0]  # the toy synonyms include the sentiment flip words


def test_mice_valid_deterministic_and_targeted(clf, lm):
    ed = MiCE(lm=lm, seed=1).fit(clf)
    assert ed.targeted
    out = _check(ed, clf)
    assert any(clf.predict([c])[0] == 0 for c in out[0])  # reaches the requested class


def test_polyjuice_never_calls_the_predictor_and_has_whole_text_blank(lm):
    ed = Polyjuice(lm=lm, wordnet=toy_wordnet(), seed=3).fit(None)
    assert ed.uses_predictor is False and ed.model is None
    long = " ".join(["The film was great."] * 6)
    out = ed.explain([long])[0]
    assert min(len(c.split()) for c in out) <= 8  # the whole-text blank writes one sentence
    _check(ed, None)


def test_counter_fitting_toy_vocabulary():
    wv = toy_vectors()
    i = wv.index
    syn = [(i["great"], i["wonderful"]), (i["film"], i["movie"])]
    ant = [(i["great"], i["terrible"]), (i["loved"], i["hated"])]
    new = counter_fit(wv.vectors, syn, ant)

    def cos(v, a, b):
        return float(v[i[a]] @ v[i[b]])

    assert cos(new, "great", "terrible") < cos(wv.vectors, "great", "terrible") - 0.1
    assert cos(new, "loved", "hated") < cos(wv.vectors, "loved", "hated") - 0.1
    assert cos(new, "great", "wonderful") > cos(wv.vectors, "great", "wonderful") - 0.02  # synonym kept
    # the antonym now ranks below the synonym (raw: terrible was great's nearest neighbour)
    assert cos(wv.vectors, "great", "terrible") > cos(wv.vectors, "great", "wonderful")
    assert cos(new, "great", "terrible") < cos(new, "great", "wonderful") - 0.2
    np.testing.assert_allclose(np.linalg.norm(new, axis=1), 1.0, rtol=1e-5)


@pytest.mark.skipif(not (wordnet_dir() / "data.adj").exists(), reason="needs Debian wordnet-base")
def test_good_is_not_a_synonym_of_bad_after_counter_fitting():
    from xaibench.explainers.counterfactual.wordnet import load_wordnet
    from xaibench.glove import glove_index, glove_matrix

    idx = glove_index()
    words = [w for w in sorted(idx, key=idx.get) if w.isalpha()][:3000]
    raw = np.asarray(glove_matrix()[[idx[w] for w in words]], dtype=np.float32)
    wn = load_wordnet()
    pos = {w: k for k, w in enumerate(words)}
    syn = [(pos[a], pos[b]) for a, b in wn.synonyms if a in pos and b in pos and a < b]
    ant = [(pos[a], pos[b]) for a, b in wn.antonyms if a in pos and b in pos and a < b]
    before = WordVectors(words, raw / np.linalg.norm(raw, axis=1, keepdims=True))
    after = WordVectors(words, counter_fit(raw, syn, ant))
    g, b = pos["good"], pos["bad"]
    assert before.vectors[g] @ before.vectors[b] >= 0.5  # raw GloVe: bad passes cos >= 0.5
    assert after.vectors[g] @ after.vectors[b] < before.vectors[g] @ before.vectors[b] - 0.1
    assert "bad" not in [w for w, _ in after.neighbours("good", 50, 0.5)]


def test_counter_fitting_antonyms_extend_to_inflected_forms():
    from xaibench.explainers.counterfactual.counterfit import antonym_pairs
    from xaibench.explainers.counterfactual.wordnet import WordNet

    wn = WordNet()
    wn.pos.update({"love": {"VERB"}, "hate": {"VERB"}, "good": {"ADJ"}, "bad": {"ADJ"}})
    wn.antonyms |= {("love", "hate"), ("hate", "love"), ("good", "bad"), ("bad", "good")}
    wn.exceptions["worse"] = {"bad"}
    words = ["loved", "hated", "hate", "good", "worse", "film"]
    # loved-hated and loved-hate through the lemmas love/hate; good-worse through WordNet's exception list
    assert antonym_pairs(words, wn) == [(0, 1), (0, 2), (3, 4)]
