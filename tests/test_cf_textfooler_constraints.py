"""TextFooler's WordNet antonym veto and TextAttack's candidate choice (the best candidate that passes the
similarity check), on hand-built neighbour lists and a stubbed sentence similarity."""
import re

import pytest

from xaibench.evaluation.cf_feedback.runner import count_antonym_swaps
from xaibench.explainers.counterfactual import textfooler as tfmod
from xaibench.explainers.counterfactual.textfooler import TextFooler
from xaibench.explainers.counterfactual.wordnet import WordNet

from tests.helpers.toy_text import sentiment_logreg


class _Fixed:
    """Word vectors stand-in: a fixed neighbour list per word (cosine 0.9 each)."""

    def __init__(self, table):
        self.table = table

    def neighbours(self, word, k=50, min_cos=0.5):
        return [(w, 0.9) for w in self.table.get(word, [])][:k]


def _wordnet(antonyms=()):
    wn = WordNet()
    for w in ("great", "wonderful", "terrible", "awful", "good", "fine", "love", "hate", "loved", "hated"):
        wn.pos[w] = {"ADJ"} if w not in ("love", "hate", "loved", "hated") else {"VERB"}
    for a, b in antonyms:
        wn.antonyms |= {(a, b), (b, a)}
    return wn


@pytest.fixture(scope="module")
def clf():
    return sentiment_logreg()


def _stub_similarity(monkeypatch, sims):
    """Window similarity = ``sims[word]`` for the first listed word in the variant's window, else 1."""
    def fake(a, b):
        return [next((s for w, s in sims.items() if w in re.findall(r"[a-z]+", t.lower())), 1.0) for t in b]
    monkeypatch.setattr(tfmod, "angular_similarity", fake)


def test_wordnet_antonyms_on_lemmas():
    wn = _wordnet([("great", "terrible"), ("love", "hate")])
    assert wn.is_antonym("great", "terrible") and wn.is_antonym("terrible", "great")
    assert wn.is_antonym("loved", "hated")  # both inflect lemmas that are antonyms
    assert not wn.is_antonym("great", "awful") and not wn.is_antonym("great", "great")
    assert wn.base_forms("loved") == {"loved", "love"}


def test_antonym_veto_removes_the_antonym_from_a_hand_built_neighbour_list():
    wn = _wordnet([("great", "terrible"), ("love", "hate")])
    vec = _Fixed({"great": ["terrible", "awful", "wonderful"], "loved": ["hated", "adored"]})
    on = TextFooler(vectors=vec, wordnet=wn)
    off = TextFooler(vectors=vec, wordnet=wn, antonym_veto=False)
    assert on.neighbours("great") == ["awful", "wonderful"]
    assert off.neighbours("great") == ["terrible", "awful", "wonderful"]
    assert on.neighbours("loved") == ["adored"]  # inflected antonym caught through its lemma


def test_antonym_veto_in_an_attack_and_the_antonym_count(clf, monkeypatch):
    _stub_similarity(monkeypatch, {})
    wn = _wordnet([("great", "terrible")])
    vec = _Fixed({"great": ["terrible", "awful"]})
    text = ["The film was great and the acting was wonderful."]
    off = TextFooler(vectors=vec, wordnet=wn, antonym_veto=False).fit(clf)
    on = TextFooler(vectors=vec, wordnet=wn).fit(clf)
    off.explain(text)
    on.explain(text)
    assert off.swaps == [("great", "terrible")]  # the antonym lowers p(positive) most: taken without the veto
    assert on.swaps == [("great", "awful")]
    assert count_antonym_swaps(off.swaps, wn) == (1, 1, ["great->terrible"])
    assert count_antonym_swaps(on.swaps, wn) == (1, 0, [])


def test_the_best_candidate_that_passes_is_kept(clf, monkeypatch):
    # no candidate flips the label; by p(positive): awful, terrible (both fail the similarity check), then good
    # and fine (same p: unseen words), good first.  good fails, fine passes: fine is kept.  Checking only the single
    # best candidate (awful) would leave the word unchanged.
    _stub_similarity(monkeypatch, {"awful": 0.5, "terrible": 0.5, "good": 0.3, "fine": 0.9})
    wn = _wordnet()
    vec = _Fixed({"great": ["awful", "terrible", "good", "fine"]})
    ed = TextFooler(vectors=vec, wordnet=wn, similarity_batch=1).fit(clf)
    out = ed.explain(["The film was great and the acting was wonderful."])
    assert ed.swaps == [("great", "fine")]
    assert out == [["The film was fine and the acting was wonderful."]]


def test_the_most_similar_passing_flip_wins(clf, monkeypatch):
    # "great" is the text's only positive word: awful and terrible both flip it; awful is the more similar
    # of the two that pass (wonderful does not flip)
    _stub_similarity(monkeypatch, {"awful": 0.95, "terrible": 0.9, "wonderful": 0.99})
    vec = _Fixed({"great": ["terrible", "wonderful", "awful"]})
    ed = TextFooler(vectors=vec, wordnet=_wordnet()).fit(clf)
    text = "The film was great."
    assert clf.predict([text])[0] == 1 and clf.predict(["The film was terrible."])[0] == 0
    assert clf.predict(["The film was awful."])[0] == 0
    assert ed.explain([text]) == [["The film was awful."]]
    _stub_similarity(monkeypatch, {"awful": 0.5, "terrible": 0.9, "wonderful": 0.99})  # awful now fails
    ed = TextFooler(vectors=vec, wordnet=_wordnet()).fit(clf)
    assert ed.explain([text]) == [["The film was terrible."]]


def test_textattack_threshold_and_bad_batch():
    assert TextFooler().min_similarity == 0.840845057
    with pytest.raises(ValueError, match="similarity_batch"):
        TextFooler(similarity_batch=0)
