"""``python -m xaibench.bench make_all`` (run at the end of ``make all``): what the last full run
cost -- the wall time of every executed notebook in ``reports/full/`` (papermill's
``metadata.papermill.duration``) and of every make step that runs a module instead of a notebook
(``reports/full/steps/``, :func:`xaibench.steps.record_step`), per paper and in total, with the machine that ran it (see
:mod:`xaibench.reports`), in ``figures/tables/bench_make_all.csv``.

Each report also records the ``make`` invocation that ran it (``make_run``: its start time) and whether that
invocation started cold (``cold_start``: no trained model, stored result or computed cache of the profile).  A
report rerun on stored results costs far less than computing them, so a TOTAL row is the cost of a cold
``make all`` only when every notebook it sums ran in one invocation that started cold; its label says which
(``one cold make run`` or ``not one recorded cold run``).  Reports finalised before this was recorded leave
both columns empty, and no TOTAL that sums one of them is called one cold run."""
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
#: which paper each make step belongs to (a target that runs a module, not a notebook, and records its cost with
#: :func:`xaibench.steps.record_step`); its row's ``notebook`` is :data:`STEP_PREFIX` and the target's name
STEPS = {"attention-gap": ATTRIBUTION_GT, "attention-length": ATTRIBUTION_GT, "models-pool": CEBAB}
STEP_PREFIX = "make "
#: make steps that do ahead of time the work of some notebooks' reports (``models-pool`` trains the classifiers of the
#: notebook-02 reports), by the two-digit prefix of those notebooks.  Such a step counts only beside a report of the
#: same make run: reports run by a later make did their own work or read it from the store, so a step from an
#: earlier run would count the training twice (or count work the reports never waited for)
STEP_FEEDS = {"models-pool": "02"}


def is_step(notebook: object) -> bool:
    """Whether a row of :func:`bench_make_all` is a make step rather than a notebook."""
    return str(notebook).startswith(STEP_PREFIX)


def step_rows(folder: Path) -> list[dict]:
    """One row per step record of ``folder`` (:func:`xaibench.steps.read_steps`), as :func:`bench_make_all`
    writes a notebook's."""
    from ..steps import read_steps

    rows = []
    for rec in read_steps(folder):
        machine = rec["machine"]
        params = rec.get("parameters") or {}
        rows.append({"paper": STEPS.get(rec["step"], "other"), "notebook": STEP_PREFIX + rec["step"],
                     "parameters": json.dumps(params, sort_keys=True) if params else "",
                     "wall_seconds": round(float(rec["wall_seconds"]), 1), "started": rec.get("started", ""),
                     "make_run": rec.get("make_run", ""), "cold_start": rec.get("cold_start"),
                     **{k: machine.get(k) for k in MACHINE_KEYS}})
    return rows


def fed_steps(steps: list[dict], notebooks: list[dict]) -> list[dict]:
    """``steps`` without each step of :data:`STEP_FEEDS` whose make run ran none of the reports it feeds (named
    with the reason); a step or reports that recorded no make run are kept (nothing to tell them apart)."""
    kept = []
    for row in steps:
        prefix = STEP_FEEDS.get(row["notebook"][len(STEP_PREFIX):])
        runs = {nb["make_run"] for nb in notebooks if prefix and nb["notebook"].startswith(prefix)}
        if prefix and runs and row["make_run"] and "" not in runs and row["make_run"] not in runs:
            print(f"leaving out {row['notebook']} (make run {row['make_run']}): no notebook-{prefix} report was run by "
                  f"that make run ({', '.join(sorted(runs))} ran them, doing their own work or reading it from the "
                  f"store), so counting it would count that work twice")
            continue
        kept.append(row)
    return kept


def report_rows(folder: Path) -> list[dict]:
    """One row per finished papermill run in ``folder`` (``*.ipynb``): its paper, notebook, parameters, papermill
    wall seconds and start time, the make run that ran it (and whether that run started cold) and the machine it
    ran on (recorded at run time)."""
    import nbformat

    from ..device import machine_info

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
        run = meta.get("xaibench", {}).get("make_run") or {}
        rows.append({"paper": PAPERS.get(nb_path.name[:2], "other"), "notebook": nb_path.stem,
                     "parameters": json.dumps(params, sort_keys=True) if params else "",
                     "wall_seconds": round(float(pm["duration"]), 1), "started": pm.get("start_time", ""),
                     "make_run": run.get("id", ""), "cold_start": run.get("cold_start"),
                     **{k: machine.get(k) for k in MACHINE_KEYS}})
    if not rows:
        raise ValueError(f"none of the notebooks in {folder} holds a papermill duration")
    return rows


def executed_rows(folder: Path) -> list[dict]:
    """:func:`report_rows` of ``folder``, then its make steps that run a module (attention-gap, ...; :func:`fed_steps`
    of :func:`step_rows`)."""
    rows = report_rows(folder)
    return rows + fed_steps(step_rows(folder), rows)


def what_it_sums(part: pd.DataFrame) -> str:
    """What a TOTAL row over ``part`` adds up: ``3 notebooks, 2 make steps`` (steps only when there are some)."""
    steps = int(part["notebook"].map(is_step).sum())
    n = len(part) - steps
    return f"{n} notebook{'' if n == 1 else 's'}" + (f", {steps} make step{'' if steps == 1 else 's'}" if steps else "")


def make_run_of(part: pd.DataFrame) -> str:
    """The make run every row of ``part`` ran in, or ``mixed``."""
    return part["make_run"].iloc[0] if part["make_run"].nunique() == 1 else "mixed"


def bench_make_all(reports_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """One row per executed notebook of ``reports_dir`` (default ``reports/full``), then a TOTAL
    row per paper and one for everything.  Times are papermill's wall seconds of each run."""
    folder = Path(reports_dir) if reports_dir else paths.project_root() / "reports" / "full"
    rows = executed_rows(folder)
    df = with_notes(with_cold_times(pd.DataFrame(rows), cold_times()), notes())
    df["cold_start"] = df["cold_start"].astype("boolean")  # empty where the report did not record it

    def total(part: pd.DataFrame, paper: str) -> dict:
        same = {k: (part[k].iloc[0] if part[k].nunique(dropna=False) == 1 else "mixed") for k in MACHINE_KEYS}
        one_cold = one_cold_run(part)
        how = "one cold make run" if one_cold else "not one recorded cold run"
        return {"paper": paper, "notebook": f"TOTAL ({what_it_sums(part)}, {how})", "parameters": "",
                "wall_seconds": round(float(part["wall_seconds"].sum()), 1), "started": part["started"].min(),
                "make_run": make_run_of(part), "cold_start": one_cold, **same, "note": ""}

    totals = [total(part, paper) for paper, part in df.groupby("paper", sort=False)]
    df = pd.concat([df, pd.DataFrame(totals + [total(df, "all papers")])], ignore_index=True)
    df.insert(df.columns.get_loc("wall_seconds") + 1, "wall_minutes", (df["wall_seconds"] / 60).round(1))
    return df


#: reports rerun on the stored results of a cold make run whose papermill run of that notebook finished its work but
#: not the report (e.g. it stopped at a last cell that only reads the tables): the cold run's papermill time
COLD_TIMES = "make_all_cold_times"
COLD_COLUMNS = ["notebook", "wall_seconds", "make_run", "cpus", "cpu_model", "note"]


def cold_times(tables_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """The committed :data:`COLD_TIMES` table (empty when there is none)."""
    p = Path(tables_dir if tables_dir is not None else paths.tables_dir()) / f"{COLD_TIMES}.csv"
    return pd.read_csv(p, keep_default_na=False) if p.is_file() else pd.DataFrame(columns=COLD_COLUMNS)


def with_cold_times(df: pd.DataFrame, cold: pd.DataFrame) -> pd.DataFrame:
    """``df`` (one row per report) with the time, make run and machine of :data:`COLD_TIMES` for each report listed
    there, marked cold (column ``time_from`` says where each time comes from)."""
    df = df.assign(time_from="report")
    for r in cold.itertuples():
        at = df.index[df["notebook"] == r.notebook]
        if not len(at):
            continue
        df.loc[at, ["wall_seconds", "make_run", "cpus", "cpu_model"]] = [float(r.wall_seconds), r.make_run,
                                                                        int(r.cpus), r.cpu_model]
        df.loc[at, "cold_start"] = True
        df.loc[at, "time_from"] = f"{COLD_TIMES}: {r.note}"
    return df


#: what a reader should know about how a row's time was taken (e.g. another job shared the cores): one note per
#: notebook or make step, shown beside its time in docs/timings.md and counted in the README's row of its paper
NOTES = "make_all_notes"
NOTE_COLUMNS = ["notebook", "note"]


def notes(tables_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """The committed :data:`NOTES` table (empty when there is none)."""
    p = Path(tables_dir if tables_dir is not None else paths.tables_dir()) / f"{NOTES}.csv"
    df = pd.read_csv(p, keep_default_na=False) if p.is_file() else pd.DataFrame(columns=NOTE_COLUMNS)
    missing = [c for c in NOTE_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{p}: columns {missing} missing; a note table has columns {NOTE_COLUMNS}")
    return df


def with_notes(df: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """``df`` with a ``note`` column: each row's note from ``table`` (empty where it has none)."""
    by_name = dict(zip(table["notebook"], table["note"]))
    return df.assign(note=[str(by_name.get(n, "")) for n in df["notebook"]])


def one_cold_run(rows: pd.DataFrame) -> bool:
    """Whether every row (notebook) of ``rows`` ran in one ``make`` invocation that started cold."""
    return bool(len(rows) and rows["make_run"].nunique() == 1 and rows["make_run"].iloc[0] != ""
                and rows["cold_start"].fillna(False).all())
