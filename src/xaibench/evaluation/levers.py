"""Is a result-changing speed lever admissible?  Its run's numbers and verdicts beside the float32 run's.

A run with ``XAIBENCH_LEVERS`` (:mod:`xaibench.levers`) writes its tables below
``reports/levers-<names>/figures/tables/``.  :func:`compare` reads every result table (a CSV with an ``ours``
column) that both runs wrote and, row by row, sets the lever's number beside the float32 one and beside the
seed spread: the table's ``ours_std`` where it states one, else the standard deviation over the replications of
a per-seed (or per-run) table.  :func:`verdicts` recomputes every claim of each paper the lever run touched from
its tables (:func:`xaibench.evaluation.claims_stability.cross_run`).  :func:`summary` admits a lever for a paper
only when every number with a stated spread moves by less than that spread and no verdict changes; otherwise
the row says which condition failed.

``python -m xaibench.evaluation.levers`` (``make levers``) compares every ``reports/levers-*`` run and writes
``figures/tables/levers.csv`` (one row per lever and paper), ``levers_numbers.csv`` and ``levers_verdicts.csv``.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from .. import io, paths
from . import claims as C
from . import claims_stability as S

VALUE_COLUMNS = ("ours", "ours_std", "paper")
#: the columns that number a table's replications (its spread over them is the seed spread)
REPLICATION_COLUMNS = ("seed", "run")
NUMBER_COLUMNS = ["lever", "paper", "table", "row", "ours", "ours_lever", "abs_diff", "spread", "spread_from",
                  "within_spread"]
SUMMARY_COLUMNS = ["lever", "paper", "tables", "numbers", "numbers_with_spread", "within_spread", "max_abs_diff",
                   "max_diff_over_spread", "verdicts_compared", "verdicts_changed", "admitted", "reason"]


def paper_of(table: str) -> str | None:
    """The paper a result table belongs to, from its name (``cebab_...``, ``human_grounded_...``)."""
    for paper in C.PAPERS:
        if table == paper or table.startswith(paper + "_"):
            return paper
    return None


def _keys(base: pd.DataFrame, other: pd.DataFrame) -> list[str]:
    """The columns that identify a row: those both tables hold with equal values, row for row (settings and
    labels), apart from the value columns."""
    keys = []
    for c in base.columns:
        if c in VALUE_COLUMNS or c not in other.columns:
            continue
        a, b = base[c], other[c]
        if a.dtype.kind == "f" or b.dtype.kind == "f":
            same = np.allclose(a.astype(float), b.astype(float), rtol=0, atol=0, equal_nan=True) \
                if a.dtype.kind in "fiub" and b.dtype.kind in "fiub" else False
        else:
            same = a.astype(str).tolist() == b.astype(str).tolist()
        if same:
            keys.append(c)
    return keys


def _spread(base: pd.DataFrame, keys: list[str]) -> tuple[pd.Series, str]:
    """Each row's seed spread and where it comes from."""
    if "ours_std" in base.columns and base["ours_std"].notna().any():
        return pd.to_numeric(base["ours_std"], errors="coerce"), "ours_std"
    rep = next((c for c in REPLICATION_COLUMNS if c in keys), None)
    if rep is not None:
        group = [k for k in keys if k != rep]
        if group and base[rep].nunique() >= 2:
            std = base.groupby(group, dropna=False)["ours"].transform(lambda s: s.std(ddof=1))
            return std, f"std over {rep}"
    return pd.Series(np.nan, index=base.index), ""


def compare_table(base: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame | str:
    """Row-by-row comparison of two runs' versions of one result table, or a string saying why the rows cannot
    be matched (the lever changed which rows exist)."""
    if len(base) != len(other):
        return f"{len(base)} rows in the float32 run, {len(other)} with the lever"
    base, other = base.reset_index(drop=True), other.reset_index(drop=True)
    keys = _keys(base, other)
    spread, source = _spread(base, keys)
    a = pd.to_numeric(base["ours"], errors="coerce")
    b = pd.to_numeric(other["ours"], errors="coerce")
    diff = (b - a).abs()
    labels = base[keys].astype(str).apply(lambda r: ", ".join(f"{k}={v}" for k, v in r.items()), axis=1) \
        if keys else pd.Series([str(i) for i in range(len(base))])
    out = pd.DataFrame({"row": labels, "ours": a, "ours_lever": b, "abs_diff": diff, "spread": spread,
                        "spread_from": np.where(spread.notna(), source, "")})
    # an unchanged number passes even where its spread is 0 (a number no seed moves must not move at all)
    out["within_spread"] = np.where(spread.notna() & diff.notna(), (diff < spread) | (diff == 0), np.nan)
    return out[(a.notna() | b.notna())]


def compare(base_dir: Path, lever_dir: Path, lever: str) -> tuple[pd.DataFrame, list[str]]:
    """Every result table both folders hold, compared row by row; and notes on the tables that could not be."""
    frames, notes = [], []
    for p in sorted(Path(lever_dir).glob("*.csv")):
        paper = paper_of(p.stem)
        q = Path(base_dir) / p.name
        if paper is None or p.stem.endswith("_claims") or not q.is_file():
            continue
        other, base = pd.read_csv(p), pd.read_csv(q)
        if "ours" not in base.columns or "ours" not in other.columns:
            continue
        got = compare_table(base, other)
        if isinstance(got, str):
            notes.append(f"{p.stem}: {got}")
            continue
        frames.append(got.assign(lever=lever, paper=paper, table=p.stem))
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=NUMBER_COLUMNS)
    return df[NUMBER_COLUMNS], notes


def verdicts(base_dir: Path, lever_dir: Path, lever: str, papers) -> pd.DataFrame:
    """Each claim of ``papers`` recomputed from the lever run's tables (the float32 run's where the lever run did
    not write one), beside its verdict from the float32 tables."""
    frames = []
    with tempfile.TemporaryDirectory() as tmp:
        for paper in papers:
            other, _ = S.other_tables(Path(base_dir), Path(lever_dir), Path(tmp) / paper)
            frames.append(S.cross_run(paper, Path(base_dir), other, f"lever {lever}",
                                      f"tables of the run with {lever}", current_only=S.current_only(other)))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=S.COLUMNS)


def summary(numbers: pd.DataFrame, verdict_rows: pd.DataFrame, notes: dict[tuple[str, str], list[str]]) -> pd.DataFrame:
    """One row per (lever, paper): how many numbers moved less than their seed spread, how many verdicts changed,
    and whether the lever is admitted for that paper (every number within its spread, no verdict changed, every
    table comparable)."""
    rows = []
    pairs = sorted(set(zip(numbers["lever"], numbers["paper"])) | set(notes)
                   | set(zip(verdict_rows["kind"].str.removeprefix("lever "), verdict_rows["paper"])))
    for lever, paper in pairs:
        n = numbers[(numbers["lever"] == lever) & (numbers["paper"] == paper)]
        v = verdict_rows[(verdict_rows["kind"] == f"lever {lever}") & (verdict_rows["paper"] == paper)]
        v = v[v["verdict"] != "table format"]
        spread = n[n["within_spread"].notna()]
        ratio = (spread["abs_diff"] / spread["spread"]).replace(np.inf, np.nan)
        outside = int((~spread["within_spread"].astype(bool)).sum())
        changed = int(v["changed"].sum())
        why = []
        if outside:
            why.append(f"{outside} of {len(spread)} numbers move by at least their seed spread")
        if changed:
            why.append(f"{changed} of {len(v)} verdicts change ({', '.join(v.loc[v['changed'], 'claim'])})")
        if notes.get((lever, paper)):
            why.append("tables not comparable: " + "; ".join(notes[(lever, paper)]))
        if not len(spread):
            why.append("no number with a stated seed spread")
        if not len(v):
            why.append("no verdict recomputed")
        rows.append({"lever": lever, "paper": paper, "tables": n["table"].nunique(), "numbers": len(n),
                     "numbers_with_spread": len(spread), "within_spread": len(spread) - outside,
                     "max_abs_diff": float(n["abs_diff"].max()) if len(n) else np.nan,
                     "max_diff_over_spread": float(ratio.max()) if len(ratio.dropna()) else np.nan,
                     "verdicts_compared": len(v), "verdicts_changed": changed, "admitted": not why,
                     "reason": "; ".join(why) if why else "every number within its seed spread, no verdict changed"})
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def lever_runs(root: Path | None = None) -> dict[str, Path]:
    """The full-profile lever runs there are: lever names -> their tables folder."""
    reports = (Path(root) if root is not None else paths.project_root()) / "reports"
    return {d.name.removeprefix("levers-"): d / "figures" / "tables"
            for d in sorted(reports.glob("levers-*")) if (d / "figures" / "tables").is_dir()}


def run(base_dir: Path | None = None, root: Path | None = None, out_dir: Path | None = None) -> pd.DataFrame:
    """Compare every lever run with the float32 tables and write the three ``levers*`` tables."""
    base_dir = Path(base_dir) if base_dir is not None else paths.tables_dir()
    out_dir = Path(out_dir) if out_dir is not None else paths.tables_dir()
    nums, verds, notes = [], [], {}
    for lever, tables in lever_runs(root).items():
        n, why = compare(base_dir, tables, lever)
        nums.append(n)
        for w in why:
            notes.setdefault((lever, paper_of(w.split(":")[0])), []).append(w)
        papers = sorted(set(n["paper"]) | {p for (lv, p) in notes if lv == lever})
        verds.append(verdicts(base_dir, tables, lever, papers))
    numbers = pd.concat(nums, ignore_index=True) if nums else pd.DataFrame(columns=NUMBER_COLUMNS)
    verdict_rows = pd.concat(verds, ignore_index=True) if verds else pd.DataFrame(columns=S.COLUMNS)
    s = summary(numbers, verdict_rows, notes)
    io.write_csv(out_dir / "levers.csv", s)
    io.write_csv(out_dir / "levers_numbers.csv", numbers)
    io.write_csv(out_dir / "levers_verdicts.csv", verdict_rows)
    head = ("# Result-changing speed levers against the seed spread and the verdicts\n\n"
            "Written by `make levers`: one row per lever and paper. A lever is admitted for a paper only when every "
            "number with a stated seed spread moves by less than that spread and no verdict changes.\n\n")
    io.write_text(out_dir / "levers.md", head + (C.to_markdown(s.astype(str)) if len(s) else "No lever run yet.\n"))
    io.write_text(out_dir / "levers_numbers.md", "# Each number of a lever run beside the float32 run's\n\n"
                  + (C.to_markdown(numbers.astype(str)) if len(numbers) else "No lever run yet.\n"))
    io.write_text(out_dir / "levers_verdicts.md", "# Each verdict recomputed from a lever run's tables\n\n"
                  + (C.to_markdown(verdict_rows.astype(str)) if len(verdict_rows) else "No lever run yet.\n"))
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m xaibench.evaluation.levers", description=__doc__.split("\n\n")[0])
    ap.parse_args(argv)
    s = run()
    print(s.to_string(index=False) if len(s) else "no lever run below reports/levers-*")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
