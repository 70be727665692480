"""Descriptive statistics of the text datasets (sizes, label balance, token lengths).

Token lengths use :func:`xaibench.text.word_tokenize` (words and punctuation marks),
the tokenizer of the non-transformer models, so they are comparable across datasets but not to
sub-word counts.
"""
from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from ..text import word_tokenize
from .loaders import TEXT_DATASETS, dataset_info, load

__all__ = ["token_lengths", "dataset_summary", "dataset_summary_table", "plot_token_lengths",
           "SUMMARY_STATISTICS"]

#: numeric statistics of :func:`dataset_summary`, in the order of the tidy table
SUMMARY_STATISTICS = (
    "n", "n_classes", "majority_share", "minority_share",
    "tokens_mean", "tokens_std", "tokens_median", "tokens_p90", "tokens_max",
)


def token_lengths(texts: Iterable[str]) -> np.ndarray:
    """Number of :func:`word_tokenize` tokens of each text (int64 array)."""
    # lower-casing does not change the count and costs ~25 % of the time
    return np.fromiter((len(word_tokenize(t, lower=False)) for t in texts), dtype=np.int64)


_SPLIT_ORDER = {"train": 0, "dev": 1, "test": 2, "all": 3}


def _by_split(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """``(split, rows)`` pairs in the order train, dev, test, all, then others alphabetically."""
    groups = [(str(k), g) for k, g in df.groupby("split", sort=False)]
    return sorted(groups, key=lambda kg: (_SPLIT_ORDER.get(kg[0], 99), kg[0]))


def _split_rows(name: str, df: pd.DataFrame, token_sample: int | None = None, seed: int = 0) -> list[dict]:
    n_classes = len(dataset_info(name).label_names)
    rows = []
    for split, part in _by_split(df):
        texts = part["text"]
        if token_sample is not None and len(texts) > token_sample:
            texts = texts.sample(n=token_sample, random_state=seed)
        lens = token_lengths(texts)
        counts = part["label"].value_counts()
        shares = counts / len(part)
        rows.append({
            "dataset": name,
            "split": str(split),
            "n": int(len(part)),
            "n_classes": n_classes,
            "label_counts": " ".join(f"{int(k)}:{int(v)}" for k, v in counts.sort_index().items()),
            "majority_share": float(shares.max()),
            # a class absent from the split has share 0
            "minority_share": float(shares.min()) if len(counts) == n_classes else 0.0,
            "tokens_mean": float(lens.mean()),
            "tokens_std": float(lens.std(ddof=1)) if len(lens) > 1 else float("nan"),
            "tokens_median": float(np.median(lens)),
            "tokens_p90": float(np.percentile(lens, 90)),
            "tokens_max": int(lens.max()),
        })
    return rows


def dataset_summary(names: Iterable[str] | None = None,
                    frames: Mapping[str, pd.DataFrame] | None = None,
                    token_sample: int | None = None, seed: int = 0) -> pd.DataFrame:
    """One row per (dataset, split): size, label balance and token-length statistics.

    ``names`` defaults to the eight non-CEBaB datasets (:data:`TEXT_DATASETS`).  ``frames`` may
    supply already loaded frames (``{name: load(name)}``) to avoid reloading.  ``token_sample``: the
    token-length statistics of a split larger than that come from a seeded random sample of that many
    texts (a smoke run; tokenising all 220k texts takes ~12 s); sizes and label shares always count every row.
    Columns: ``dataset, split, n, n_classes, label_counts`` (``"label:count ..."``),
    ``majority_share, minority_share`` (largest/smallest class share), and ``tokens_mean,
    tokens_std, tokens_median, tokens_p90, tokens_max``.
    """
    names = list(TEXT_DATASETS if names is None else names)
    if "cebab" in names:
        raise ValueError("dataset_summary covers the plain text datasets; CEBaB has its own statistics "
                         "(xaibench.data.cebab)")
    rows: list[dict] = []
    for name in names:
        df = frames[name] if frames is not None and name in frames else load(name)
        rows += _split_rows(name, df, token_sample, seed)
    return pd.DataFrame(rows)


def dataset_summary_table(names: Iterable[str] | None = None,
                          summary: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`dataset_summary` in the tidy table schema of :mod:`xaibench.tables`.

    Columns ``dataset, split, statistic, ours, ours_std, paper``; ``ours_std`` and ``paper`` are
    NaN (one deterministic value, and the papers print no such table for these datasets).
    Pass ``summary`` to reuse an existing :func:`dataset_summary` frame.
    """
    s = dataset_summary(names) if summary is None else summary
    long = s.melt(id_vars=["dataset", "split"], value_vars=list(SUMMARY_STATISTICS),
                  var_name="statistic", value_name="ours")
    long["ours"] = long["ours"].astype(float)
    long["ours_std"] = np.nan
    long["paper"] = np.nan
    # keep the summary's row order (datasets as given, splits train/dev/test), statistics in order
    row_order = {(d, sp): i for i, (d, sp) in enumerate(zip(s["dataset"], s["split"]))}
    long["_row"] = [row_order[(d, sp)] for d, sp in zip(long["dataset"], long["split"])]
    long["_stat"] = long["statistic"].map({k: i for i, k in enumerate(SUMMARY_STATISTICS)})
    long = long.sort_values(["_row", "_stat"], kind="stable").reset_index(drop=True)
    return long[["dataset", "split", "statistic", "ours", "ours_std", "paper"]]


def plot_token_lengths(df_dict: Mapping[str, pd.DataFrame], max_per_split: int | None = 3000,
                       seed: int = 0):
    """Box plots of token lengths (log scale) per dataset, one box per split.

    ``df_dict`` maps dataset name -> loader frame.  Splits larger than ``max_per_split`` are
    subsampled (seeded) to keep plotting fast; ``None`` uses every row.  Returns the Figure.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    if not df_dict:
        raise ValueError("plot_token_lengths needs at least one dataset: pass {name: frame}")
    parts = []
    for name, df in df_dict.items():
        for split, part in _by_split(df):
            if max_per_split is not None and len(part) > max_per_split:
                part = part.sample(n=max_per_split, random_state=seed)
            parts.append(pd.DataFrame({"dataset": name, "split": str(split),
                                       "tokens": np.maximum(token_lengths(part["text"]), 1)}))
    long = pd.concat(parts, ignore_index=True)
    fig, ax = plt.subplots(figsize=(8, 0.55 * len(df_dict) + 1.5))
    hue_order = sorted(long["split"].unique(), key=lambda k: (_SPLIT_ORDER.get(k, 99), k))
    sns.boxplot(data=long, x="tokens", y="dataset", hue="split", hue_order=hue_order, log_scale=True,
                showfliers=False, ax=ax)
    ax.set_xlabel("tokens per example (word_tokenize, log scale)")
    ax.set_ylabel("")
    ax.legend(title="split", loc="lower right", fontsize="small")
    fig.tight_layout()
    return fig
