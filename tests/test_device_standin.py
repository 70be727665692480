"""Every model and explainer family runs on the device ``XAIBENCH_DEVICE`` selects, checked without a GPU.

:mod:`tests.helpers.device_standin` makes :func:`xaibench.device.torch_device` return
``torch.device("cuda")`` and emulates that device on the CPU: tensors moved or created there are
tagged, and any aten op (forward, backward, optimiser step) that mixes a tagged tensor with a CPU
tensor raises :class:`MixedDeviceError`, as CUDA raises "Expected all tensors to be on the same
device"; ``.numpy()`` of a tagged tensor raises too (CUDA: "can't convert cuda:0 device type tensor
to numpy").  So a test here fails when code

* leaves a module on the CPU while its inputs go to the device (or the other way round),
* builds labels, indices written into device tensors, masks or targets on the CPU for device logits,
* calls ``.numpy()`` on a device tensor instead of ``.detach().cpu().numpy()``.

What the stand-in allows is what CUDA allows: CPU scalars (0-dim tensors), CPU index tensors into a
device tensor, cross-device ``copy_`` (``load_state_dict``), CPU lengths for ``pack_padded_sequence``.
Each test also asserts that the models' parameters really are tagged (on the device), so a family
that silently stayed on the CPU fails as well.
"""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
import torch

from tests.helpers.device_standin import MixedDeviceError, standin_device

TEXTS = ["great food and lovely staff", "awful food and rude staff", "lovely place , great food",
         "rude waiter and awful noise", "the staff was lovely", "the food was awful"]
LABELS = [1, 0, 1, 0, 1, 0]


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture
def gpu(monkeypatch):
    with standin_device(monkeypatch) as log:
        yield log


def _on_device(gpu, module) -> bool:
    params = list(module.parameters())
    return bool(params) and all(gpu["tagged"](p) for p in params)


def _vocab_model(klass, texts=TEXTS, **kw):
    from xaibench.models.embeddings import Vocab

    model = klass(2, seed=1, cache=None, **kw)
    model.vocab = Vocab(w for t in texts for w in t.split())
    model._make_module(None)  # what fit() and load() do, without GloVe
    return model


def _train(model, texts=TEXTS, labels=LABELS):
    """One epoch of the shared training loop (what ``fit`` runs after building the vocabulary)."""
    from xaibench.models.training import TrainConfig, train_loop

    train_loop(model.module, model.encode, list(texts), np.asarray(labels), TrainConfig(lr=1e-3, epochs=1, batch_size=3),
               list(texts[:2]), np.asarray(labels[:2]), predict=model._predict_proba)


# ----------------------------------------------------------------------------------------------
# the stand-in itself
# ----------------------------------------------------------------------------------------------
def test_standin_catches_what_cuda_refuses(gpu):
    from xaibench.device import place, torch_device

    lin = place(torch.nn.Linear(3, 2))
    assert _on_device(gpu, lin) and lin.weight.device == torch.device("cuda", 0)
    x = torch.randn(4, 3)
    with pytest.raises(MixedDeviceError, match="mixes device tensors"):
        lin(x)  # CPU input, device module
    xd = x.to(torch_device())
    assert gpu["tagged"](xd) and not gpu["tagged"](x)  # a transfer copies; the original stays put
    out = lin(xd)
    with pytest.raises(MixedDeviceError, match="numpy"):
        out.detach().numpy()
    assert out.detach().cpu().numpy().shape == (4, 2)
    with pytest.raises(MixedDeviceError):
        torch.nn.functional.cross_entropy(out, torch.tensor([0, 1, 0, 1]))  # CPU labels
    loss = torch.nn.functional.cross_entropy(out, torch.tensor([0, 1, 0, 1], device=out.device))
    loss.backward()
    assert gpu["tagged"](lin.weight.grad) and float(loss) > 0  # gradients on the device; scalars come back
    emb = place(torch.nn.Embedding(5, 2))
    with pytest.raises(MixedDeviceError):
        emb(torch.tensor([[1, 2]]))  # CPU ids into a device embedding
    ids = torch.tensor([[1, 2, 3]], device=torch_device())
    assert ids[0, torch.tensor([0, 2])].tolist() == [1, 3]  # CPU indices into a device tensor: allowed
    with pytest.raises(MixedDeviceError):
        ids[:, torch.tensor([0, 1])] = torch.tensor([4, 4])  # CPU values written into a device tensor
    lstm = place(torch.nn.LSTM(3, 2, batch_first=True))
    seq = torch.randn(2, 4, 3, device=torch_device())
    assert gpu["tagged"](lstm(seq)[0])  # unpacked: hidden states created from the input's device
    packed = torch.nn.utils.rnn.pack_padded_sequence(seq, torch.tensor([4, 2]), batch_first=True, enforce_sorted=False)
    assert gpu["tagged"](torch.nn.utils.rnn.pad_packed_sequence(lstm(packed)[0], batch_first=True)[0])


# ----------------------------------------------------------------------------------------------
# CEBaB classifiers and concept explainers
# ----------------------------------------------------------------------------------------------
def test_cebab_classifiers_train_predict_and_embed_on_the_device(gpu):
    from xaibench.models.cnn import CNNClassifier
    from xaibench.models.lstm import LSTMAttentionClassifier
    from xaibench.models.transformer import TransformerClassifier

    models = {"transformer": TransformerClassifier(2, tiny=True, seed=1, cache=None),
              "lstm": _vocab_model(LSTMAttentionClassifier, hidden=8),
              "cnn": _vocab_model(CNNClassifier, n_filters=4, hidden=8)}
    for name, model in models.items():
        assert _on_device(gpu, model.module), name
        _train(model)
        assert _on_device(gpu, model.module), name  # the best epoch's weights are restored there
        p = model.predict_proba(TEXTS)
        assert isinstance(p, np.ndarray) and p.shape == (len(TEXTS), 2), name
        np.testing.assert_allclose(p.sum(1), 1.0, rtol=1e-5)
        assert model.embed(TEXTS[:2]).shape[0] == 2, name
    assert all(isinstance(a, np.ndarray) for a in models["lstm"].attention_weights(TEXTS[:2]))


def _cebab_world():
    from tests.test_concept_explainers import pairs, world

    return world(), pairs(8)


def test_cublas_workspace_is_set_before_a_model_moves_to_the_device(gpu, monkeypatch):
    """set_seed asks torch for deterministic kernels; cuBLAS honours that only with CUBLAS_WORKSPACE_CONFIG set
    before it starts in the process: every model finds it set when it first moves to the device."""
    from xaibench.models.cnn import CNNClassifier
    from xaibench.models.transformer import TransformerClassifier

    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    at_move, to = [], torch.nn.Module.to

    def recording_to(module, *args, **kwargs):
        at_move.append(os.environ.get("CUBLAS_WORKSPACE_CONFIG"))
        return to(module, *args, **kwargs)

    monkeypatch.setattr(torch.nn.Module, "to", recording_to)
    models = [TransformerClassifier(2, tiny=True, seed=1, cache=None), _vocab_model(CNNClassifier, n_filters=4, hidden=8)]
    assert at_move and set(at_move) == {":4096:8"}, at_move
    assert all(_on_device(gpu, m.module) for m in models)
    _train(models[1])
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"


def test_concept_explainers_train_heads_on_the_device(gpu, tmp_path, monkeypatch):
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))  # CausaLM stores its encoders in a scratch project
    from xaibench.evaluation.cebab import metrics as cb
    from xaibench.explainers.concept import (CausaLMExplainer, ConceptSHAPExplainer, INLPExplainer,
                                             TCAVExplainer)
    from xaibench.models.cnn import CNNClassifier

    data, p = _cebab_world()
    model = _vocab_model(CNNClassifier, texts=data["text"].tolist(), n_filters=4, hidden=8)
    queries = cb.make_queries(p)
    explainers = [INLPExplainer(seed=0, n_iter=2, epochs=1),  # copy_head + train_on_features + head_proba
                  ConceptSHAPExplainer(seed=0, hidden=8, epochs=1),
                  TCAVExplainer(seed=0),
                  CausaLMExplainer(seed=0, epochs=1, head_epochs=1, batch_size=32, aspects=("food",),
                                   control={"food": "noise"}),  # paper staging: from the pretrained module
                  CausaLMExplainer(seed=0, epochs=1, head_epochs=1, batch_size=32, aspects=("food",),
                                   control={"food": "noise"}, staging="explained")]
    for e in explainers:
        e.fit(model, data)
        q = queries[queries["aspect"].isin(getattr(e, "aspects", None) or cb.ASPECTS)]
        est = e.explain(q)
        assert np.isfinite(np.asarray(est, dtype=float)).all(), type(e).__name__
    assert _on_device(gpu, explainers[0].heads_["food"])


# ----------------------------------------------------------------------------------------------
# local attribution explainers (SHAP, trees, gradients, propagation, LIME) and feature explainers
# ----------------------------------------------------------------------------------------------
LOCAL_KW = {"lime": {"num_samples": 20}, "shap": {"max_evals": 12}, "integrated_gradients": {"n_steps": 4},
            "decision_trees": {"min_df": 1}}


def test_local_explainers_run_on_the_device(gpu):
    from xaibench.explainers.local import LOCAL_EXPLAINERS, make_explainer
    from xaibench.models.cnn import CNNClassifier
    from xaibench.models.transformer import TransformerClassifier

    cnn = _vocab_model(CNNClassifier, n_filters=4, hidden=8)
    for name in LOCAL_EXPLAINERS:  # the paper's nine on the CNN (trees on its filters); SHAP: next test
        if name == "shap":
            continue
        exp = make_explainer(name, **LOCAL_KW.get(name, {})).fit(cnn, TEXTS)
        atts = exp.explain(TEXTS[:2])
        assert len(atts) == 2 and all(np.isfinite(a.scores).all() for a in atts), name
    tr = TransformerClassifier(2, tiny=True, seed=1, cache=None)
    for name in ("integrated_gradients", "grad_x_input"):
        atts = make_explainer(name, **LOCAL_KW.get(name, {})).fit(tr, TEXTS).explain(TEXTS[:2])
        assert all(np.isfinite(a.scores).all() for a in atts), name
    assert _on_device(gpu, cnn.module) and _on_device(gpu, tr.module)


def test_shap_runs_on_the_device(gpu):
    """Masked ids are written into the device's id tensor; the explained ids come back to numpy."""
    from xaibench.explainers.local import make_explainer
    from xaibench.models.cnn import CNNClassifier

    cnn = _vocab_model(CNNClassifier, n_filters=4, hidden=8)
    atts = make_explainer("shap", max_evals=12).fit(cnn).explain(TEXTS[:2])
    for a, text in zip(atts, TEXTS[:2]):
        assert a.tokens == text.split() and np.isfinite(a.scores).all()
        # efficiency: the values add up to f(x) - f(all masked) of the target logit
        ids, mask = cnn.encode([text])
        with torch.inference_mode():
            logits = cnn.module(ids, mask).detach().cpu().numpy()
        assert a.scores.sum() == pytest.approx(logits[0, a.target] - a.meta["base_value"], abs=1e-4)
    assert _on_device(gpu, cnn.module)


def test_feature_explainers_run_on_the_device(gpu):
    from xaibench.data.feature_data import FeatureSpec
    from xaibench.explainers.feature import PAPER_EXPLAINERS, make_feature_explainer
    from xaibench.models.embedding_lr import EmbeddingLR

    spec = FeatureSpec("text", ["w0", "w1", "w2"], vocab=["<pad>", "<unk>", "good", "bad", "film"])
    model = EmbeddingLR(spec=spec, emb_dim=2, epochs=2, batch_size=2)
    X = np.array([[2, 4, 0], [3, 4, 0], [2, 2, 4], [3, 3, 4]])
    model.fit_ids(X, np.array([1, 0, 1, 0]))
    assert _on_device(gpu, model.module)
    kw = {"lime": {"num_samples": 20}, "decision_boundary": {"top_n": 2}, "integrated_gradients": {"n_steps": 4}}
    for name in [*PAPER_EXPLAINERS, "integrated_gradients", "grad_x_input"]:  # SHAP: see the local explainers
        exp = make_feature_explainer(name, **kw.get(name, {}))
        atts = exp.fit(model, X).explain(["good film", "bad film bad"])
        assert len(atts) == 2 and all(np.isfinite(a.scores).all() for a in atts), name


# ----------------------------------------------------------------------------------------------
# Zhou et al.: attention BiLSTM, rationale models, image SmallResNet + saliency
# ----------------------------------------------------------------------------------------------
def test_attention_bilstm_trains_and_explains_on_the_device(gpu):
    from xaibench.explainers.local import make_explainer
    from xaibench.models.attention_bilstm import AttentionBiLSTMClassifier

    m = AttentionBiLSTMClassifier(hidden=4, max_epochs=1, batch_size=3, seed=0, cache=False)
    m.fit(TEXTS, LABELS, TEXTS[:2], LABELS[:2])
    assert _on_device(gpu, m.module)
    a = m.attention_weights(TEXTS[:2])
    assert all(isinstance(w, np.ndarray) and abs(w.sum() - 1) < 1e-5 for w in a)
    atts = make_explainer("integrated_gradients", n_steps=4).fit(m).explain(TEXTS[:2])
    assert all(np.isfinite(x.scores).all() for x in atts)


@pytest.mark.parametrize("mode", ["rl", "cr"])
def test_rationale_models_train_and_select_on_the_device(gpu, mode):
    from xaibench.models.rationale import RationaleModel

    m = RationaleModel(mode=mode, hidden=4, batch_size=3, max_epochs=1, seed=0)
    m.fit(TEXTS, LABELS, TEXTS[:2], LABELS[:2])
    assert _on_device(gpu, m.module)
    preds, sel = m.predict_select(TEXTS[:3])
    assert preds.shape == (3,) and [len(s) for s in sel] == [len(t.split()) for t in TEXTS[:3]]


def test_image_resnet_trains_and_saliency_runs_on_the_device(gpu, monkeypatch):
    from xaibench.evaluation.attribution_gt import image_runner as ir
    from xaibench.evaluation.attribution_gt import manipulations as mp
    from xaibench.models import resnet_small

    built = []
    make = resnet_small.SmallResNet
    monkeypatch.setattr(resnet_small, "SmallResNet", lambda *a, **k: built.append(make(*a, **k)) or built[-1])

    rng = np.random.default_rng(0)
    images = {c: [rng.integers(0, 255, (40, 40, 3), dtype=np.uint8) for _ in range(6)] for c in ("a", "b")}
    cfg = ir.ImageConfig(canvas=16, widths=(4,), epochs=1, batch_size=4, n_train=3, n_val=1, n_explain=2,
                         methods=("gradient", "cam", "shap"), shap_samples=2, track_methods=("gradient",))
    manip = mp.Manipulation("brightness", {"radius": 56, "shift": -0.3})
    summary, final, track = ir.run_one(images, ("a", "b"), manip, 0.5, 0, cfg, track=True)
    assert 0 <= summary["test_acc"] <= 1 and set(final["method"]) == {"gradient", "cam", "shap"}
    assert np.isfinite(final["attr_pct"]).all() and len(track)
    assert len(built) == 1 and _on_device(gpu, built[0])  # trained and explained there


def test_image_saliency_methods_on_a_device_resnet(gpu):
    from xaibench.device import place, torch_device
    from xaibench.explainers.saliency import METHODS, saliency
    from xaibench.models.resnet_small import SmallResNet, normalise

    rng = np.random.default_rng(0)
    images = rng.integers(0, 255, (2, 16, 16, 3), dtype=np.uint8)
    model = place(SmallResNet(2, (4,)))
    x = normalise(images).to(torch_device())
    for method in METHODS:
        s = saliency(method, model, x, np.array([0, 1]), images=images, n_samples=2, n_segments=4,
                     baselines=x[:1])
        assert isinstance(s, np.ndarray) and s.shape == (2, 16, 16) and (s >= 0).all(), method
    assert _on_device(gpu, model)


# ----------------------------------------------------------------------------------------------
# counterfactual editors' models: MLM infiller, counter-fitting
# ----------------------------------------------------------------------------------------------
def test_mlm_infiller_trains_and_fills_on_the_device(gpu):
    from xaibench.explainers.counterfactual.mlm import MLMInfiller

    mlm = MLMInfiller(2, seed=0, top_k=3).fit(TEXTS, LABELS, epochs=1, mask_rate=0.5)
    assert _on_device(gpu, mlm.enc) and _on_device(gpu, mlm.head) and gpu["tagged"](mlm.bias)
    m = MLMInfiller.MASK
    out = mlm.fill_batch([["the", m, "was", "great"], [m, "food"]], 1, np.random.default_rng(0))
    assert [len(o) for o in out] == [1, 1] and all(isinstance(p, str) for o in out for p in o)


def test_counter_fitting_runs_on_the_device(gpu):
    from tests.helpers.toy_text import toy_vectors
    from xaibench.explainers.counterfactual.counterfit import counter_fit

    wv = toy_vectors()
    ix = wv.index
    moves = gpu["moves"]
    out = counter_fit(wv.vectors, [(ix["great"], ix["wonderful"])], [(ix["great"], ix["terrible"])], epochs=5)
    assert gpu["moves"] > moves  # the vectors and pairs went to the device
    assert out.shape == wv.vectors.shape and np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
