"""``pretrained_module()``: the module as it was before task training (CausaLM's paper staging starts there)."""
from __future__ import annotations

import pytest
import torch

TEXTS = ["good food and service", "bad food", "loud room", "quiet cozy room", "great service"]
LABELS = [1, 0, 0, 1, 1]


def _states_equal(a, b, skip_head=False):
    sa, sb = a.state_dict(), b.state_dict()
    keys = [k for k in sa if not (skip_head and k.startswith("head."))]
    return all(torch.equal(sa[k], sb[k]) for k in keys)


@pytest.mark.parametrize("kind", ["cnn", "lstm"])
def test_vocab_models_rebuild_their_starting_module(kind, monkeypatch):
    from xaibench.models import embeddings
    from xaibench.models.cnn import CNNClassifier
    from xaibench.models.embeddings import Vocab
    from xaibench.models.lstm import LSTMAttentionClassifier
    from xaibench.models.training import TrainConfig, train_loop

    # GloVe rows are not needed to test the staging: a seeded stand-in of the same shape
    def fake_glove(itos, seed=0):
        g = torch.Generator().manual_seed(seed)
        return torch.randn(len(itos), 50, generator=g).numpy(), torch.ones(len(itos)).numpy()

    monkeypatch.setattr(embeddings, "glove_vectors", fake_glove)
    klass, kw = (CNNClassifier, {"n_filters": 4, "hidden": 8}) if kind == "cnn" else (LSTMAttentionClassifier, {"hidden": 8})
    model = klass(2, seed=3, cache=None, **kw)
    model.vocab = Vocab(w for t in TEXTS for w in t.split())
    model._make_module(fake_glove(model.vocab.itos, seed=3)[0])  # what fit() builds before training
    start = {k: v.clone() for k, v in model.module.state_dict().items()}
    train_loop(model.module, model.encode, TEXTS, torch.tensor(LABELS).numpy(),
               TrainConfig(lr=0.05, epochs=2, batch_size=2, optimizer="adam", seed=3))
    trained = model.module
    fresh = model.pretrained_module()
    assert model.module is trained  # the explained model keeps its trained module
    assert all(torch.equal(start[k], v) for k, v in fresh.state_dict().items())  # = the module before training
    assert not _states_equal(fresh, trained)
    assert not fresh.training
    ids, mask = model.encode(TEXTS)
    assert fresh.features(ids, mask).shape == trained.features(ids, mask).shape


def test_transformer_pretrained_module_is_the_untrained_encoder():
    from xaibench.models.transformer import TransformerClassifier

    a = TransformerClassifier(3, tiny=True, seed=5, cache=None)
    with torch.no_grad():  # stand-in for fine-tuning
        for p in a.module.parameters():
            p.add_(0.1)
    fresh = a.pretrained_module()
    b = TransformerClassifier(5, tiny=True, seed=5, cache=None)  # another task, same starting encoder
    assert _states_equal(fresh, b.module, skip_head=True)
    assert not _states_equal(fresh, a.module, skip_head=True)
    assert not fresh.training
