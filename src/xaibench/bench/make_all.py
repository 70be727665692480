"""``python -m xaibench.bench make_all`` (run at the end of ``make all``): what the last full run
cost -- the wall time of every executed notebook in ``reports/full/`` (papermill's
``metadata.papermill.duration``), per paper and in total, with the machine that ran it (see
:mod:`xaibench.reports`), in ``figures/tables/bench_make_all.csv``."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from .. import paths
from .common import MACHINE_KEYS

# which paper each notebook (by its two-digit prefix) belongs to (the scorecard spans them all); a new paper
# adds its notebooks here
CEBAB, HUMAN = "CEBaB (Abraham et al. 2022)", "Human-grounded (Lertvittayakumjorn & Toni 2019)"
CF_FEEDBACK = "Counterfactuals of counterfactuals (Filandrianos et al. 2023)"
FAITHFULNESS = "Counterfactual evaluation (Ge et al.)"
ATTRIBUTION_GT = "Attribution ground truth (Zhou et al. 2022)"
SCORECARD = "Scorecard (every protocol)"
PAPERS = {"30": SCORECARD, "01": CEBAB, "02": CEBAB, "03": CEBAB, "10": CEBAB, "20": CEBAB, "11": HUMAN, "21": HUMAN,
          "12": CF_FEEDBACK, "22": CF_FEEDBACK, "23": FAITHFULNESS,
          "13": ATTRIBUTION_GT, "24": ATTRIBUTION_GT, "25": ATTRIBUTION_GT}


def bench_make_all(reports_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """One row per executed notebook of ``reports_dir`` (default ``reports/full``), then a TOTAL
    row per paper and one for everything.  Times are papermill's wall seconds of each run."""
    import nbformat

    from ..device import machine_info

    folder = Path(reports_dir) if reports_dir else paths.project_root() / "reports" / "full"
    notebooks = sorted(folder.glob("*.ipynb"))
    notebooks = [p for p in notebooks if not p.name.endswith(".tmp.ipynb")]
    if not notebooks:
        raise FileNotFoundError(f"no executed notebooks in {folder}: run `make all` first")
    here = machine_info()
    rows = []
    for nb_path in notebooks:
        meta = nbformat.read(nb_path, as_version=4).metadata
        pm = meta.get("papermill", {})
        if pm.get("duration") is None or pm.get("exception"):
            print(f"skipping {nb_path.name}: no papermill duration (not a finished papermill run)")
            continue
        machine = dict(meta.get("xaibench", {}).get("machine") or here)  # recorded at run time
        params = {k: v for k, v in (pm.get("parameters") or {}).items() if k != "profile"}
        rows.append({"paper": PAPERS.get(nb_path.name[:2], "other"), "notebook": nb_path.stem,
                     "parameters": json.dumps(params, sort_keys=True) if params else "",
                     "wall_seconds": round(float(pm["duration"]), 1), "started": pm.get("start_time", ""),
                     **{k: machine.get(k) for k in MACHINE_KEYS}})
    if not rows:
        raise ValueError(f"none of the notebooks in {folder} holds a papermill duration")
    df = pd.DataFrame(rows)

    def total(part: pd.DataFrame, paper: str) -> dict:
        same = {k: (part[k].iloc[0] if part[k].nunique(dropna=False) == 1 else "mixed") for k in MACHINE_KEYS}
        n = len(part)
        return {"paper": paper, "notebook": f"TOTAL ({n} notebook{'' if n == 1 else 's'})", "parameters": "",
                "wall_seconds": round(float(part["wall_seconds"].sum()), 1), "started": part["started"].min(),
                **same}

    totals = [total(part, paper) for paper, part in df.groupby("paper", sort=False)]
    df = pd.concat([df, pd.DataFrame(totals + [total(df, "all papers")])], ignore_index=True)
    df.insert(df.columns.get_loc("wall_seconds") + 1, "wall_minutes", (df["wall_seconds"] / 60).round(1))
    return df
