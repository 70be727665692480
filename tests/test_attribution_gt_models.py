"""The attention model implements the project's TorchTextClassifier interface (explainers apply
unchanged, tokens align with the ER); rationale models reach their target selection rate."""
import numpy as np
import pytest

WORDS = ["beer", "head", "color", "nice", "gold", "dark", "foam", "lace"]


def _toy(n, length, n_art, seed):
    rng = np.random.default_rng(seed)
    texts, labels, ers = [], [], []
    for _ in range(n):
        y = int(rng.integers(2))
        toks = list(rng.choice(WORDS, length - n_art))
        for _ in range(n_art):
            toks.insert(int(rng.integers(len(toks) + 1)), "the" if y else "a")
        texts.append(" ".join(toks))
        labels.append(y)
        ers.append(np.array([t in ("a", "the") for t in toks]))
    return texts, np.array(labels), ers


def test_attention_model_interface_and_explainers():
    from xaibench.evaluation.attribution_gt import attr_pct
    from xaibench.explainers.local import make_explainer
    from xaibench.models.attention_bilstm import AttentionBiLSTMClassifier
    from xaibench.models.base import TorchTextClassifier

    texts, y, ers = _toy(120, 8, 1, 0)
    m = AttentionBiLSTMClassifier(hidden=8, max_epochs=1, batch_size=32, cache=False)
    m.fit(texts[:100], y[:100], texts[100:], y[100:])
    assert isinstance(m, TorchTextClassifier)
    assert not m.module.embedding.weight.requires_grad  # frozen GloVe
    assert len(m.history["epochs"]) == 1
    a = m.attention_weights(texts[100:104])
    for w, t in zip(a, texts[100:104]):
        assert w.shape == (len(t.split()),) and w.sum() == pytest.approx(1.0, abs=1e-5)
    attrs = make_explainer("grad_x_input").fit(m).explain(texts[100:104])
    for at, er in zip(attrs, ers[100:104]):
        assert at.tokens == at.text.split()  # aligned with the ER positions
        assert 0.0 <= attr_pct(at.scores, er) <= 1.0


@pytest.mark.slow  # ~30 s each on an idle 2-core machine (minutes when shared)
@pytest.mark.parametrize("mode", ["rl", "cr"])
def test_rationale_reaches_target_rate_on_toy_task(mode):
    from xaibench.models.rationale import RationaleModel

    # 2 label-carrying articles among 10 tokens; target rate 0.2 = the article share
    texts, y, _ = _toy(240, 10, 2, 1)
    m = RationaleModel(mode=mode, selection=0.2, hidden=8, batch_size=16, max_epochs=12, lr=5e-3, stop_acc=0.9,
                       rate_tol=0.05, seed=0)
    m.fit(texts[:200], y[:200], texts[200:], y[200:])
    ev = m.evaluate(texts[200:], y[200:])
    assert abs(ev["rate"] - 0.2) <= 0.05, m.history
    assert ev["acc"] >= 0.9, m.history


def test_attention_training_matches_the_authors_protocol():
    """Frozen embeddings keep their values, training stops at the FIRST epoch whose validation
    accuracy reaches ``stop_acc`` (else runs to the cap), the epoch probe is recorded every epoch,
    and padding never receives attention (a review scores the same alone and beside a longer one)."""
    import torch

    from xaibench.models.attention_bilstm import AttentionBiLSTMClassifier

    texts, y, _ = _toy(80, 6, 1, 1)
    calls = []
    m = AttentionBiLSTMClassifier(hidden=4, max_epochs=3, batch_size=40, cache=False, stop_acc=0.0)
    m.epoch_probe = lambda model: calls.append(1) or {"probe": float(len(calls))}
    m.fit(texts[:60], y[:60], texts[60:], y[60:])
    assert [e["probe"] for e in m.history["epochs"]] == [1.0]  # 0.0 is reached by the first epoch
    m2 = AttentionBiLSTMClassifier(hidden=4, max_epochs=3, batch_size=40, cache=False, stop_acc=1.01)
    m2.fit(texts[:60], y[:60], texts[60:], y[60:])
    assert len(m2.history["epochs"]) == 3 and not m2.history["stopped_at_target"]
    from xaibench.models.embeddings import glove_vectors

    before, _ = glove_vectors(m2.vocab.itos, seed=m2.seed)
    assert np.allclose(m2.module.embedding.weight.detach().numpy(), before)  # frozen: unchanged
    short, long_ = "the beer head", " ".join(["nice foam"] * 20)
    alone = m2.attention_weights([short])[0]
    ids, mask = m2.encode([short, long_])
    with torch.inference_mode():
        a, _ = m2.module.attention(ids, mask)
    assert np.allclose(a[0, :3].numpy(), alone, atol=1e-6) and float(a[0, 3:].abs().sum()) == 0.0


@pytest.mark.slow  # ~30 s on 2 CPU cores
def test_bench_attribution_gt_rows_cover_every_model_and_method():
    from xaibench.bench.attribution_gt import bench_attribution_gt
    from xaibench.evaluation.attribution_gt.image_runner import ImageConfig
    from xaibench.evaluation.attribution_gt.text_runner import TextConfig

    df = bench_attribution_gt(n_explain=2, rationale_epochs=1, profile="quick")
    text, image = df[df.domain == "text"], df[df.domain == "image"]
    assert set(text.method) == {"training", "attention", *TextConfig.for_profile("quick").explainers}
    assert set(text[text.method == "training"].model) == {"attention_bilstm", "rationale_rl", "rationale_cr"}
    assert set(image.method) == {"training", *ImageConfig.for_profile("quick").methods}
    assert (df.seconds >= 0).all() and df[["cpus", "torch_threads", "load_avg_1min"]].notna().all().all()


def test_small_resnet_receptive_field_hand_values_and_gradient_support():
    """receptive_field by hand: stem 3 px (stride 2); each 3x3 conv adds twice the current stride, the first conv
    of stages 2.. doubles it: 3 + 4 + 4 = 11; + 4 + 8 = 23; + 8 + 16 = 47; + 16 + 32 = 95.  The same side is the
    support of the input gradient of one interior unit of the last feature map (positive weights: no ReLU hides
    a path)."""
    import torch

    from xaibench.models.resnet_small import SmallResNet, receptive_field

    assert [receptive_field(n) for n in (1, 2, 3, 4)] == [11, 23, 47, 95]
    for n, blocks in ((3, 1), (4, 1), (2, 2)):
        model = SmallResNet(2, (2,) * n, blocks=blocks)
        for mod in model.modules():
            if isinstance(mod, torch.nn.Conv2d):
                torch.nn.init.constant_(mod.weight, 0.1)
        model.eval()
        x = torch.ones(1, 3, 256, 256, requires_grad=True)
        f = model.features(x)
        c = f.shape[-1] // 2
        f[0, 0, c, c].backward()
        g = x.grad[0].abs().sum(0)
        for axis in (0, 1):
            idx = torch.nonzero(g.sum(axis)).flatten()
            assert int(idx.max() - idx.min() + 1) == receptive_field(n, blocks)
    with pytest.raises(ValueError, match="n_stages"):
        receptive_field(0)
