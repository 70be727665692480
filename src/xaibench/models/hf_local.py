"""Original Hugging Face models the papers used, loaded from a local copy only (never downloaded).

The project runs offline; where a user already has one of the papers' own models -- Polyjuice's generator
(``uw-hai/polyjuice``), MiCE's T5 editor, GPT-2 as the perplexity LM -- in the local Hugging Face cache or in a
``save_pretrained`` folder, :func:`load_local` loads it through transformers with ``local_files_only=True``.

Where the model comes from (:func:`model_source`): the ``model=`` argument of the caller, else the environment
variable that names it (e.g. ``XAIBENCH_POLYJUICE_MODEL``), else the default hub id.  A value that names an
existing folder is loaded from that folder; any other value is a hub id looked up in the local cache
(``HF_HOME`` / ``HF_HUB_CACHE``).  A model that is not there raises :class:`ModelNotAvailable`, naming what was
looked for and how to provide it -- no silent fallback to a stand-in.
"""
from __future__ import annotations

import os
from pathlib import Path


class ModelNotAvailable(RuntimeError):
    """An original model that is neither a local folder nor in the local Hugging Face cache."""


def model_source(model: str | os.PathLike | None, env: str, default: str) -> str:
    """The model to load: ``model`` if given, else ``$env`` if set and non-empty, else ``default``."""
    if model is not None and str(model).strip():
        return str(model)
    return os.environ.get(env, "").strip() or default


def hub_cache() -> str:
    """The local Hugging Face hub cache that a hub id is looked up in."""
    try:
        from huggingface_hub import constants

        return str(constants.HF_HUB_CACHE)
    except Exception:  # noqa: BLE001 - only for the message
        return os.environ.get("HF_HUB_CACHE", "~/.cache/huggingface/hub")


def _looks_like_path(source: str) -> bool:
    """A hub id is ``name`` or ``owner/name``; anything else is meant as a folder."""
    return source.startswith((".", "/", "~")) or source.count("/") > 1 or "\\" in source


def is_local_folder(source: str) -> bool:
    return Path(source).expanduser().is_dir()


def unavailable_message(what: str, source: str, env: str, default: str, extra: str = "") -> str:
    """Why ``source`` could not be loaded and how to provide it."""
    if is_local_folder(source) or _looks_like_path(source):
        where = f"the folder {str(Path(source).expanduser())!r} holds no loadable model (or does not exist)"
    else:
        where = (f"{source!r} is not in the local Hugging Face cache ({hub_cache()}) and nothing is downloaded "
                 "(local_files_only=True)")
    return (f"{what}: {where}. Provide it either by downloading it where there is internet "
            f"(`huggingface-cli download {default}`) and copying the cache into HF_HOME here, or by pointing "
            f"{env}=/path/to/folder (a save_pretrained folder: config, weights and tokenizer) or passing "
            f"model=... {extra}".rstrip())


def load_local(kind: str, source: str, what: str, env: str, default: str, dtype=None, extra: str = ""):
    """``(model, tokenizer)`` of ``source`` (a folder or a hub id in the local cache) in eval mode on the project's
    device; ``kind``: ``"causal"`` (``AutoModelForCausalLM``) or ``"seq2seq"`` (``AutoModelForSeq2SeqLM``).
    Raises :class:`ModelNotAvailable` when it is not there."""
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    from ..device import torch_device

    if kind not in ("causal", "seq2seq"):
        raise ValueError(f"kind={kind!r}: use 'causal' or 'seq2seq'")
    cls = AutoModelForCausalLM if kind == "causal" else AutoModelForSeq2SeqLM
    src = str(Path(source).expanduser()) if is_local_folder(source) else source
    kw = {"dtype": dtype} if dtype is not None else {}
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # transformers' loading bar would land in a notebook's stderr
    try:
        tok = AutoTokenizer.from_pretrained(src, local_files_only=True)
        model = cls.from_pretrained(src, local_files_only=True, **kw)
    except (OSError, ValueError) as err:
        raise ModelNotAvailable(unavailable_message(what, source, env, default, extra)
                                + f" [{type(err).__name__}: {str(err).splitlines()[0][:200]}]") from err
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    return model.to(torch_device()).eval(), tok


__all__ = ["ModelNotAvailable", "model_source", "hub_cache", "is_local_folder", "unavailable_message", "load_local"]
