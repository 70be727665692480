"""Training and evaluating the CEBaB sentiment and ABSA classifiers (notebook 02).

Epoch schedule.  CEBaB (App. C.1) trains for at least 5 epochs on the largest training set
(train_inclusive, 11,728 texts) and scales epochs linearly by training-set size, i.e. about
33 epochs on train_exclusive.  That is too slow on 2 CPU cores, so we keep the paper's rule but
scale the whole epoch budget by :data:`EPOCH_BUDGET_SCALE` (1/8): 4 epochs on train_exclusive, 1 on
train_inclusive, capped by the profile and cut short by early stopping on dev macro-F1.
The ABSA model gets at least :data:`ABSA_MIN_EPOCHS` (3): the rule's single epoch left it at
macro-F1 0.71 (paper 0.88), and Approx and S-Learner depend on its predicted aspect labels.
The LSTM is cheap and keeps the paper's schedule (:func:`lstm_epochs`), with early stopping
(patience 3).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..config import Profile, get_profile
from ..data.cebab import ABSA_LABELS, NUM_CLASSES
from ..io import discard_damaged, write_json
from ..store import canonical
from .registry import load_model
from .training import macro_f1
from .zoo import build, check_model, model_dir, slug

LARGEST_TRAIN = 11728
PAPER_MIN_EPOCHS = 5
EPOCH_BUDGET_SCALE = 1 / 8
LSTM_MAX_EPOCHS = 40
ABSA_MIN_EPOCHS = 3
LSTM_PATIENCE = 3
#: classes per trainable task: the review-sentiment tasks plus the ABSA model
TASK_CLASSES = {**NUM_CLASSES, "absa": len(ABSA_LABELS)}


def paper_epochs(n_train: int) -> float:
    """Epochs the paper's linear scaling gives for a training set of ``n_train`` texts."""
    return PAPER_MIN_EPOCHS * LARGEST_TRAIN / max(1, n_train)


def lstm_epochs(n_train: int) -> int:
    """The LSTM is cheap, so it keeps the paper's schedule: ``paper_epochs(n)`` rounded (about 40
    on train_exclusive, 6 on train_inclusive), at most :data:`LSTM_MAX_EPOCHS`; early stopping
    (patience :data:`LSTM_PATIENCE`) usually ends it much earlier."""
    return int(np.clip(round(paper_epochs(n_train)), 1, LSTM_MAX_EPOCHS))


def scheduled_epochs(n_train: int, profile: Profile, task: str = "") -> int:
    """Transformer epochs: the paper's rule times :data:`EPOCH_BUDGET_SCALE`, at least
    :data:`ABSA_MIN_EPOCHS` for the ABSA task, at most ``profile.max_epochs``."""
    epochs = round(paper_epochs(n_train) * EPOCH_BUDGET_SCALE)
    if task == "absa":
        epochs = max(epochs, ABSA_MIN_EPOCHS)
    return int(np.clip(epochs, 1, profile.max_epochs))


@dataclass
class TrainedModel:
    model: Any  # Classifier or AspectSentimentModel
    metrics: dict[str, Any]
    folder: Any


def task_frames(task: str, split: str, profile: Profile) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    from ..data import cebab

    if task == "absa":
        get = cebab.absa_frame
        tr, dev, te = get(f"train_{split}"), get("dev"), get("test")
    else:
        tr = cebab.task_frame(f"train_{split}", task)
        dev, te = cebab.task_frame("dev", task), cebab.task_frame("test", task)
    if profile.max_train:
        tr = tr.sample(n=min(len(tr), profile.max_train), random_state=0)
    if profile.max_eval:
        dev = dev.sample(n=min(len(dev), profile.max_eval), random_state=0)
        te = te.sample(n=min(len(te), profile.max_eval), random_state=0)
    return tr.reset_index(drop=True), dev.reset_index(drop=True), te.reset_index(drop=True)


def train_cebab(model: str, task: str, split: str = "exclusive", seed: int = 42, profile: str | Profile = "full",
                force: bool = False, **overrides: Any) -> TrainedModel:
    """Train (or load, if already trained with the same profile) one CEBaB classifier.

    ``task`` is ``binary``/``ternary``/``5-way`` or ``absa``; ``split`` is ``exclusive`` or
    ``inclusive``.  Saves the model and ``metrics.json`` (dev/test macro-F1, epochs, seconds) under
    :func:`~xaibench.models.zoo.model_dir`.
    """
    _check_task_split(task, split)
    prof = get_profile(profile) if isinstance(profile, str) else profile
    if not force:
        stored = _load_stored(model, task, split, seed, prof, overrides)
        if stored is not None:
            return stored
    clf, metrics = _fit(model, task, split, seed, prof, overrides)
    return _store(clf, metrics)


def train_cebab_seeds(model: str, task: str, split: str = "exclusive", seeds: Sequence[int] = (42,),
                      profile: str | Profile = "full", **overrides: Any) -> list[TrainedModel]:
    """:func:`train_cebab` for every seed of ``seeds``, in order (:func:`train_cebab_cells` of one model, task
    and split).

    The seeds not yet trained are independent cells of the executor (``XAIBENCH_SCHEDULER``): with a
    parallel scheduler each worker fits one seed and returns the saved model's files and its metrics, and
    this process writes them (serially, the default, it is a plain loop).  Every seed trains exactly as alone: the
    training loop seeds itself, and the workers run with this process's ``XAIBENCH_THREADS``.
    """
    _check_task_split(task, split)
    return train_cebab_cells([(model, task, split, s) for s in seeds], profile=profile, **overrides)


#: rough minutes one seed of a MiniLM takes to train on 2 cores (``docs/timings.md``: notebook 02's reports);
#: an LSTM takes about :data:`LSTM_COST_SHARE` of that.  Only the order in which :func:`train_cebab_cells` hands
#: the cells out (longest first) reads it; every order trains the same models
CELL_MINUTES = {"absa": 8.0, "inclusive": 4.5, "exclusive": 2.5}
LSTM_COST_SHARE = 0.1


def cell_cost(model: str, task: str, split: str) -> float:
    """The rough cost of training one seed of ``(model, task, split)`` (:data:`CELL_MINUTES`)."""
    minutes = CELL_MINUTES["absa"] if task == "absa" else CELL_MINUTES[split]
    return minutes * (LSTM_COST_SHARE if model == "lstm" else 1.0)


def train_cebab_cells(cells: Sequence[tuple[str, str, str, int]], profile: str | Profile = "full", *,
                      load: bool = True, **overrides: Any) -> list[TrainedModel]:
    """:func:`train_cebab` of every ``(model, task, split, seed)`` cell, in order (each cell once);
    ``load=False``: the classifiers are trained and saved but not loaded back (model-less results, metrics only).

    The cells not yet trained -- of any models, tasks and splits together -- are the cells of one executor
    map (``XAIBENCH_SCHEDULER``), handed out longest first (:func:`cell_cost`), so the workers stay busy across
    what notebook 02 trains as separate parts (a part of one seed, the last round of five seeds); each worker
    fits one cell and returns the saved model's files and its metrics, and this process writes them into the
    cell's own folder, as :func:`train_cebab_seeds` does.  A cell trains exactly as alone (tested): the training
    loop seeds itself, and the workers run with this process's ``XAIBENCH_THREADS``.  Serially (the default),
    or with a single cell to train, it is a plain loop here."""
    import functools

    from ..executor import get_executor

    prof = get_profile(profile) if isinstance(profile, str) else profile
    cells = _unique_cells(cells)
    ex = get_executor()
    todo = untrained_cells(cells, prof, **overrides)
    if ex.parallel and len(todo) > 1:
        for m in dict.fromkeys(c[0] for c in todo):
            check_model(m)
        todo.sort(key=lambda c: -cell_cost(*c[:3]))  # longest first (ties keep the input order)
        ex.map(functools.partial(_fit_model_cell, profile=prof, overrides=overrides), todo,
               desc=" / ".join(dict.fromkeys(f"{m} {t}" for m, t, _, _ in todo)) + " seeds",
               on_result=lambda i, out: _store_files(*out))
    if not load:  # a cell trained above is stored; one not yet trained (serially) trains here
        return [_load_stored(*c, prof, overrides, load=False) or train_cebab(*c, profile=prof, **overrides)
                for c in cells]
    return [train_cebab(m, t, sp, s, profile=prof, **overrides) for m, t, sp, s in cells]


def _unique_cells(cells) -> list[tuple[str, str, str, int]]:
    """``cells`` as ``(model, task, split, seed)`` tuples, each once, in order; a bad task or split is named."""
    cells = list(dict.fromkeys((str(m), str(t), str(sp), int(s)) for m, t, sp, s in cells))
    for _, t, sp, _ in cells:
        _check_task_split(t, sp)
    return cells


def untrained_cells(cells: Sequence[tuple[str, str, str, int]], profile: str | Profile = "full",
                    **overrides: Any) -> list[tuple[str, str, str, int]]:
    """The ``(model, task, split, seed)`` cells (each once, in order) with no saved classifier trained under
    ``profile`` and ``overrides``: what :func:`train_cebab_cells` trains (only the stored metrics are read)."""
    prof = get_profile(profile) if isinstance(profile, str) else profile
    return [c for c in _unique_cells(cells) if _load_stored(*c, prof, overrides, load=False) is None]


def _check_task_split(task: str, split: str) -> None:
    if task not in TASK_CLASSES:
        raise ValueError(f"unknown task {task!r}; use one of {sorted(TASK_CLASSES)}")
    if split not in ("exclusive", "inclusive"):
        raise ValueError(f"split must be 'exclusive' or 'inclusive', got {split!r}")


def _load_stored(model: str, task: str, split: str, seed: int, prof: Profile, overrides: dict[str, Any],
                 load: bool = True) -> TrainedModel | None:
    """The saved model of this (model, task, split, seed) if it was trained under ``prof`` and
    ``overrides`` (``load=False``: only checks its metrics, returns a model-less result); else None.
    A damaged metrics or weights file is named, removed and so retrained."""
    from .absa import AspectSentimentModel

    folder = model_dir("cebab", model, task, split, seed)
    metrics_path = folder / "metrics.json"
    if not metrics_path.exists():
        return None
    try:
        metrics = json.loads(metrics_path.read_text())
        if metrics.get("profile") != prof.name or metrics.get("overrides", {}) != canonical(overrides):
            return None
        if not load:
            return TrainedModel(None, metrics, folder)
        clf = load_model(folder)
        return TrainedModel(AspectSentimentModel(clf) if task == "absa" else clf, metrics, folder)
    except Exception as err:  # noqa: BLE001 - a damaged metrics or weights file: named, removed, retrained
        discard_damaged(folder, err, "saved model")
        return None


def _fit_cell(seed: int, model: str, task: str, split: str, profile: Profile, overrides: dict[str, Any]):
    """One seed's training in an executor worker.  Returns ``(files, metrics)``: the files
    :meth:`~xaibench.models.base.Classifier.save` writes (name -> bytes; saved in a scratch folder of the
    worker, then removed), because a model's module classes are built at run time and do not pickle."""
    import tempfile

    result_model, metrics = _fit(model, task, split, seed, profile, overrides)
    with tempfile.TemporaryDirectory(prefix="xaibench-model-") as tmp:
        folder = _classifier(result_model).save(Path(tmp) / "model")
        files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    return files, metrics


def _fit_model_cell(cell: tuple[str, str, str, int], profile: Profile, overrides: dict[str, Any]):
    """:func:`_fit_cell` of one ``(model, task, split, seed)`` cell of :func:`train_cebab_cells`."""
    model, task, split, seed = cell
    return _fit_cell(seed, model=model, task=task, split=split, profile=profile, overrides=overrides)


def _store_files(files: dict[str, bytes], metrics: dict[str, Any]) -> None:
    """Write a worker's saved model (:func:`_fit_cell`) into its folder, then its ``metrics.json``."""
    from ..io import atomic_dir

    folder = model_dir("cebab", metrics["model"], metrics["task"], metrics["split"], metrics["seed"])
    with atomic_dir(folder) as tmp:
        for name, data in files.items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_bytes(data)
    write_json(folder / "metrics.json", metrics, default=str)


def _classifier(result_model: Any):
    """The saved classifier of a fitted model (the ABSA wrapper saves the classifier it wraps)."""
    from .absa import AspectSentimentModel

    return result_model.classifier if isinstance(result_model, AspectSentimentModel) else result_model


def _fit(model: str, task: str, split: str, seed: int, prof: Profile, overrides: dict[str, Any]):
    """Fit one classifier; returns the fitted (ABSA: wrapped) model and its metrics, saves nothing."""
    from .absa import AspectSentimentModel

    check_model(model)  # before loading any data: a model no run can build fails here, by name
    tr, dev, te = task_frames(task, split, prof)
    kw: dict[str, Any] = {}
    if model not in ("lstm", "logreg", "cnn"):
        kw["epochs"] = scheduled_epochs(len(tr), prof, task)
        kw["patience"] = prof.patience
    elif model == "lstm":
        kw["epochs"] = lstm_epochs(len(tr)) if prof.name != "quick" else prof.max_epochs
        kw["patience"] = LSTM_PATIENCE
    kw.update(overrides)
    clf = build(model, TASK_CLASSES[task], seed, **kw)
    t0 = time.time()
    if task == "absa":
        wrapped = AspectSentimentModel(clf)
        wrapped.fit(tr, dev)
        score = lambda f: macro_f1(f["label"], wrapped.predict_proba(f["text"], f["aspect"]).argmax(1))
        result_model: Any = wrapped
    else:
        clf.fit(tr["text"].tolist(), tr["label"].to_numpy(), dev["text"].tolist(), dev["label"].to_numpy())
        score = lambda f: macro_f1(f["label"], clf.predict(f["text"].tolist()))
        result_model = clf
    train_seconds = time.time() - t0
    metrics = {
        "model": model, "task": task, "split": split, "seed": seed, "profile": prof.name,
        "n_train": len(tr), "n_dev": len(dev), "n_test": len(te),
        "dev_macro_f1": score(dev), "test_macro_f1": score(te),
        "epochs_scheduled": kw.get("epochs"), "paper_epochs": paper_epochs(len(tr)),
        "train_seconds": train_seconds, "history": clf.history, "fingerprint": clf.fingerprint(),
        "overrides": canonical(overrides),
    }
    return result_model, metrics


def _store(result_model: Any, metrics: dict[str, Any]) -> TrainedModel:
    """Save a fitted model and its ``metrics.json`` (written last: it marks the model as trained)."""
    folder = model_dir("cebab", metrics["model"], metrics["task"], metrics["split"], metrics["seed"])
    _classifier(result_model).save(folder)
    write_json(folder / "metrics.json", metrics, default=str)
    return TrainedModel(result_model, metrics, folder)


def collect_metrics(model: str | None = None, profile: str = "full") -> pd.DataFrame:
    """All ``metrics.json`` of trained CEBaB models as a DataFrame (one row per run)."""
    from .. import paths

    root = paths.models_dir() / "cebab"
    rows = []
    pattern = f"{slug(model)}/*/seed*/metrics.json" if model else "*/*/seed*/metrics.json"
    for p in sorted(root.glob(pattern)):
        try:
            m = json.loads(p.read_text())
        except (OSError, ValueError) as err:  # damaged: named, removed (the model is retrained on next use)
            discard_damaged(p, err, "model metrics")
            continue
        if m.get("profile") != profile:
            continue
        rows.append({k: m[k] for k in ("model", "task", "split", "seed", "dev_macro_f1", "test_macro_f1",
                                       "n_train", "train_seconds", "epochs_scheduled")})
    return pd.DataFrame(rows)


def report_name(model: str, task: str, split: str) -> str:
    """The name (no suffix) of notebook 02's report of one part, as the Makefile names it."""
    return f"02_train_classifier-{model}-{task}-{split}"


def stale_parts(parts: Sequence[Sequence[str]], reports: str | Path, stamps: str | Path | None,
                prereqs: Sequence[str | Path] = ()) -> list[list[str]]:
    """The parts (``[model, task, split, seeds]``) whose report make is about to run: the report in ``reports``
    is missing, or older than its parameter stamp in ``stamps`` or than one of ``prereqs`` (make's rule for
    the report's target; a missing prerequisite counts as older).  The others' classifiers are not needed."""
    def mtime(p: Path) -> int | None:
        try:
            return p.stat().st_mtime_ns
        except FileNotFoundError:
            return None

    out = []
    for part in parts:
        name = report_name(*part[:3])
        report = mtime(Path(reports) / f"{name}.ipynb")
        needs = [Path(p) for p in prereqs] + ([Path(stamps) / f"{name}.params"] if stamps else [])
        if report is None or any((t := mtime(p)) is not None and t > report for p in needs):
            out.append(list(part))
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m xaibench.models.cebab_training --profile P --part MODEL TASK SPLIT "SEEDS" ...``: train the
    classifiers of every part (a notebook-02 report: one model, task and split, its seeds) in one executor map
    (:func:`train_cebab_cells`; ``make models-pool``), then print one line per cell.  Stored cells are kept."""
    import argparse

    from ..config import parse_seeds, use_profile

    ap = argparse.ArgumentParser(prog="python -m xaibench.models.cebab_training", description=main.__doc__)
    ap.add_argument("--profile", default="full")
    ap.add_argument("--part", nargs=4, action="append", default=[], metavar=("MODEL", "TASK", "SPLIT", "SEEDS"),
                    help='one notebook-02 report\'s classifiers, e.g. --part minilm 5-way exclusive "42 43 44"')
    ap.add_argument("--reports", metavar="DIR", help="only the parts whose report in DIR is about to run (missing, or "
                    "older than its parameter stamp in --stamps or a --prereq): make's rule for those reports")
    ap.add_argument("--stamps", metavar="DIR", help="the folder of the reports' parameter stamps (with --reports)")
    ap.add_argument("--prereq", action="append", default=[], metavar="PATH",
                    help="a prerequisite every report shares (with --reports; repeatable)")
    args = ap.parse_args(argv)
    from .. import steps

    prof = use_profile(args.profile)
    part_args = args.part
    if args.reports:
        part_args = stale_parts(part_args, args.reports, args.stamps, args.prereq)
        if not part_args:
            return
    cells = [(m, t, sp, s) for m, t, sp, seeds in part_args for s in parse_seeds(seeds)]
    parts = [f"{m} {t} {sp}: {seeds}" for m, t, sp, seeds in part_args]
    # recorded as make step models-pool (reports/full/steps/) when it trained something: the reports of notebook 02
    # then load the classifiers, so their run times leave the training out
    with steps.timed_step("models-pool", {"parts": parts}) as step:
        step.computed = len(untrained_cells(cells, prof))
        results = train_cebab_cells(cells, profile=prof, load=False)  # the reports load them
    for r in results:
        m = r.metrics
        print(f"{m['model']} {m['task']} {m['split']} seed {m['seed']}: dev macro-F1 {m['dev_macro_f1']:.3f}, "
              f"test macro-F1 {m['test_macro_f1']:.3f} ({m['train_seconds']:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
