"""Question generation and simulated participants for the human-grounded evaluation
(Lertvittayakumjorn & Toni, EMNLP 2019).  Scoring lives in :mod:`.human_grounded`.

Pipeline (notebook ``21_human_grounded_evaluation``)::

    splits = make_splits("amazon")                       # train / dev / test / reader (disjoint)
    models = get_models("amazon", splits)                # {"well": CNN, "worse": CNN}
    expl = explain_pool(models, splits, selections, ...) # Attributions of every paper method
    questions = build_questions("amazon", ...)           # Task 1-3 Question objects
    readers = train_readers(splits["reader"], ...)       # simulated participants
    answers = simulate_answers(readers, questions)       # participants == "simulated"
    participant_score_table(questions, answers)          # tidy: ours / ours_std / paper

Data
----
Each dataset is split once, stratified by label, with a fixed seed into four disjoint parts:
``train`` and ``dev`` (the CNNs), ``test`` (the pool the questions are drawn from) and ``reader``
(the simulated participants' own training data, never seen by a CNN and never asked about).

Question selection (the paper's rules)
--------------------------------------
* Task 1: examples that the well-trained and the worse model put in the *same* class; balanced
  over the cells (predicted class x prediction correct) -- for a binary task exactly TP / TN / FP /
  FN (positive class = label 1), 25 each.  A cell with fewer examples contributes all it has.
* Task 2: well-trained model, ``max_c p_c > 0.9`` (:data:`TAU_HIGH`); top-3 evidence.
* Task 3: well-trained model, ``max_c p_c < 0.7`` (:data:`TAU_LOW`); top-3 evidence and top-3
  counter-evidence, predicted class and its probability.
  Tasks 2 and 3 are balanced over (prediction correct x predicted class), half correct / half
  incorrect (our choice; the poster does not give the counts).
* The same examples are used for every explanation method (a paired design): differences between
  methods are not differences between sampled examples.

Simulated participants
----------------------
A :class:`SimulatedReader` is a bag-of-n-grams logistic regression trained on the ``reader`` split
(one bootstrap resample per participant).  It is shown exactly what a human is shown (the
question's visible fields, see :func:`visible_fields`) and answers on the paper's 5-level scale:

* Task 2: ``q = p_reader(. | evidence)``; choice = ``argmax q``; strength = margin between the two
  largest ``q``.
* Task 1: ``b_X = p_reader(predicted class | evidence of model X)`` for X in A, B; choice = the
  larger; strength = ``|b_A - b_B|``.
* Task 3: log-odds pooling of the shown probability and the reader's reading of the fragments:
  ``logit b = log(p_shown (K-1) / (1 - p_shown)) + [logit p_r(c|E) - logit pi_c]
  + [logit p_r(c|CE) - logit pi_c]``
  (``c`` the predicted class, ``pi`` the reader's belief given no text); choice = ``c`` if
  ``b >= 0.5`` else the other class the counter-evidence points to; strength = ``|2b - 1|``.

Strength -> answer (:class:`AnswerThresholds`): below ``no_preference`` (0.1) "can't say"
(tasks 1 and 2 only; task 3 falls back to "unconfident"), below ``confident`` (0.5) "unconfident",
else "confident".  These thresholds are our assumptions, not the paper's.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .. import io, paths
from ..utils import progress
from .human_grounded import (CONFIDENT, NO_PREFERENCE, UNCONFIDENT, Question, Study, load_study,
                             iter_subsets, save_study, score_answers)

#: the paper's thresholds and number of fragments
TAU_HIGH = 0.9
TAU_LOW = 0.7
M_FRAGMENTS = 3

#: study/paper method name -> explainer registry name (xaibench.explainers.local), in table order
PAPER_METHODS: dict[str, str] = {
    "random_w": "random_words",
    "random_n": "random_ngrams",
    "lime": "lime",
    "lrp_w": "lrp_words",
    "lrp_n": "lrp_ngrams",
    "deeplift_w": "deeplift_words",
    "deeplift_n": "deeplift_ngrams",
    "gradcam_text": "gradcam_text",
    "dt": "decision_trees",
}
#: printed names of the paper's tables
PAPER_LABELS: dict[str, str] = {
    "random_w": "Random (W)", "random_n": "Random (N)", "lime": "LIME (W)", "lrp_w": "LRP (W)",
    "lrp_n": "LRP (N)", "deeplift_w": "DeepLIFT (W)", "deeplift_n": "DeepLIFT (N)",
    "gradcam_text": "Grad-CAM-T (N)", "dt": "DTs (N)",
}
PARTICIPANTS = "simulated"


# ================================================================================================
# data
# ================================================================================================
@dataclass(frozen=True)
class DatasetSpec:
    """One dataset of the paper: where it comes from, its classes and our split sizes."""

    name: str                      # "amazon" / "arxiv" (the names used in the paper's tables)
    loader: str                    # xaibench.data.loaders name
    class_names: tuple[str, ...]   # display names, index = label
    sizes: dict[str, int]          # rows of dev / test / reader; train = the rest
    max_label: int | None = None   # keep labels < max_label


DATASETS: dict[str, DatasetSpec] = {
    "amazon": DatasetSpec("amazon", "amazon-polarity", ("Negative", "Positive"),
                          {"dev": 500, "test": 1500, "reader": 1000}),
    "arxiv": DatasetSpec("arxiv", "arxiv", ("Computer Science", "Mathematics", "Physics"),
                         {"dev": 125, "test": 250, "reader": 250}, max_label=3),
}
#: caps per split in the quick profile (smoke runs)
QUICK_SIZES = {"train": 300, "dev": 60, "test": 150, "reader": 150}
SPLITS = ("train", "dev", "test", "reader")


def dataset_spec(dataset: str) -> DatasetSpec:
    if dataset not in DATASETS:
        raise KeyError(f"unknown human-grounded dataset {dataset!r}; use one of {sorted(DATASETS)}")
    return DATASETS[dataset]


def split_frame(df: pd.DataFrame, sizes: Mapping[str, int], seed: int) -> dict[str, pd.DataFrame]:
    """Stratified, seeded split of ``df`` into ``train`` (the rest) and the parts in ``sizes``.

    Every part keeps the class proportions of ``df`` (up to rounding); parts are disjoint and
    their union is ``df``.  Deterministic under ``seed``.
    """
    from sklearn.model_selection import train_test_split

    need = sum(int(v) for v in sizes.values())
    if need >= len(df):
        raise ValueError(f"split sizes {dict(sizes)} need {need} rows but the data has only {len(df)}; "
                         "shrink the sizes")
    rest = df
    out: dict[str, pd.DataFrame] = {}
    for i, (name, n) in enumerate(sizes.items()):
        if n <= 0:
            raise ValueError(f"split size of {name!r} must be positive, got {n}")
        rest, part = train_test_split(rest, test_size=int(n), random_state=seed + i, stratify=rest["label"])
        out[name] = part.sort_index()
    out = {"train": rest.sort_index(), **out}
    return out


def cut_to_window(text: str, max_words: int) -> str:
    """``text`` up to the end of its ``max_words``-th token (the CNN's tokenizer), formatting kept.

    The CNN reads only its first ``max_len`` tokens, so its predictions do not change; explainers
    then see exactly what the model sees (LIME's string segmentation mis-counts words when the
    text goes on past the model's window).
    """
    from ..models.embeddings import _TOKEN_RE

    if max_words < 1:
        raise ValueError(f"max_words must be >= 1, got {max_words}")
    for i, m in enumerate(_TOKEN_RE.finditer(text)):
        if i == max_words - 1:
            return text[: m.end()]
    return text


def make_splits(dataset: str, seed: int = 42, quick: bool = False, max_words: int = 150) -> dict[str, pd.DataFrame]:
    """The four disjoint splits of a paper dataset (see module docstring).

    Each frame has ``text``, ``label`` and ``example_id`` (``<dataset>:<row of the loader frame>``).
    ``quick`` caps every split at :data:`QUICK_SIZES` (stratified subsample, same seed).  Texts of
    the question pool (``test``) are cut to the CNN's window of ``max_words`` tokens
    (:func:`cut_to_window`).
    """
    from ..data.loaders import load

    spec = dataset_spec(dataset)
    df = load(spec.loader)
    if spec.max_label is not None:
        df = df[df["label"] < spec.max_label]
    df = df[["text", "label"]].copy()
    df["example_id"] = [f"{dataset}:{i}" for i in df.index]
    df = df.reset_index(drop=True)
    splits = split_frame(df, spec.sizes, seed)
    if quick:
        splits = {k: _stratified_cap(v, QUICK_SIZES[k], seed) for k, v in splits.items()}
    test = splits["test"].copy()
    test["text"] = [cut_to_window(t, max_words) for t in test["text"]]
    splits["test"] = test
    return splits


def _stratified_cap(df: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    if len(df) <= n:
        return df
    from sklearn.model_selection import train_test_split

    part, _ = train_test_split(df, train_size=n, random_state=seed, stratify=df["label"])
    return part.sort_index()


def split_summary(splits: Mapping[str, pd.DataFrame], class_names: Sequence[str]) -> pd.DataFrame:
    """Rows per split and class (for the notebook's data table)."""
    rows = []
    for name, df in splits.items():
        counts = df["label"].value_counts()
        row: dict[str, Any] = {"split": name, "n": len(df)}
        for i, c in enumerate(class_names):
            row[c] = int(counts.get(i, 0))
        rows.append(row)
    return pd.DataFrame(rows)


# ================================================================================================
# models
# ================================================================================================
#: CNN recipes.  "well": trained to early stopping on dev.  "worse": Amazon as in the paper (one
#: epoch); ArXiv: the paper trained on more specific sub-topics, which our sample does not have,
#: so we underfit by training on a 30 % subset of the training split (see DEVIATIONS).
RECIPES: dict[str, dict[str, dict[str, Any]]] = {
    "amazon": {"well": {"lr": 3e-3, "epochs": 20, "patience": 3, "train_fraction": 1.0},
               "worse": {"lr": 3e-3, "epochs": 1, "patience": 1, "train_fraction": 1.0}},
    "arxiv": {"well": {"lr": 3e-3, "epochs": 20, "patience": 3, "train_fraction": 1.0},
              "worse": {"lr": 3e-3, "epochs": 20, "patience": 3, "train_fraction": 0.3}},
}
CONDITIONS = ("well", "worse")


def model_folder(dataset: str, condition: str, seed: int) -> Path:
    """``zoo.model_dir(<loader name>, "cnn", condition, "train", seed)`` (respects the profile)."""
    from ..models import zoo

    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {CONDITIONS}, got {condition!r}")
    return zoo.model_dir(dataset_spec(dataset).loader, "cnn", condition, "train", seed)


def _recipe_record(dataset: str, condition: str, splits: Mapping[str, pd.DataFrame], seed: int,
                   max_epochs: int | None) -> dict[str, Any]:
    r = dict(RECIPES[dataset][condition])
    if max_epochs is not None:
        r["epochs"] = min(r["epochs"], int(max_epochs))
    return {"recipe": r, "seed": seed, "n_train": len(splits["train"]), "n_dev": len(splits["dev"]),
            "train_ids_hash": _ids_hash(splits["train"]["example_id"])}


def _ids_hash(ids: Iterable[str]) -> str:
    import hashlib

    return hashlib.sha1("\n".join(ids).encode()).hexdigest()[:16]


def get_models(dataset: str, splits: Mapping[str, pd.DataFrame], seed: int = 42,
               max_epochs: int | None = None, retrain: bool = False) -> dict[str, Any]:
    """The well-trained and the worse CNN of ``dataset``: loaded from :func:`model_folder` when a
    model trained with the same recipe and training split exists there, else trained and saved.

    ``max_epochs`` caps the recipes' epochs (the quick profile).  Returns ``{"well": .., "worse": ..}``.
    """
    from ..models.base import Classifier
    from ..models.cnn import CNNClassifier

    spec = dataset_spec(dataset)
    out: dict[str, Any] = {}
    for cond in CONDITIONS:
        folder = model_folder(dataset, cond, seed)
        record = _recipe_record(dataset, cond, splits, seed, max_epochs)
        rec_path = folder / "hg_recipe.json"
        if (not retrain and (folder / "config.json").exists() and rec_path.exists()
                and json.loads(rec_path.read_text()) == json.loads(json.dumps(record))):
            out[cond] = Classifier.load(folder)
            continue
        r = record["recipe"]
        train = splits["train"]
        if r["train_fraction"] < 1.0:
            train = _stratified_cap(train, max(len(spec.class_names) * 2, int(round(r["train_fraction"] * len(train)))), seed)
        model = CNNClassifier(n_classes=len(spec.class_names), seed=seed, lr=r["lr"], epochs=r["epochs"],
                              patience=r["patience"])
        model.fit(train["text"].tolist(), train["label"].to_numpy(), splits["dev"]["text"].tolist(),
                  splits["dev"]["label"].to_numpy())
        model.save(folder)
        io.write_json(rec_path, record)
        out[cond] = model
    return out


def model_table(models: Mapping[str, Mapping[str, Any]], splits: Mapping[str, Mapping[str, pd.DataFrame]],
                seed: int = 42) -> pd.DataFrame:
    """Macro-F1 on the test split per dataset and condition, beside the paper's numbers (tidy)."""
    from ..models.training import macro_f1
    from ..tables import paper_values

    pv = paper_values("human_grounded", metric="macro_f1", paper_table="Model performance table (Macro-F1)")
    lut = {(r.dataset, r.model_condition): float(r.value) for r in pv.itertuples()}
    rows = []
    for dataset, ms in models.items():
        test = splits[dataset]["test"]
        for cond, model in ms.items():
            pred = model.predict(test["text"].tolist())
            hist = getattr(model, "history", None) or {}
            rows.append({"dataset": dataset, "model_condition": "well_trained" if cond == "well" else "worse",
                         "metric": "macro_f1", "participants": "none", "seed": seed,
                         "ours": macro_f1(test["label"].to_numpy(), pred), "ours_std": np.nan,
                         "paper": lut.get((dataset, "well_trained" if cond == "well" else "worse"), np.nan),
                         "accuracy": float((pred == test["label"].to_numpy()).mean()),
                         "n_test": len(test), "best_epoch": hist.get("best_epoch")})
    return pd.DataFrame(rows)


# ================================================================================================
# question selection
# ================================================================================================
def cell_name(pred: int, correct: bool, n_classes: int, class_names: Sequence[str] | None = None) -> str:
    """TP / TN / FP / FN for a binary task (positive class = 1), else ``correct:<class>`` /
    ``incorrect:<class>``."""
    if n_classes == 2:
        return ("T" if correct else "F") + ("P" if pred == 1 else "N")
    name = class_names[pred] if class_names is not None else str(pred)
    return f"{'correct' if correct else 'incorrect'}:{name}"


def _balanced(cells: Sequence[str], n_per_cell: Mapping[str, int], seed: int) -> np.ndarray:
    """Indices: up to ``n_per_cell[c]`` rows of each cell, drawn without replacement (seeded)."""
    rng = np.random.default_rng(seed)
    cells = np.asarray(cells, dtype=object)
    chosen: list[int] = []
    for c in sorted(n_per_cell):
        idx = np.flatnonzero(cells == c)
        k = min(int(n_per_cell[c]), len(idx))
        if k:
            chosen.extend(rng.choice(idx, size=k, replace=False).tolist())
    return np.sort(np.asarray(chosen, dtype=int))


def _per_cell(n_total: int, cells: Sequence[str]) -> dict[str, int]:
    base, extra = divmod(int(n_total), len(cells))
    return {c: base + (1 if i < extra else 0) for i, c in enumerate(sorted(cells))}


def _check_arrays(y_true, *arrays) -> np.ndarray:
    y = np.asarray(y_true, dtype=int)
    for a in arrays:
        if len(a) != len(y):
            raise ValueError(f"all inputs need one entry per example: got {len(y)} labels and {len(a)} entries")
    return y


def select_task1(y_true: Sequence[int], pred_well: Sequence[int], pred_worse: Sequence[int],
                 n_total: int = 100, seed: int = 42, n_classes: int | None = None) -> pd.DataFrame:
    """Task 1: rows where both models predict the same class, balanced over the cells
    (predicted class x correct): 25 each of TP/TN/FP/FN for ``n_total=100`` and two classes.

    Returns ``pos`` (row of the input arrays), ``predicted``, ``correct``, ``cell``.
    """
    y = _check_arrays(y_true, pred_well, pred_worse)
    pw, ps = np.asarray(pred_well, dtype=int), np.asarray(pred_worse, dtype=int)
    k = int(n_classes or max(y.max(), pw.max(), ps.max()) + 1)
    agree = np.flatnonzero(pw == ps)
    correct = pw[agree] == y[agree]
    cells = [cell_name(int(p), bool(c), k) for p, c in zip(pw[agree], correct)]
    all_cells = [cell_name(p, c, k) for p in range(k) for c in (True, False)]
    pick = _balanced(cells, _per_cell(n_total, all_cells), seed)
    pos = agree[pick]
    return pd.DataFrame({"pos": pos, "predicted": pw[pos], "correct": pw[pos] == y[pos],
                         "cell": [cells[i] for i in pick]})


def _select_by_confidence(y_true, proba, keep: np.ndarray, n_total: int, seed: int) -> pd.DataFrame:
    y = _check_arrays(y_true, proba)
    p = np.asarray(proba, dtype=float)
    pred = p.argmax(1)
    k = p.shape[1]
    idx = np.flatnonzero(keep)
    correct = pred[idx] == y[idx]
    cells = [cell_name(int(a), bool(c), k) for a, c in zip(pred[idx], correct)]
    half = {True: (n_total + 1) // 2, False: n_total // 2}
    n_per: dict[str, int] = {}
    for ok in (True, False):
        n_per.update(_per_cell(half[ok], [cell_name(c, ok, k) for c in range(k)]))
    pick = _balanced(cells, n_per, seed)
    pos = idx[pick]
    return pd.DataFrame({"pos": pos, "predicted": pred[pos], "correct": pred[pos] == y[pos],
                         "confidence": p[pos].max(1), "cell": [cells[i] for i in pick]})


def select_task2(y_true: Sequence[int], proba: np.ndarray, n_total: int = 100, tau: float = TAU_HIGH,
                 seed: int = 42) -> pd.DataFrame:
    """Task 2: confident predictions (``max_c p_c > tau``), half correct / half incorrect, each
    half balanced over predicted classes.  Columns as :func:`select_task1` plus ``confidence``."""
    p = np.asarray(proba, dtype=float)
    return _select_by_confidence(y_true, p, p.max(1) > tau, n_total, seed)


def select_task3(y_true: Sequence[int], proba: np.ndarray, n_total: int = 100, tau: float = TAU_LOW,
                 seed: int = 42) -> pd.DataFrame:
    """Task 3: uncertain predictions (``max_c p_c < tau``), balanced as in :func:`select_task2`."""
    p = np.asarray(proba, dtype=float)
    return _select_by_confidence(y_true, p, p.max(1) < tau, n_total, seed)


# ================================================================================================
# explanations
# ================================================================================================
def make_paper_explainer(method: str, model: Any, fit_texts: Sequence[str], seed: int = 42,
                         lime_samples: int = 1000) -> Any:
    """A fitted explainer for a paper method name (``lrp_n``, ``dt``, ...)."""
    from ..explainers.local import make_explainer

    if method not in PAPER_METHODS:
        raise KeyError(f"unknown method {method!r}; use one of {list(PAPER_METHODS)}")
    name = PAPER_METHODS[method]
    kw: dict[str, Any] = {"seed": seed}
    if name == "lime":
        kw["num_samples"] = int(lime_samples)
    exp = make_explainer(name, **kw)
    return exp.fit(model, list(fit_texts)) if name == "decision_trees" else exp.fit(model)


def explain_texts(model: Any, texts: Sequence[str], methods: Sequence[str], fit_texts: Sequence[str],
                  seed: int = 42, lime_samples: int = 1000, desc: str = "") -> dict[str, dict[str, Any]]:
    """``{method: {text: Attribution for the predicted class}}`` for the unique ``texts``."""
    uniq = list(dict.fromkeys(texts))
    out: dict[str, dict[str, Any]] = {}
    for method in progress(list(methods), desc=desc or "explainers"):
        exp = make_paper_explainer(method, model, fit_texts, seed=seed, lime_samples=lime_samples)
        attrs = exp.explain(uniq)
        out[method] = dict(zip(uniq, attrs))
    return out


def _frag_texts(frags) -> list[str]:
    return [f.text for f in frags if f.text.strip()]


# ================================================================================================
# question building
# ================================================================================================
@dataclass
class BuildReport:
    """What was generated and what had to be skipped (an explanation without evidence)."""

    skipped: list[dict[str, Any]] = field(default_factory=list)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.skipped, columns=["task", "dataset", "method", "example_id", "reason"])


def build_task1(dataset: str, pool: pd.DataFrame, sel: pd.DataFrame, expl_well: Mapping[str, Mapping[str, Any]],
                expl_worse: Mapping[str, Mapping[str, Any]], seed: int = 42, m: int = M_FRAGMENTS,
                report: BuildReport | None = None) -> list[Question]:
    """Task 1 questions: per selected example and method, the top-``m`` evidence of the two models
    (which one is shown as A is a seeded coin flip per example; ``key`` = the well-trained one)."""
    from ..explainers.local import evidence

    spec = dataset_spec(dataset)
    rng = np.random.default_rng(seed)
    flips = rng.random(len(sel)) < 0.5  # one flip per example, shared by every method
    qs: list[Question] = []
    for method in expl_well:
        for (row, flip) in zip(sel.itertuples(), flips):
            ex = pool.iloc[int(row.pos)]
            ew = _frag_texts(evidence(expl_well[method][ex.text], m))
            es = _frag_texts(evidence(expl_worse[method][ex.text], m))
            if not ew and not es:
                if report is not None:
                    report.skipped.append({"task": "task_1", "dataset": dataset, "method": method,
                                           "example_id": ex.example_id, "reason": "no evidence from either model"})
                continue
            well_is_a = bool(flip)
            qs.append(Question(
                question_id=f"{dataset}-t1-{method}-{ex.example_id.split(':')[1]}", task=1, dataset=dataset,
                method=method, model_correct=bool(row.correct), key="A" if well_is_a else "B",
                class_names=spec.class_names, predicted_class=spec.class_names[int(row.predicted)],
                evidence_a=tuple(ew if well_is_a else es), evidence_b=tuple(es if well_is_a else ew),
                meta={"example_id": ex.example_id, "true_class": spec.class_names[int(ex.label)],
                      "cell": row.cell, "seed": seed}))
    return qs


def build_task2(dataset: str, pool: pd.DataFrame, sel: pd.DataFrame, expl: Mapping[str, Mapping[str, Any]],
                proba: np.ndarray, seed: int = 42, m: int = M_FRAGMENTS,
                report: BuildReport | None = None) -> list[Question]:
    """Task 2 questions: top-``m`` evidence of the well-trained model; ``key`` = predicted class."""
    from ..explainers.local import evidence

    spec = dataset_spec(dataset)
    qs: list[Question] = []
    for method in expl:
        for row in sel.itertuples():
            ex = pool.iloc[int(row.pos)]
            ev = _frag_texts(evidence(expl[method][ex.text], m))
            if not ev:
                if report is not None:
                    report.skipped.append({"task": "task_2", "dataset": dataset, "method": method,
                                           "example_id": ex.example_id, "reason": "no evidence"})
                continue
            qs.append(Question(
                question_id=f"{dataset}-t2-{method}-{ex.example_id.split(':')[1]}", task=2, dataset=dataset,
                method=method, model_correct=bool(row.correct), key=spec.class_names[int(row.predicted)],
                class_names=spec.class_names, evidence=tuple(ev),
                meta={"example_id": ex.example_id, "true_class": spec.class_names[int(ex.label)],
                      "confidence": round(float(proba[int(row.pos)].max()), 4), "cell": row.cell, "seed": seed}))
    return qs


def build_task3(dataset: str, pool: pd.DataFrame, sel: pd.DataFrame, expl: Mapping[str, Mapping[str, Any]],
                proba: np.ndarray, seed: int = 42, m: int = M_FRAGMENTS,
                report: BuildReport | None = None) -> list[Question]:
    """Task 3 questions: top-``m`` evidence and counter-evidence, predicted class and probability
    (rounded to 2 decimals, as shown); ``key`` = the true class."""
    from ..explainers.local import counter_evidence, evidence

    spec = dataset_spec(dataset)
    qs: list[Question] = []
    for method in expl:
        for row in sel.itertuples():
            ex = pool.iloc[int(row.pos)]
            attr = expl[method][ex.text]
            ev, ce = _frag_texts(evidence(attr, m)), _frag_texts(counter_evidence(attr, m))
            if not ev:
                if report is not None:
                    report.skipped.append({"task": "task_3", "dataset": dataset, "method": method,
                                           "example_id": ex.example_id, "reason": "no evidence"})
                continue
            qs.append(Question(
                question_id=f"{dataset}-t3-{method}-{ex.example_id.split(':')[1]}", task=3, dataset=dataset,
                method=method, model_correct=bool(row.correct), key=spec.class_names[int(ex.label)],
                class_names=spec.class_names, predicted_class=spec.class_names[int(row.predicted)],
                predicted_probability=round(float(proba[int(row.pos)].max()), 2),
                evidence=tuple(ev), counter_evidence=tuple(ce),
                meta={"example_id": ex.example_id, "cell": row.cell, "seed": seed,
                      "confidence": round(float(proba[int(row.pos)].max()), 4)}))
    return qs


STUDY_INSTRUCTIONS = {
    1: ("Two robots classified the same {noun} into the same class. For each robot you see the parts "
        "of the {noun} it based its decision on (not the whole {noun}). Which robot is more reasonable?"),
    2: ("A robot classified a {noun}. You see the parts of the {noun} it based its decision on. "
        "Which class do you think the {noun} belongs to?"),
    3: ("A robot was unsure about a {noun}. You see its prediction, its probability, the parts of the "
        "{noun} that speak for the prediction and those that speak against it. What is the true class?"),
}


def make_study(dataset: str, task: int, questions: Sequence[Question], seed: int = 42) -> Study:
    """A survey study (loadable by ``python -m xaibench.survey serve``) for one dataset and task."""
    qs = [q for q in questions if q.dataset == dataset and q.task == task]
    if not qs:
        raise ValueError(f"no task-{task} questions for {dataset!r} to put in a study")
    noun = qs[0].doc_noun
    return Study(study_id=f"hg-{dataset}-task{task}", seed=int(seed), questions=list(qs),
                 title=f"Explanations of a text classifier ({dataset}, task {task})",
                 instructions=STUDY_INSTRUCTIONS[task].format(noun=noun), shuffle=True)


def studies_dir() -> Path:
    """``data/studies`` (``reports/<profile>/data/studies`` outside the full profile)."""
    return paths._profiled(paths.data_dir() / "studies")


def save_studies(questions: Sequence[Question], seed: int = 42, folder: Path | None = None) -> list[Path]:
    """One study file per (dataset, task) under :func:`studies_dir`; returns the paths."""
    folder = Path(folder) if folder is not None else studies_dir()
    out = []
    for dataset, task in sorted({(q.dataset, q.task) for q in questions}):
        study = make_study(dataset, task, questions, seed)
        out.append(save_study(study, folder / f"{study.study_id}.json"))
    return out


def load_studies(paths_: Iterable[str | Path]) -> list[Question]:
    """All questions of the given study files (validated by :func:`load_study`)."""
    qs: list[Question] = []
    for p in paths_:
        qs.extend(load_study(p).questions)
    return qs


# ================================================================================================
# simulated participants
# ================================================================================================
@dataclass(frozen=True)
class AnswerThresholds:
    """Strength (in [0, 1]) -> answer level.  ``strength < no_preference`` -> "can't say" (where
    offered), ``< confident`` -> unconfident, else confident."""

    no_preference: float = 0.1
    confident: float = 0.5

    def __post_init__(self) -> None:
        if not 0.0 <= self.no_preference <= self.confident <= 1.0:
            raise ValueError(f"need 0 <= no_preference <= confident <= 1, got {self}")


def strength_to_answer(strength: float, choice: str, allow_none: bool = True,
                       thresholds: AnswerThresholds = AnswerThresholds()) -> str:
    """Map a belief strength and the chosen option to an answer code of the 5-level scale.

    >>> strength_to_answer(0.05, "A"), strength_to_answer(0.3, "A"), strength_to_answer(0.7, "A")
    ('none', 'unconfident:A', 'confident:A')
    """
    if not (0.0 <= strength <= 1.0) or math.isnan(strength):
        raise ValueError(f"strength must lie in [0, 1], got {strength}")
    if strength < thresholds.no_preference and allow_none:
        return NO_PREFERENCE
    level = CONFIDENT if strength >= thresholds.confident else UNCONFIDENT
    return f"{level}:{choice}"


VISIBLE_FIELDS = {
    1: ("task", "class_names", "predicted_class", "evidence_a", "evidence_b"),
    2: ("task", "class_names", "evidence"),
    3: ("task", "class_names", "predicted_class", "predicted_probability", "evidence", "counter_evidence"),
}


def visible_fields(question: Question) -> dict[str, Any]:
    """What a participant sees of ``question`` (never ``key``, ``model_correct``, ``meta``, method)."""
    return {f: getattr(question, f) for f in VISIBLE_FIELDS[question.task]}


def _logit(p: float, eps: float = 1e-4) -> float:
    p = min(max(float(p), eps), 1.0 - eps)
    return math.log(p / (1.0 - p))


class SimulatedReader:
    """A simulated participant: a text classifier that reads only the visible fields of a question.

    ``model`` is any :class:`~xaibench.models.base.Classifier` over the dataset's classes (index
    ``i`` = ``class_names[i]``); the default is a bag-of-n-grams logistic regression
    (:func:`train_readers`).  Fragments are joined with spaces and read as one document.
    """

    def __init__(self, model: Any, class_names: Sequence[str], participant_id: str,
                 thresholds: AnswerThresholds = AnswerThresholds()):
        if getattr(model, "n_classes", len(class_names)) != len(class_names):
            raise ValueError(f"reader model has {model.n_classes} classes but {len(class_names)} class names")
        self.model, self.class_names = model, tuple(class_names)
        self.participant_id, self.thresholds = participant_id, thresholds
        self._memo: dict[str, np.ndarray] = {}

    def belief(self, fragments: Sequence[str]) -> np.ndarray:
        """The reader's class probabilities given only ``fragments`` (no text: its prior)."""
        text = " ".join(fragments)
        if text not in self._memo:
            self._memo[text] = np.asarray(self.model.predict_proba([text])[0], dtype=float)
        return self._memo[text]

    def prefetch(self, texts: Sequence[str]) -> None:
        """Score many fragment-joins in one batch (speed only; same answers)."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if todo:
            for t, p in zip(todo, self.model.predict_proba(todo)):
                self._memo[t] = np.asarray(p, dtype=float)

    def _cls(self, name: str) -> int:
        return self.class_names.index(name)

    def answer(self, question: Question) -> str:
        """Answer code for ``question``, computed from :func:`visible_fields` only."""
        v = visible_fields(question)
        if tuple(v["class_names"]) and tuple(v["class_names"]) != self.class_names:
            raise ValueError(f"question {question.question_id!r} has classes {v['class_names']} but the reader "
                             f"knows {self.class_names}")
        th = self.thresholds
        if v["task"] == 1:
            c = self._cls(v["predicted_class"])
            ba, bb = self.belief(v["evidence_a"])[c], self.belief(v["evidence_b"])[c]
            return strength_to_answer(min(1.0, abs(ba - bb)), "A" if ba >= bb else "B", True, th)
        if v["task"] == 2:
            q = self.belief(v["evidence"])
            order = np.argsort(-q, kind="stable")
            margin = float(q[order[0]] - q[order[1]])
            return strength_to_answer(min(1.0, margin), self.class_names[order[0]], True, th)
        c = self._cls(v["predicted_class"])
        prior = self.belief([])
        pe, pce = self.belief(v["evidence"]), self.belief(v["counter_evidence"])
        k = len(self.class_names)
        p_shown = min(max(float(v["predicted_probability"]), 1e-4), 1 - 1e-4)
        # odds of the predicted class against one alternative, the rest of the mass split evenly
        # (= logit(p) for two classes), then the reader's likelihood ratios for the fragments
        z = (math.log(p_shown * (k - 1) / (1.0 - p_shown)) + (_logit(pe[c]) - _logit(prior[c]))
             + (_logit(pce[c]) - _logit(prior[c])))
        b = 1.0 / (1.0 + math.exp(-z))
        if b >= 0.5:
            choice = c
        else:  # the other class the counter-evidence (then the evidence) points to most
            others = [k for k in range(len(self.class_names)) if k != c]
            score = pce[others] - prior[others] if v["counter_evidence"] else pe[others] - prior[others]
            choice = others[int(np.argmax(score))]
        return strength_to_answer(min(1.0, abs(2 * b - 1)), self.class_names[choice], False, th)


def train_readers(texts: Sequence[str], labels: Sequence[int], class_names: Sequence[str], n_readers: int = 5,
                  seed: int = 42, thresholds: AnswerThresholds = AnswerThresholds(), C: float = 10.0,
                  ngram_max: int = 2, prefix: str = "sim") -> list[SimulatedReader]:
    """``n_readers`` simulated participants, each a logistic regression on uni+bi-gram tf-idf
    trained on its own bootstrap resample (seed ``seed + i``) of ``texts``."""
    from ..models.logreg import LogRegClassifier

    if n_readers < 1:
        raise ValueError(f"n_readers must be >= 1, got {n_readers}")
    texts = list(texts)
    y = np.asarray(labels, dtype=int)
    if len(texts) != len(y):
        raise ValueError(f"got {len(texts)} texts but {len(y)} labels")
    readers = []
    for i in range(n_readers):
        rng = np.random.default_rng(seed + i)
        idx = rng.integers(0, len(texts), size=len(texts))
        while len(np.unique(y[idx])) < len(class_names):  # a resample must contain every class
            idx = rng.integers(0, len(texts), size=len(texts))
        model = LogRegClassifier(n_classes=len(class_names), seed=seed + i, cache=False, features="bow",
                                 C=C, ngram_max=ngram_max)
        model.fit([texts[j] for j in idx], y[idx])
        readers.append(SimulatedReader(model, class_names, f"{prefix}-{seed + i}", thresholds))
    return readers


def simulate_answers(readers: Sequence[SimulatedReader], questions: Sequence[Question]) -> pd.DataFrame:
    """Every reader answers every question it knows the classes of.  Returns ``participant_id,
    question_id, answer, participants`` (``participants`` = ``"simulated"``)."""
    rows = []
    for r in readers:
        mine = [q for q in questions if tuple(q.class_names) == r.class_names]
        joins = {" ".join(f) for q in mine for f in (q.evidence, q.counter_evidence, q.evidence_a, q.evidence_b)}
        r.prefetch(sorted(joins | {""}))
        rows.extend({"participant_id": r.participant_id, "question_id": q.question_id, "answer": r.answer(q),
                     "participants": PARTICIPANTS} for q in mine)
    return pd.DataFrame(rows, columns=["participant_id", "question_id", "answer", "participants"])


def participant_score_table(questions: Sequence[Question], answers: pd.DataFrame,
                            participants: str = PARTICIPANTS) -> pd.DataFrame:
    """The paper's score tables (task x dataset x method x subset) from several participants.

    ``ours`` = mean over participants of each participant's mean score, ``ours_std`` = sample std
    of those per-participant means (NaN for one participant); ``paper`` = the human number.
    """
    from .human_grounded import _paper_lookup

    if "participant_id" not in answers.columns:
        raise ValueError("answers need a participant_id column (one row per participant and question)")
    scored = score_answers(questions, answers)
    rows = []
    for (task, dataset, method, subset), sub in iter_subsets(scored):
            per = sub.groupby("participant_id")["score"].mean()
            rows.append({"task": task, "dataset": dataset, "method": method, "subset": subset,
                         "participants": participants, "ours": float(per.mean()),
                         "ours_std": float(per.std(ddof=1)) if len(per) > 1 else np.nan,
                         "n_participants": int(len(per)), "n_questions": int(sub["question_id"].nunique())})
    cols = ["task", "dataset", "method", "subset", "participants", "ours", "ours_std", "paper",
            "n_participants", "n_questions"]
    if not rows:
        return pd.DataFrame(columns=cols)
    table = pd.DataFrame(rows)
    table["paper"] = _paper_lookup(table)
    order = {m: i for i, m in enumerate(PAPER_METHODS)}
    table["_o"] = table["method"].map(order).fillna(len(order))
    table = table.sort_values(["task", "dataset", "_o", "subset"], kind="stable").drop(columns="_o")
    return table[cols].reset_index(drop=True)


def rank_agreement(table: pd.DataFrame, by: Sequence[str] = ("task", "dataset", "subset")) -> pd.DataFrame:
    """Spearman rho and Kendall tau between ``ours`` and ``paper`` over the methods, per group."""
    from scipy.stats import kendalltau, spearmanr

    rows = []
    for key, g in table.dropna(subset=["ours", "paper"]).groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row["n_methods"] = len(g)
        if len(g) >= 3 and g["ours"].nunique() > 1 and g["paper"].nunique() > 1:
            row["spearman"] = float(spearmanr(g["ours"], g["paper"]).statistic)
            row["kendall"] = float(kendalltau(g["ours"], g["paper"]).statistic)
        else:
            row["spearman"] = row["kendall"] = np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def answer_distribution(questions: Sequence[Question], answers: pd.DataFrame) -> pd.DataFrame:
    """Share of each score level (-1 .. +1) per task and dataset (a check on the thresholds)."""
    scored = score_answers(questions, answers)
    out = (scored.groupby(["task", "dataset"])["score"].value_counts(normalize=True)
           .rename("share").reset_index())
    return out.sort_values(["task", "dataset", "score"]).reset_index(drop=True)


__all__ = [
    "TAU_HIGH", "TAU_LOW", "M_FRAGMENTS", "PAPER_METHODS", "PAPER_LABELS", "PARTICIPANTS", "DatasetSpec",
    "DATASETS", "RECIPES", "dataset_spec", "split_frame", "cut_to_window", "make_splits", "split_summary", "model_folder",
    "get_models", "model_table", "cell_name", "select_task1", "select_task2", "select_task3",
    "make_paper_explainer", "explain_texts", "BuildReport", "build_task1", "build_task2", "build_task3",
    "make_study", "studies_dir", "save_studies", "load_studies", "AnswerThresholds", "strength_to_answer",
    "visible_fields", "SimulatedReader", "train_readers", "simulate_answers", "participant_score_table",
    "rank_agreement", "answer_distribution",
]
