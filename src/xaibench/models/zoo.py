"""Named model recipes and where trained models live.

``MODEL`` in the Makefile is one of :data:`RECIPES` (``minilm``, ``lstm``, ``cnn``, ``logreg``) or
any Hugging Face checkpoint name (``bert-base-uncased``, ``roberta-base``, ``gpt2``), which builds
a :class:`~xaibench.models.transformer.TransformerClassifier` from that checkpoint (online only).

Trained models are saved under ``data/models/<dataset>/<model>/<task>_<split>/seed<seed>/``.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .. import paths
from .base import Classifier
from .registry import model_class

RECIPES: dict[str, tuple[str, dict[str, Any]]] = {
    "minilm": ("transformer", {"checkpoint": "minilm"}),
    "lstm": ("lstm_attention", {}),
    "cnn": ("cnn", {}),
    "logreg": ("logreg", {}),
}


#: a Hugging Face hub model id: ``name`` or ``owner/name``
HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")


def hub_cache_dir() -> Path:
    """The local Hugging Face hub cache (``HF_HUB_CACHE``, ``HF_HOME/hub`` or ``~/.cache/huggingface/hub``)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache") / "huggingface"
    return Path(home).expanduser() / "hub"


def in_hub_cache(hub_id: str) -> bool:
    """Whether the hub model ``hub_id`` has a downloaded snapshot (with its config.json) in the local cache."""
    folder = hub_cache_dir() / ("models--" + hub_id.replace("/", "--"))
    return any((folder / "snapshots").glob("*/config.json"))


def hub_offline() -> bool:
    """Whether hub models load from the local cache only (``HF_HUB_OFFLINE``; the Makefile and the
    notebooks set it to 1 unless it is set)."""
    return os.environ.get("HF_HUB_OFFLINE", "1").strip().lower() not in ("0", "false", "no", "off", "")


def check_model(model: str, name: str = "MODEL") -> str:
    """``model`` if a run can build it: a recipe of :data:`RECIPES`, an alias of
    :data:`~xaibench.models.transformer.ALIASES`, a local folder holding a ``config.json``, or a hub id
    whose snapshot is in the local Hugging Face cache (any well-formed hub id when ``HF_HUB_OFFLINE=0``).
    Else a ``ValueError`` that names ``name`` (the Make variable) and the model."""
    from .transformer import ALIASES

    model = str(model).strip()
    if model in RECIPES or model in ALIASES or (Path(model).expanduser() / "config.json").is_file():
        return model
    if HUB_ID.fullmatch(model):
        if in_hub_cache(model) or not hub_offline():
            return model
        where = f"not in the local Hugging Face cache ({hub_cache_dir()}) and HF_HUB_OFFLINE=1"
    else:
        where = "not a hub model id"
    raise ValueError(f"{name}={model!r} is neither a local model ({', '.join(sorted({*RECIPES, *ALIASES}))}, or a "
                     f"folder with a config.json) nor available offline: {where}. Use one of the local models, "
                     "download the checkpoint first, or set HF_HUB_OFFLINE=0 to download it")


def slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", model)


def build(model: str, n_classes: int, seed: int, **overrides: Any) -> Classifier:
    """A fresh, untrained classifier for a recipe name or a hub checkpoint name."""
    kind, kw = RECIPES.get(model, ("transformer", {"checkpoint": model}))
    return model_class(kind)(n_classes=n_classes, seed=seed, **{**kw, **overrides})


def model_dir(dataset: str, model: str, task: str, split: str, seed: int) -> Path:
    return paths.models_dir() / dataset / slug(model) / f"{task}_{split}" / f"seed{seed}"

