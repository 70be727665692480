"""Speed paths of the counterfactual-feedback run must compute exactly what the slow paths compute:
incremental single-word scoring of the tf-idf logistic regression, the Levenshtein distance,
and TextFooler with / without the incremental scorer; plus the MLM-infiller path of MiCE."""
import random

import numpy as np
import pytest

from xaibench.evaluation.cf_feedback.metrics import levenshtein
from xaibench.explainers.counterfactual.textfooler import TextFooler
from xaibench.models.logreg import LogRegClassifier
from xaibench.text import TOKEN_RE

from tests.helpers.toy_text import NEG, POS, TEXTS, sentiment_logreg, toy_vectors, toy_wordnet

WORDS = ["great", "awful", "Film", "movie", "don't", "x", "42", "and", "it", "wonderful", "terrible", "loved"]


def _dp(a, b):
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def test_levenshtein_equals_the_dynamic_programme():
    r = random.Random(0)
    for _ in range(3000):
        a = [r.choice("abcd") for _ in range(r.randint(0, 25))]
        b = list(a) if r.random() < 0.5 else [r.choice("abcd") for _ in range(r.randint(0, 25))]
        for _ in range(r.randint(0, 3)):
            if b:
                b[r.randrange(len(b))] = r.choice("abcde")
        assert levenshtein(a, b) == _dp(a, b)
    a = [r.choice("abcdefgh") for _ in range(150)]  # longer than a machine word
    b = [r.choice("abcdefgh") for _ in range(140)]
    assert levenshtein(a, b) == _dp(a, b)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_incremental_swaps_equal_full_predict_proba(n_classes):
    texts = POS + NEG + ["an okay film , the acting was fine .", "it was fine , i guess ."]
    labels = ([1] * 3 + [0] * 3 + [1, 0]) if n_classes == 2 else ([1] * 3 + [0] * 3 + [2, 2])
    clf = LogRegClassifier(n_classes, cache=False, ngram_max=2, C=10.0).fit(texts, labels)
    r = random.Random(1)
    for text in TEXTS + ["Great great great film, the film!", "I don't like it. It's 42 times awful."]:
        matches = list(TOKEN_RE.finditer(text))
        swaps = [(m.start(), m.end(), w) for m in matches for w in r.sample(WORDS, 4)]
        fast = clf.predict_proba_swaps(text, swaps)
        full = clf.predict_proba([text[:s] + w + text[e:] for s, e, w in swaps])
        np.testing.assert_allclose(fast, full, rtol=0, atol=1e-6)


def test_incremental_swaps_unavailable_for_glove_features():
    clf = LogRegClassifier.__new__(LogRegClassifier)
    clf.features, clf.clf = "glove", object()
    assert clf.predict_proba_swaps("a film", [(2, 6, "movie")]) is None


class _FullOnly:
    """The same model without the incremental path (what any non-linear predictor looks like)."""

    def __init__(self, model):
        self.model = model
        self.n_classes = model.n_classes

    def predict_proba(self, texts):
        return self.model.predict_proba(texts)


def test_textfooler_same_edits_with_and_without_incremental_scoring():
    clf = sentiment_logreg()
    kw = dict(vectors=toy_vectors(), wordnet=toy_wordnet(), min_similarity=0.0, min_cos=0.0)
    fast = TextFooler(**kw).fit(clf)
    slow = TextFooler(**kw).fit(_FullOnly(clf))
    texts = TEXTS + ["  The acting was awful, I hated the film and the movie."]
    assert fast.explain(texts) == slow.explain(texts)


def test_torch_threads_context_restores_the_pinned_count():
    import torch

    from xaibench.device import torch_threads

    old = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with torch_threads(1):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with pytest.raises(RuntimeError), torch_threads(1):
            raise RuntimeError("an error inside the block")
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(old)


class _FakeMLM:
    """Stands in for MLMInfiller: fills every placeholder with a fixed piece (None past 'max')."""
    MASK = "\u2063MASK\u2063"

    def __init__(self, piece, max_masks=10**9):
        self.piece, self.max_masks, self.calls = piece, max_masks, 0

    def fill_batch(self, templates, label, rng):
        self.calls += 1
        return [[self.piece if k < self.max_masks else None for k in range(sum(w == self.MASK for w in t))]
                for t in templates]

    def join_pieces(self, pieces):
        return " ".join(pieces).replace(" ##", "").split()


def test_mice_mlm_path_builds_texts_from_the_filled_spans():
    from xaibench.explainers.counterfactual.mice import MiCE

    clf = sentiment_logreg()
    words = "the film was great and the acting was wonderful .".split()
    spaces = [" "] * (len(words) - 1) + [""]
    rel = np.array([0, 0, 0, 5, 0, 0, 0, 0, 4, 0], dtype=float)
    mice = MiCE(lm=_FakeMLM("awful"), n_samples=3, seed=0).fit(clf)
    out = mice._infill(words, spaces, rel, 0.2, 0, np.random.default_rng(0))
    assert len(out) == 3 and mice.lm.calls == 1  # one batched fill per level
    for text in out:
        assert "great" not in text and "wonderful" not in text and "awful" in text
        assert text.startswith("the film was") and text.endswith(".")
    keep = MiCE(lm=_FakeMLM("awful", max_masks=0), n_samples=2, seed=0).fit(clf)
    assert keep._infill(words, spaces, rel, 0.2, 0, np.random.default_rng(0)) == [" ".join(words)] * 2  # nothing filled: unchanged


def test_mlm_infiller_trains_and_fills_every_placeholder():
    from xaibench.explainers.counterfactual.mlm import MLMInfiller

    mlm = MLMInfiller(2, seed=0).fit(POS + NEG, [1] * 3 + [0] * 3, epochs=1)
    assert np.isfinite(mlm.train_loss) and mlm.n_train_positions > 0
    m = MLMInfiller.MASK
    templates = [["the", m, "was", m, m, "."], ["a", "film", "."]]
    a = mlm.fill_batch(templates, 1, np.random.default_rng(0))
    assert [len(x) for x in a] == [3, 0] and all(isinstance(p, str) and p for p in a[0])
    assert mlm.fill_batch(templates, 1, np.random.default_rng(0)) == a  # deterministic under the rng
