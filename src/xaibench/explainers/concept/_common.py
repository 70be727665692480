"""Helpers shared by the concept explainers: query validation, aspect labels, task labels, CAVs,
and head training on fixed representations (through the shared :func:`train_loop`)."""
from __future__ import annotations

import copy
from typing import Any, Protocol, Sequence

import numpy as np
import pandas as pd

from ...data.cebab import ASPECTS, CONCEPT_VALUES, task_label
from ..base import ConceptExplainer

VALUE_CODE = {v: i for i, v in enumerate(CONCEPT_VALUES)}  # Negative 0, unknown 1, Positive 2


class AspectPredictor(Protocol):
    def predict_aspects(self, texts: Sequence[str]) -> pd.DataFrame:
        """Columns food, service, ambiance, noise with values 'Positive'/'Negative'/'unknown'."""


# ----------------------------------------------------------------------------------------------
# queries and data frames
# ----------------------------------------------------------------------------------------------
def check_queries(queries: pd.DataFrame, need: Sequence[str] = ("text", "aspect", "cf_value")) -> pd.DataFrame:
    """Validate an explain() query frame; accepts ``base_text`` for ``text``; refuses cf leakage."""
    if not isinstance(queries, pd.DataFrame):
        raise TypeError(f"queries must be a pandas DataFrame (use xaibench.evaluation.cebab.metrics.make_queries(pairs)); "
                        f"got {type(queries).__name__}")
    leaked = [c for c in queries.columns if c.startswith("cf_") and c != "cf_value"]
    if leaked:
        raise ValueError(f"queries contain counterfactual-side columns {leaked}; explainers may only see the "
                         "base side and cf_value -- build them with xaibench.evaluation.cebab.metrics.make_queries(pairs)")
    q = queries
    if "text" not in q.columns and "base_text" in q.columns:
        q = q.rename(columns={"base_text": "text"})
    missing = [c for c in need if c not in q.columns]
    if missing:
        raise ValueError(f"queries lack column(s) {missing}; have {list(q.columns)}")
    bad = sorted(set(q["aspect"]) - set(ASPECTS))
    if bad:
        raise ValueError(f"unknown aspect(s) {bad}; aspects are {ASPECTS}")
    for col in ("base_value", "cf_value"):
        if col in need:
            badv = sorted(set(q[col]) - set(CONCEPT_VALUES))
            if badv:
                raise ValueError(f"{col} has value(s) {badv}; concept values are {CONCEPT_VALUES}")
    return q.reset_index(drop=True)


def check_data(data: pd.DataFrame, need_aspects: bool = True) -> pd.DataFrame:
    """Validate the fit() frame (the task's train_exclusive rows from :func:`xaibench.data.cebab.fit_frame`:
    ``text`` + ``{aspect}_majority`` [+ ``label`` / ``task_label``])."""
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"fit data must be the CEBaB train_exclusive DataFrame; got {type(data).__name__}")
    need = ["text"] + ([f"{a}_majority" for a in ASPECTS] if need_aspects else [])
    missing = [c for c in need if c not in data.columns]
    if missing:
        raise ValueError(f"fit data lacks column(s) {missing}; pass the task's rows from "
                         "xaibench.data.cebab.fit_frame(task)")
    if len(data) == 0:
        raise ValueError("fit data is empty")
    return data.reset_index(drop=True)


def _clean_labels(df: pd.DataFrame, cols: dict[str, str]) -> pd.DataFrame:
    out = pd.DataFrame({a: df[c].astype(object).where(df[c].isin(CONCEPT_VALUES), "").astype(str).to_numpy()
                        for a, c in cols.items()})
    return out


def observed_labels(df: pd.DataFrame, prefix: str = "") -> pd.DataFrame:
    """Observed majority labels ``{prefix}{aspect}_majority`` -> columns ASPECTS (invalid -> '')."""
    cols = {a: f"{prefix}{a}_majority" for a in ASPECTS}
    missing = [c for c in cols.values() if c not in df.columns]
    if missing:
        raise ValueError(f"no aspect predictor was given and the frame lacks the observed labels {missing}")
    return _clean_labels(df, cols)


def predicted_labels(predictor: AspectPredictor, texts: Sequence[str]) -> pd.DataFrame:
    """Run an aspect predictor and validate its output (columns ASPECTS; values in CONCEPT_VALUES)."""
    texts = list(texts)
    if not texts:
        return pd.DataFrame({a: pd.Series([], dtype=object) for a in ASPECTS})
    pred = predictor.predict_aspects(texts)
    if not isinstance(pred, pd.DataFrame) or len(pred) != len(texts):
        raise ValueError(f"predict_aspects must return a DataFrame with one row per text ({len(texts)})")
    missing = [a for a in ASPECTS if a not in pred.columns]
    if missing:
        raise ValueError(f"predict_aspects output lacks column(s) {missing}")
    return _clean_labels(pred.reset_index(drop=True), {a: a for a in ASPECTS})


def aspect_labels(predictor: AspectPredictor | None, df: pd.DataFrame, texts: Sequence[str],
                  prefix: str = "") -> pd.DataFrame:
    """Predicted labels when a predictor is given, else the observed ``*_majority`` labels."""
    if predictor is not None:
        return predicted_labels(predictor, texts)
    return observed_labels(df, prefix)


def label_codes(labels: pd.DataFrame) -> np.ndarray:
    """(n, 4) int codes: Negative 0, unknown 1, Positive 2, invalid -1."""
    return np.stack([labels[a].map(lambda v: VALUE_CODE.get(v, -1)).to_numpy(dtype=np.int64) for a in ASPECTS], 1)


def onehot_aspects(labels: pd.DataFrame) -> np.ndarray:
    """One-hot encoding of the four aspect labels (12 columns); invalid labels -> all-zero block."""
    codes = label_codes(labels)
    out = np.zeros((len(codes), len(ASPECTS) * 3), dtype=np.float64)
    for j in range(len(ASPECTS)):
        ok = codes[:, j] >= 0
        out[np.nonzero(ok)[0], 3 * j + codes[ok, j]] = 1.0
    return out


def task_targets(model: Any, data: pd.DataFrame) -> np.ndarray:
    """Gold labels of ``data`` in the model's task (``-1`` = unusable).

    Uses the column ``task_label`` when present, else maps the 5-way ``label`` column with
    :func:`task_label` for ``model.n_classes`` (2, 3 or 5).
    """
    if "task_label" in data.columns:
        y = data["task_label"].to_numpy(dtype=np.int64)
    elif "label" in data.columns:
        y = task_label(data["label"].to_numpy(dtype=np.int64), model.n_classes)
    else:
        raise ValueError("fit data has neither `task_label` nor `label`; the head-training explainers need gold "
                         "overall labels")
    if (y >= model.n_classes).any():
        raise ValueError(f"task labels exceed n_classes={model.n_classes}")
    return y


def query_seed(seed: int, *parts: Any) -> np.random.Generator:
    """A generator seeded by ``seed`` and the query's content (order/batch independent)."""
    from ...utils import query_seed as seed_of  # the project's one per-query seed (lone surrogates ok)
    key = seed_of(*parts)
    return np.random.default_rng([int(seed), int(key)])


def proba_lookup(model: Any, texts: Sequence[str]) -> np.ndarray:
    """``model.predict_proba`` for ``texts``, computing each distinct text once (one batched call)."""
    texts = list(texts)
    uniq = list(dict.fromkeys(texts))
    if not uniq:
        return np.zeros((0, model.n_classes), dtype=np.float64)
    probs = np.asarray(model.predict_proba(uniq), dtype=np.float64)
    index = {t: i for i, t in enumerate(uniq)}
    return probs[[index[t] for t in texts]]


def embed(model: Any, texts: Sequence[str]) -> np.ndarray:
    """``model.embed`` over distinct texts (one batched, cached call)."""
    texts = list(texts)
    uniq = list(dict.fromkeys(texts))
    if not uniq:
        return np.zeros((0, 0), dtype=np.float32)
    e = np.asarray(model.embed(uniq), dtype=np.float32)
    idx = {t: i for i, t in enumerate(uniq)}
    return e[[idx[t] for t in texts]]


# ----------------------------------------------------------------------------------------------
# CAVs (TCAV, ConceptSHAP)
# ----------------------------------------------------------------------------------------------
SVM_PARAMS = {"alpha": 0.01, "tol": 1e-3, "max_iter": 1000}


def learn_cav(X: np.ndarray, present: np.ndarray, seed: int = 42, **svm: Any) -> tuple[np.ndarray, float]:
    """Concept activation vector (App. G.2): a linear SVM (SGD, alpha=0.01, tol=1e-3, max_iter=1000)
    separating concept-present (1) from concept-absent (0) representations.

    Returns the unit normal pointing towards *concept present* and the SVM's training accuracy.
    """
    from sklearn.linear_model import SGDClassifier

    present = np.asarray(present).astype(int)
    if len(np.unique(present)) != 2:
        raise ValueError("a CAV needs both concept-present and concept-absent examples")
    clf = SGDClassifier(**{**SVM_PARAMS, **svm}, random_state=seed).fit(X, present)
    w = clf.coef_[0].astype(np.float64)
    if clf.classes_[1] != 1:  # sklearn's coef_ points to classes_[1]
        w = -w
    norm = np.linalg.norm(w)
    if norm == 0:
        raise ValueError("the CAV classifier learned a zero vector; the concept is not linearly separable here")
    return w / norm, float((clf.predict(X) == present).mean())


def cav_data(model: Any, data: pd.DataFrame, aspect: str) -> tuple[np.ndarray, np.ndarray]:
    """phi(x) and present/absent labels for one aspect: Positive/Negative -> 1, unknown -> 0; rows
    without a majority label are dropped (App. G.2)."""
    lab = data[f"{aspect}_majority"]
    keep = lab.isin(CONCEPT_VALUES).to_numpy()
    texts = data.loc[keep, "text"].tolist()
    y = (lab[keep] != "unknown").to_numpy().astype(int)
    return embed(model, texts), y


# ----------------------------------------------------------------------------------------------
# torch helpers
# ----------------------------------------------------------------------------------------------
def module_device(module: Any):
    import torch

    for p in module.parameters():
        return p.device
    return torch.device("cpu")


def module_dtype(module: Any):
    import torch

    for p in module.parameters():
        return p.dtype
    return torch.float32


def _feature_module(fn_module, frozen: Any = None):
    """An ``nn.Module`` whose forward(x, mask) ignores ``mask`` and maps a feature batch ``x``."""
    import torch

    class FeatureModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = fn_module
            self.frozen = frozen

        def forward(self, x, mask=None):  # noqa: ARG002 - mask unused for features
            out = self.inner(x)
            return self.frozen(out) if self.frozen is not None else out

        def train(self, mode: bool = True):
            super().train(mode)
            if self.frozen is not None:
                self.frozen.eval()  # a frozen head keeps its eval behaviour (no dropout)
            return self

    return FeatureModule()


def train_on_features(module, features: np.ndarray, labels: np.ndarray, *, lr: float, epochs: int,
                      batch_size: int, seed: int, frozen_after: Any = None, optimizer: str = "adam",
                      desc: str = "head") -> dict[str, Any]:
    """Train ``module`` (features -> logits, or -> ``frozen_after`` input) on fixed feature vectors
    with the shared :func:`xaibench.models.training.train_loop` (cross-entropy, no early stopping).

    Rows are addressed through fixed-width string keys so the loop's length bucketing is a no-op.
    """
    import torch

    from ...models.training import TrainConfig, train_loop

    if epochs <= 0 or len(features) == 0:
        module.eval()
        return {"epochs": [], "skipped": True}
    device = module_device(module)
    dtype = module_dtype(module)
    X = torch.as_tensor(np.asarray(features), dtype=dtype, device=device)
    keys = [f"{i:010d}" for i in range(len(X))]

    def encode(batch_keys):
        idx = torch.as_tensor([int(k) for k in batch_keys], dtype=torch.long, device=device)
        return X[idx], None

    if frozen_after is not None:  # a private frozen copy: the caller's module is never modified
        frozen_after = copy.deepcopy(frozen_after)
        for p in frozen_after.parameters():
            p.requires_grad_(False)
    wrapper = _feature_module(module, frozen_after)  # logits stay on the module's device, as train_loop's labels
    cfg = TrainConfig(lr=lr, epochs=epochs, batch_size=batch_size, patience=epochs + 1, max_grad_norm=None,
                      seed=seed, optimizer=optimizer)
    hist = train_loop(wrapper, encode, keys, np.asarray(labels, dtype=np.int64), cfg,
                      parameters=list(module.parameters()), desc=desc)
    module.eval()
    return hist


def head_proba(head, features: np.ndarray, batch_size: int = 512) -> np.ndarray:
    """softmax(head(features)) in eval mode, numpy in / out."""
    import torch

    device, dtype = module_device(head), module_dtype(head)
    was = head.training
    head.eval()
    out = []
    with torch.inference_mode():
        for i in range(0, len(features), batch_size):
            x = torch.as_tensor(np.asarray(features[i:i + batch_size]), dtype=dtype, device=device)
            out.append(torch.softmax(head(x).float(), dim=-1).cpu().numpy())
    head.train(was)
    return np.concatenate(out, 0).astype(np.float64) if out else np.zeros((0, 0))


def copy_head(model: Any, reinit: bool = False):
    """A deep copy of the model's classification head (optionally re-initialised)."""
    head = copy.deepcopy(model.head)
    if reinit:
        for m in head.modules():
            if hasattr(m, "reset_parameters"):
                m.reset_parameters()
    for p in head.parameters():
        p.requires_grad_(True)
    return head


class FittedConceptExplainer(ConceptExplainer):
    """Base for explainers that need ``fit`` before ``explain``."""

    def _require_fit(self) -> None:
        if not getattr(self, "_fitted", False):
            raise RuntimeError(f"{type(self).__name__} is not fitted; call .fit(model, xaibench.data.cebab.fit_frame(task)) first")


__all__ = [
    "AspectPredictor", "check_queries", "check_data", "observed_labels", "predicted_labels", "aspect_labels",
    "label_codes", "onehot_aspects", "task_targets", "query_seed", "embed", "proba_lookup", "learn_cav",
    "cav_data", "train_on_features", "head_proba", "copy_head", "FittedConceptExplainer", "VALUE_CODE",
]


def fit_cavs(model: Any, data: pd.DataFrame, seed: int, **svm_params: Any) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """One CAV per aspect (App. G): ``(cavs, training accuracies)``, used by TCAV and ConceptSHAP."""
    cavs: dict[str, np.ndarray] = {}
    accuracy: dict[str, float] = {}
    for a in ASPECTS:
        X, y = cav_data(model, data, a)
        cavs[a], accuracy[a] = learn_cav(X, y, seed=seed, **svm_params)
    return cavs, accuracy
