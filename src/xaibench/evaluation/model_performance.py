"""CEBaB Table 8: classifier macro-F1, ours beside the paper."""
from __future__ import annotations

import pandas as pd

from ..data.cebab import PAPER_MODEL
from ..tables import aggregate_seeds, paper_values

def cebab_performance_table(runs: pd.DataFrame | None = None, profile: str = "full") -> pd.DataFrame:
    """Tidy Table 8: one row per (model, task, condition, split) with ours (mean, std, n_seeds) and paper.

    ``runs`` has one row per trained model (``model, task, split, seed, dev_macro_f1, test_macro_f1``),
    as returned by :func:`xaibench.models.cebab_training.collect_metrics`.
    """
    if runs is None:
        from ..models.cebab_training import collect_metrics

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
    pv = paper_values("cebab", paper_table="Table 8", metric="macro_f1")[["model", "task", "condition", "split", "value"]]
    pv = pv.rename(columns={"model": "paper_model", "value": "paper"})
    out = agg.merge(pv, on=["paper_model", "task", "condition", "split"], how="left")
    order = {"binary": 0, "ternary": 1, "5-way": 2, "absa": 3}
    out = out.sort_values(["model", "condition", "split", "task"], key=lambda s: s.map(order) if s.name == "task" else s)
    return out[cols].reset_index(drop=True)
