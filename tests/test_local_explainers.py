"""Local explainers: known values (conservation, completeness, hand-computed Grad-CAM-Text),
determinism, shapes, batching, decision-tree fidelity, evidence selection, errors."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from xaibench.explainers.base import Attribution  # noqa: E402
from xaibench.explainers.local import (  # noqa: E402
    LOCAL_EXPLAINERS, DecisionTreeExplainer, DeepLiftWords, GradCAMText, GradientXInput, IntegratedGradients,
    LimeWords, LRPNgrams, LRPWords, RandomNgrams, RandomWords, ShapPartition, counter_evidence, evidence,
    make_explainer)
from xaibench.explainers.local._common import ngram_windows, ngrams_from_words  # noqa: E402
from xaibench.bench.attribution import bench_attribution  # noqa: E402
from xaibench.models.cnn import CNNClassifier  # noqa: E402
from xaibench.models.embeddings import Vocab, word_tokenize  # noqa: E402

from tests.helpers.basic_models import KeywordClassifier  # noqa: E402

POS = ["a great movie", "i loved it , wonderful", "good acting and a great plot", "really enjoyable film",
       "wonderful and good", "great fun", "a good film", "loved the acting"]
NEG = ["a terrible movie", "i hated it , awful", "bad acting and a boring plot", "really boring film",
       "awful and bad", "terrible fun", "a bad film", "hated the acting"]
TEXTS, LABELS = POS + NEG, [1] * len(POS) + [0] * len(NEG)
PROBE = ["a great movie , really good acting", "bad", "boring plot but wonderful acting", "awful film"]


@pytest.fixture(scope="module")
def cnn() -> CNNClassifier:
    return CNNClassifier(2, seed=0, epochs=4, batch_size=4, lr=1e-2, cache=False).fit(TEXTS, LABELS, TEXTS, LABELS)


@pytest.fixture(scope="module")
def bias_free_cnn() -> CNNClassifier:
    """Untrained random CNN whose biases are all zero (LRP-0 then conserves relevance exactly)."""
    from xaibench.models.embeddings import glove_vectors

    m = CNNClassifier(2, seed=3, cache=False)
    m.vocab = Vocab.build(TEXTS)
    m._make_module(glove_vectors(m.vocab.itos)[0])
    with torch.no_grad():
        for mod in m.module.modules():
            if isinstance(mod, (torch.nn.Conv1d, torch.nn.Linear)):
                mod.bias.zero_()
    return m


@pytest.fixture(scope="module")
def tiny_transformer():
    tr = pytest.importorskip("xaibench.models.transformer")
    try:
        return tr.TransformerClassifier(2, tiny=True, cache=False, seed=0)
    except OSError as e:  # pragma: no cover - the bundled checkpoint is missing
        pytest.skip(f"tiny transformer unavailable: {e}")


def _logits(model, texts):
    ids, mask = model.encode(texts)
    with torch.no_grad():
        return model.module(ids, mask).numpy()


class HeadCounter:
    """Counts forward calls and rows through ``model.head``."""

    def __init__(self, model):
        self.calls, self.rows = 0, 0
        self.h = model.head.register_forward_hook(self._hook)

    def _hook(self, _m, inputs, _o):
        self.calls += 1
        self.rows += inputs[0].shape[0]

    def close(self):
        self.h.remove()


# ----------------------------------------------------------------------------------------------
# known values
# ----------------------------------------------------------------------------------------------
def test_lrp_conserves_relevance_and_equals_grad_x_input_without_biases(bias_free_cnn):
    m = bias_free_cnn
    targets = [0, 1, 1, 0]
    lrp = LRPWords(epsilon=1e-12).fit(m).explain(PROBE, targets)
    logits = _logits(m, PROBE)
    for a, t, row in zip(lrp, targets, logits):
        assert a.scores.sum() == pytest.approx(row[t], rel=1e-4, abs=1e-6)
    # LRP-0 on a bias-free ReLU network is gradient x input
    gxi = GradientXInput().fit(m).explain(PROBE, targets)
    for a, b in zip(lrp, gxi):
        np.testing.assert_allclose(a.scores, b.scores, rtol=1e-4, atol=1e-6)


def test_deeplift_sums_to_output_difference_from_zero_baseline(cnn):
    attrs = DeepLiftWords().fit(cnn).explain(PROBE)
    ids, mask = cnn.encode(PROBE)
    with torch.no_grad():
        fx = cnn.module(ids, mask).numpy()
        emb0 = torch.zeros(ids.shape + (cnn.emb_dim,))
        fb = cnn.module.forward_embeddings(emb0, mask).numpy()
    for i, a in enumerate(attrs):
        assert a.scores.sum() == pytest.approx(fx[i, a.target] - fb[i, a.target], abs=1e-4)
        assert a.target == int(fx[i].argmax())  # default target = predicted class


def test_integrated_gradients_completeness_cnn(cnn):
    attrs = IntegratedGradients(n_steps=50).fit(cnn).explain(PROBE)
    ids, mask = cnn.encode(PROBE)
    base = ids.clone()
    base[mask.bool()] = 0
    with torch.no_grad():
        fx, fb = cnn.module(ids, mask).numpy(), cnn.module(base, mask).numpy()
    for i, a in enumerate(attrs):
        diff = float(fx[i, a.target] - fb[i, a.target])
        assert a.scores.sum() == pytest.approx(diff, abs=0.02 * abs(diff) + 1e-3)


def test_integrated_gradients_completeness_transformer(tiny_transformer):
    m = tiny_transformer
    texts = PROBE[:2]
    attrs = IntegratedGradients(n_steps=50).fit(m).explain(texts)
    ids, mask = m.encode(texts)
    base = ids.clone()
    special = torch.as_tensor(np.isin(ids.numpy(), list(m.special_token_ids)))
    base[mask.bool() & ~special] = m.tokenizer.pad_token_id
    with torch.no_grad():
        fx, fb = m.module(ids, mask).numpy(), m.module(base, mask).numpy()
    for i, a in enumerate(attrs):
        diff = float(fx[i, a.target] - fb[i, a.target])
        assert a.scores.sum() == pytest.approx(diff, abs=0.05 * abs(diff) + 1e-4)
        # word-level methods report the model's tokens without [CLS]/[SEP]
        assert a.tokens == m.tokens(texts[i])[1:-1]


def _handset_gradcam_cnn() -> CNNClassifier:
    """Width-2 filters over one-hot-like vectors: filter 0 fires on 'good' (1) / 'great' (0.5) in
    the first slot of a window, filter 1 on 'bad' (weight 2) in the second slot.  Logits:
    y1 = 3 f0 - f1, y0 = -f0 + 2 f1."""
    m = CNNClassifier(2, filter_widths=(2,), n_filters=2, hidden=0, cache=False)
    m.vocab = Vocab(["the", "good", "movie", "bad", "great"])
    emb = np.zeros((len(m.vocab), 50), dtype=np.float32)
    emb[m.vocab.stoi["good"], 0] = 1.0
    emb[m.vocab.stoi["great"], 0] = 0.5
    emb[m.vocab.stoi["bad"], 1] = 1.0
    m._make_module(emb)
    with torch.no_grad():
        conv = m.module.body.convs[0]
        conv.weight.zero_()
        conv.bias.zero_()
        conv.weight[0, 0, 0] = 1.0
        conv.weight[1, 1, 1] = 2.0
        m.module.head.weight.copy_(torch.tensor([[-1.0, 2.0], [3.0, -1.0]]))
        m.module.head.bias.zero_()
    return m


def test_gradcam_text_hand_computed():
    m = _handset_gradcam_cnn()
    text = "great the good movie bad"  # A0 = [0.5, 0, 1, 0], A1 = [0, 0, 0, 2]; f = (1, 2)
    assert m.predict([text])[0] == 0  # y0 = -1 + 4 = 3 > y1 = 3 - 2 = 1
    (a1,) = GradCAMText().fit(m).explain([text], [1])  # alpha = (3, -1)
    assert sorted(a1.ngrams) == [(2, 4, 3.0), (3, 5, -2.0)]
    np.testing.assert_allclose(a1.scores, [0, 0, 3, 1, -2])
    (a0,) = GradCAMText().fit(m).explain([text])  # predicted class 0: alpha = (-1, 2)
    assert a0.target == 0 and sorted(a0.ngrams) == [(2, 4, -1.0), (3, 5, 4.0)]
    assert [f.text for f in evidence(a0, 3)] == ["movie bad"]
    assert [f.text for f in counter_evidence(a0, 3)] == ["good movie"]
    (full,) = GradCAMText(positions="all").fit(m).explain([text], [1])  # 3 A0(t) - A1(t)
    assert sorted(full.ngrams) == [(0, 2, 1.5), (2, 4, 3.0), (3, 5, -2.0)]


# ----------------------------------------------------------------------------------------------
# determinism, shapes, batching
# ----------------------------------------------------------------------------------------------
def test_random_baselines_deterministic_under_seed(cnn):
    for cls in (RandomWords, RandomNgrams):
        a = cls(seed=7).fit(cnn).explain(PROBE)
        b = cls(seed=7, batch_size=1).fit(cnn).explain(PROBE[::-1])[::-1]  # other batches and order
        c = cls(seed=8).fit(cnn).explain(PROBE)
        for x, y, z in zip(a, b, c):
            np.testing.assert_array_equal(x.scores, y.scores)
            assert x.ngrams == y.ngrams
            assert not np.array_equal(x.scores, z.scores) or len(x.scores) == 0


FAST = [n for n in LOCAL_EXPLAINERS if n != "shap"]


@pytest.mark.parametrize("name", FAST)
def test_one_score_per_token(cnn, name):
    exp = make_explainer(name)
    if name == "lime":
        exp = make_explainer(name, num_samples=200)
    exp.fit(cnn, TEXTS) if name == "decision_trees" else exp.fit(cnn)
    texts = PROBE + [""]
    attrs = exp.explain(texts)
    assert len(attrs) == len(texts)
    for text, a in zip(texts, attrs):
        assert isinstance(a, Attribution)
        assert a.tokens == word_tokenize(text)  # the CNN's words, no padding
        assert a.scores.shape == (len(a.tokens),) and np.isfinite(a.scores).all()
        for s, e, v in a.ngrams:
            assert 0 <= s < e <= len(a.tokens) and np.isfinite(v)
        if exp.granularity == "ngrams" and name != "decision_trees" and len(a.tokens) >= 2:
            assert a.ngrams, name


def test_ngram_methods_score_filter_windows(cnn):
    (w,) = LRPWords().fit(cnn).explain([PROBE[0]])
    (n,) = LRPNgrams().fit(cnn).explain([PROBE[0]])
    np.testing.assert_allclose(w.scores, n.scores)
    assert {(s, e) for s, e, _ in n.ngrams} == set(ngram_windows(7, (2, 3, 4)))
    for s, e, v in n.ngrams:
        assert v == pytest.approx(w.scores[s:e].sum())


def test_lime_batches_perturbations(cnn):
    counter = HeadCounter(cnn)
    try:
        exp = LimeWords(num_samples=1000, seed=1).fit(cnn)
        (a,) = exp.explain([PROBE[0]], [1])
        assert counter.rows == 1000 and counter.calls <= 3  # 1000 perturbations in 2 batches of 512
        (b,) = LimeWords(num_samples=1000, seed=1).fit(cnn).explain([PROBE[0]], [1])
    finally:
        counter.close()
    np.testing.assert_array_equal(a.scores, b.scores)
    assert np.abs(a.scores).max() > 0


def test_lime_recovers_a_linear_keyword_model():
    (a,) = LimeWords(num_samples=500).fit(KeywordClassifier(negator="not")).explain(["the good old good film"], [1])
    assert a.tokens == ["the", "good", "old", "good", "film"]
    assert a.scores[1] > 0.1 and a.scores[3] > 0.1 and np.abs(a.scores[[0, 2, 4]]).max() < 0.05


def test_gradient_methods_batched(cnn):
    counter = HeadCounter(cnn)
    try:
        IntegratedGradients(n_steps=50, batch_size=8).fit(cnn).explain(PROBE, [1, 0, 1, 0])
        # 50 interpolation steps in one batch + inputs/baselines twice (layer values, convergence delta)
        assert counter.rows == (50 + 4) * 4 and counter.calls <= 5
        counter.calls = counter.rows = 0
        GradientXInput().fit(cnn).explain(PROBE, [1, 0, 1, 0])
        assert counter.calls == 1 and counter.rows == 4
    finally:
        counter.close()


# ----------------------------------------------------------------------------------------------
# decision trees
# ----------------------------------------------------------------------------------------------
def test_decision_trees_mimic_a_keyword_model():
    rng = np.random.default_rng(0)
    vocab = ["the", "film", "was", "good", "not", "plot", "acting", "fine"]
    texts = [" ".join(rng.choice(vocab, size=rng.integers(2, 7))) for _ in range(200)]
    model = KeywordClassifier(negator="not")
    dt = DecisionTreeExplainer(features="ngrams", ngram_range=(1, 2)).fit(model, texts)
    assert dt.mode_ == "ngrams" and dt.fidelity_ == 1.0
    assert dt.fidelity(["good film", "not good", "the plot", "good good acting"]) == 1.0
    (a,) = dt.explain(["the acting was good"])
    assert a.target == 1
    assert "good" in [f.text for f in evidence(a, 3)]
    (b,) = dt.explain(["not good at all"])  # predicted negative: 'not' is evidence for class 0
    assert b.target == 0 and "not" in [f.text for f in evidence(b, 3)]


def test_decision_trees_on_cnn_filters(cnn):
    dt = DecisionTreeExplainer().fit(cnn, TEXTS)
    assert dt.mode_ == "filters" and dt.fidelity_ >= 0.9
    assert dt.class_identity_.shape == (150,)
    for a in dt.explain(PROBE):
        for s, e, v in a.ngrams:  # fragments are filter windows (at most 4 words)
            assert 1 <= e - s <= 4


# ----------------------------------------------------------------------------------------------
# evidence helpers
# ----------------------------------------------------------------------------------------------
def test_evidence_is_top_m_non_overlapping():
    toks = ["w0", "w1", "w2", "w3", "w4", "w5"]
    a = Attribution("", toks, np.zeros(6), 1, ngrams=[(0, 2, 5.0), (1, 3, 4.0), (3, 5, 3.0), (4, 6, -2.0),
                                                      (2, 4, -1.0), (5, 6, 0.5)])
    assert [(f.start, f.end, f.text) for f in evidence(a, 3)] == [(0, 2, "w0 w1"), (3, 5, "w3 w4"), (5, 6, "w5")]
    assert [(f.text, f.score) for f in counter_evidence(a, 3)] == [("w4 w5", 2.0), ("w2 w3", 1.0)]
    assert evidence(a, 0) == []
    words = Attribution("", ["a", "b", "c"], np.array([0.1, -0.3, 0.2]), 0)
    assert [f.text for f in evidence(words, 3)] == ["c", "a"]
    other = Attribution("", ["a", "b", "c"], np.array([0.0, 0.4, -0.2]), 1)
    assert [f.text for f in counter_evidence(words, 3, others=[other])] == ["b"]
    with pytest.raises(ValueError, match="classes other than"):
        counter_evidence(words, 3, others=[words])


def test_ngram_windows_and_sums():
    assert ngram_windows(3, (2, 3, 4)) == [(0, 2), (1, 3), (0, 3)]
    assert ngram_windows(1, (2, 3)) == [(0, 1)]
    assert ngram_windows(0, (2,)) == []
    assert ngrams_from_words(np.array([1.0, 2.0, -4.0]), (2,)) == [(0, 2, 3.0), (1, 3, -2.0)]


# ----------------------------------------------------------------------------------------------
# generic methods on a transformer, SHAP, bench, errors
# ----------------------------------------------------------------------------------------------
def test_gradient_x_input_on_transformer(tiny_transformer):
    m = tiny_transformer
    attrs = GradientXInput().fit(m).explain(PROBE[:2])
    for text, a in zip(PROBE[:2], attrs):
        assert a.tokens == m.tokens(text)[1:-1] and a.scores.shape == (len(a.tokens),)


@pytest.mark.slow  # shap's numba kernels compile on first use (~30 s)
def test_shap_efficiency(cnn):
    attrs = ShapPartition(max_evals=300).fit(cnn).explain(PROBE[:2] + ["bad"])
    ids, mask = cnn.encode(PROBE[:2] + ["bad"])
    base = ids.clone()
    base[mask.bool()] = 0
    with torch.no_grad():
        fx, fb = cnn.module(ids, mask).numpy(), cnn.module(base, mask).numpy()
    for i, a in enumerate(attrs):
        assert a.scores.sum() == pytest.approx(fx[i, a.target] - fb[i, a.target], abs=1e-4)
        assert a.meta["base_value"] == pytest.approx(fb[i, a.target], abs=1e-4)


def test_bench_attribution(cnn):
    df = bench_attribution(cnn, PROBE[:2], explainers=["random_words", "lime", "lrp_ngrams", "integrated_gradients"],
                           fit_texts=TEXTS, options={"lime": {"num_samples": 100}})
    assert list(df["explainer"]) == ["random_words", "lime", "lrp_ngrams", "integrated_gradients"]
    assert (df["status"] == "ok").all() and (df["seconds_per_explanation"] > 0).all()
    rows = dict(zip(df["explainer"], df["forward_rows_per_explanation"]))
    assert rows["random_words"] == 0 and rows["lime"] == 100 and rows["integrated_gradients"] == 54
    skipped = bench_attribution(KeywordClassifier(negator="not"), ["good film"], explainers=["lrp_words"])
    assert skipped["status"].iloc[0].startswith("skipped")
    with pytest.raises(KeyError, match="unknown explainers"):
        bench_attribution(cnn, PROBE, explainers=["nope"])


def test_errors(cnn, tiny_transformer):
    with pytest.raises(RuntimeError, match="fit"):
        LRPWords().explain(["good"])
    with pytest.raises(ValueError, match="one target per text"):
        LRPWords().fit(cnn).explain(["good", "bad"], [1])
    with pytest.raises(ValueError, match="targets must lie"):
        LRPWords().fit(cnn).explain(["good"], [5])
    with pytest.raises(TypeError, match="single string"):
        LRPWords().fit(cnn).explain("good")
    with pytest.raises(TypeError, match="LRP and DeepLIFT"):
        LRPWords().fit(tiny_transformer)
    with pytest.raises(TypeError, match="Grad-CAM-Text"):
        GradCAMText().fit(tiny_transformer)
    with pytest.raises(TypeError, match="TorchTextClassifier"):
        IntegratedGradients().fit(KeywordClassifier(negator="not"))
    with pytest.raises(ValueError, match="training texts"):
        DecisionTreeExplainer().fit(cnn)
    with pytest.raises(KeyError, match="unknown local explainer"):
        make_explainer("nope")
    with pytest.raises(ValueError, match="positions"):
        GradCAMText(positions="mean")


def test_lime_handles_texts_longer_than_the_cnn_window():
    """Regression: LIME counted the unread tail of a long text as an extra word (IndexError)."""
    from xaibench.explainers.local import make_explainer
    from xaibench.models.cnn import CNNClassifier

    texts = ["good great fine nice", "bad awful poor terrible"] * 4
    labels = [1, 0] * 4
    cnn = CNNClassifier(2, seed=0, cache=None, epochs=1, max_len=6).fit(texts, labels)
    # the unread tail "," equals a token inside the window, so LIME took it for a 7th word
    long_text = "good,bad,nice,,"
    (att,) = make_explainer("lime", num_samples=50).fit(cnn).explain([long_text])
    assert len(att.tokens) == 6 and att.scores.shape == (6,)


# ----------------------------------------------------------------------------------------------
# per-model random draws, input validation, truncation
# ----------------------------------------------------------------------------------------------
def test_random_baselines_differ_between_models(cnn, bias_free_cnn):
    """Human-grounded task 1 compares two models' evidence: the random baselines must not give
    both models the same draw for a text (that made every simulated answer 'no preference')."""
    assert cnn.fingerprint() != bias_free_cnn.fingerprint()
    for cls in (RandomWords, RandomNgrams):
        a = cls(seed=7).fit(cnn).explain(PROBE[:1])[0]
        b = cls(seed=7).fit(bias_free_cnn).explain(PROBE[:1])[0]
        assert a.tokens == b.tokens and not np.array_equal(a.scores, b.scores)


@pytest.mark.parametrize("name", ["lime", "random_words", "integrated_gradients", "decision_trees"])
def test_explain_validates_texts_and_targets_first(cnn, name):
    exp = make_explainer(name, num_samples=20) if name == "lime" else make_explainer(name)
    exp.fit(cnn, TEXTS) if name == "decision_trees" else exp.fit(cnn)
    with pytest.raises(TypeError, match=r"texts must be str; item 1 is NoneType"):
        exp.explain(["good", None], targets=[1, 0])
    with pytest.raises(TypeError, match=r"item 0 is None .*targets=None for the predicted classes"):
        exp.explain(["good"], targets=[None])
    with pytest.raises(ValueError, match="lone surrogate"):
        exp.explain([b"caf\xe9".decode("utf-8", "surrogateescape")], targets=[1])


@pytest.fixture(scope="module")
def short_lstm():
    from xaibench.models.lstm import LSTMAttentionClassifier

    return LSTMAttentionClassifier(2, hidden=8, epochs=2, batch_size=4, seed=0, cache=False,
                                   max_length=5).fit(TEXTS, LABELS)


LONG = "i loved it , wonderful acting and a great plot but the ending was terrible and boring"


@pytest.mark.parametrize("name", ["lime", "decision_trees", "random_words", "integrated_gradients", "shap"])
def test_explainers_attribute_only_what_the_model_reads(short_lstm, name):
    """The LSTM reads 5 words; a 17-word text must be explained on those 5 words only (LIME and
    the trees used to spread relevance over words the model never sees) and say it was cut."""
    kw = {"lime": {"num_samples": 50}, "shap": {"max_evals": 20}}.get(name, {})
    exp = make_explainer(name, **kw)
    exp.fit(short_lstm, TEXTS + [LONG] * 3) if name == "decision_trees" else exp.fit(short_lstm)
    long_att, short_att = exp.explain([LONG, "a great movie"], targets=[1, 1])
    assert long_att.tokens == ["i", "loved", "it", ",", "wonderful"]
    assert long_att.truncated and LONG[: long_att.chars_read] == "i loved it , wonderful"
    assert long_att.text == LONG and long_att.scores.shape == (5,)
    assert all(e <= 5 for _, e, _ in long_att.ngrams)
    assert not short_att.truncated and short_att.chars_read == len("a great movie")
