"""Classifier interface: cache hits, save/load round trips, determinism, bad input."""
import numpy as np
import pytest

from xaibench.cache import OutputCache
from xaibench.models.base import Classifier
from xaibench.models.logreg import LogRegClassifier
from xaibench.models.lstm import LSTMAttentionClassifier
from xaibench.models.transformer import TransformerClassifier

POS = ["great food and lovely staff", "amazing pasta, great wine", "lovely place, great service",
       "the soup was great", "friendly and amazing", "great great great"]
NEG = ["awful food and rude staff", "terrible pasta, bad wine", "rude waiter, awful place",
       "the soup was terrible", "bad and rude", "awful awful awful"]
TEXTS = POS + NEG
LABELS = [1] * len(POS) + [0] * len(NEG)


@pytest.fixture()
def cache(tmp_path):
    c = OutputCache(tmp_path / "cache.sqlite")
    yield c
    c.close()


def _models(cache):
    return [
        TransformerClassifier(2, tiny=True, epochs=2, batch_size=4, lr=1e-3, seed=1, cache=cache),
        LSTMAttentionClassifier(2, hidden=8, epochs=3, batch_size=4, seed=1, cache=cache),
        LogRegClassifier(2, seed=1, cache=cache),
    ]


@pytest.mark.parametrize("idx", [0, 1, 2], ids=["transformer", "lstm", "logreg"])
def test_cache_hit_and_round_trip(idx, cache, tmp_path):
    model = _models(cache)[idx].fit(TEXTS, LABELS, TEXTS, LABELS)
    p1 = model.predict_proba(TEXTS)
    assert p1.shape == (len(TEXTS), 2)
    np.testing.assert_allclose(p1.sum(1), 1.0, atol=1e-5)
    n = model.n_forward
    assert n == len(TEXTS)
    p2 = model.predict_proba(list(reversed(TEXTS)))  # all cached: no forward pass
    assert model.n_forward == n
    np.testing.assert_array_equal(p2, p1[::-1])
    model.predict_proba(TEXTS + ["a brand new sentence"])  # only the new text is computed
    assert model.n_forward == n + 1

    folder = model.save(tmp_path / "m")
    loaded = Classifier.load(folder, cache=None)  # bypass the cache: really recompute
    assert type(loaded) is type(model)
    np.testing.assert_array_equal(loaded.predict_proba(TEXTS), p1)
    assert loaded.fingerprint() == model.fingerprint()
    emb = model.embed(TEXTS[:3])
    assert emb.ndim == 2 and emb.shape[0] == 3


def test_transformer_learns_and_head_matches_forward(cache):
    import torch

    model = TransformerClassifier(2, tiny=True, epochs=20, batch_size=4, lr=3e-3, warmup_ratio=0.0, dropout=0.0, seed=0, cache=cache)
    model.fit(TEXTS, LABELS)
    assert (model.predict(TEXTS) == np.array(LABELS)).mean() >= 0.9
    # phi(x) through the head reproduces the model's probabilities
    phi = torch.as_tensor(model.embed(TEXTS))
    with torch.no_grad():
        p = torch.softmax(model.head(phi), -1).numpy()
    np.testing.assert_allclose(p, model.predict_proba(TEXTS), atol=1e-5)


def test_training_is_deterministic_under_seed(tmp_path):
    a = LSTMAttentionClassifier(2, hidden=8, epochs=2, batch_size=4, seed=7, cache=None).fit(TEXTS, LABELS)
    b = LSTMAttentionClassifier(2, hidden=8, epochs=2, batch_size=4, seed=7, cache=None).fit(TEXTS, LABELS)
    c = LSTMAttentionClassifier(2, hidden=8, epochs=2, batch_size=4, seed=8, cache=None).fit(TEXTS, LABELS)
    np.testing.assert_array_equal(a.predict_proba(TEXTS), b.predict_proba(TEXTS))
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()


def test_lstm_attention_weights_are_a_distribution():
    m = LSTMAttentionClassifier(2, hidden=8, epochs=1, batch_size=4, seed=0, cache=None).fit(TEXTS, LABELS)
    for t, a in zip(TEXTS[:3], m.attention_weights(TEXTS[:3])):
        assert a.shape == (len(m.tokens(t)),)
        assert abs(a.sum() - 1) < 1e-5


def test_bad_inputs_explain_the_fix(cache, tmp_path):
    m = LogRegClassifier(2, cache=cache)
    with pytest.raises(ValueError, match="one label per text"):
        m.fit(TEXTS, LABELS[:-1])
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 1\]"):
        m.fit(TEXTS, [2] * len(TEXTS))
    with pytest.raises(TypeError, match="wrap it"):
        m.predict_proba("a single string")
    with pytest.raises(FileNotFoundError, match="train it first"):
        Classifier.load(tmp_path / "nothing")
    with pytest.raises(RuntimeError, match="call fit"):
        LSTMAttentionClassifier(2).encode(["x"])


def test_epoch_schedule_scales_the_paper_rule_and_floors_absa():
    from xaibench.config import get_profile
    from xaibench.models.cebab_training import scheduled_epochs

    full, quick = get_profile("full"), get_profile("quick")
    assert scheduled_epochs(1755, full) == 4            # 5 * 11728 / 1755 = 33.4 epochs, / 8 -> 4
    assert scheduled_epochs(11728, full) == 1           # the largest set: 5 / 8 rounds to 1
    assert scheduled_epochs(5061, full) == 1            # ABSA-sized set under the plain rule ...
    assert scheduled_epochs(5061, full, "absa") == 3    # ... but ABSA gets at least 3 epochs
    assert scheduled_epochs(5061, quick, "absa") == 1   # the profile's cap wins


# ----------------------------------------------------------------------------------------------
# issue 8, section 4: lone surrogates, pinned threads, what a model reads
# ----------------------------------------------------------------------------------------------
SURROGATE = b"caf\xe9 was great".decode("utf-8", "surrogateescape")  # '\udce9': not valid UTF-8


def test_lone_surrogates_get_one_clear_error_and_a_stable_cache_key(cache):
    from xaibench.utils import check_texts, query_seed, text_hash

    assert text_hash(SURROGATE) != text_hash("caf\ufffd was great") and len(text_hash(SURROGATE)) == 40
    assert query_seed(1, "m", SURROGATE) == query_seed(1, "m", SURROGATE)
    cache.put_many("ns", [SURROGATE], np.ones((1, 2), np.float32))  # the cache key no longer crashes
    assert list(cache.get_many("ns", [SURROGATE]).values())[0].tolist() == [1.0, 1.0]
    tr = TransformerClassifier(2, tiny=True, seed=0, cache=cache)
    for m in (tr, LogRegClassifier(2, cache=cache).fit(TEXTS, LABELS)):
        with pytest.raises(ValueError, match=r"item 1 holds a lone surrogate '\\udce9' at character 3.*errors='replace'"):
            m.predict_proba(["fine", SURROGATE])
    with pytest.raises(ValueError, match="lone surrogate"):
        tr.fit(["fine", SURROGATE], [0, 1])
    with pytest.raises(TypeError, match=r"item 0 is NoneType.*fillna"):
        check_texts([None])
    with pytest.raises(TypeError, match="list of str; got NoneType"):
        check_texts(None)


def test_torch_threads_are_pinned(monkeypatch):
    """The thread count changes results (~1e-7), hence the fingerprint: models pin it."""
    import torch

    from xaibench.device import thread_count

    old = torch.get_num_threads()
    try:
        torch.set_num_threads(3)
        monkeypatch.delenv("XAIBENCH_THREADS", raising=False)
        LSTMAttentionClassifier(2, hidden=8, epochs=1, batch_size=4, seed=0, cache=None).fit(TEXTS[:4], LABELS[:4])
        assert torch.get_num_threads() == thread_count() == 2
        monkeypatch.setenv("XAIBENCH_THREADS", "1")
        TransformerClassifier(2, tiny=True, seed=0, cache=None)
        assert torch.get_num_threads() == 1
        monkeypatch.setenv("XAIBENCH_THREADS", "many")
        with pytest.raises(ValueError, match="XAIBENCH_THREADS=2"):
            thread_count()
    finally:
        torch.set_num_threads(old)


def test_models_say_how_much_of_a_text_they_read():
    from xaibench.models.cnn import CNNClassifier
    from xaibench.models.embeddings import word_tokenize

    long_text = "the soup was great , " * 20 + "but the staff were rude"
    lstm = LSTMAttentionClassifier(2, hidden=8, epochs=1, batch_size=4, seed=0, cache=None, max_length=7)
    cnn = CNNClassifier(2, max_len=7, cache=None)
    for m in (lstm, cnn):
        n = m.chars_read(long_text)
        assert long_text[:n] == "the soup was great , the soup"
        assert word_tokenize(long_text[:n]) == word_tokenize(long_text)[:7]
        assert m.chars_read("great food") == len("great food")
    tr = TransformerClassifier(2, tiny=True, seed=0, cache=None, max_length=8)
    n = tr.chars_read(long_text)  # [CLS] + 6 word pieces + [SEP]
    assert long_text[:n] == "the soup was great , the"
    assert tr.tokens(long_text) == tr.tokens(long_text[:n])
    assert LogRegClassifier(2).chars_read(long_text) == len(long_text)
