"""The predictors g() of the counterfactual-feedback experiments (Filandrianos et al. 2023).

The paper used MiCE's RoBERTa-large predictors (95.9% IMDb, 85.3% Newsgroups); fine-tuning one
costs days on 2 CPU cores.  The default here is a TF-IDF (1-2-gram) logistic regression per
dataset fitted on the full train split (exact input gradients, microseconds per text); ``minilm``
(the bundled MiniLM-L6 fine-tuned on the train split) is selectable and the default when CUDA is
available.  Models are saved under ``data/models/cf_feedback/<dataset>/<model>/seed<seed>/`` (``seed<seed>-train<n>/``
when the training set is capped at ``n`` texts).

Texts longer than a model reads: the TF-IDF model reads every word (``max_words = None``); the
transformer truncates to its 256-token window, which is declared by ``max_words`` so the chain
runner can report how many texts exceed it (never silently).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import io, paths
from .base import Classifier
from .registry import load_model

DEFAULT_LOGREG = {"features": "bow", "ngram_max": 2, "max_features": 200_000, "C": 10.0}


def default_predictor() -> str:
    from ..device import device_choice

    return "minilm" if device_choice() == "cuda" else "logreg"


def predictor_dir(dataset: str, model: str, seed: int = 42, max_train: int | None = None) -> Path:
    """Folder of the saved predictor; keyed on ``max_train`` too (a capped training set is another model)."""
    tail = f"seed{seed}" if max_train is None else f"seed{seed}-train{max_train}"
    return paths.models_dir() / "cf_feedback" / dataset / model / tail


def get_predictor(dataset: str, model: str = "logreg", seed: int = 42, max_train: int | None = None,
                  cache: bool = False, retrain: bool = False) -> Classifier:
    """Load the predictor for ``dataset`` (training and saving it on first use).

    ``cache=False`` (default for the linear model: recomputing is cheaper than an SQLite lookup);
    pass ``True`` for the transformer so every predictor call goes through the on-disk cache.
    """
    from ..data.cf_data import cf_label_names, load_cf_dataset
    from . import zoo

    folder = predictor_dir(dataset, model, seed, max_train)

    def train() -> Classifier:
        df = load_cf_dataset(dataset)
        train = df[df["split"] == "train"]
        if max_train is not None and len(train) > max_train:
            train = train.sample(n=max_train, random_state=seed)
        n_classes = len(cf_label_names(dataset))
        overrides = dict(DEFAULT_LOGREG) if model == "logreg" else {}
        clf = zoo.build(model, n_classes=n_classes, seed=seed, cache=cache, **overrides)
        clf.fit(train["text"].tolist(), train["label"].to_numpy())
        clf.save(folder)
        return clf

    def read(f: Path) -> Classifier:
        clf = load_model(f, cache=cache)
        kind, kw = zoo.RECIPES.get(model, ("transformer", {"checkpoint": model}))
        want = {"kind": kind, **kw, **(DEFAULT_LOGREG if model == "logreg" else {})}
        got = {"kind": clf.kind, **clf.config()}
        if any(got.get(k) != v for k, v in want.items()):
            raise ValueError(f"it was trained with other settings ({got}; asked for {want})")
        return clf

    if retrain:
        return train()
    # a saved model that cannot be read (a damaged file, older settings) is reported by name, removed, retrained
    return io.read_or_rebuild(folder, read, train, what="saved predictor")


def predictor_accuracy(clf: Classifier, dataset: str, max_eval: int | None = None, seed: int = 42) -> float:
    """Accuracy on the test split (all of it unless ``max_eval``)."""
    from ..data.cf_data import load_cf_dataset

    df = load_cf_dataset(dataset)
    test = df[df["split"] == "test"]
    if max_eval is not None and len(test) > max_eval:
        test = test.sample(n=max_eval, random_state=seed)
    return float(np.mean(clf.predict(test["text"].tolist()) == test["label"].to_numpy()))


def max_words(clf: Classifier) -> int | None:
    """How many words the model reads (None: all); the transformer reads 256 word pieces."""
    if getattr(clf, "kind", "") == "transformer":
        return getattr(clf, "max_length", 256) * 3 // 4  # ~1.33 word pieces per English word
    return None
