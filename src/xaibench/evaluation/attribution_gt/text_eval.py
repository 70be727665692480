"""Text experiments of Zhou et al. (2022): attention, post-hoc explainers and rationales scored
against the article effective region.

* :func:`attention_attr` -- Attr% of the attention weights on correlating articles,
  non-correlating articles and other words (mean over test reviews; Sec. 6, Fig. 1 left).
* :func:`explainer_attr` -- the same three shares for any project local explainer applied to the
  attention model (|scores| normalised per review).
* :func:`rationale_scores` -- precision / recall of the selected tokens against the correlating
  articles, the share of non-correlating articles among the selection, and the selection rate
  (Sec. 7, Figs. 12-13), plus the paper's "dataset-wide optimal" precision.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from .metrics import attr_pct, precision_recall
from .text_data import ArticleSplit


def _shares(scores: np.ndarray, corr: np.ndarray, noncorr: np.ndarray) -> dict[str, float]:
    c = attr_pct(scores, corr)
    nc = attr_pct(scores, noncorr, allow_empty=True)  # no non-correlating articles in the `article` data
    return {"corr": c, "noncorr": nc, "other": 1.0 - c - nc}


def _aligned(scores: Sequence[float], mask: np.ndarray, what: str) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64)
    if len(s) != len(mask):
        raise ValueError(f"{what}: {len(s)} scores for a review of {len(mask)} tokens; the model's "
                         "tokenizer must split the pre-tokenised text on spaces")
    return s


def shares_table(all_scores: Sequence[Sequence[float]], split: ArticleSplit, idx: Sequence[int] | None = None,
                 what: str = "scores") -> pd.DataFrame:
    """Per-review shares of |scores| on corr / noncorr / other tokens."""
    idx = range(len(split)) if idx is None else idx
    rows = []
    for k, i in enumerate(idx):
        s = _aligned(all_scores[k], split.corr[i], what)
        rows.append({"review": i, **_shares(s, split.corr[i], split.noncorr[i]),
                     "share_corr_tokens": split.corr[i].mean(), "share_noncorr_tokens": split.noncorr[i].mean()})
    return pd.DataFrame(rows)


def attention_attr(model: Any, split: ArticleSplit, max_reviews: int | None = None) -> pd.DataFrame:
    idx = list(range(len(split) if max_reviews is None else min(max_reviews, len(split))))
    att = model.attention_weights([split.texts[i] for i in idx])
    return shares_table(att, split, idx, "attention")


def explainer_attr(explainer: Any, split: ArticleSplit, idx: Sequence[int]) -> pd.DataFrame:
    """Fit-free local explainer (already ``fit(model)``) -> per-review shares of |relevance|."""
    attrs = explainer.explain([split.texts[i] for i in idx])
    return shares_table([a.scores for a in attrs], split, idx, getattr(explainer, "name", "explainer"))


def summarise_shares(df: pd.DataFrame) -> dict[str, float]:
    from ...checks import check_columns

    if isinstance(df, pd.DataFrame) and not len(df):
        raise ValueError("df has no reviews: score at least one review (n_explain / max_reviews >= 1)")
    check_columns(df, ("corr", "noncorr", "other", "share_corr_tokens", "share_noncorr_tokens"), "df",
                  "the per-review shares of shares_table / attention_attr / explainer_attr")
    return {"corr": float(df["corr"].mean()), "noncorr": float(df["noncorr"].mean()),
            "other": float(df["other"].mean()), "share_corr_tokens": float(df["share_corr_tokens"].mean()),
            "share_noncorr_tokens": float(df["share_noncorr_tokens"].mean())}


def rationale_scores(selections: Sequence[np.ndarray], split: ArticleSplit) -> dict[str, float]:
    """Dataset-level (micro) precision/recall of the selection against the correlating articles,
    the share of non-correlating articles in the selection, the actual selection rate, and the
    dataset-wide optimal precision/recall at that rate (select correlating articles first)."""
    sel_all = np.concatenate([_aligned(s, split.corr[i], "rationale").astype(bool) for i, s in enumerate(selections)])
    corr_all = np.concatenate(split.corr[: len(selections)])
    nc_all = np.concatenate(split.noncorr[: len(selections)])
    prec, rec = precision_recall(sel_all, corr_all)
    rate = float(sel_all.mean())
    n_sel, n_corr = sel_all.sum(), corr_all.sum()
    return {"precision": prec, "recall": rec, "rate": rate,
            "noncorr_share_of_selection": float((sel_all & nc_all).sum() / n_sel) if n_sel else float("nan"),
            "optimal_precision": float(min(1.0, n_corr / n_sel)) if n_sel else float("nan"),
            "optimal_recall": float(min(1.0, n_sel / n_corr)) if n_corr else float("nan")}
