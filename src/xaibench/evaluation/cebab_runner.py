"""Running the CEBaB protocol: every concept explainer x (model, task, seed), resumable.

:func:`run_one` fits each explainer on train_exclusive for one trained model and scores it on the
test edit pairs; per-pair results are kept as parquet under
``data/results/cebab/<model>/<task>/seed<seed>/<explainer>.parquet`` (other protocols reuse them)
and a finished file is never recomputed.  Model outputs go through the on-disk cache, so each text
is run through a model at most once.  :func:`icace_error_table` and :func:`cace_paper_table` turn
the per-pair results into the paper's Table 10 and Table 4, beside the paper's numbers.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .. import paths
from ..config import Profile, get_profile
from ..io import write_parquet
from ..tables import paper_values
from ..utils import progress
from . import cebab as cb

EXPLAINERS = ("random", "approx", "conexp", "s-learner", "tcav", "conceptshap", "causalm", "inlp")
TASK_TABLE = {"5-way": "Table 10a", "ternary": "Table 10b", "binary": "Table 10c"}
PAPER_MODEL = {"minilm": "bert-base-uncased", "lstm": "lstm", "bert-base-uncased": "bert-base-uncased",
               "roberta-base": "roberta-base", "gpt2": "gpt2"}
QUICK_KW = {"conceptshap": {"epochs": 2}, "inlp": {"n_iter": 3, "epochs": 1},
            "causalm": {"epochs": 1, "head_epochs": 2}}


def result_path(model: str, task: str, seed: int, explainer: str) -> Path:
    from ..models.zoo import slug

    return paths.results_dir() / "cebab" / slug(model) / task / f"seed{seed}" / f"{explainer}.parquet"


def fit_data(profile: Profile, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """train_exclusive rows (explainers' fitting data) and test edit pairs, capped by the profile."""
    from ..data.cebab import edit_pairs, load_cebab

    rows = load_cebab()
    train = rows[rows["split"] == "train_exclusive"].reset_index(drop=True)
    pairs = edit_pairs("test")
    if profile.max_train:
        train = train.sample(n=min(profile.max_train, len(train)), random_state=seed).reset_index(drop=True)
    if profile.max_eval:
        pairs = pairs.sample(n=min(profile.max_eval, len(pairs)), random_state=seed).reset_index(drop=True)
    return train, pairs


def load_aspect_predictor(absa_model: str | None, seed: int = 42, profile: Profile | str = "full"):
    """The ABSA model used by Approx/S-Learner (trained if missing); ``None`` -> observed labels."""
    if not absa_model:
        return None
    from ..models.cebab_training import train_cebab

    return train_cebab(absa_model, "absa", "exclusive", seed, profile=profile).model


def evaluate_one(model: Any, name: str, train: pd.DataFrame, pairs: pd.DataFrame, seed: int,
                 aspect_predictor: Any = None, quick: bool = False) -> pd.DataFrame:
    """Fit explainer ``name`` on ``train`` and score it on ``pairs``; per-pair rows with the
    explainer's wall seconds and the model forward passes it caused (cache misses)."""
    from ..explainers.concept import make_concept_explainer

    kw: dict[str, Any] = {"seed": seed, "aspect_predictor": aspect_predictor}
    if quick:
        kw.update(QUICK_KW.get(name, {}))
    t0 = time.time()
    n0 = getattr(model, "n_forward", 0)
    explainer = make_concept_explainer(name, **kw).fit(model, train)
    per = cb.evaluate_explainer(model, explainer, pairs)
    per["explainer"] = name
    per["seconds"] = time.time() - t0
    per["forward_passes"] = getattr(model, "n_forward", 0) - n0
    return per


def run_one(model_name: str, task: str, seed: int, explainers: Sequence[str] = EXPLAINERS,
            profile: str | Profile = "full", absa_model: str | None = "minilm",
            force: bool = False) -> pd.DataFrame:
    """Per-pair results of ``explainers`` for one trained model (trained first if missing)."""
    from ..models.cebab_training import train_cebab

    prof = get_profile(profile) if isinstance(profile, str) else profile
    todo = [e for e in explainers if force or not result_path(model_name, task, seed, e).exists()]
    if todo:
        model = train_cebab(model_name, task, "exclusive", seed, profile=prof).model
        train, pairs = fit_data(prof, seed)
        predictor = load_aspect_predictor(absa_model, 42, prof) if {"approx", "s-learner"} & set(todo) else None
        for name in progress(todo, desc=f"{model_name}/{task}/seed{seed}"):
            per = evaluate_one(model, name, train, pairs, seed, predictor, quick=prof.name != "full")
            save_result(per, model_name, task, seed, name)
    return load_results([model_name], [task], [seed], explainers)


def save_result(per: pd.DataFrame, model_name: str, task: str, seed: int, explainer: str) -> Path:
    """Write one explainer's per-pair rows (from :func:`evaluate_one`) to its result file, atomically."""
    per = per.copy()
    per["model"], per["task"], per["seed"] = model_name, task, seed
    per["icace"] = per["icace"].map(lambda v: np.asarray(v, dtype=float).tolist())
    per["estimate"] = per["estimate"].map(lambda v: np.asarray(v, dtype=float).tolist())
    dest = result_path(model_name, task, seed, explainer)
    write_parquet(dest, per)
    return dest


def load_results(models: Sequence[str], tasks: Sequence[str], seeds: Sequence[int],
                 explainers: Sequence[str] = EXPLAINERS) -> pd.DataFrame:
    frames = []
    for m in models:
        for t in tasks:
            for s in seeds:
                for e in explainers:
                    p = result_path(m, t, s, e)
                    if p.exists():
                        frames.append(pd.read_parquet(p))
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    out["icace"] = out["icace"].map(np.asarray)
    out["estimate"] = out["estimate"].map(np.asarray)
    return out


def icace_error_table(per_pair: pd.DataFrame) -> pd.DataFrame:
    """Table 10: ICaCE-Error per (task, model, explainer, metric); mean ± std over seeds, with paper."""
    cols = ["table", "task", "model", "paper_model", "explainer", "metric", "ours", "ours_std", "paper",
            "paper_std", "n_seeds", "lower_is_better"]
    if per_pair.empty:
        return pd.DataFrame(columns=cols)
    per_seed = (per_pair.groupby(["task", "model", "explainer", "seed"])[list(cb.METRICS)].mean()
                .reset_index().melt(id_vars=["task", "model", "explainer", "seed"], var_name="metric", value_name="value"))
    g = per_seed.groupby(["task", "model", "explainer", "metric"])
    agg = g["value"].agg(ours="mean", ours_std=lambda s: s.std(ddof=1) if len(s) > 1 else np.nan)
    agg["n_seeds"] = g["seed"].nunique()
    agg = agg.reset_index()
    agg["table"] = agg["task"].map(TASK_TABLE)
    agg["paper_model"] = agg["model"].map(PAPER_MODEL)
    agg["lower_is_better"] = agg["metric"].map(lambda m: cb.METRICS[m].lower_is_better)
    pv = paper_values("cebab", paper_table=list(TASK_TABLE.values()))
    pv = pv.rename(columns={"model": "paper_model", "method": "explainer", "value": "paper", "std": "paper_std"})
    out = agg.merge(pv[["paper_model", "task", "explainer", "metric", "paper", "paper_std"]],
                    on=["paper_model", "task", "explainer", "metric"], how="left")
    order = {e: i for i, e in enumerate(EXPLAINERS)}
    out = out.sort_values(["table", "model", "metric", "explainer"],
                          key=lambda s: s.map(order) if s.name == "explainer" else s)
    return out[cols].reset_index(drop=True)


def cace_paper_table(models_by_seed: dict[int, Any], pairs: pd.DataFrame, model_name: str) -> pd.DataFrame:
    """Table 4: scalar CaCE (change of the argmax class, in stars) per aspect and direction."""
    rows = []
    for seed, model in models_by_seed.items():
        t = cb.cace_scalar_table(model, pairs, mode="argmax")
        t["seed"] = seed
        rows.append(t)
    per_seed = pd.concat(rows, ignore_index=True)
    val = "cace" if "cace" in per_seed.columns else [c for c in per_seed.columns
                                                     if c not in ("aspect", "direction", "seed", "n_pairs")][0]
    g = per_seed.groupby(["aspect", "direction"], sort=False)
    agg = g[val].agg(ours="mean", ours_std=lambda s: s.std(ddof=1) if len(s) > 1 else np.nan).reset_index()
    agg["n_seeds"] = g["seed"].nunique().to_numpy()
    # Table 4 prints bert-base-uncased only: every model is compared with it
    agg["model"], agg["paper_model"] = model_name, "bert-base-uncased"
    pv = paper_values("cebab", paper_table="Table 4").rename(columns={"value": "paper", "std": "paper_std"})
    out = agg.merge(pv[["aspect", "direction", "paper", "paper_std"]], on=["aspect", "direction"], how="left")
    return out[["model", "paper_model", "aspect", "direction", "ours", "ours_std", "paper", "paper_std", "n_seeds"]]


def kendall_agreement(table: pd.DataFrame) -> pd.DataFrame:
    """Kendall tau between our and the paper's ranking of explainers per (task, model, metric)."""
    from scipy.stats import kendalltau

    rows = []
    for (task, model, metric), g in table.dropna(subset=["ours", "paper"]).groupby(["task", "model", "metric"]):
        if len(g) < 3:
            continue
        tau, p = kendalltau(g["ours"], g["paper"])
        best_ours = g.loc[g["ours"].idxmin(), "explainer"]
        best_paper = g.loc[g["paper"].idxmin(), "explainer"]
        rows.append({"task": task, "model": model, "metric": metric, "kendall_tau": tau, "p_value": p,
                     "n_explainers": len(g), "best_ours": best_ours, "best_paper": best_paper})
    return pd.DataFrame(rows)
