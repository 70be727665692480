"""Classifier interface: cache hits, save/load round trips, determinism, bad input."""
import numpy as np
import pytest

from xaibench.cache import OutputCache
from xaibench.models.logreg import LogRegClassifier
from xaibench.models.lstm import LSTMAttentionClassifier
from xaibench.models.registry import load_model
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
    loaded = load_model(folder, cache=None)  # bypass the cache: really recompute
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
        load_model(tmp_path / "nothing")
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


def test_cache_setter_and_uncached_forward(cache):
    m = LogRegClassifier(2, seed=1, cache=None).fit(TEXTS, LABELS)
    assert m.cache is None
    m.cache = cache
    assert m.cache is cache
    p = m.predict_proba(TEXTS[:2])
    n = m.n_forward
    m.predict_proba(TEXTS[:2])
    assert m.n_forward == n  # served by the cache
    np.testing.assert_allclose(m.predict_proba_uncached(TEXTS[:2]), p)
    assert m.n_forward == n + 2  # really recomputed
