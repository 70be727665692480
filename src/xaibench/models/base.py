"""One interface for every classifier.

* :class:`Classifier` -- ``fit``, batched ``predict_proba`` (cached on disk), ``embed`` (the
  representation phi(x) the classification head sees), ``save``, ``fingerprint``; a saved model
  is loaded by :func:`xaibench.models.registry.load_model`, which knows every model kind.
* :class:`TorchTextClassifier` -- adds what gradient explainers and concept explainers need:
  ``encode`` (per-batch padded ids + mask), ``module`` (an ``nn.Module`` whose
  ``forward(input_ids, attention_mask)`` returns logits and which is split into
  ``module.features(input_ids, attention_mask) -> phi`` and ``module.head(phi) -> logits``),
  ``embedding_layer`` (for captum layer attributions), ``head`` (= ``module.head``) and
  ``tokens`` (display tokens aligned with input positions).

Probabilities go through the on-disk :mod:`xaibench.cache`; ``n_forward`` counts the texts that
really went through the network (the benchmarks and the cache test read it).
"""
from __future__ import annotations

import abc
import hashlib
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..cache import OutputCache, default_cache


class Classifier(abc.ABC):
    """Base class.  Subclasses implement ``_fit``, ``_predict_proba``, ``_embed``, ``_state``."""

    kind: str = "classifier"

    def __init__(self, n_classes: int, seed: int = 42, cache: OutputCache | None | bool = True):
        self.n_classes = int(n_classes)
        self.seed = int(seed)
        self._cache_opt = cache
        self.n_forward = 0  # texts actually run through the model
        self._fingerprint: str | None = None

    # ----- to implement ---------------------------------------------------------------------
    @abc.abstractmethod
    def _fit(self, texts: list[str], labels: np.ndarray, dev_texts: list[str] | None,
             dev_labels: np.ndarray | None) -> dict[str, Any]: ...

    @abc.abstractmethod
    def _predict_proba(self, texts: list[str]) -> np.ndarray: ...

    @abc.abstractmethod
    def _embed(self, texts: list[str]) -> np.ndarray: ...

    @abc.abstractmethod
    def config(self) -> dict[str, Any]:
        """JSON-serialisable hyper-parameters (enough to rebuild the object before loading)."""

    @abc.abstractmethod
    def _save_weights(self, folder: Path) -> None: ...

    @abc.abstractmethod
    def _load_weights(self, folder: Path) -> None: ...

    @abc.abstractmethod
    def _weights_digest(self) -> str:
        """A hash of the trained parameters (part of the fingerprint)."""

    # ----- public API ------------------------------------------------------------------------
    def fit(self, texts: Sequence[str], labels: Sequence[int], dev_texts: Sequence[str] | None = None,
            dev_labels: Sequence[int] | None = None) -> "Classifier":
        from ..checks import check_labels, check_texts

        texts = _as_text_list(texts)
        labels = check_labels(labels, n_classes=self.n_classes, n=len(texts))
        if dev_texts is not None:
            dev_texts = check_texts(dev_texts, "dev_texts")
            if dev_labels is None:
                raise ValueError("dev_texts were given without dev_labels; pass both or neither")
            dev_labels = check_labels(dev_labels, n_classes=self.n_classes, n=len(dev_texts), what="dev_labels",
                                      texts_name="dev_texts")
        self.history = self._fit(texts, labels, dev_texts, dev_labels)
        self._fingerprint = None
        return self

    @property
    def cache(self) -> OutputCache | None:
        if self._cache_opt is True:
            return default_cache()
        return self._cache_opt or None

    @cache.setter
    def cache(self, cache: OutputCache | None | bool) -> None:
        """``True``: the default on-disk cache; ``None``/``False``: no cache; or an :class:`OutputCache`."""
        self._cache_opt = cache

    def fingerprint(self) -> str:
        if self._fingerprint is None:
            cfg = json.dumps({"kind": self.kind, **self.config()}, sort_keys=True, default=str)
            self._fingerprint = hashlib.sha1((cfg + self._weights_digest()).encode()).hexdigest()[:16]
        return self._fingerprint

    def _counted(self, fn, texts: list[str]) -> np.ndarray:
        self.n_forward += len(texts)
        return fn(texts)

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """Class probabilities, shape ``(n, n_classes)``; cached per (fingerprint, text).

        A text with no word left gets the model's output on its empty input: the reference that the
        perturbation explainers (LIME, SHAP, occlusion) and ERASER's comprehensiveness remove words towards, as
        their papers define it.  What cannot be computed honestly for it is refused where it is asked for:
        training, attention weights and rationales of an empty text raise."""
        texts = _as_text_list(texts)
        if not texts:
            return np.zeros((0, self.n_classes), dtype=np.float32)
        cache = self.cache
        if cache is None:
            return self._counted(self._predict_proba, texts)
        return cache.cached_call(f"{self.fingerprint()}/proba", texts,
                                 lambda t: self._counted(self._predict_proba, t))

    def predict_proba_uncached(self, texts: Sequence[str]) -> np.ndarray:
        """Class probabilities computed now, bypassing the on-disk cache (counted in ``n_forward``):
        for inputs used once, such as an explainer's perturbations."""
        return self._counted(self._predict_proba, list(texts))

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        return self.predict_proba(texts).argmax(axis=1)

    def chars_read(self, text: str) -> int:
        """How much of ``text`` the model reads: it sees exactly ``text[:chars_read(text)]`` (models
        that truncate long inputs return less than ``len(text)``).  Explainers attribute only that
        part and mark the explanation ``truncated``.  Default: the whole text."""
        return len(text)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """phi(x): the representation the classification head sees, shape ``(n, d)``; cached."""
        texts = _as_text_list(texts)
        cache = self.cache
        if cache is None:
            return self._counted(self._embed, texts)
        return cache.cached_call(f"{self.fingerprint()}/embed", texts,
                                 lambda t: self._counted(self._embed, t))

    def save(self, folder: str | Path) -> Path:
        from ..io import atomic_dir, write_json

        folder = Path(folder)
        with atomic_dir(folder) as tmp:
            write_json(tmp / "config.json", {"kind": self.kind, "n_classes": self.n_classes,
                                             "seed": self.seed, "config": self.config(),
                                             "history": getattr(self, "history", None)})
            self._save_weights(tmp)
        return folder

    def load_weights(self, folder: str | Path) -> "Classifier":
        """Read the weights :meth:`save` wrote to ``folder`` into this (same-config) model."""
        self._load_weights(Path(folder))
        return self


class TorchTextClassifier(Classifier):
    """A classifier backed by a torch ``nn.Module`` (see module docstring for the extra API)."""

    module: Any  # torch.nn.Module with forward(input_ids, attention_mask) -> logits
    batch_size: int = 32

    @abc.abstractmethod
    def encode(self, texts: Sequence[str]) -> tuple[Any, Any]:
        """``(input_ids, attention_mask)`` long tensors, padded to the longest text of the batch."""

    @abc.abstractmethod
    def tokens(self, text: str) -> list[str]:
        """Display tokens, one per input position of ``encode([text])``."""

    @property
    @abc.abstractmethod
    def embedding_layer(self) -> Any:
        """The token-embedding ``nn.Module`` (input of captum's layer attributions)."""

    @property
    def device(self) -> Any:
        """Where the module lives (``XAIBENCH_DEVICE``, :mod:`xaibench.device`); ``encode`` puts inputs there."""
        from ..device import module_device

        return module_device(self.module)

    @property
    def head(self) -> Any:
        """``nn.Module`` mapping phi(x) (as returned by :meth:`embed`) to logits."""
        return self.module.head

    def pretrained_module(self) -> Any:
        """A fresh module as it was before task training (pretrained weights), reading :meth:`encode`'s
        inputs; CausaLM's paper staging starts its counterfactual encoders from it."""
        raise NotImplementedError(
            f"{type(self).__name__} does not define pretrained_module(); CausaLM's paper staging needs it "
            "(implement it, or use CausaLMExplainer(staging='explained') to start from the explained model)")

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self._run(texts, lambda ids, mask: self.module.features(ids, mask))

    def _weights_digest(self) -> str:
        h = hashlib.sha1()
        for name, p in sorted(self.module.state_dict().items()):
            h.update(name.encode())
            h.update(p.detach().cpu().contiguous().numpy().tobytes())
        return h.hexdigest()

    def _batches(self, texts: list[str]):
        # sort by length so per-batch padding wastes little; callers get original order back
        order = np.argsort([len(t) for t in texts], kind="stable")
        for i in range(0, len(texts), self.batch_size):
            idx = order[i : i + self.batch_size]
            yield idx, [texts[j] for j in idx]

    def _run(self, texts: list[str], fn) -> np.ndarray:
        import torch

        out: list[tuple[np.ndarray, np.ndarray]] = []
        self.module.eval()
        with torch.inference_mode():
            for idx, batch in self._batches(texts):
                ids, mask = self.encode(batch)
                out.append((idx, fn(ids, mask).float().cpu().numpy()))
        res = np.zeros((len(texts), out[0][1].shape[1]), dtype=np.float32)
        for idx, vals in out:
            res[idx] = vals
        return res

    def _predict_proba(self, texts: list[str]) -> np.ndarray:
        import torch

        return self._run(texts, lambda ids, mask: torch.softmax(self.module(ids, mask), dim=-1))

    def logits_from_ids(self, input_ids, attention_mask):
        return self.module(input_ids, attention_mask)


def _as_text_list(texts: Sequence[str] | str) -> list[str]:
    from ..checks import check_texts

    return check_texts(texts)


class VocabTorchClassifier(TorchTextClassifier):
    """A torch classifier over a word vocabulary built at fit time (LSTM, CNN).

    Subclasses implement ``_make_module(embedding_matrix_or_None)``; the vocabulary is saved
    beside the weights as ``vocab.json``.
    """

    vocab: Any = None
    module: Any = None

    @abc.abstractmethod
    def _make_module(self, emb: np.ndarray | None) -> None: ...

    def _require(self) -> None:
        if self.module is None:
            raise RuntimeError(f"the {self.kind} model has no vocabulary/weights yet: call fit(...) or "
                               "xaibench.models.registry.load_model(folder) first")

    def pretrained_module(self) -> Any:
        """A fresh module as it was before task training: the fitted vocabulary's GloVe vectors and
        seeded random layers (``_make_module`` as at the start of ``fit``), on the model's device, in
        eval mode; the explained model's own module is left as it is (CausaLM's paper staging starts
        here, as the authors' LSTM starts from fastText vectors)."""
        from .embeddings import glove_vectors

        self._require()
        explained = self.module
        try:
            emb, _ = glove_vectors(self.vocab.itos, seed=self.seed)
            self._make_module(emb)
            fresh = self.module
        finally:
            self.module = explained
        return fresh.eval()

    def _save_weights(self, folder: Path) -> None:
        import torch

        self._require()
        (folder / "vocab.json").write_text(json.dumps(self.vocab.itos))
        torch.save(self.module.state_dict(), folder / "weights.pt")

    def _load_weights(self, folder: Path) -> None:
        import torch

        from .embeddings import Vocab

        vocab_path = folder / "vocab.json"
        if not vocab_path.exists():
            raise FileNotFoundError(f"{vocab_path} is missing: the model folder is incomplete; save the model again")
        self.vocab = Vocab(json.loads(vocab_path.read_text())[2:])
        self._make_module(None)
        self.module.load_state_dict(torch.load(folder / "weights.pt", map_location="cpu", weights_only=True))
        self.module.eval()

    def _weights_digest(self) -> str:
        self._require()
        return super()._weights_digest()
