"""The human-grounded pipeline, step by step (notebooks 11 and 21 call these; no logic lives there).

::

    inputs = short_inputs(setups["amazon"], 2)             # notebook 11: inputs of the heat maps
    texts = cebab_inputs(2); attrs = explain_cebab("minilm", texts, seed)   # notebook 11: CEBaB models

    setups = prepare(["amazon", "arxiv"], seed)           # splits + well/worse CNNs (notebooks 11, 21)
    selections = select_questions(setups, n_questions, seed)
    questions, report, timings = build_questions(setups, selections, methods, seed, lime_samples)
    readers, reader_perf = make_readers(setups, n_readers, seed)
    answers = simulate_answers(readers, questions)
    tidy, scores, kappa = result_tables(questions, answers)
    agree = score_agreement(scores)
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .kappa import kappa_table
from .methods import LIME_SAMPLES, PAPER_METHODS, explain_texts, make_paper_explainer, sampling_kwargs, table_label
from .questions import BuildReport, build_task1, build_task2, build_task3
from .readers import PARTICIPANTS, SimulatedReader, train_readers
from ..agreement import rank_agreement
from .scoring import LOWER_IS_BETTER, SUBSETS, participant_score_table
from .selection import TAU_HIGH, TAU_LOW, select_task1, select_task2, select_task3
from .splits import DATASETS, DatasetSpec, dataset_spec, make_splits
from .study import Question
from .training import get_models

#: epochs cap of the CNN recipes in the quick (smoke-test) profile
QUICK_MAX_EPOCHS = 3


@dataclass
class Setup:
    """One dataset ready for explanations: its four splits and its two CNNs."""

    dataset: str
    splits: dict[str, pd.DataFrame]
    models: dict[str, Any]  # {"well": CNN, "worse": CNN}

    @property
    def spec(self) -> DatasetSpec:
        return dataset_spec(self.dataset)

    @property
    def pool(self) -> pd.DataFrame:
        """The question pool (``test`` split), positions 0..n-1 (the ``pos`` of the selections)."""
        return self.splits["test"].reset_index(drop=True)

    @property
    def fit_texts(self) -> list[str]:
        """The CNNs' training texts (the decision trees are extracted from predictions on them)."""
        return self.splits["train"]["text"].tolist()


def prepare(datasets: Sequence[str] = tuple(DATASETS), seed: int = 42, quick: bool = False) -> dict[str, Setup]:
    """Splits and the well-trained and worse CNNs of every dataset (trained once, then reloaded).

    The one entry point of notebooks 11 (heat maps) and 21 (the tasks), so both explain the same
    models.  ``quick``: capped splits and at most :data:`QUICK_MAX_EPOCHS` epochs (smoke runs).
    """
    splits = {ds: make_splits(ds, seed, quick=quick) for ds in datasets}
    return {ds: Setup(ds, splits[ds], get_models(ds, splits[ds], seed,
                                                 max_epochs=QUICK_MAX_EPOCHS if quick else None))
            for ds in datasets}


def short_inputs(setup: Setup, n: int, min_tokens: int = 12) -> list[tuple[Any, int]]:
    """The ``n`` shortest question-pool texts with at least ``min_tokens`` CNN tokens, one per
    predicted class first (ties broken by example id).  Returns ``[(pool row, predicted class)]``."""
    pool, model = setup.pool, setup.models["well"]
    n_tok = pool["text"].map(lambda t: len(model.words(t)))
    cand = pool[n_tok >= min_tokens].assign(n_tok=n_tok).sort_values(["n_tok", "example_id"])
    pred = model.predict(cand["text"].tolist())
    chosen, seen = [], set()
    for (_, row), p in zip(cand.iterrows(), pred):  # one per predicted class first, then the next shortest
        if p not in seen:
            chosen.append((row, int(p)))
            seen.add(p)
        if len(chosen) == n:
            break
    return chosen


def input_table(setup: Setup, inputs: Sequence[tuple[Any, int]]) -> pd.DataFrame:
    """The chosen inputs (:func:`short_inputs`): id, true and predicted class, the well-trained
    CNN's probability of its prediction, and the text."""
    names, model = setup.spec.class_names, setup.models["well"]
    return pd.DataFrame([{"dataset": setup.dataset, "example_id": row.example_id, "true": names[int(row.label)],
                          "predicted": names[p], "p": round(float(model.predict_proba([row.text])[0].max()), 2),
                          "text": row.text} for row, p in inputs])


def explanation_panels(setup: Setup, inputs: Sequence[tuple[Any, int]], explanations: Mapping[str, Mapping[str, Any]],
                       methods: Sequence[str] = tuple(PAPER_METHODS)) -> list[tuple[dict[str, Any], str]]:
    """Per input: ``({method label: Attribution}, title)``, for :func:`xaibench.viz.html_heatmap`
    and :func:`xaibench.viz.heatmap_grid`.  ``explanations``: :func:`.methods.explain_texts` output."""
    names = setup.spec.class_names
    return [({table_label(m): explanations[m][row.text] for m in methods},
             f"{setup.dataset} · {row.example_id} · predicted {names[p]} (true {names[int(row.label)]})")
            for row, p in inputs]


#: model-generic explainers shown on the CEBaB classifiers (notebook 11) and their row labels
CEBAB_METHODS = {"integrated_gradients": "IG", "grad_x_input": "Grad x Input", "shap": "SHAP", "lime": "LIME (W)"}


def cebab_inputs(n: int = 2, task: str = "5-way", min_words: int = 10, max_words: int = 30) -> list[str]:
    """``n`` short CEBaB test reviews (``min_words``-``max_words`` words, original reviews when there
    are any), each from a different original review, by id."""
    from ...data.cebab import task_frame

    test = task_frame("test", task)
    n_words = test["text"].str.split().str.len()
    short = test[(n_words >= min_words) & (n_words <= max_words)]
    short = short[short["is_original"]] if short["is_original"].any() else short
    return short.sort_values("id").drop_duplicates("original_id").head(int(n))["text"].tolist()


def explain_cebab(model: str, texts: Sequence[str], seed: int = 42, lime_samples: int = LIME_SAMPLES,
                  shap_evals: int = 500, task: str = "5-way") -> dict[str, list[Any]] | None:
    """``{method: [Attribution per text]}`` of :data:`CEBAB_METHODS` for the CEBaB ``model``
    (``minilm``/``lstm``, exclusive split, ``seed``) trained by notebook 02; ``None`` when that
    model has not been trained."""
    from ...explainers.local import LOCAL_EXPLAINERS
    from ...models import zoo
    from ...models.registry import load_model
    from ..base import make_with

    folder = zoo.model_dir("cebab", model, task, "exclusive", seed)
    if not (folder / "config.json").exists():
        return None
    kwargs = sampling_kwargs(lime_samples, shap_evals)  # each method gets the settings it accepts
    clf = load_model(folder)
    return {m: make_with(LOCAL_EXPLAINERS[m], **kwargs).fit(clf).explain(list(texts)) for m in CEBAB_METHODS}


@dataclass
class Selection:
    """The examples of one dataset's pool chosen for tasks 1-3 (frames of :mod:`.selection`)."""

    dataset: str
    tasks: dict[int, pd.DataFrame]
    proba: np.ndarray        # well-trained CNN on the pool
    proba_worse: np.ndarray  # worse CNN on the pool


def select_questions(setups: Mapping[str, Setup], n_questions: int = 100, seed: int = 42) -> dict[str, Selection]:
    """Apply the paper's selection rules to every dataset's pool (same examples for every method)."""
    out = {}
    for ds, s in setups.items():
        pool = s.pool
        texts, y = pool["text"].tolist(), pool["label"].to_numpy()
        pw, ps = s.models["well"].predict_proba(texts), s.models["worse"].predict_proba(texts)
        k = len(s.spec.class_names)
        out[ds] = Selection(ds, {1: select_task1(y, pw.argmax(1), ps.argmax(1), n_questions, seed, n_classes=k),
                                 2: select_task2(y, pw, n_questions, seed=seed),
                                 3: select_task3(y, pw, n_questions, seed=seed)}, pw, ps)
    return out


def selection_summary(selections: Mapping[str, Selection]) -> pd.DataFrame:
    """Per dataset: pool size, share of examples both CNNs put in the same class, and how many
    pass the task-2 (``max p > TAU_HIGH``) and task-3 (``max p < TAU_LOW``) thresholds."""
    return pd.DataFrame([{"dataset": ds, "pool": len(s.proba),
                          "models_agree": float((s.proba.argmax(1) == s.proba_worse.argmax(1)).mean()),
                          f"max_p_above_{TAU_HIGH}": int((s.proba.max(1) > TAU_HIGH).sum()),
                          f"max_p_below_{TAU_LOW}": int((s.proba.max(1) < TAU_LOW).sum())}
                         for ds, s in selections.items()])


def selection_counts(selections: Mapping[str, Selection]) -> pd.DataFrame:
    """Selected examples per dataset, cell (TP/TN/FP/FN, ...) and task (wide)."""
    counts = pd.concat([t.groupby("cell").size().rename("n").reset_index().assign(dataset=ds, task=f"task_{k}")
                        for ds, s in selections.items() for k, t in s.tasks.items()])
    return counts.pivot_table(index=["dataset", "cell"], columns="task", values="n", fill_value=0)


def build_questions(setups: Mapping[str, Setup], selections: Mapping[str, Selection],
                    methods: Sequence[str] = tuple(PAPER_METHODS), seed: int = 42,
                    lime_samples: int = LIME_SAMPLES, shap_evals: int | None = None
                    ) -> tuple[list[Question], BuildReport, pd.DataFrame]:
    """Explain the selected texts with every method (well-trained CNN: tasks 1-3; worse CNN:
    task 1) and turn them into questions.  Returns ``(questions, report of dropped questions,
    explanation seconds per dataset, CNN and method, in the order the cells were sent)``.

    Each (dataset, CNN, method) is a cell of the executor (``XAIBENCH_SCHEDULER``): serially the
    setups' models explain in this process; in parallel each worker loads the saved CNN
    (:func:`~.training.model_folder`) and returns the attributions.  Every cell fits its explainer
    afresh with ``seed``, so the attributions do not depend on where or in which order it runs.  ``lime_samples`` and
    ``shap_evals``: LIME's samples and SHAP's model evaluations per text (``None``: SHAP's default, 500)."""
    import functools

    from ...executor import get_executor

    texts: dict[tuple[str, str], list[str]] = {}
    for ds, s in setups.items():
        sel, pool = selections[ds].tasks, s.pool
        pos_well = pd.concat([sel[t]["pos"] for t in (1, 2, 3)]).unique()
        texts[ds, "well"] = list(dict.fromkeys(pool.text[i] for i in pos_well))
        texts[ds, "worse"] = list(dict.fromkeys(pool.text[i] for i in sel[1]["pos"]))
    # LIME's cells (lime_samples forward passes per text) are the longest: they start first
    cells = sorted(((ds, cond, m) for ds in setups for cond in ("well", "worse") for m in methods),
                   key=lambda c: PAPER_METHODS.get(c[2], c[2]) != "lime")
    ex = get_executor()
    # each dataset's fit texts travel once with the cell function (Dask broadcasts it to every worker, a process
    # pool sends it to each worker at start), not once per cell: in the cells they made a 34 MiB Dask graph
    fn = functools.partial(_explain_cell, seed=seed, lime_samples=lime_samples, shap_evals=shap_evals,
                           fit_texts={ds: list(s.fit_texts) for ds, s in setups.items()},
                           models=None if ex.parallel else {ds: s.models for ds, s in setups.items()})
    out = ex.map(fn, [(ds, cond, m, texts[ds, cond]) for ds, cond, m in cells],
                 desc="explanations (dataset x CNN x method)")
    explained = {c: dict(zip(texts[c[0], c[1]], attrs)) for c, (attrs, _) in zip(cells, out)}
    timings = pd.DataFrame([{"dataset": ds, "model": cond, "method": m, "texts_explained": len(texts[ds, cond]),
                             "seconds": round(sec, 1)} for (ds, cond, m), (_, sec) in zip(cells, out)])
    questions: list[Question] = []
    report = BuildReport()
    for ds, s in setups.items():
        sel, pool = selections[ds].tasks, s.pool
        ew = {m: explained[ds, "well", m] for m in methods}
        es = {m: explained[ds, "worse", m] for m in methods}
        proba = selections[ds].proba
        questions += build_task1(ds, pool, sel[1], ew, es, seed, report=report)
        questions += build_task2(ds, pool, sel[2], ew, proba, seed, report=report)
        questions += build_task3(ds, pool, sel[3], ew, proba, seed, report=report)
    return questions, report, timings


def _explain_cell(cell: tuple, seed: int, lime_samples: int, fit_texts: Mapping[str, Sequence[str]],
                  models: Mapping[str, Mapping[str, Any]] | None = None, shap_evals: int | None = None):
    """One (dataset, CNN, method) of :func:`build_questions`: ``(attributions of texts, seconds)``.
    ``fit_texts``: each dataset's explainer-fitting texts; ``models``: the setups' CNNs (serial); ``None``: load
    the saved CNN (a worker)."""
    from ...models.registry import load_model
    from .training import model_folder

    ds, cond, method, texts = cell
    model = models[ds][cond] if models is not None else load_model(model_folder(ds, cond, seed))
    t = time.time()
    exp = make_paper_explainer(method, model, fit_texts[ds], seed=seed, lime_samples=lime_samples,
                               shap_evals=shap_evals)
    return exp.explain(texts), time.time() - t


def make_readers(setups: Mapping[str, Setup], n_readers: int = 5,
                 seed: int = 42) -> tuple[list[SimulatedReader], pd.DataFrame]:
    """``n_readers`` simulated participants per dataset (trained on its ``reader`` split) and their
    macro-F1 on the full question-pool documents (a sanity check)."""
    from ...models.training import macro_f1

    readers: list[SimulatedReader] = []
    rows = []
    for ds, s in setups.items():
        rs, pool = s.splits["reader"], s.pool
        rds = train_readers(rs["text"].tolist(), rs["label"].to_numpy(), s.spec.class_names, n_readers, seed,
                            prefix=f"sim-{ds}")
        for r in rds:
            rows.append({"dataset": ds, "participant": r.participant_id,
                         "macro_f1_full_docs": macro_f1(pool["label"], r.model.predict(pool["text"].tolist()))})
        readers += rds
    return readers, pd.DataFrame(rows)


def result_tables(questions: Sequence[Question], answers: pd.DataFrame,
                  participants: str = PARTICIPANTS) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(tidy, scores, kappa)``: the score table (:func:`participant_score_table`), Fleiss' kappa
    (:func:`kappa_table`) and both in one tidy table (``metric`` = ``avg_score`` / ``fleiss_kappa``)."""
    scores = participant_score_table(questions, answers, participants)
    scores.insert(0, "metric", "avg_score")
    kappa = kappa_table(questions, answers)
    kappa_rows = kappa.assign(metric="fleiss_kappa", method="",
                              subset=["by_" + b + ("_collapsed" if c else "_full")
                                      for b, c in zip(kappa["by"], kappa["collapse_confidence"])],
                              participants=participants, n_participants=kappa["n_raters"],
                              n_questions=kappa["n_items"])
    tidy = pd.concat([scores, kappa_rows[scores.columns]], ignore_index=True)
    return tidy, scores, kappa


def score_agreement(scores: pd.DataFrame, by: Sequence[str] = ("task", "dataset", "subset")) -> pd.DataFrame:
    """Rank agreement of our and the paper's method scores per task, dataset and subset
    (:func:`xaibench.evaluation.agreement.rank_agreement`; higher scores are better)."""
    return rank_agreement(scores, by, item="method", lower_is_better=LOWER_IS_BETTER)


def wide_scores(scores: pd.DataFrame, task: str, datasets: Sequence[str],
                methods: Sequence[str] = tuple(PAPER_METHODS)) -> pd.DataFrame:
    """One task of the score table as the paper prints it: methods x (dataset, subset), each cell
    ``ours (paper)``.  Empty when the task has no questions."""
    s = scores[scores.task == task].copy()
    if s.empty:
        return pd.DataFrame()
    s["method"] = s["method"].map(table_label)  # methods beyond the paper's nine are marked "(added)"
    s["cell"] = [f"{o:+.2f} ({p:+.2f})" if pd.notna(p) else f"{o:+.2f} (-)" for o, p in zip(s["ours"], s["paper"])]
    w = s.pivot_table(index="method", columns=["dataset", "subset"], values="cell", aggfunc="first")
    w = w.reindex(index=[table_label(m) for m in methods if table_label(m) in w.index])
    return w.reindex(columns=[(d, c) for d in datasets for c in SUBSETS if (d, c) in w.columns])


#: the keys of a row of the task table (``human_grounded_tasks``) and of the model table (``human_grounded_models``)
TASK_KEYS = ["metric", "task", "dataset", "method", "subset", "participants"]
MODEL_KEYS = ["dataset", "model_condition", "metric", "participants"]


def run_seed(seed: int, methods: Sequence[str], n_questions: int, n_readers: int, lime_samples: int | None,
             shap_evals: int | None = None, quick: bool = False,
             datasets: Sequence[str] = tuple(DATASETS)) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One seed of the study end to end -- splits, the two CNNs per dataset, questions, explanations, readers,
    their answers -- as ``(models, tasks)``: the model table and the tidy task table, each with a ``seed``
    column.  Every step is seeded by ``seed``, so seeds are independent replications of the whole study."""
    from .readers import simulate_answers
    from .training import model_table

    setups = prepare(list(datasets), seed, quick=quick)
    selections = select_questions(setups, n_questions, seed)
    questions, _, _ = build_questions(setups, selections, methods, seed, lime_samples, shap_evals=shap_evals)
    readers, _ = make_readers(setups, n_readers, seed)
    tidy, _, _ = result_tables(questions, simulate_answers(readers, questions))
    models = model_table({ds: s.models for ds, s in setups.items()}, {ds: s.splits for ds, s in setups.items()}, seed)
    return models, tidy.assign(seed=seed)


def over_seeds(per_seed: pd.DataFrame, keys: Sequence[str], first: Sequence[str] = ("paper",),
               mean: Sequence[str] = ()) -> pd.DataFrame:
    """The table over seeds (:func:`xaibench.tables.aggregate_seeds`): ``ours`` = the mean of the seeds' values,
    ``ours_std`` = their sample std (NaN for one seed), ``n_seeds``; the columns ``first`` are taken from the
    first seed's row, ``mean`` averaged over seeds."""
    from ...tables import aggregate_seeds

    keys = list(keys)
    if "seed" not in per_seed.columns or per_seed.empty:
        raise ValueError("over_seeds needs per-seed rows with a 'seed' column")
    if per_seed.duplicated(keys + ["seed"]).any():
        raise ValueError(f"a seed appears twice for one row of {keys}")
    out = aggregate_seeds(per_seed, keys, value="ours")
    g = per_seed.groupby(keys, dropna=False, sort=False)
    for c in first:
        if c in per_seed.columns:
            out[c] = g[c].first().to_numpy()
    for c in mean:
        out[c] = g[c].mean().to_numpy()
    return out


__all__ = ["QUICK_MAX_EPOCHS", "Setup", "prepare", "short_inputs", "input_table", "explanation_panels",
           "CEBAB_METHODS", "cebab_inputs", "explain_cebab", "Selection",
           "select_questions",
           "selection_summary", "selection_counts", "build_questions", "make_readers", "result_tables",
           "score_agreement", "wide_scores", "TASK_KEYS", "MODEL_KEYS", "run_seed", "over_seeds"]
