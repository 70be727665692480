"""The paper's two datasets and their four disjoint splits.

Data
----
Each dataset is split once per seed, stratified by label, into four disjoint parts:
``train`` and ``dev`` (the CNNs), ``test`` (the pool the questions are drawn from) and ``reader``
(the simulated participants' own training data, never seen by a CNN and never asked about).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import pandas as pd

from ...text import cut_to_words


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
    return cut_to_words(text, max_words)


def make_splits(dataset: str, seed: int = 42, quick: bool = False, max_words: int = 150) -> dict[str, pd.DataFrame]:
    """The four disjoint splits of a paper dataset (see module docstring).

    Each frame has ``text``, ``label`` and ``example_id`` (``<dataset>:<row of the loader frame>``).
    ``quick`` caps every split at :data:`QUICK_SIZES` (stratified subsample, same seed).  Texts of
    the question pool (``test``) are cut to the CNN's window of ``max_words`` tokens
    (:func:`cut_to_window`).
    """
    from ...data.loaders import load

    spec = dataset_spec(dataset)
    df = load(spec.loader)
    if spec.max_label is not None:
        df = df[df["label"] < spec.max_label]
    df = df[["text", "label"]].copy()
    df["example_id"] = [f"{dataset}:{i}" for i in df.index]
    df = df.reset_index(drop=True)
    splits = split_frame(df, spec.sizes, seed)
    if quick:
        splits = {k: stratified_cap(v, QUICK_SIZES[k], seed) for k, v in splits.items()}
    test = splits["test"].copy()
    test["text"] = [cut_to_window(t, max_words) for t in test["text"]]
    splits["test"] = test
    return splits


def stratified_cap(df: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """At most ``n`` rows of ``df``, a stratified (by label) seeded subsample."""
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


def split_table(splits: Mapping[str, Mapping[str, pd.DataFrame]]) -> pd.DataFrame:
    """:func:`split_summary` of several datasets (``{dataset: splits}``) in one table: ``dataset``,
    ``split``, ``n`` and one count column per class name (0 where a dataset lacks that class)."""
    frames = [split_summary(s, dataset_spec(ds).class_names).assign(dataset=ds) for ds, s in splits.items()]
    out = pd.concat(frames)
    out = out[["dataset", "split", "n", *[c for c in out.columns if c not in ("dataset", "split", "n")]]]
    return out.fillna(0).astype({c: int for c in out.columns if c not in ("dataset", "split")})


__all__ = ["DatasetSpec", "DATASETS", "QUICK_SIZES", "dataset_spec", "split_frame", "cut_to_window",
           "make_splits", "stratified_cap", "split_summary", "split_table"]
