"""Running the CEBaB protocol: every concept explainer x (model, task, seed), resumable.

Conventions (:data:`CONVENTION`), as in the paper and the authors' released pipeline:

* each task is scored on *its own* test pairs -- those whose two texts both have a class in the
  task (:func:`xaibench.data.cebab.task_pairs`; binary loses every pair with a 3-star side, App. C.3);
  the tables carry the number of pairs (``n_pairs``);
* explainers are fit on the task's cleaned training rows (:func:`xaibench.data.cebab.fit_frame`:
  no 'no majority' review, and no 3-star review for binary);
* CausaLM's estimate is the counterfactual model minus the *factual* model (App. E.2), with the
  authors' control concepts (food -> service, others -> food);
* the true ICaCE vector is rounded to 4 decimals before distances, the explainer's estimate is not,
  and each seed's mean ICaCE-Error is rounded to 4 decimals (``rounding=4``; the authors'
  ``metric_utils.py``).  Per-pair files store both vectors unrounded and :func:`load_results`
  recomputes the metric columns under this convention, so a change of convention reruns nothing;
* ``ours_std`` is the population std over seeds (``ddof=0``), like the paper's ``±``.

Per-pair results are kept as parquet under
``data/results/cebab/<convention>/<model>/<task>/seed<seed>/<explainer>.parquet`` -- keyed on the
convention, so results of an older convention (``data/results/cebab/<model>/...``) are never mixed
in -- and a finished file is never recomputed.  Model outputs go through the on-disk cache.
:func:`icace_error_table` and :func:`cace_paper_table` turn per-pair results into the paper's
Table 10 and Table 4, beside the paper's numbers.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ... import paths
from ...config import Profile, get_profile
from ...data.cebab import PAPER_MODEL, edit_pairs, fit_frame, task_pairs
from ...io import read_parquet_cache, write_parquet
from ...tables import aggregate_seeds, join_paper
from ...progress import progress
from ..agreement import best_position, rank_agreement
from ..base import mark_added
from . import metrics as cb

EXPLAINERS = ("random", "approx", "conexp", "s-learner", "tcav", "conceptshap", "causalm", "inlp")
def explainer_label(name: str) -> str:
    """``name`` for one of the paper's eight explainers, ``"name (added)"`` for any other (registered by a
    user or a plugin, run through notebook 10 / 20's ``explainers`` parameter): kept apart in the
    Kendall tau against the paper and in the claims, which are about the paper's methods."""
    return mark_added(name, EXPLAINERS)
TASK_TABLE = {"5-way": "Table 10a", "ternary": "Table 10b", "binary": "Table 10c"}
QUICK_KW = {"conceptshap": {"epochs": 2}, "inlp": {"n_iter": 3, "epochs": 1},
            "causalm": {"epochs": 1, "head_epochs": 2}}
#: name of the evaluation convention the stored results follow (see the module docstring); a
#: result file lives under it, so a change of convention never reads old results
CONVENTION = "paper-v2"
#: CausaLM's reference model in the estimate: "factual" (App. E.2, used in the tables) or "explained"
CAUSALM_BASELINES = ("factual", "explained")
#: where CausaLM's encoders start in the runner: "paper" (the pretrained LM, stored and shared by tasks
#: with the same fit rows; App. E.2) -- :class:`xaibench.explainers.concept.causalm.CausaLMExplainer`
CAUSALM_STAGING = "paper"
#: population std over seeds, as the paper's "±" (stated in every table note)
SEED_DDOF = 0
STD_NOTE = "ours_std: population std over seeds (ddof=0), as the paper's ±"
#: the models notebook 20 runs by default; a run over other models names its tables after them
DEFAULT_MODELS = ("minilm", "lstm")


def name_suffix(models: Sequence[str]) -> str:
    """``''`` for the default model set, else ``'_<model>_<model>'``: tables and figures of a run over
    other models never overwrite those of the full run."""
    return "" if list(models) == list(DEFAULT_MODELS) else "_" + "_".join(models)


def seeds_label(n_seeds: Sequence[int] | pd.Series) -> str:
    """``'5 seeds'`` or, when cells differ, ``'3-5 seeds'`` (from a table's ``n_seeds``)."""
    vals = [int(v) for v in pd.Series(n_seeds).dropna()]
    if not vals:
        return "no seeds"
    lo, hi = min(vals), max(vals)
    return f"{hi} seed{'s' if hi != 1 else ''}" if lo == hi else f"{lo}-{hi} seeds"


def table_title(what: str, models: Sequence[str], table: pd.DataFrame, extra: str = "") -> str:
    """Title of a notebook-20 table: paper, table, models, seeds (from ``table.n_seeds``),
    convention and the std note."""
    seeds = seeds_label(table["n_seeds"]) if "n_seeds" in table.columns and len(table) else "no results"
    return (f"CEBaB (Abraham et al. 2022) {what}; models: {', '.join(models)}; {seeds} per cell{extra}. "
            f"Convention {CONVENTION} (per-task pairs and fit rows, CausaLM from the pretrained LM vs the factual "
            f"model, the true ICaCE rounded to 4 decimals); {STD_NOTE}")


def result_name(explainer: str, causalm_baseline: str = "factual", causalm_staging: str | None = None) -> str:
    """File stem of an explainer's results.  CausaLM's depends on its staging and baseline:
    ``causalm-e2`` (the paper staging, :data:`CAUSALM_STAGING`; factual model), ``causalm`` (the earlier
    staging from the explained model), with ``@explained`` appended for the explained-model baseline --
    so results of one setting are never read as another's."""
    if explainer != "causalm":
        return explainer
    staging = CAUSALM_STAGING if causalm_staging is None else causalm_staging
    stem = "causalm-e2" if staging == "paper" else "causalm"
    return stem if causalm_baseline == "factual" else f"{stem}@{causalm_baseline}"


def result_path(model: str, task: str, seed: int, explainer: str, convention: str = CONVENTION,
                causalm_baseline: str = "factual") -> Path:
    from ...models.zoo import slug

    return (paths.results_dir() / "cebab" / convention / slug(model) / task / f"seed{seed}"
            / f"{result_name(explainer, causalm_baseline)}.parquet")


def fit_data(profile: Profile, seed: int, task: str = "5-way") -> tuple[pd.DataFrame, pd.DataFrame]:
    """The task's cleaned train_exclusive rows (explainers' fitting data) and its test edit pairs,
    capped by the profile."""
    train = fit_frame(task)
    pairs = task_pairs(edit_pairs("test"), task)
    if profile.max_train:
        train = train.sample(n=min(profile.max_train, len(train)), random_state=seed).reset_index(drop=True)
    if profile.max_eval:
        pairs = pairs.sample(n=min(profile.max_eval, len(pairs)), random_state=seed).reset_index(drop=True)
    return train, pairs


def load_aspect_predictor(absa_model: str | None, seed: int = 42, profile: Profile | str = "full"):
    """The ABSA model used by Approx/S-Learner (trained if missing); ``None`` -> observed labels."""
    if not absa_model:
        return None
    from ...models.cebab_training import train_cebab

    return train_cebab(absa_model, "absa", "exclusive", seed, profile=profile).model


def explainer_kwargs(name: str, seed: int, aspect_predictor: Any = None, quick: bool = False,
                     causalm_baseline: str = "factual") -> dict[str, Any]:
    """Constructor arguments of explainer ``name`` under the runner's conventions."""
    kw: dict[str, Any] = {"seed": seed, "aspect_predictor": aspect_predictor}
    if name == "causalm":
        if causalm_baseline not in CAUSALM_BASELINES:
            raise ValueError(f"causalm_baseline must be one of {CAUSALM_BASELINES}; got {causalm_baseline!r}")
        kw["baseline"] = causalm_baseline
        kw["staging"] = CAUSALM_STAGING
    if quick:
        kw.update(QUICK_KW.get(name, {}))
    return kw


def fit_explainers(model: Any, train: pd.DataFrame, names: Sequence[str], seed: int, aspect_predictor: Any = None,
                   quick: bool = False, causalm_baseline: str = "factual") -> dict[str, Any]:
    """Fit each explainer of ``names`` on ``train`` for ``model`` (notebook 10)."""
    from ...explainers.concept import make_concept_explainer

    names = list(names)
    loop = progress(names, desc="fit explainers") if len(names) > 1 else names
    out = {}
    for n in loop:
        t0, n0 = time.time(), getattr(model, "n_forward", 0)
        e = make_concept_explainer(n, **explainer_kwargs(n, seed, aspect_predictor, quick, causalm_baseline))
        out[n] = e.fit(model, train)
        # what the fit cost, kept for the per-pair results (store_cell)
        out[n].fit_seconds_ = time.time() - t0
        out[n].fit_forward_passes_ = getattr(model, "n_forward", 0) - n0
    return out


def _result_rows(model: Any, name: str, explainer: Any, pairs: pd.DataFrame, causalm_baseline: str,
                 rounding: int | None = cb.PAPER_ROUNDING) -> pd.DataFrame:
    """Per-pair rows of a fitted explainer, with its wall seconds and forward passes (fit and scoring)."""
    t0, n0 = time.time(), getattr(model, "n_forward", 0)
    per = cb.evaluate_explainer(model, explainer, pairs, rounding=rounding)
    per["explainer"] = name
    per["causalm_baseline"] = causalm_baseline if name == "causalm" else ""
    per["seconds"] = getattr(explainer, "fit_seconds_", 0.0) + time.time() - t0
    per["forward_passes"] = getattr(explainer, "fit_forward_passes_", 0) + getattr(model, "n_forward", 0) - n0
    per.attrs["stage_seconds"] = dict(getattr(explainer, "timings_", {}))  # e.g. CausaLM's stages (bench_cebab)
    return per


def evaluate_one(model: Any, name: str, train: pd.DataFrame, pairs: pd.DataFrame, seed: int,
                 aspect_predictor: Any = None, quick: bool = False, causalm_baseline: str = "factual",
                 rounding: int | None = cb.PAPER_ROUNDING) -> pd.DataFrame:
    """Fit explainer ``name`` on ``train`` and score it on ``pairs``; per-pair rows with the
    explainer's wall seconds and the model forward passes it caused (cache misses)."""
    explainer = fit_explainers(model, train, [name], seed, aspect_predictor, quick, causalm_baseline)[name]
    return _result_rows(model, name, explainer, pairs, causalm_baseline, rounding)


def store_cell(model: Any, explainers: dict[str, Any], pairs: pd.DataFrame, model_name: str, task: str, seed: int,
               causalm_baseline: str = "factual") -> list[str]:
    """Notebook 10: save the per-pair results of explainers it fitted (with :func:`fit_explainers`, on
    :func:`fit_data`'s rows and pairs of the active profile) for the ``(model_name, task, seed)`` cell, so
    that notebook 20 reads them instead of fitting the same explainers again.  Files that exist are
    left alone.  Returns the explainers saved."""
    saved = []
    for name, e in explainers.items():
        if read_parquet_cache(result_path(model_name, task, seed, name, causalm_baseline=causalm_baseline)) is None:
            save_result(_result_rows(model, name, e, pairs, causalm_baseline), model_name, task, seed, name,
                        causalm_baseline=causalm_baseline)
            saved.append(name)
    return saved


def missing_explainers(model_name: str, task: str, seed: int, explainers: Sequence[str] = EXPLAINERS,
                       force: bool = False, causalm_baseline: str = "factual") -> list[str]:
    """The explainers of ``explainers`` without a (readable) result file for the cell (all with ``force``);
    a result file that cannot be read (truncated by a killed run) is named in a warning and removed."""
    return [e for e in explainers
            if force or read_parquet_cache(result_path(model_name, task, seed, e, causalm_baseline=causalm_baseline))
            is None]


def compute_one(model_name: str, task: str, seed: int, todo: Sequence[str], profile: str | Profile = "full",
                absa_model: str | None = "minilm", causalm_baseline: str = "factual",
                on_result: Any = None) -> list[tuple[str, pd.DataFrame]]:
    """``(explainer, per-pair rows)`` of every explainer of ``todo`` for one trained model (trained
    first if missing); ``on_result(explainer, rows)`` is called as each is done.  Writes no result
    file: :func:`run_one` saves each as it is done, :func:`run_all` saves the cells run in workers."""
    from ...models.cebab_training import train_cebab

    prof = get_profile(profile) if isinstance(profile, str) else profile
    model = train_cebab(model_name, task, "exclusive", seed, profile=prof).model
    train, pairs = fit_data(prof, seed, task)
    predictor = load_aspect_predictor(absa_model, 42, prof) if {"approx", "s-learner"} & set(todo) else None
    out = []
    for name in progress(list(todo), desc=f"{model_name}/{task}/seed{seed}"):
        per = evaluate_one(model, name, train, pairs, seed, predictor, quick=prof.name != "full",
                           causalm_baseline=causalm_baseline)
        if on_result is not None:
            on_result(name, per)
        out.append((name, per))
    return out


def run_one(model_name: str, task: str, seed: int, explainers: Sequence[str] = EXPLAINERS,
            profile: str | Profile = "full", absa_model: str | None = "minilm",
            force: bool = False, causalm_baseline: str = "factual") -> pd.DataFrame:
    """Per-pair results of ``explainers`` for one trained model (trained first if missing)."""
    todo = missing_explainers(model_name, task, seed, explainers, force, causalm_baseline)
    if todo:
        compute_one(model_name, task, seed, todo, profile, absa_model, causalm_baseline,
                    on_result=lambda name, per: save_result(per, model_name, task, seed, name,
                                                            causalm_baseline=causalm_baseline))
    return load_results([model_name], [task], [seed], explainers, causalm_baseline=causalm_baseline)


def _compute_cell(cell: tuple[str, str, int, list[str]], profile: str | Profile, absa_model: str | None,
                  causalm_baseline: str) -> list[tuple[str, pd.DataFrame]]:
    """:func:`compute_one` of one ``(model, task, seed, explainers)`` cell (a unit of :mod:`xaibench.executor`)."""
    model_name, task, seed, todo = cell
    return compute_one(model_name, task, seed, todo, profile, absa_model, causalm_baseline)


def run_all(models: Sequence[str], tasks: Sequence[str], seeds: Sequence[int], explainers: Sequence[str] = EXPLAINERS,
            profile: str | Profile = "full", absa_model: str | None = "minilm", run_missing: bool = True,
            causalm_baseline: str = "factual") -> pd.DataFrame:
    """Notebook 20's pipeline: run what is missing (``run_missing``), then load every per-pair result.

    The models, tasks and seeds are checked first, so that a bad value fails before any work.  The
    (model, task, seed) cells are independent: with ``XAIBENCH_SCHEDULER`` set to a parallel backend
    (:mod:`xaibench.executor`), the ABSA predictor is trained here first if missing, the classifiers not
    trained yet are trained as cells of the executor and saved here, the cells' missing explainers are computed in the workers and their results
    saved here, in the driver; serially each cell runs :func:`run_one`."""
    from ...config import parse_seeds
    from ...data.cebab import check_tasks
    from ...executor import get_executor
    from ...models.zoo import check_model

    check_tasks(list(tasks))
    parse_seeds(list(seeds))
    if run_missing:
        for m in models:
            check_model(m, "MODELS")
        if absa_model:
            check_model(absa_model, "ABSA_MODEL")
    ex = get_executor()
    if run_missing and not ex.parallel:
        for m in models:
            for t in tasks:
                for s in seeds:
                    run_one(m, t, s, explainers, profile=profile, absa_model=absa_model,
                            causalm_baseline=causalm_baseline)
    elif run_missing:
        _run_parallel(ex, models, tasks, seeds, explainers, profile, absa_model, causalm_baseline)
    return load_results(models, tasks, seeds, explainers, causalm_baseline=causalm_baseline)


def _run_parallel(ex: Any, models: Sequence[str], tasks: Sequence[str], seeds: Sequence[int],
                  explainers: Sequence[str], profile: str | Profile, absa_model: str | None,
                  causalm_baseline: str) -> None:
    """:func:`run_all`'s cells on the executor ``ex``: models saved and results saved in this process."""
    import functools

    from ...models.cebab_training import train_cebab_cells

    prof = get_profile(profile) if isinstance(profile, str) else profile
    cells = []
    for m in models:
        for t in tasks:
            for s in dict.fromkeys(seeds):
                todo = missing_explainers(m, t, s, explainers, causalm_baseline=causalm_baseline)
                if todo:
                    cells.append((m, t, s, todo))
    if not cells:
        return
    # the workers only read saved models: train here whatever is missing (ABSA predictor once for all cells)
    if absa_model and any({"approx", "s-learner"} & set(c[3]) for c in cells) and not is_trained(
            absa_model, "absa", 42, prof):
        load_aspect_predictor(absa_model, 42, prof)
    missing = [(m, t, "exclusive", s) for m, t, s, _ in cells if not is_trained(m, t, s, prof)]
    if missing:  # the missing classifiers of every model and task train as the cells of one map of ``ex`` too
        train_cebab_cells(missing, profile=prof)

    def save(i: int, done: list[tuple[str, pd.DataFrame]]) -> None:
        m, t, s, _ = cells[i]
        for name, per in done:
            save_result(per, m, t, s, name, causalm_baseline=causalm_baseline)

    ex.map(functools.partial(_compute_cell, profile=prof, absa_model=absa_model, causalm_baseline=causalm_baseline),
           cells, desc="CEBaB cells", on_result=save)


def save_result(per: pd.DataFrame, model_name: str, task: str, seed: int, explainer: str,
                causalm_baseline: str = "factual") -> Path:
    """Write one explainer's per-pair rows (from :func:`evaluate_one`) to its result file, atomically."""
    per = per.copy()
    per["model"], per["task"], per["seed"], per["convention"] = model_name, task, seed, CONVENTION
    per["icace"] = per["icace"].map(lambda v: np.asarray(v, dtype=float).tolist())
    per["estimate"] = per["estimate"].map(lambda v: np.asarray(v, dtype=float).tolist())
    dest = result_path(model_name, task, seed, explainer, causalm_baseline=causalm_baseline)
    write_parquet(dest, per)
    return dest


def load_results(models: Sequence[str], tasks: Sequence[str], seeds: Sequence[int],
                 explainers: Sequence[str] = EXPLAINERS, causalm_baseline: str = "factual") -> pd.DataFrame:
    frames = []
    for m in models:
        for t in tasks:
            for s in seeds:
                for e in explainers:
                    df = read_parquet_cache(result_path(m, t, s, e, causalm_baseline=causalm_baseline))
                    if df is not None:  # missing, or damaged (then named in a warning and removed): not run yet
                        frames.append(df)
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    out["icace"] = out["icace"].map(np.asarray)
    out["estimate"] = out["estimate"].map(np.asarray)
    # files written under an earlier rounding convention hold other metric values: recompute them all
    return cb.recompute_metrics(out)


def per_seed_errors(per_pair: pd.DataFrame, keys: Sequence[str], rounding: int | None = cb.PAPER_ROUNDING
                    ) -> pd.DataFrame:
    """Mean ICaCE-Error per ``keys`` and seed, long (``metric``, ``value``), each mean rounded to
    ``rounding`` decimals as the authors' ``_aggregate_metrics`` does (``None``: unrounded)."""
    keys = list(keys)
    out = (per_pair.groupby(keys + ["seed"])[list(cb.METRICS)].mean()
           .reset_index().melt(id_vars=keys + ["seed"], var_name="metric", value_name="value"))
    if rounding is not None:
        out["value"] = out["value"].round(int(rounding))
    return out


def _n_pairs(per_pair: pd.DataFrame, keys: list[str]) -> pd.Series:
    """Evaluation pairs per key: the per-seed count (equal across seeds in the full profile; the
    mean is shown otherwise)."""
    per_seed = per_pair.groupby(keys + ["seed"]).size()
    return per_seed.groupby(keys).mean().map(_count)


def _count(v: float) -> float | int:
    """A mean count as an int when it is whole (every seed had the same pairs)."""
    return int(v) if float(v).is_integer() else float(v)


def icace_error_table(per_pair: pd.DataFrame, rounding: int | None | str = "stored",
                      round_estimate: bool = False) -> pd.DataFrame:
    """Table 10: ICaCE-Error per (task, model, explainer, metric): mean ± population std over seeds,
    the number of test pairs of the task (``n_pairs``), and the paper's value.

    ``rounding="stored"`` uses the per-pair metric columns as given (:func:`load_results` computes
    them with the authors' convention, ``rounding=4``); an int or ``None`` recomputes them from the
    ICaCE and estimate vectors with that rounding of the true ICaCE (``None`` = unrounded; the
    estimate is rounded too with ``round_estimate``).  Each seed's mean is rounded to 4 decimals
    unless ``rounding=None``."""
    cols = ["table", "task", "model", "paper_model", "explainer", "metric", "ours", "ours_std", "paper",
            "paper_std", "n_seeds", "n_pairs", "lower_is_better"]
    if per_pair.empty:
        return pd.DataFrame(columns=cols)
    if rounding != "stored":
        per_pair = cb.recompute_metrics(per_pair, rounding=rounding, round_estimate=round_estimate)
    keys = ["task", "model", "explainer"]
    per_seed = per_seed_errors(per_pair, keys, None if rounding is None else cb.PAPER_ROUNDING)
    agg = aggregate_seeds(per_seed, keys + ["metric"], ddof=SEED_DDOF)
    n_pairs = _n_pairs(per_pair, keys)
    agg["n_pairs"] = [n_pairs.get(tuple(r)) for r in agg[keys].itertuples(index=False)]
    agg["table"] = agg["task"].map(TASK_TABLE)
    agg["paper_model"] = agg["model"].map(PAPER_MODEL)
    agg["lower_is_better"] = agg["metric"].map(lambda m: cb.METRICS[m].lower_is_better)
    out = join_paper(agg, "cebab", {"paper_model": "model", "task": "task", "explainer": "method", "metric": "metric"},
                     std="std", paper_table=list(TASK_TABLE.values()))
    order = {e: i for i, e in enumerate(EXPLAINERS)}
    out = out.sort_values(["table", "model", "metric", "explainer"],
                          key=lambda s: s.map(order) if s.name == "explainer" else s)
    return out[cols].reset_index(drop=True)


#: rounding conventions compared in :func:`rounding_conventions_table`: (rounding, round_estimate)
ROUNDING_CONVENTIONS = {
    "authors: true ICaCE rounded": (cb.PAPER_ROUNDING, False),
    "both vectors rounded (earlier)": (cb.PAPER_ROUNDING, True),
    "unrounded": (None, False),
}


def rounding_conventions_table(per_pair: pd.DataFrame) -> pd.DataFrame:
    """Table 10 under each of :data:`ROUNDING_CONVENTIONS`, recomputed from the stored vectors (no
    explainer runs): ``convention, task, model, explainer, metric, ours, ours_std, paper`` and
    ``diff_vs_authors`` (this convention minus the authors')."""
    frames = []
    for name, (rounding, round_estimate) in ROUNDING_CONVENTIONS.items():
        t = icace_error_table(per_pair, rounding=rounding, round_estimate=round_estimate)
        frames.append(t.assign(convention=name))
    out = pd.concat(frames, ignore_index=True)
    if out.empty:
        return out
    keys = ["task", "model", "explainer", "metric"]
    ref = out[out["convention"] == next(iter(ROUNDING_CONVENTIONS))].set_index(keys)["ours"]
    out["diff_vs_authors"] = out["ours"].to_numpy() - ref.reindex(pd.MultiIndex.from_frame(out[keys])).to_numpy()
    return out[["convention", *keys, "ours", "ours_std", "paper", "diff_vs_authors", "n_seeds", "n_pairs",
                "lower_is_better"]]


def cace_paper_table(models_by_seed: dict[int, Any], pairs: pd.DataFrame, model_name: str) -> pd.DataFrame:
    """Table 4: scalar CaCE (change of the argmax class, in stars) per aspect and direction on the
    5-way pairs; mean ± population std over seeds and ``n_pairs``."""
    rows = []
    for seed, model in models_by_seed.items():
        t = cb.cace_scalar_table(model, pairs, mode="argmax")
        t["seed"] = seed
        rows.append(t)
    per_seed = pd.concat(rows, ignore_index=True)
    agg = aggregate_seeds(per_seed, ["aspect", "direction"], value="cace", ddof=SEED_DDOF)
    n_pairs = per_seed.groupby(["aspect", "direction"], sort=False)["n_pairs"].mean().map(_count)
    agg["n_pairs"] = [n_pairs.get((a, d)) for a, d in zip(agg["aspect"], agg["direction"])]
    # Table 4 prints bert-base-uncased only: every model is compared with it
    agg["model"], agg["paper_model"] = model_name, "bert-base-uncased"
    out = join_paper(agg, "cebab", ["aspect", "direction"], std="std", paper_table="Table 4")
    return out[["model", "paper_model", "aspect", "direction", "ours", "ours_std", "paper", "paper_std", "n_seeds",
                "n_pairs"]]


def is_trained(model: str, task: str, seed: int, profile: str | Profile = "full") -> bool:
    """Whether notebook 02 has saved the (model, task, seed) classifier for ``profile``."""
    import json

    from ...models.zoo import model_dir

    prof = get_profile(profile) if isinstance(profile, str) else profile
    path = model_dir("cebab", model, task, "exclusive", seed) / "metrics.json"
    try:
        return path.exists() and json.loads(path.read_text()).get("profile") == prof.name
    except (OSError, ValueError):  # unreadable: not trained (train_cebab names it, removes and retrains it)
        return False


def cace_tables(models: Sequence[str], seeds: Sequence[int], profile: str | Profile = "full",
                train_missing: bool = True) -> pd.DataFrame:
    """Table 4 for every model of ``models`` (5-way, trained models of notebook 02); with
    ``train_missing=False`` only the seeds already trained enter (``n_seeds`` says how many)."""
    from ...models.cebab_training import train_cebab

    prof = get_profile(profile) if isinstance(profile, str) else profile
    pairs = fit_data(prof, seeds[0], "5-way")[1]
    out = []
    for m in models:
        use = [s for s in seeds if train_missing or is_trained(m, "5-way", s, prof)]
        if use:
            out.append(cace_paper_table({s: train_cebab(m, "5-way", "exclusive", s, profile=prof).model for s in use},
                                        pairs, m))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def _with_direction(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with a ``lower_is_better`` column (from :data:`metrics.METRICS` when it has none)."""
    if "lower_is_better" in table.columns:
        return table
    return table.assign(lower_is_better=table["metric"].map(lambda m: cb.METRICS[m].lower_is_better))


def best_method(group: pd.DataFrame, column: str) -> str:
    """The explainer with the best ``column`` value, following the metric's ``lower_is_better``
    (:func:`xaibench.evaluation.agreement.best_position`)."""
    g = _with_direction(group)
    return g["explainer"].iloc[best_position(g[column].to_numpy(), bool(g["lower_is_better"].iloc[0]))]


def kendall_agreement(table: pd.DataFrame) -> pd.DataFrame:
    """Kendall tau between our and the paper's ranking of explainers per (task, model, metric), with
    the best explainer by each: :func:`xaibench.evaluation.agreement.rank_agreement` in Table 10's
    column names (``kendall_tau``, ``p_value``, ``n_explainers``), over the explainers that both rank (an
    added explainer has no paper value, so it is never "our best"); settings with fewer than three
    explainers that both rank are left out."""
    cols = ["task", "model", "metric", "kendall_tau", "p_value", "n_explainers", "best_ours", "best_paper"]
    if table.empty:
        return pd.DataFrame(columns=cols)
    agree = rank_agreement(_with_direction(table), ["task", "model", "metric"], item="explainer",
                           lower_is_better="lower_is_better", min_items=3)
    agree = agree[agree["n_explainers"] >= 3].rename(columns={"kendall": "kendall_tau", "kendall_p": "p_value"})
    return agree[cols].reset_index(drop=True)


def explainer_checks(explainers: dict[str, Any], model: str, task: str, seed: int) -> pd.DataFrame:
    """Notebook 10's sanity checks of fitted explainers as a tidy table: CAV training accuracy
    (TCAV, ConceptSHAP), ConceptSHAP completeness (Eq. 25), INLP's held-out probe accuracy after the
    last projection, CausaLM's adversary accuracy in the last adversarial epoch."""
    checks = []
    for e in ("tcav", "conceptshap"):
        if e in explainers:
            checks += [{"check": "CAV training accuracy", "explainer": e, "aspect": a, "ours": v, "note": ""}
                       for a, v in explainers[e].cav_accuracy_.items()]
    if "conceptshap" in explainers:
        checks.append({"check": "completeness (Eq. 25)", "explainer": "conceptshap", "aspect": "all",
                       "ours": explainers["conceptshap"].completeness_, "note": "paper: > 0.9 for every model"})
    if "inlp" in explainers:
        for a, r in explainers["inlp"].results_.items():
            checks.append({"check": "probe accuracy after last projection", "explainer": "inlp", "aspect": a,
                           "ours": r.final_dev_accuracy, "note": f"majority-class rate {r.chance:.3f}"})
    if "causalm" in explainers:
        c = explainers["causalm"]
        for a, h in c.history_.items():
            checks.append({"check": "adversary accuracy, last adversarial epoch", "explainer": "causalm",
                           "aspect": a, "ours": h["adversarial"][-1]["adversary_acc"] if h["adversarial"] else np.nan,
                           "note": f"control concept: {c.control_[a]}; baseline: {c.baseline} model"})
    return pd.DataFrame(checks).assign(ours_std=np.nan, paper=np.nan, model=model, task=task, seed=seed)


def estimate_examples(model: Any, explainers: dict[str, Any], pairs: pd.DataFrame, n_show: int = 6) -> pd.DataFrame:
    """Notebook 10: the true ICaCE and every explainer's estimate on one pair per direction (first
    ``n_show``), one row per (pair, method), one column per class."""
    show = pairs.groupby("direction", group_keys=False).head(1).head(n_show).reset_index(drop=True)
    vectors = {"TRUE": cb.true_icace(model, show)}
    queries = cb.make_queries(show)
    vectors.update({name: e.explain(queries) for name, e in explainers.items()})
    rows = [{"pair": i, "aspect": r.aspect, "direction": r.direction, "method": name,
             **{f"class {k}": v for k, v in enumerate(vec[i])}}
            for name, vec in vectors.items() for i, r in show.iterrows()]
    return pd.DataFrame(rows).set_index(["pair", "aspect", "direction", "method"]).sort_index(level="pair", sort_remaining=False)


def summarize_explainers(model: Any, explainers: dict[str, Any], pairs: pd.DataFrame) -> pd.DataFrame:
    """Notebook 10: ICaCE-Error per fitted explainer and distance on ``pairs`` (one run)."""
    return pd.concat([cb.summarize(cb.evaluate_explainer(model, e, pairs)).assign(method=name)
                      for name, e in explainers.items()], ignore_index=True)
