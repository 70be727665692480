"""CEBaB tables beside the paper's printed numbers: dataset statistics (Tables 3a-d, 5a-c, 7; notebook 01)
and classifier macro-F1 (Table 8; notebook 03)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...data.cebab import (COMBINED_SPLITS, PAPER_MODEL, PAPER_DIRECTIONS, aspect_label_counts, edit_pair_counts, edit_pairs,
                          empirical_ate, load_cebab, metadata_counts, review_rating_counts)
from ...tables import aggregate_seeds, join_paper

_TABLE_KEYS = ["table", "aspect", "direction", "group", "label", "metric"]


def _join_paper(ours: pd.DataFrame, paper_table: str, on: list[str]) -> pd.DataFrame:
    """:func:`xaibench.tables.join_paper` on one of the paper's tables (each row matches at most one)."""
    return join_paper(ours, "cebab", on, validate="one_to_one", paper_table=paper_table)


def dataset_stats_table(df: pd.DataFrame | None = None) -> pd.DataFrame:
    """Our CEBaB statistics beside the paper's printed numbers (Tables 3a-d, 5a-c, 7).

    Tidy columns ``table, aspect, direction, group, label, metric, ours, ours_std, paper, n``
    (keys empty where they do not apply; ``ours_std`` is NaN -- these are counts or single
    means; ``n`` is the number of pairs behind an ATE, ``''`` on other rows).  Conventions: all statistics over
    ``COMBINED_SPLITS``; Table 3c ``ours`` is the number of *unordered* edit pairs (each pair
    counted once); ATE rows are the paper's three printed directions.
    """
    df = load_cebab() if df is None else df
    frames = []

    a = aspect_label_counts(df)
    t3a = pd.concat([
        a.assign(metric="count", ours=a["count"].astype(float)),
        a[a["label"] != "total"].assign(metric="proportion", ours=lambda x: x["proportion"]),
    ])
    t3a = t3a.assign(table="Table 3a", direction="", group="aspect_label")
    frames.append(_join_paper(t3a[_TABLE_KEYS + ["ours"]], "Table 3a", ["aspect", "label", "metric"]))

    r = review_rating_counts(df)
    t3b = pd.concat([r.assign(metric="count", ours=r["count"].astype(float)),
                     r.assign(metric="proportion", ours=r["proportion"])])
    t3b = t3b.assign(table="Table 3b", aspect="", direction="", group="review_rating")
    frames.append(_join_paper(t3b[_TABLE_KEYS + ["ours"]], "Table 3b", ["label", "metric"]))

    pairs = edit_pairs(list(COMBINED_SPLITS), df=df)
    c = edit_pair_counts(pairs)
    c3 = (c.groupby(["aspect", "pair_type"], sort=False)["n"].sum() / 2).reset_index()
    t3c = c3.rename(columns={"pair_type": "direction", "n": "ours"}).assign(
        table="Table 3c", group="", label="", metric="edit_pair_count")
    frames.append(_join_paper(t3c[_TABLE_KEYS + ["ours"]], "Table 3c", ["aspect", "direction", "metric"]))

    for task, tname in (("5-way", "Table 3d"), ("binary", "Table 7")):
        e = empirical_ate(pairs, task=task)
        e = e[e["direction"].isin(PAPER_DIRECTIONS)]
        t = e.rename(columns={"ate": "ours"}).assign(table=tname, group="", label="", metric="ate")
        j = _join_paper(t[_TABLE_KEYS + ["ours", "n"]], tname, ["aspect", "direction", "metric"])
        frames.append(j)

    for field, tname, group in (("cuisine", "Table 5a", "cuisine"), ("region", "Table 5b", "us_region"),
                                ("star_rating", "Table 5c", "star_rating")):
        m = metadata_counts(field, df)
        t = m.rename(columns={"count": "ours"}).assign(table=tname, aspect="", direction="", group=group,
                                                       metric="count")
        t["ours"] = t["ours"].astype(float)
        j = _join_paper(t[_TABLE_KEYS + ["ours"]], tname, ["group", "label", "metric"])
        frames.append(j)

    out = pd.concat(frames, ignore_index=True)
    out["ours_std"] = np.nan
    out["paper"] = pd.to_numeric(out["paper"], errors="coerce")
    if "n" not in out.columns:  # pragma: no cover
        out["n"] = np.nan
    # object column: an int where an ATE has a pair count, '' elsewhere (renders cleanly in Markdown)
    out["n"] = [int(v) if pd.notna(v) else "" for v in out["n"]]
    for k in _TABLE_KEYS:
        out[k] = out[k].fillna("").astype(str)
    return out[_TABLE_KEYS + ["ours", "ours_std", "paper", "n"]]

__all__ = ["dataset_stats_table"]


def cebab_performance_table(runs: pd.DataFrame | None = None, profile: str = "full") -> pd.DataFrame:
    """Tidy Table 8: one row per (model, task, condition, split) with ours (mean, std, n_seeds) and paper.

    ``runs`` has one row per trained model (``model, task, split, seed, dev_macro_f1, test_macro_f1``),
    as returned by :func:`xaibench.models.cebab_training.collect_metrics`.
    """
    if runs is None:
        from ...models.cebab_training import collect_metrics

        runs = collect_metrics(profile=profile)
    cols = ["model", "paper_model", "task", "condition", "split", "ours", "ours_std", "paper", "n_seeds"]
    if runs is None or len(runs) == 0:
        return pd.DataFrame(columns=cols)
    long = runs.melt(id_vars=["model", "task", "split", "seed"], value_vars=["dev_macro_f1", "test_macro_f1"],
                     var_name="eval_split", value_name="value")
    long["eval_split"] = long["eval_split"].str.replace("_macro_f1", "", regex=False)
    long = long.rename(columns={"split": "condition"})
    agg = aggregate_seeds(long, ["model", "task", "condition", "eval_split"]).rename(columns={"eval_split": "split"})
    agg["paper_model"] = agg["model"].map(PAPER_MODEL)
    out = join_paper(agg, "cebab", {"paper_model": "model", "task": "task", "condition": "condition", "split": "split"},
                     paper_table="Table 8", metric="macro_f1")
    order = {"binary": 0, "ternary": 1, "5-way": 2, "absa": 3}
    out = out.sort_values(["model", "condition", "split", "task"], key=lambda s: s.map(order) if s.name == "task" else s)
    return out[cols].reset_index(drop=True)
