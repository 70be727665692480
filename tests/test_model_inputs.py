"""Model inputs: one clear error for bad texts (lone surrogates, None), a
stable cache key for any text, pinned torch threads, and how much of a text each model reads."""
import numpy as np
import pytest

from xaibench.cache import OutputCache
from xaibench.models.logreg import LogRegClassifier
from xaibench.models.lstm import LSTMAttentionClassifier
from xaibench.models.transformer import TransformerClassifier

TEXTS = ["great food and lovely staff", "amazing pasta, great wine", "awful food and rude staff",
         "terrible pasta, bad wine"]
LABELS = [1, 1, 0, 0]


@pytest.fixture()
def cache(tmp_path):
    c = OutputCache(tmp_path / "cache.sqlite")
    yield c
    c.close()


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
