"""Fixed-slot feature datasets for the counterfactual-faithfulness protocol (Ge et al.).

Both datasets of the paper are seen as ``M`` categorical *features* whose values are ids of one
embedding table, so one model and one set of explainers and metrics serve both:

* **Adult** (tabular): the 12 features of :mod:`xaibench.data.adult`; the id of value ``v`` of
  feature ``j`` is ``1 + offset[j] + v``.
* **Movie Reviews** (rt-polarity, text): word positions ``0 .. max_len-1`` of the sentence
  (padded / truncated to the longest sentence, 61 tokens); ids index one word vocabulary shared
  by every position.

Id ``0`` is reserved: a zero embedding (deleted feature / padding).  Text id ``1`` is ``<unk>``.

Every row also has a *text rendering* (:meth:`FeatureSpec.to_text`) so that the project's
text-level explainers (Integrated Gradients, Gradient x Input, SHAP, ...) can run on the same
model: Adult rows render as ``age=1 workclass=4 ...`` (a missing feature is a deleted one), sentences
as their space-joined words.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

PAD_ID, UNK_ID = 0, 1
#: mask strings of anchor (``UNK``) and lime (``UNKWORDZ``) map to ``<unk>``
MASK_STRINGS = ("<unk>", "UNK", "UNKWORDZ")


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


@dataclass
class FeatureSpec:
    """How ids, feature names, value names and texts relate (JSON-serialisable via ``as_dict``)."""

    kind: str                            # "tabular" | "text"
    feature_names: list[str]
    values: list[list[str]] | None = None  # tabular: value names per feature
    vocab: list[str] | None = None         # text: id -> word (0 <pad>, 1 <unk>)
    _stoi: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in ("tabular", "text"):
            raise ValueError(f"kind must be 'tabular' or 'text', got {self.kind!r}")
        if self.kind == "tabular":
            if self.values is None or len(self.values) != len(self.feature_names):
                raise ValueError("a tabular spec needs one list of value names per feature")
            card = [len(v) for v in self.values]
            self.offsets = np.concatenate([[0], np.cumsum(card)[:-1]]).astype(np.int64) + 1
            self.n_ids = 1 + int(sum(card))
            self._keys = {_key(n): j for j, n in enumerate(self.feature_names)}
        else:
            if not self.vocab or self.vocab[:2] != ["<pad>", "<unk>"]:
                raise ValueError("a text spec needs a vocab starting with ['<pad>', '<unk>']")
            self.n_ids = len(self.vocab)
            self._stoi = {w: i for i, w in enumerate(self.vocab)}
            for m in MASK_STRINGS:
                self._stoi[m] = UNK_ID

    # ----- basics ----------------------------------------------------------------------------
    @property
    def n_features(self) -> int:
        return len(self.feature_names)

    def check_ids(self, X: Any, what: str = "X") -> np.ndarray:
        """``X`` as an ``(n, n_features)`` int64 array of ids each valid in its slot: ``0`` (padding / deleted)
        or, for a tabular feature ``j``, one of its own value ids (:meth:`candidates`), for a text slot a
        vocabulary id.  Anything else -- a negative id (numpy would wrap it to the table's end), an id past
        the vocabulary, another feature's value -- raises a ``ValueError`` naming the first bad id and its slot."""
        a = np.asarray(X)
        if a.dtype.kind not in "iu":
            raise TypeError(f"{what} must hold integer ids; got dtype {a.dtype}")
        if a.ndim != 2 or a.shape[1] != self.n_features:
            raise ValueError(f"{what} must be rows of {self.n_features} ids (one per feature); got shape {a.shape}")
        a = a.astype(np.int64, copy=False)
        if self.kind == "tabular":
            card = np.asarray([len(v) for v in self.values], dtype=np.int64)
            lo, hi = self.offsets, self.offsets + card
        else:
            lo, hi = np.ones(self.n_features, np.int64), np.full(self.n_features, self.n_ids, np.int64)
        bad = (a != PAD_ID) & ((a < lo) | (a >= hi))
        if bad.any():
            r, j = (int(v) for v in np.argwhere(bad)[0])
            raise ValueError(f"{what}: id {int(a[r, j])} in row {r}, slot {j} ({self.feature_names[j]}) is not an id of "
                             f"that slot; use {PAD_ID} (none) or an id in [{int(lo[j])}, {int(hi[j]) - 1}] "
                             f"({int(bad.sum())} bad id(s) in all)")
        return a

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "feature_names": list(self.feature_names), "values": self.values,
                "vocab": self.vocab}

    def candidates(self, j: int) -> np.ndarray:
        """Ids feature ``j`` can take (Algorithm 1's search space ``V(e_j)``)."""
        if self.kind == "text":
            raise ValueError("exhaustive search over a word vocabulary is not supported (the paper uses "
                             "only the continuous Algorithm 2 on Movie Reviews)")
        return self.offsets[j] + np.arange(len(self.values[j]))

    def value_name(self, j: int, i: int) -> str:
        if i == PAD_ID:
            return "<pad>" if self.kind == "text" else "<deleted>"
        if self.kind == "text":
            return self.vocab[i]
        return self.values[j][int(i - self.offsets[j])]

    # ----- texts -----------------------------------------------------------------------------
    def to_text(self, row: Sequence[int]) -> str:
        if self.kind == "text":
            return " ".join(self.vocab[i] for i in row if i != PAD_ID)
        keys = list(self._keys)
        return " ".join(f"{keys[j]}={int(i - self.offsets[j])}" for j, i in enumerate(row) if i != PAD_ID)

    def from_text(self, text: str) -> np.ndarray:
        toks = text.split()
        out = np.zeros(self.n_features, dtype=np.int64)
        if self.kind == "text":
            ids = [self._stoi.get(t, UNK_ID) for t in toks[: self.n_features]]
            out[: len(ids)] = ids
            return out
        for t in toks:
            k, _, v = t.partition("=")
            if k not in self._keys or not v.isdigit() or int(v) >= len(self.values[self._keys[k]]):
                raise ValueError(f"cannot read tabular token {t!r}; expected '<feature>=<value index>' with "
                                 f"feature in {sorted(self._keys)}")
            j = self._keys[k]
            out[j] = self.offsets[j] + int(v)
        return out

    def chars_read(self, text: str) -> int:
        """How much of ``text`` :meth:`from_text` reads: a sentence longer than ``n_features`` words is
        cut after its ``n_features``-th word (``text[:chars_read(text)]`` gives the same row)."""
        if self.kind != "text":
            return len(text)
        ends = [m.end() for m in re.finditer(r"\S+", text)]
        return len(text) if len(ends) <= self.n_features else ends[self.n_features - 1]

    def from_texts(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.from_text(t) for t in texts]) if len(texts) else np.zeros((0, self.n_features), np.int64)

    def tokens(self, row: Sequence[int]) -> list[str]:
        """Display token per slot: ``Feature=value`` (tabular) or the word (text; padding included)."""
        if self.kind == "text":
            return [self.vocab[i] for i in row]
        return [f"{n}={self.value_name(j, i)}" for j, (n, i) in enumerate(zip(self.feature_names, row))]


@dataclass
class FeatureDataset:
    name: str
    spec: FeatureSpec
    X: np.ndarray        # (n, M) ids
    y: np.ndarray        # (n,)
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.y)

    def subset(self, idx: np.ndarray) -> "FeatureDataset":
        return FeatureDataset(self.name, self.spec, self.X[idx], self.y[idx], dict(self.meta))

    def texts(self) -> list[str]:
        return [self.spec.to_text(r) for r in self.X]


def adult_dataset(grouped: bool = True, replace: bool = True) -> FeatureDataset:
    """Adult after Hase & Bansal's preprocessing (:func:`xaibench.data.adult.load_adult`)."""
    from .adult import load_adult

    a = load_adult(grouped=grouped, balance=True, replace=replace)
    spec = FeatureSpec("tabular", a.feature_names, values=a.values)
    X = a.X + spec.offsets[None, :]
    return FeatureDataset("adult", spec, X.astype(np.int64), a.y,
                          meta={**a.meta, "source_rows": a.source_rows})


def rt_polarity_dataset(max_len: int | None = None) -> FeatureDataset:
    """Movie Reviews: word ids per position, padded/truncated to ``max_len`` (default: the longest
    sentence).  The vocabulary holds every word GloVe 6B knows; other words are ``<unk>``."""
    from ..glove import glove_index
    from ..text import word_tokenize
    from .loaders import load

    df = load("rt-polarity")
    toks = [word_tokenize(t) for t in df["text"]]
    L = int(max_len or max(len(t) for t in toks))
    g = glove_index()
    words = sorted({w for t in toks for w in t if w in g})
    spec = FeatureSpec("text", [f"w{i}" for i in range(L)], vocab=["<pad>", "<unk>", *words])
    X = np.zeros((len(toks), L), dtype=np.int64)
    for i, t in enumerate(toks):
        ids = [spec._stoi.get(w, UNK_ID) for w in t[:L]]
        X[i, : len(ids)] = ids
    return FeatureDataset("rt-polarity", spec, X, df["label"].to_numpy(dtype=np.int64), meta={"max_len": L})


def load_feature_dataset(name: str, **kw: Any) -> FeatureDataset:
    if name == "adult":
        return adult_dataset(**kw)
    if name in ("rt-polarity", "movie_reviews"):
        return rt_polarity_dataset(**kw)
    raise KeyError(f"unknown feature dataset {name!r}; use 'adult' or 'rt-polarity'")
