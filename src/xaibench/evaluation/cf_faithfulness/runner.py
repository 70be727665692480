"""Runs Ge et al.'s protocol: per dataset and seed, split 80/10/10, train the embedding LR, explain
the first ``n_explain`` test rows with every explainer, score every metric for K = 1 (and K = 2).

Results (one tidy row per dataset x seed x explainer x K x metric) are stored as parquet under
``data/results/cf_faithfulness/`` and reused on the next run (``force=True`` recomputes); the tables
built from them are in :mod:`.tables`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ... import paths
from ...device import load_average
from ...io import write_parquet
from . import metrics as cfm

#: dataset name -> (loader keywords, model keywords)
DATASETS: dict[str, tuple[dict, dict]] = {
    "adult": ({}, {"emb_dim": 8, "lr": 1e-2}),
    "adult_dedup": ({"replace": False}, {"emb_dim": 8, "lr": 1e-2}),
    "rt-polarity": ({}, {"glove": True, "lr": 1e-3}),
}
#: the paper's name for our dataset names
PAPER_DATASET = {"adult": "adults", "adult_dedup": "adults", "rt-polarity": "movie_reviews"}
PAPER_ORDER = ("random", "omission", "lime", "anchor", "decision_boundary", "logistic_regression")
PROJECT_ORDER = ("integrated_gradients", "grad_x_input", "shap")
#: explainer keyword arguments used by the protocol (documented in the notebook)
EXPLAINER_KWARGS: dict[str, dict] = {"integrated_gradients": {"n_steps": 20}, "shap": {"max_evals": 50}}


@dataclass
class RunConfig:
    n_explain: int = 200
    ks: tuple[int, ...] = (1, 2)
    ks_text: tuple[int, ...] = (1,)
    epochs: int = 30
    alpha: float = 50.0
    cont_steps: int = 100
    explainers: Sequence[str] = field(default_factory=lambda: (*PAPER_ORDER, *PROJECT_ORDER))

    def tag(self) -> str:
        return f"n{self.n_explain}_e{self.epochs}_a{self.alpha:g}_s{self.cont_steps}"


_DATA_CACHE: dict[str, Any] = {}


def load_dataset(name: str):
    from ...data.feature_data import load_feature_dataset

    if name not in DATASETS:
        raise KeyError(f"unknown dataset {name!r}; choose one of {sorted(DATASETS)}")
    if name not in _DATA_CACHE:
        base = "adult" if name.startswith("adult") else name
        _DATA_CACHE[name] = load_feature_dataset(base, **DATASETS[name][0])
    return _DATA_CACHE[name]


def train_model(name: str, seed: int, epochs: int = 30):
    """Split ``name`` with ``seed`` (80/10/10) and train the embedding LR; returns (model, splits)."""
    from ...data.adult import split_indices
    from ...models.embedding_lr import EmbeddingLR

    ds = load_dataset(name)
    sp = split_indices(len(ds), seed)
    model = EmbeddingLR(spec=ds.spec, seed=seed, epochs=epochs, batch_size=256, **DATASETS[name][1])
    model.fit_ids(ds.X[sp["train"]], ds.y[sp["train"]], ds.X[sp["dev"]], ds.y[sp["dev"]])
    return model, {k: ds.subset(v) for k, v in sp.items()}


def run_seed(name: str, seed: int, cfg: RunConfig) -> pd.DataFrame:
    """All explainers x K x metrics for one dataset and seed (tidy rows, plus timing and accuracy)."""
    from ...explainers.feature import make_feature_explainer

    t0 = time.time()
    model, splits = train_model(name, seed, cfg.epochs)
    train_s = time.time() - t0
    test = splits["test"]
    acc = float((model.proba_ids(test.X).argmax(1) == test.y).mean())
    X = test.X[: cfg.n_explain]
    ks = cfg.ks if model.spec.kind == "tabular" else cfg.ks_text
    truth = {k: cfm.ground_truth_selection(model, X, k) for k in ks}
    base = {"dataset": name, "seed": seed}
    rows: list[dict] = [{**base, "explainer": "", "k": 0, "metric": "test_accuracy", "value": acc},
                        {**base, "explainer": "", "k": 0, "metric": "train_seconds", "value": train_s},
                        {**base, "explainer": "", "k": 0, "metric": "n_test", "value": float(len(test))},
                        {**base, "explainer": "", "k": 0, "metric": "n_explained", "value": float(len(X))}]
    for ename in cfg.explainers:
        exp = make_feature_explainer(ename, **EXPLAINER_KWARGS.get(ename, {})).fit(model, splits["train"].X)
        t = time.time()
        S = exp.explain_ids(X)
        rows.append({**base, "explainer": ename, "k": 0, "metric": "seconds_per_explanation",
                     "value": (time.time() - t) / max(len(X), 1)})
        for k in ks:
            sel = cfm.top_k(S, X, k)
            t = time.time()
            scores = cfm.evaluate_selection(model, X, sel, truth[k], alpha=cfg.alpha,
                                            cont_kwargs={"steps": cfg.cont_steps, "seed": seed})
            rows.append({**base, "explainer": ename, "k": k, "metric": "seconds_per_search",
                         "value": (time.time() - t) / max(len(X), 1)})
            rows.extend({**base, "explainer": ename, "k": k, "metric": m, "value": v} for m, v in scores.items())
    return pd.DataFrame(rows)


def results_path(name: str, seed: int, cfg: RunConfig):
    return paths.results_dir() / "cf_faithfulness" / f"{name}_seed{seed}_{cfg.tag()}.parquet"


def run(datasets: Sequence[str], seeds: Sequence[int], cfg: RunConfig, force: bool = False,
        compute: bool = True) -> pd.DataFrame:
    """:func:`run_seed` for every dataset and seed, reusing stored results (``compute=False``: only
    tabulate what is stored; seeds without results are left out and ``n_seeds`` says so)."""
    frames = []
    for name in datasets:
        for seed in seeds:
            path = results_path(name, seed, cfg)
            if path.exists() and not force:
                frames.append(pd.read_parquet(path))
                continue
            if not compute:
                continue
            df = run_seed(name, seed, cfg)
            write_parquet(path, df)
            frames.append(df)
    if not frames:
        raise FileNotFoundError(f"no stored results for {list(datasets)} x seeds {list(seeds)}; run with compute=True")
    return pd.concat(frames, ignore_index=True)


# ----------------------------------------------------------------------------------------------
# benchmark (python -m xaibench.bench faithfulness)
# ----------------------------------------------------------------------------------------------
def benchmark(datasets: Sequence[str] = ("adult", "rt-polarity"), n_rows: int = 10, seed: int = 42,
              cfg: RunConfig | None = None) -> pd.DataFrame:
    """Seconds (wall and process CPU) per explanation and per counterfactual search (Algorithm 1
    and 2, K = 1), per explainer, on ``n_rows`` test rows; the 1-minute load average is recorded
    because the machine may be shared."""
    from ...explainers.feature import make_feature_explainer

    cfg = cfg or RunConfig()
    rows = []
    for name in datasets:
        model, splits = train_model(name, seed, cfg.epochs)
        X = splits["test"].X[:n_rows]
        targets = model.proba_ids(X).argmax(1)
        for ename in cfg.explainers:
            exp = make_feature_explainer(ename, **EXPLAINER_KWARGS.get(ename, {})).fit(model, splits["train"].X)
            w, c = time.time(), time.process_time()
            S = exp.explain_ids(X)
            rec = {"dataset": name, "explainer": ename, "n_rows": len(X),
                   "explain_s_per_row": (time.time() - w) / len(X), "explain_cpu_s_per_row": (time.process_time() - c) / len(X)}
            sel = cfm.top_k(S, X, 1)
            for alg, fn in (("disc", cfm.discrete_counterfactuals), ("cont", cfm.continuous_counterfactuals)):
                if alg == "disc" and model.spec.kind != "tabular":
                    continue
                kw = {} if alg == "disc" else {"alpha": cfg.alpha, "steps": cfg.cont_steps}
                w, c = time.time(), time.process_time()
                fn(model, X, sel, targets, **kw)
                rec[f"search_{alg}_s_per_row"] = (time.time() - w) / len(X)
                rec[f"search_{alg}_cpu_s_per_row"] = (time.process_time() - c) / len(X)
            rec["load_avg_1min"] = load_average()
            rows.append(rec)
    return pd.DataFrame(rows)
