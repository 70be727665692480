"""The paper's 1D CNN: shapes, masking, determinism, save/load, errors."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from xaibench.models.registry import load_model  # noqa: E402
from xaibench.models.cnn import CNNClassifier  # noqa: E402

POS = ["a great movie", "i loved it , wonderful", "good acting and a great plot", "really enjoyable film",
       "wonderful and good"]
NEG = ["a terrible movie", "i hated it , awful", "bad acting and a boring plot", "really boring film",
       "awful and bad"]
TEXTS = POS + NEG
LABELS = [1] * len(POS) + [0] * len(NEG)


def _fit(seed: int = 0, **kw) -> CNNClassifier:
    kw = {"epochs": 3, "batch_size": 4, "lr": 1e-2, "cache": False, **kw}
    return CNNClassifier(2, seed=seed, **kw).fit(TEXTS, LABELS, TEXTS, LABELS)


@pytest.fixture(scope="module")
def cnn() -> CNNClassifier:
    return _fit()


def test_architecture_and_shapes(cnn):
    ids, mask = cnn.encode(["good", "a great movie indeed , really"])
    assert ids.shape == (2, 6) and mask.sum(1).tolist() == [1, 6]
    phi = cnn.embed(["good", "a great movie"])
    assert phi.shape == (2, 150)  # 3 widths x 50 filters
    with torch.no_grad():
        maps = cnn.module.feature_maps(ids, mask)
        feats = cnn.module.features(ids, mask)
    assert [m.shape for m in maps] == [(2, 50, 5), (2, 50, 4), (2, 50, 3)]
    # phi is the max over the windows inside the text; windows running into padding are zeroed
    assert torch.allclose(feats[1], torch.cat([m[1].amax(1) for m in maps]))
    assert float(maps[0][0, :, 1:].abs().sum()) == 0.0  # "good": only its first width-2 window is valid
    assert not cnn.module.embedding.weight.requires_grad  # frozen GloVe


def test_short_texts_padded_to_widest_filter(cnn):
    ids, mask = cnn.encode(["good"])
    assert ids.shape == (1, 4) and mask.tolist() == [[1, 0, 0, 0]]
    assert cnn.tokens("good") == ["good", "<pad>", "<pad>", "<pad>"]
    assert cnn.predict_proba([""]).shape == (1, 2)  # an empty text still gets a prediction


def test_output_does_not_depend_on_batch(cnn):
    alone = cnn._predict_proba(["good"])
    together = cnn._predict_proba(["good", "a really long sentence with many many words in it , wonderful"])
    np.testing.assert_allclose(alone[0], together[0], atol=1e-6)


def test_learns_the_toy_task(cnn):
    assert (cnn.predict(TEXTS) == np.array(LABELS)).mean() >= 0.8


def test_save_load_round_trip(cnn, tmp_path):
    folder = cnn.save(tmp_path / "cnn")
    assert (folder / "vocab.json").exists() and (folder / "weights.pt").exists()
    loaded = load_model(folder, cache=False)
    assert isinstance(loaded, CNNClassifier)
    assert loaded.config() == cnn.config()
    np.testing.assert_array_equal(loaded.predict_proba(TEXTS), cnn.predict_proba(TEXTS))
    assert loaded.fingerprint() == cnn.fingerprint()


def test_deterministic_under_seed(cnn):
    again = _fit(seed=0)
    np.testing.assert_array_equal(again.predict_proba(TEXTS), cnn.predict_proba(TEXTS))
    assert again.fingerprint() == cnn.fingerprint()
    other = _fit(seed=1)
    assert other.fingerprint() != cnn.fingerprint()


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="filter_widths"):
        CNNClassifier(2, filter_widths=())
    with pytest.raises(ValueError, match="max_len"):
        CNNClassifier(2, max_len=3)
    with pytest.raises(RuntimeError, match="fit"):
        CNNClassifier(2, cache=False).predict_proba(["good"])
    with pytest.raises(FileNotFoundError, match="config.json"):
        load_model(tmp_path / "nothing")
