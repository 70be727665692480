"""The fluency LM loader and NLL on a tiny hand-built causal LM (uniform -> NLL = log V)."""
import math

import numpy as np
import pytest


def _tiny_lm(folder):
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["<pad>", "<s>", "</s>", "<unk>", "the", "film", "was", "good", "bad"])}
    t = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    t.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=t, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                  unk_token="<unk>")
    cfg = LlamaConfig(vocab_size=len(vocab), hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, tie_word_embeddings=False,
                      bos_token_id=1, eos_token_id=2, pad_token_id=0)
    model = LlamaForCausalLM(cfg)
    with torch.no_grad():
        model.lm_head.weight.zero_()  # every next-token distribution is uniform
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return len(vocab)


def test_loader_and_uniform_lm_nll(tmp_path):
    from xaibench.models.lm import load_causal_lm, sequence_nll

    V = _tiny_lm(tmp_path)
    model, tok = load_causal_lm(str(tmp_path))
    nll, n_trunc = sequence_nll(["the film was good", "bad", ""], model, tok, max_tokens=4)
    assert np.isclose(nll[0], math.log(V), atol=1e-5) and np.isclose(nll[1], math.log(V), atol=1e-5)
    assert np.isnan(nll[2])  # nothing to predict
    assert n_trunc == 1      # "<s> the film was good" has 5 tokens > 4


def test_library_tqdm_goes_through_project_progress(monkeypatch, capsys):
    """A library's own tqdm bar (transformers' GGUF conversion) is silent in a notebook kernel."""
    import sys
    import types

    from tqdm.std import tqdm

    from xaibench.models.lm import project_progress

    lib = types.ModuleType("fake_gguf_lib")
    lib.tqdm = tqdm
    lib.convert = lambda: sum(lib.tqdm(range(5), desc="Converting and de-quantizing GGUF tensors..."))
    monkeypatch.setitem(sys.modules, "fake_gguf_lib", lib)
    monkeypatch.delenv("XAIBENCH_QUIET", raising=False)
    monkeypatch.setenv("XAIBENCH_PROGRESS", "text")  # what a kernel gets
    with project_progress("fake_gguf_lib"):
        assert lib.convert() == 10
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    assert lib.tqdm is tqdm  # restored
    lib.convert()
    assert "Converting and de-quantizing" in capsys.readouterr().err  # the unrouted bar


def test_auto_dtype_is_bfloat16_only_with_bf16_units(monkeypatch, tmp_path):
    from xaibench import device
    from xaibench.models import lm

    monkeypatch.setattr(device, "torch_device", lambda: "cpu")
    real = lm.Path

    def fake_path(flags):
        def make(p):
            if str(p) == "/proc/cpuinfo":
                f = tmp_path / "cpuinfo"
                f.write_text(f"flags\t: fpu sse avx2 {flags}\n")
                return f
            return real(p)
        return make

    monkeypatch.setattr(lm, "Path", fake_path("avx512f"))
    assert lm.resolve_lm_dtype("auto") == "float32"
    monkeypatch.setattr(lm, "Path", fake_path("avx512f avx512_bf16"))
    assert lm.resolve_lm_dtype("auto") == "bfloat16"
    monkeypatch.setattr(device, "torch_device", lambda: "cuda")
    monkeypatch.setattr(lm, "Path", fake_path(""))
    assert lm.resolve_lm_dtype("auto") == "bfloat16"
    assert lm.resolve_lm_dtype("float16") == "float16"  # an explicit dtype is kept


def test_gguf_parsed_once_shares_the_reader_and_the_name_map_and_restores_them(monkeypatch):
    import gguf

    from xaibench.models.lm import gguf_parsed_once

    made, maps = [], []

    class Reader:
        def __init__(self, path, mode="r"):
            made.append((path, mode))

    def name_map(arch, n_blocks):
        maps.append((arch, n_blocks))
        return {"arch": arch, "n": n_blocks}

    monkeypatch.setattr(gguf, "GGUFReader", Reader)
    monkeypatch.setattr(gguf, "get_tensor_name_map", name_map)
    with gguf_parsed_once():
        a, b, c = gguf.GGUFReader("m.gguf"), gguf.GGUFReader("m.gguf"), gguf.GGUFReader("other.gguf")
        assert a is b and a is not c
        assert gguf.GGUFReader("m.gguf", "r+") is not a  # another mode is another reader
        assert [gguf.get_tensor_name_map(1, 30) for _ in range(400)][0] == {"arch": 1, "n": 30}
        gguf.get_tensor_name_map(1, 12)
    assert made == [("m.gguf", "r"), ("other.gguf", "r"), ("m.gguf", "r+")]
    assert maps == [(1, 30), (1, 12)]
    assert gguf.GGUFReader is Reader and gguf.get_tensor_name_map is name_map  # restored
    gguf.GGUFReader("m.gguf")
    assert len(made) == 4  # outside the block every call parses again


@pytest.mark.slow
def test_smollm2_converted_with_one_parse_is_byte_identical_to_transformers_own(tmp_path, monkeypatch):
    import contextlib

    import xaibench.models.lm as lm

    lm.convert_smollm2(tmp_path / "once")
    monkeypatch.setattr(lm, "gguf_parsed_once", contextlib.nullcontext)
    lm.convert_smollm2(tmp_path / "plain")
    files = sorted(p.name for p in (tmp_path / "plain").iterdir())
    assert "model.safetensors" in files and files == sorted(p.name for p in (tmp_path / "once").iterdir())
    for name in files:
        assert (tmp_path / "once" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes(), name
