"""XAIBENCH_DEVICE moves every torch model (and so every explainer and training loop) at once.

No GPU is needed: ``cpu`` must put everything on the CPU, an invalid value must fail with a clear
message, and a model must land on whatever :func:`xaibench.device.torch_device` returns (checked
with torch's ``meta`` device, which stands in for CUDA here).
"""
import numpy as np
import pytest

from xaibench import device as dev
from xaibench.models.cnn import CNNClassifier
from xaibench.models.embeddings import Vocab
from xaibench.models.lstm import LSTMAttentionClassifier
from xaibench.models.transformer import TransformerClassifier

TEXTS = ["great food and lovely staff", "awful food and rude staff", "lovely place", "rude waiter"]
LABELS = [1, 0, 1, 0]


def _vocab_model(klass, **kw):
    model = klass(2, seed=1, cache=None, **kw)
    model.vocab = Vocab(w for t in TEXTS for w in t.split())
    model._make_module(None)  # what fit() and load() do, without GloVe
    return model


def _models():
    return {"transformer": TransformerClassifier(2, tiny=True, seed=1, cache=None),
            "lstm": _vocab_model(LSTMAttentionClassifier, hidden=8),
            "cnn": _vocab_model(CNNClassifier, n_filters=4, hidden=8)}


def test_invalid_device_fails_with_the_accepted_values(monkeypatch):
    monkeypatch.setenv("XAIBENCH_DEVICE", "gpu")
    with pytest.raises(ValueError, match=r"XAIBENCH_DEVICE='gpu' is not understood; use one of auto, cpu, cuda"):
        dev.torch_device()
    with pytest.raises(ValueError, match="XAIBENCH_DEVICE"):
        TransformerClassifier(2, tiny=True, cache=None)  # a model asks before it builds anything


def test_selecting_a_gpu_sets_the_deterministic_cublas_workspace(monkeypatch):
    import os

    import torch

    from xaibench.utils import set_seed

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setenv("XAIBENCH_DEVICE", "cuda:0")
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    assert dev.torch_device() == torch.device("cuda", 0)
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"  # before anything runs on the GPU
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")  # a user's own setting (also deterministic) stays
    dev.torch_device()
    set_seed(0)
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":16:8"


def test_cuda_without_a_gpu_says_how_to_fix_it(monkeypatch):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is visible")
    monkeypatch.setenv("XAIBENCH_DEVICE", "cuda")
    with pytest.raises(RuntimeError, match="torch sees no CUDA device.*XAIBENCH_DEVICE=cpu"):
        dev.torch_device()


def test_cpu_puts_every_model_its_inputs_and_training_on_the_cpu(monkeypatch):
    monkeypatch.setenv("XAIBENCH_DEVICE", "CPU ")  # case and blanks do not matter
    assert dev.torch_device().type == "cpu"
    for name, model in _models().items():
        assert {p.device.type for p in model.module.parameters()} == {"cpu"}, name
        ids, mask = model.encode(TEXTS)
        assert ids.device.type == mask.device.type == "cpu", name
        assert model.device.type == "cpu", name
        assert model.predict_proba(TEXTS).shape == (len(TEXTS), 2), name
    lstm = LSTMAttentionClassifier(2, hidden=8, epochs=1, batch_size=2, seed=1, cache=None).fit(TEXTS, LABELS)
    assert {p.device.type for p in lstm.module.parameters()} == {"cpu"}  # the training loop too
    assert all(isinstance(a, np.ndarray) for a in lstm.attention_weights(TEXTS[:2]))


def test_models_and_inputs_follow_the_device_switch(monkeypatch):
    import torch

    # the `meta` device stands in for CUDA: a model that ignored xaibench.device would stay on the CPU
    monkeypatch.setattr(dev, "torch_device", lambda: torch.device("meta"))
    for name, model in _models().items():
        assert {p.device.type for p in model.module.parameters()} == {"meta"}, name
        ids, mask = model.encode(TEXTS)
        assert ids.device.type == mask.device.type == "meta", name


def test_load_average_is_the_rounded_one_minute_value_or_nan(monkeypatch):
    import math
    import os

    from xaibench.device import load_average

    monkeypatch.setattr(os, "getloadavg", lambda: (3.14159, 2.0, 1.0))
    assert load_average() == 3.14

    def unavailable():
        raise OSError("no load average on this platform")

    monkeypatch.setattr(os, "getloadavg", unavailable)
    assert math.isnan(load_average())


def test_cpu_model_names_generation_and_vector_extension():
    """Reports record the CPU well enough to tell kernels apart: "AMD EPYC" alone hid that two
    machines (Zen 3 with AVX2, and a faster one) gave results differing in the last bits."""
    zen3 = ("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n"
            "model name\t: AMD EPYC\nflags\t\t: fpu sse4_2 avx fma avx2 sha_ni\n\n"
            "processor\t: 1\ncpu family\t: 99\nmodel\t\t: 9\nmodel name\t: other\n")
    assert dev.cpu_model(zen3) == "AMD EPYC (family 25 model 1, avx2)"
    genoa = zen3.replace("model\t\t: 1", "model\t\t: 17").replace("avx2 sha_ni", "avx2 avx512f sha_ni")
    assert dev.cpu_model(genoa) == "AMD EPYC (family 25 model 17, avx512f)"
    arm = "processor\t: 0\nFeatures\t: fp asimd crc32\nmodel name\t: Neoverse-N1\n"
    assert dev.cpu_model(arm) == "Neoverse-N1 (asimd)"
    assert dev.cpu_model("model name\t: Bare CPU\n") == "Bare CPU"
