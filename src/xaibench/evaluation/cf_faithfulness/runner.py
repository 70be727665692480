"""Runs Ge et al.'s protocol: per dataset and seed, split 80/10/10, train the embedding LR, explain
the first ``n_explain`` test rows with every explainer, score every metric for K = 1 (and K = 2)
under each feature selection rule of ``RunConfig.selections``.

Results (one tidy row per dataset x seed x selection x explainer x K x metric) are kept in a
:class:`xaibench.store.ResultStore` under ``data/results/cf_faithfulness/``, keyed on the full
configuration (:func:`store_config`: dataset, seed, rows, epochs, the model's and every explainer's
settings, ``ks``, selections, Algorithm 1's rule, the abstention rule, the search settings, the
torch thread count) and on :data:`RESULT_VERSION`, and reused on the next run (``force=True``
recomputes).  Models are trained after :func:`xaibench.utils.set_seed` (seeds python, numpy and
torch, pins torch's thread count), as in the other pipelines.  The tables are in :mod:`.tables`.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ... import paths
from ...device import load_average, thread_count
from ...store import ResultStore
from ..base import ADDED, mark_added  # noqa: F401 - ADDED: notebook 23 marks its added explainers' names
from . import metrics as cfm

#: version of the stored result format; bump it when run_seed's output changes meaning or shape
RESULT_VERSION = 3

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
#: explainer variants: protocol name -> (explainer, keyword arguments): Omission with the other removals,
#: the LR's own explanation under the other ground-truth references (each the ground truth of its reading)
VARIANTS: dict[str, tuple[str, dict]] = {
    "omission_zero": ("omission", {"removal": "zero"}),
    "omission_train_mean": ("omission", {"removal": "train_mean"}),
    "logistic_regression_zero": ("logistic_regression", {"reference": "zero"}),
    "logistic_regression_train_mean": ("logistic_regression", {"reference": "train_mean"}),
}
#: ground-truth reading -> the LR variant whose explanation is that ground truth
LR_VARIANT = {"reference": "logistic_regression", "zero": "logistic_regression_zero",
              "train_mean": "logistic_regression_train_mean"}
#: the default number of explained test rows per dataset and seed (notebook 23's ``n_explain``)
N_EXPLAIN = 100


def explainer_spec(name: str) -> tuple[str, dict]:
    """(explainer name, keyword arguments) that the protocol builds for ``name``."""
    if name in VARIANTS:
        base, kw = VARIANTS[name]
        return base, {**EXPLAINER_KWARGS.get(base, {}), **kw}
    return name, dict(EXPLAINER_KWARGS.get(name, {}))


def make_explainer(name: str):
    from ...explainers.feature import make_feature_explainer

    base, kw = explainer_spec(name)
    return make_feature_explainer(base, **kw)


@dataclass
class RunConfig:
    n_explain: int = N_EXPLAIN
    ks: tuple[int, ...] = (1, 2)
    ks_text: tuple[int, ...] = (1,)
    epochs: int = 30
    alpha: float = 50.0
    cont_steps: int = 100
    explainers: Sequence[str] = field(default_factory=lambda: (*PAPER_ORDER, *PROJECT_ORDER, *VARIANTS))
    #: feature selection rules scored (the first is the default of the tables and claims)
    selections: tuple[str, ...] = cfm.SELECTIONS
    rule: str = "first_flip"
    abstention: str = "fail"
    #: the reference of the ground truth's effects (``metric == "ground_truth"``); every reading of
    #: :data:`.metrics.GROUND_TRUTHS` is also scored as ``ground_truth_<reading>``
    ground_truth: str = "reference"

    def __post_init__(self):
        cfm._check_choice("ground_truth", self.ground_truth, cfm.GROUND_TRUTHS)
        for s in self.selections:
            cfm._check_choice("selections", s, cfm.SELECTIONS)
        cfm._check_choice("rule", self.rule, cfm.RULES)
        cfm._check_choice("abstention", self.abstention, cfm.ABSTENTIONS)
        if int(self.n_explain) < 1:
            raise ValueError(f"n_explain must be >= 1, got {self.n_explain}")


def store_config(name: str, seed: int, cfg: RunConfig) -> dict:
    """Everything that changes :func:`run_seed`'s result for ``name`` and ``seed`` (the store key)."""
    return {"dataset": name, "loader": DATASETS[name][0], "model": DATASETS[name][1], "seed": int(seed),
            "n_explain": int(cfg.n_explain), "ks": list(cfg.ks), "ks_text": list(cfg.ks_text),
            "epochs": int(cfg.epochs), "alpha": float(cfg.alpha), "cont_steps": int(cfg.cont_steps),
            "explainers": [{"name": e, "explainer": explainer_spec(e)[0], "kwargs": explainer_spec(e)[1]}
                           for e in cfg.explainers],
            "selections": list(cfg.selections), "rule": cfg.rule, "abstention": cfg.abstention,
            "ground_truth": cfg.ground_truth, "split": "80/10/10", "threads": thread_count()}


def result_store() -> ResultStore:
    return ResultStore(paths.results_dir(), "cf_faithfulness", RESULT_VERSION)


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
    from ...utils import set_seed

    ds = load_dataset(name)
    sp = split_indices(len(ds), seed)
    set_seed(seed)   # python, numpy, torch seeds and the pinned torch thread count
    model = EmbeddingLR(spec=ds.spec, seed=seed, epochs=epochs, batch_size=256, **DATASETS[name][1])
    model.fit_ids(ds.X[sp["train"]], ds.y[sp["train"]], ds.X[sp["dev"]], ds.y[sp["dev"]])
    return model, {k: ds.subset(v) for k, v in sp.items()}


def run_seed(name: str, seed: int, cfg: RunConfig) -> pd.DataFrame:
    """All selections x explainers x K x metrics for one dataset and seed (tidy rows with a
    ``selection`` column, plus timing and accuracy with ``selection`` empty)."""
    t0 = time.time()
    model, splits = train_model(name, seed, cfg.epochs)
    train_s = time.time() - t0
    test = splits["test"]
    acc = float((model.proba_ids(test.X).argmax(1) == test.y).mean())
    X = test.X[: cfg.n_explain]
    ks = cfg.ks if model.spec.kind == "tabular" else cfg.ks_text
    train_X = splits["train"].X
    truth = {(r, s, k): cfm.ground_truth_selection(model, X, k, s, r, train_X)
             for r in cfm.GROUND_TRUTHS for s in cfg.selections for k in ks}
    base = {"dataset": name, "seed": seed, "selection": ""}
    rows: list[dict] = [{**base, "explainer": "", "k": 0, "metric": "test_accuracy", "value": acc},
                        {**base, "explainer": "", "k": 0, "metric": "train_seconds", "value": train_s},
                        {**base, "explainer": "", "k": 0, "metric": "n_test", "value": float(len(test))},
                        {**base, "explainer": "", "k": 0, "metric": "n_explained", "value": float(len(X))}]
    for ename in cfg.explainers:
        exp = make_explainer(ename).fit(model, train_X)
        t = time.time()
        S = exp.explain_ids(X)
        rows.append({**base, "explainer": ename, "k": 0, "metric": "seconds_per_explanation",
                     "value": (time.time() - t) / max(len(X), 1)})
        for sname in cfg.selections:
            for k in ks:
                sel = cfm.top_k(S, X, k, sname)
                t = time.time()
                scores = cfm.evaluate_selection(model, X, sel, truth[(cfg.ground_truth, sname, k)], alpha=cfg.alpha,
                                                cont_kwargs={"steps": cfg.cont_steps, "seed": seed},
                                                rule=cfg.rule, abstention=cfg.abstention)
                cell = {**base, "selection": sname, "explainer": ename, "k": k}
                rows.append({**cell, "metric": "seconds_per_search", "value": (time.time() - t) / max(len(X), 1)})
                rows.extend({**cell, "metric": m, "value": v} for m, v in scores.items())
                rows.extend({**cell, "metric": f"ground_truth_{r}",
                             "value": float(cfm.ground_truth_recall(sel, truth[(r, sname, k)]).mean())}
                            for r in cfm.GROUND_TRUTHS)
    return pd.DataFrame(rows)


def run(datasets: Sequence[str], seeds: Sequence[int], cfg: RunConfig, force: bool = False,
        compute: bool = True) -> pd.DataFrame:
    """:func:`run_seed` for every dataset and seed, reusing stored results keyed on the full
    configuration (:func:`store_config`; ``compute=False``: only tabulate what is stored; seeds
    without results are left out and ``n_seeds`` says so)."""
    from ...executor import run_cells

    store = result_store()
    frames: list = []          # stored tables, or the index of the cell in ``todo`` that computes them
    todo: list[tuple[str, int, dict]] = []
    for name in datasets:
        for seed in seeds:
            key = store_config(name, seed, cfg)
            hit = None if force else store.load(key)
            if hit is not None:
                frames.append(hit["results"])
                continue
            if not compute:
                continue
            same = [j for j, (n, s, _) in enumerate(todo) if (n, s) == (name, seed)]
            if not same:
                todo.append((name, seed, key))
            frames.append(same[0] if same else len(todo) - 1)

    def save(j: int, df: pd.DataFrame) -> None:   # in this (the driver) process, as each seed finishes
        store.save(todo[j][2], {"results": df})

    # the seeds are independent cells (XAIBENCH_SCHEDULER: serial, local processes or Dask)
    done = run_cells(functools.partial(_run_cell, cfg=cfg), [(name, seed) for name, seed, _ in todo],
                     desc="Ge et al. seeds", on_result=save)
    frames = [done[f] if isinstance(f, int) else f for f in frames]
    if not frames:
        raise FileNotFoundError(f"no stored results for {list(datasets)} x seeds {list(seeds)}; run with compute=True")
    return pd.concat(frames, ignore_index=True)


def run_added(datasets: Sequence[str], seeds: Sequence[int], cfg: RunConfig, added: Sequence[str],
              force: bool = False, compute: bool = True) -> pd.DataFrame:
    """:func:`run` of the explainers ``added`` beyond ``cfg.explainers`` (notebook 23's ``explainers``
    parameter), with ``cfg``'s other settings: their own store entries, keyed on their list, so that adding an
    explainer computes only its rows and the stored runs of ``cfg`` stay valid.  ``explainer`` is marked
    "(added)"; the per-seed rows without an explainer (test accuracy, timing) are left out (those of ``cfg``'s
    own run hold them, from the same seeded model).  Empty when nothing is added."""
    extra = [e for e in dict.fromkeys(added) if e not in cfg.explainers]
    if not extra:
        return pd.DataFrame()
    res = run(datasets, seeds, replace(cfg, explainers=tuple(extra)), force=force, compute=compute)
    res = res[res["explainer"] != ""].copy()
    res["explainer"] = res["explainer"].map(mark_added)
    return res


# ----------------------------------------------------------------------------------------------
# Algorithm 2's alpha and steps (notebook 23's sweep)
# ----------------------------------------------------------------------------------------------
#: the swept alpha of Eq. 7 (three orders of magnitude) and Adam steps of Algorithm 2
SWEEP_ALPHAS = (1.0, 5.0, 20.0, 50.0, 200.0, 1000.0)
SWEEP_STEPS = (100, 200)
#: the largest Proximity (cont.) the paper prints on Movie Reviews (Table 1, Random)
PAPER_MAX_PROXIMITY = 0.1573
#: the continuous scores the sweep reports (Table 1's Movie Reviews rows)
SWEEP_METRICS = ("validity_cont", "proximity_cont", "c_cont", "validity_soft_cont", "c_soft_cont")


def sweep_seed(name: str, seed: int, cfg: RunConfig, alphas: Sequence[float] = SWEEP_ALPHAS,
               steps: Sequence[int] = SWEEP_STEPS, explainers: Sequence[str] = PAPER_ORDER) -> pd.DataFrame:
    """Algorithm 2 for every ``alpha`` x ``steps`` on one dataset and seed (K = 1, ``cfg.selections[0]``, the
    model, rows and explanations of :func:`run_seed`): per explainer its continuous scores, its GroundTruth
    (``cfg.ground_truth``) and :func:`.metrics.min_flip_distance` (mean over the answered rows) as tidy rows
    ``dataset, seed, alpha, steps, explainer, metric, value`` (``alpha``/``steps`` NaN for the rows that do
    not depend on them).  The rows of all explainers are optimised in one batch (rows are independent)."""
    model, splits = train_model(name, seed, cfg.epochs)
    X, train_X = splits["test"].X[: cfg.n_explain], splits["train"].X
    sel_rule = cfg.selections[0]
    truth = cfm.ground_truth_selection(model, X, 1, sel_rule, cfg.ground_truth, train_X)
    sels = {e: cfm.top_k(make_explainer(e).fit(model, train_X).explain_ids(X), X, 1, sel_rule) for e in explainers}
    base = {"dataset": name, "seed": int(seed)}
    rows = []
    for e, sel in sels.items():
        d = cfm.min_flip_distance(model, X, sel)
        fixed = {"ground_truth": float(cfm.ground_truth_recall(sel, truth).mean()),
                 "min_flip_distance": float(np.nanmean(d)) if np.isfinite(d).any() else np.nan,
                 # the largest Validity any counterfactual within the paper's largest Proximity could reach
                 "validity_bound_paper_proximity": float(np.mean(np.nan_to_num(d, nan=np.inf) <= PAPER_MAX_PROXIMITY))}
        rows += [{**base, "alpha": np.nan, "steps": np.nan, "explainer": e, "metric": m, "value": v}
                 for m, v in fixed.items()]
    X_all = np.concatenate([X] * len(sels))
    S_all = np.concatenate(list(sels.values()))
    T_all = model.proba_ids(X_all).argmax(1)
    for a in alphas:
        for st in steps:
            t = time.time()
            cf = cfm.continuous_counterfactuals(model, X_all, S_all, T_all, alpha=float(a), steps=int(st), seed=seed)
            secs = time.time() - t
            for i, e in enumerate(sels):
                part = cfm.subset(cf, np.arange(i * len(X), (i + 1) * len(X)))
                sc = cfm.counterfactual_scores(part, "cont", cfg.abstention)
                rows += [{**base, "alpha": float(a), "steps": int(st), "explainer": e, "metric": m, "value": sc[m]}
                         for m in SWEEP_METRICS]
            rows.append({**base, "alpha": float(a), "steps": int(st), "explainer": "", "metric": "seconds",
                         "value": secs})
    return pd.DataFrame(rows)


def sweep(datasets: Sequence[str], seeds: Sequence[int], cfg: RunConfig, alphas: Sequence[float] = SWEEP_ALPHAS,
          steps: Sequence[int] = SWEEP_STEPS, force: bool = False) -> pd.DataFrame:
    """:func:`sweep_seed` for every dataset and seed, stored and reused like :func:`run` (keyed on the
    configuration, the alphas and the steps)."""
    store = ResultStore(paths.results_dir(), "cf_faithfulness_sweep", RESULT_VERSION)
    frames = []
    for name in datasets:
        for seed in seeds:
            key = {**store_config(name, seed, cfg), "alphas": [float(a) for a in alphas],
                   "steps": [int(s) for s in steps], "sweep_explainers": list(PAPER_ORDER)}
            hit = None if force else store.load(key)
            if hit is None:
                hit = {"results": sweep_seed(name, seed, cfg, alphas, steps)}
                store.save(key, hit)
            frames.append(hit["results"])
    return pd.concat(frames, ignore_index=True)


def _run_cell(cell: tuple[str, int], cfg: RunConfig) -> pd.DataFrame:
    """:func:`run_seed` of one ``(dataset, seed)`` cell (a picklable unit for :mod:`xaibench.executor`)."""
    name, seed = cell
    return run_seed(name, seed, cfg)


# ----------------------------------------------------------------------------------------------
# benchmark (python -m xaibench.bench faithfulness)
# ----------------------------------------------------------------------------------------------
def benchmark(datasets: Sequence[str] = ("adult", "rt-polarity"), n_rows: int = 10, seed: int = 42,
              cfg: RunConfig | None = None) -> pd.DataFrame:
    """Seconds (wall and process CPU) per explanation and per counterfactual search (Algorithm 1
    and 2, K = 1), per explainer, on ``n_rows`` test rows; the 1-minute load average is recorded
    because the machine may be shared."""
    cfg = cfg or RunConfig()
    rows = []
    for name in datasets:
        model, splits = train_model(name, seed, cfg.epochs)
        X = splits["test"].X[:n_rows]
        targets = model.proba_ids(X).argmax(1)
        for ename in cfg.explainers:
            exp = make_explainer(ename).fit(model, splits["train"].X)
            w, c = time.time(), time.process_time()
            S = exp.explain_ids(X)
            rec = {"dataset": name, "explainer": ename, "n_rows": len(X),
                   "explain_s_per_row": (time.time() - w) / len(X), "explain_cpu_s_per_row": (time.process_time() - c) / len(X)}
            sel = cfm.top_k(S, X, 1, cfg.selections[0])
            for alg, fn in (("disc", cfm.discrete_counterfactuals), ("cont", cfm.continuous_counterfactuals)):
                if alg == "disc" and model.spec.kind != "tabular":
                    continue
                kw = {"rule": cfg.rule} if alg == "disc" else {"alpha": cfg.alpha, "steps": cfg.cont_steps}
                w, c = time.time(), time.process_time()
                fn(model, X, sel, targets, **kw)
                rec[f"search_{alg}_s_per_row"] = (time.time() - w) / len(X)
                rec[f"search_{alg}_cpu_s_per_row"] = (time.process_time() - c) / len(X)
            rec["load_avg_1min"] = load_average()
            rows.append(rec)
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------
# reference accuracies (is the accuracy gap to the paper the data's or our model's?)
# ----------------------------------------------------------------------------------------------
def reference_accuracy(datasets: Sequence[str], seeds: Sequence[int]) -> pd.DataFrame:
    """Test accuracy of a plain scikit-learn logistic regression on the same 80/10/10 splits as the
    embedding LR: one-hot features on Adult (``one-hot LR``), TF-IDF of the raw sentences (word uni-
    and bigrams) on Movie Reviews (``TF-IDF LR``); ``C`` chosen on the dev split from 0.01-100.
    One row per dataset, seed and model (``dataset, seed, model, value``)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import OneHotEncoder

    from ...data.adult import split_indices
    from ...data.loaders import load

    rows = []
    for name in datasets:
        ds = load_dataset(name)
        kind = ds.spec.kind
        texts = None
        if kind == "text":
            texts = load(name)["text"].astype(str).to_numpy()
            if len(texts) != len(ds):
                raise RuntimeError(f"{name}: {len(texts)} raw texts for {len(ds)} rows")
        for seed in seeds:
            sp = split_indices(len(ds), seed)
            if kind == "tabular":
                enc, model_name = OneHotEncoder(handle_unknown="ignore"), "one-hot LR"
                enc.fit(ds.X[sp["train"]])
                F = {k: enc.transform(ds.X[v]) for k, v in sp.items()}
            else:
                enc, model_name = TfidfVectorizer(ngram_range=(1, 2), min_df=1, sublinear_tf=True), "TF-IDF LR"
                enc.fit(texts[sp["train"]])
                F = {k: enc.transform(texts[v]) for k, v in sp.items()}
            best = None
            for C in (0.01, 0.1, 1.0, 10.0, 100.0):
                clf = LogisticRegression(C=C, max_iter=2000).fit(F["train"], ds.y[sp["train"]])
                dev = float((clf.predict(F["dev"]) == ds.y[sp["dev"]]).mean())
                if best is None or dev > best[0]:
                    best = (dev, C, clf)
            acc = float((best[2].predict(F["test"]) == ds.y[sp["test"]]).mean())
            rows.append({"dataset": name, "seed": int(seed), "model": model_name, "value": acc, "C": best[1]})
    return pd.DataFrame(rows)
