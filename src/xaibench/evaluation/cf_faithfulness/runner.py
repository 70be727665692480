"""Runs Ge et al.'s protocol: per dataset and seed, split 80/10/10, train the embedding LR, explain
the first ``n_explain`` test rows with every explainer, score every metric for K = 1 (and K = 2).

Results (one tidy row per dataset x seed x explainer x K x metric) are stored as parquet under
``data/results/cf_faithfulness/`` and reused on the next run (``force=True`` recomputes).
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
# tables
# ----------------------------------------------------------------------------------------------
#: our metric -> the paper's metric key, per paper dataset (Table 1 rows)
PAPER_METRIC = {
    "adults": {"comp_del": "comp_del", "suff_del": "suff_del", "dfr": "dfr", "validity_disc": "validity",
               "proximity_disc": "proximity_c", "c_disc": "c_disc", "validity_soft_disc": "validity_soft",
               "proximity_soft_disc": "proximity_c_soft", "c_soft_disc": "c_soft_disc",
               "ground_truth": "ground_truth"},
    "movie_reviews": {"comp_del": "comp_del", "suff_del": "suff_del", "comp_mask": "comp_mask",
                      "suff_mask": "suff_mask", "dfr": "dfr", "validity_cont": "validity",
                      "proximity_cont": "proximity_c", "c_cont": "c_cont", "validity_soft_cont": "validity_soft",
                      "c_soft_cont": "c_soft_cont", "ground_truth": "ground_truth"},
}


def _paper(table: str, **filters) -> pd.DataFrame:
    from ...tables import paper_values

    return paper_values("cf_faithfulness", paper_table=table, **filters)


def scores_table(res: pd.DataFrame, k: int = 1, explainers: Sequence[str] | None = None) -> pd.DataFrame:
    """Table 1 (K=1) / Table 3 (K=2): mean ± std over seeds beside the paper's value and rank.

    ``rank`` ranks the seed means among the paper's explainers present (``PAPER_ORDER``), as the
    paper does; ``rank_all`` among every explainer in the table (incl. the project's own)."""
    from ...tables import aggregate_seeds

    sub = res[(res["k"] == k) & res["metric"].isin(list(cfm.METRICS))]
    if explainers is not None:
        sub = sub[sub["explainer"].isin(list(explainers))]
    agg = aggregate_seeds(sub, ["dataset", "explainer", "metric"])
    agg["rank"], agg["rank_all"] = np.nan, np.nan
    for (d, m), g in agg.groupby(["dataset", "metric"]):
        if cfm.METRICS[m].lower_is_better is None:
            continue
        agg.loc[g.index, "rank_all"] = cfm.ranks(g["ours"].to_numpy(), m)
        gp = g[g["explainer"].isin(PAPER_ORDER)]
        agg.loc[gp.index, "rank"] = cfm.ranks(gp["ours"].to_numpy(), m)
    table = "Table 1" if k == 1 else "Table 3"
    pv = _paper(table, statistic="score")
    paper, paper_rank = [], []
    for _, r in agg.iterrows():
        pd_name = PAPER_DATASET[r["dataset"]]
        key = "c_soft_cont" if (k == 2 and r["metric"] == "c_soft_cont") else PAPER_METRIC[pd_name].get(r["metric"])
        hit = pv[(pv["dataset"] == pd_name) & (pv["explainer"] == r["explainer"]) & (pv["metric"] == (key or ""))]
        paper.append(float(hit["value"].iloc[0]) if len(hit) else np.nan)
        paper_rank.append(float(hit["rank"].iloc[0]) if len(hit) else np.nan)
    agg["paper"], agg["paper_rank"] = paper, paper_rank
    agg["lower_is_better"] = [cfm.METRICS[m].lower_is_better for m in agg["metric"]]
    agg.insert(1, "k", k)
    order = {m: i for i, m in enumerate(cfm.METRICS)}
    eorder = {e: i for i, e in enumerate((*PAPER_ORDER, *PROJECT_ORDER))}
    agg = agg.sort_values(["dataset", "metric", "explainer"], key=lambda c: c.map(order) if c.name == "metric"
                          else (c.map(eorder) if c.name == "explainer" else c), kind="stable")
    return agg[["dataset", "k", "metric", "explainer", "lower_is_better", "ours", "ours_std", "rank", "rank_all",
                "paper", "paper_rank", "n_seeds"]].reset_index(drop=True)


def correlation_rows(res: pd.DataFrame, k: int = 1, explainers: Sequence[str] = PAPER_ORDER) -> pd.DataFrame:
    """Per dataset, seed and metric: tau and rho of the metric's explainer ranking vs GroundTruth."""
    rows = []
    sub = res[(res["k"] == k) & res["explainer"].isin(list(explainers))]
    for (d, s), g in sub.groupby(["dataset", "seed"]):
        wide = g.pivot_table(index="explainer", columns="metric", values="value")
        truth = wide["ground_truth"].to_dict()
        for m in wide.columns:
            if m == "ground_truth" or m not in cfm.METRICS or cfm.METRICS[m].lower_is_better is None:
                continue
            ra = cfm.rank_agreement(wide[m].to_dict(), truth, m)
            rows += [{"dataset": d, "seed": s, "metric": m, "statistic": st, "value": ra[st]}
                     for st in ("kendall_tau", "spearman_rho")]
    return pd.DataFrame(rows)


def correlations_table(res: pd.DataFrame, k: int = 1, explainers: Sequence[str] = PAPER_ORDER) -> pd.DataFrame:
    """Table 2 (K=1) / the tau, rho rows of Table 3 (K=2): mean ± std over seeds beside the paper."""
    from ...tables import aggregate_seeds

    rows = correlation_rows(res, k, explainers)
    agg = aggregate_seeds(rows, ["dataset", "metric", "statistic"])
    table = "Table 2" if k == 1 else "Table 3"
    pv = _paper(table, statistic=["kendall_tau", "spearman_rho"])
    paper = []
    for _, r in agg.iterrows():
        pd_name = PAPER_DATASET[r["dataset"]]
        key = PAPER_METRIC[pd_name].get(r["metric"], r["metric"])
        if r["metric"] in ("c_cont", "c_soft_cont", "c_disc", "comp_mask", "suff_mask"):
            key = r["metric"]
        hit = pv[(pv["dataset"] == pd_name) & (pv["metric"] == key) & (pv["statistic"] == r["statistic"])]
        paper.append(float(hit["value"].iloc[0]) if len(hit) else np.nan)
    agg["paper"] = paper
    agg.insert(1, "k", k)
    agg.insert(2, "explainers", " ".join(explainers))
    return agg[["dataset", "k", "explainers", "metric", "statistic", "ours", "ours_std", "paper", "n_seeds"]]


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
