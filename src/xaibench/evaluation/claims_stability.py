"""How stable the verdicts are: each claim recomputed with one seed left out, and from another CPU's tables.

``figures/tables/claims_stability.csv`` (written by ``make claims``) holds, for every paper:

- **leave one seed out**: every claim that reads per-seed rows of at least three seeds, recomputed with each
  seed's rows dropped from every table (:func:`xaibench.evaluation.claims.stability`; :data:`REPLICATION`
  names the column of a paper whose replications are not numbered by seed);
- **other CPU**: every claim recomputed with the new rules from the result tables of an earlier regeneration on
  another CPU, taken from the git history (:data:`OTHER_CPU`): the same code, seeds and data, floating-point
  results that differ with the CPU's instruction set.  Where the earlier tables lack a column or table the rules
  read, the row says so (``verdict`` = ``table format``) instead of a verdict.

A verdict other than ``inconclusive`` that changes in either way is a defect of its rule (``defect``): the rule
decides by noise of the size a CPU change or one seed causes.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from .. import io, paths
from . import claims as C


@dataclass(frozen=True)
class OtherCpu:
    """Result tables of an earlier regeneration on another CPU: the commit whose ``figures/tables`` hold them,
    the CPUs (earlier, now), and an optional adapter that brings the earlier tables into the current format."""

    commit: str
    cpus: str
    adapt: Callable[[Path, Path], list[str]] | None = None


def _hg_seed42(old: Path, now: Path) -> list[str]:
    """The earlier human-grounded run had one seed (42) and no per-seed tables: its seed-42 rows replace the
    current run's seed-42 rows of the per-seed tables (the other seeds are this run's)."""
    done = []
    for name, old_name in (("human_grounded_tasks_seeds", "human_grounded_tasks"),
                           ("human_grounded_models_seeds", "human_grounded_models")):
        cur_path, old_path = now / f"{name}.csv", old / f"{old_name}.csv"
        if not cur_path.is_file() or not old_path.is_file():
            continue
        cur, prev = pd.read_csv(cur_path), pd.read_csv(old_path)
        prev = prev.assign(seed=42)[[c for c in cur.columns if c in prev.columns or c == "seed"]]
        merged = pd.concat([cur[cur["seed"] != 42], prev], ignore_index=True)
        merged.to_csv(cur_path, index=False)
        done.append(f"{name}: seed 42 from {old_name}")
    return done


def _cebab_unpaired(old: Path, now: Path) -> list[str]:
    """The earlier CEBaB run wrote no per-seed Table 10: its leads are Welch intervals from the means and stds over
    seeds (the rules' fallback), not intervals paired over seeds, so the current per-seed table is dropped."""
    p = now / "cebab_icace_error_per_seed.csv"
    if p.is_file() and not (old / p.name).is_file():
        p.unlink()
        return ["no per-seed Table 10 in the earlier tables: their leads are unpaired (Welch over seeds)"]
    return []


#: per paper, the earlier regeneration on another CPU that its verdicts are recomputed from
OTHER_CPU = {
    "cebab": OtherCpu("7cc13c6", "Intel Xeon (family 6 model 207) -> AMD EPYC (family 26)", _cebab_unpaired),
    "human_grounded": OtherCpu("4f06235^", "AMD EPYC (family 25) -> AMD EPYC (family 26), seed 42", _hg_seed42),
    "cf_feedback": OtherCpu("4f06235^", "AMD EPYC (family 25) -> Intel Xeon (family 6 model 207)"),
    "cf_faithfulness": OtherCpu("4f06235^", "AMD EPYC (family 25) -> Intel Xeon (family 6 model 207)"),
    "attribution_gt": OtherCpu("0dcd3f4^", "AMD EPYC (family 25) -> AMD EPYC (family 26)"),
}
COLUMNS = C.STABILITY_COLUMNS + ["note"]
#: the column that names a replication in each paper's per-run tables (``seed`` unless named here): Zhou et al.'s
#: image runs are numbered by ``run`` (leaving a run index out drops that run of every experiment)
REPLICATION = {"attribution_gt": "run"}


def tables_at(commit: str, dest: Path, repo: Path | None = None) -> Path:
    """The result tables (``figures/tables/*.csv``) of ``commit`` extracted into ``dest``."""
    repo = Path(repo) if repo is not None else paths.project_root()
    names = subprocess.run(["git", "-C", str(repo), "ls-tree", "--name-only", commit, "figures/tables/"],
                           check=True, capture_output=True, text=True).stdout.split()
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        if name.endswith(".csv") and not name.endswith("_claims.csv"):
            blob = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{name}"], check=True,
                                  capture_output=True).stdout
            (dest / Path(name).name).write_bytes(blob)
    return dest


def other_tables(current: Path, earlier: Path, dest: Path, adapt=None) -> tuple[Path, list[str]]:
    """``dest``: the current tables with every table the earlier run also wrote replaced by the earlier one
    (tables the earlier run did not write stay current), then ``adapt(earlier, dest)``.  The names of the tables
    that stay this run's (neither replaced nor written by ``adapt``) go to ``dest/CURRENT_ONLY``
    (:func:`current_only`)."""
    dest.mkdir(parents=True, exist_ok=True)
    for p in current.glob("*.csv"):
        shutil.copy2(p, dest / p.name)
    replaced = []
    for p in earlier.glob("*.csv"):
        if (current / p.name).is_file():
            shutil.copy2(p, dest / p.name)
            replaced.append(p.stem)
    before = {p.stem: p.read_bytes() for p in dest.glob("*.csv") if p.stem not in replaced}
    notes = adapt(earlier, dest) if adapt is not None else []
    mine = sorted(n for n, blob in before.items() if (dest / f"{n}.csv").is_file()
                  and (dest / f"{n}.csv").read_bytes() == blob)
    (dest / CURRENT_ONLY).write_text("\n".join(mine))
    return dest, notes


CURRENT_ONLY = "current_only.txt"


def current_only(other: Path) -> frozenset[str]:
    """The tables of an :func:`other_tables` folder that are this run's, not the earlier run's."""
    f = Path(other) / CURRENT_ONLY
    return frozenset(f.read_text().split()) if f.is_file() else frozenset()


def cross_run(paper: str, current: Path, other: Path, kind: str, note: str = "",
              current_only: frozenset[str] = frozenset()) -> pd.DataFrame:
    """Each claim's verdict from the ``current`` tables beside the one from the ``other`` tables.

    ``current_only`` names the tables the other run did not write (``other`` holds this run's copy): a claim that
    reads some of them says so in its note, and one that reads only such tables is not a comparison between
    runs (``table format``)."""
    _, claims = C.paper_claims(paper)
    now, then = C.Tables(current), C.Tables(other)
    rows = []
    for c in claims:
        a = C.evaluate(c, now)
        then.reset()
        try:
            b = C.evaluate(c, then).verdict
        except (KeyError, ValueError, IndexError) as err:  # an earlier table without a column the rule reads
            b = "table format"
            note_c = f"{note}; earlier tables lack what the rule reads ({type(err).__name__}: {err})".strip("; ")
        else:
            note_c = note
            mine = sorted(then.read & set(current_only))
            if mine and then.read <= set(current_only):
                b = "table format"
                note_c = f"{note}; every table the rule reads is newer than the earlier run ({', '.join(mine)})"
            elif mine:
                note_c = f"{note}; also reads this run's {', '.join(mine)} (the earlier run did not write it)"
            note_c = note_c.strip("; ")
        changed = b != a.verdict and b != "table format"
        rows.append({"paper": paper, "claim": c.id, "kind": kind, "left_out": "", "n_seeds": "",
                     "verdict_all": a.verdict, "verdict": b, "changed": changed,
                     "defect": changed and a.verdict not in ("inconclusive", C.PRECONDITION)
                     and b not in ("inconclusive", C.PRECONDITION), "note": note_c[:300]})
    return pd.DataFrame(rows, columns=COLUMNS)


def stability_table(papers=C.PAPERS, root: Path | None = None, repo: Path | None = None) -> pd.DataFrame:
    """Leave-one-seed-out rows and other-CPU rows of every paper (see the module docstring)."""
    root = Path(root) if root is not None else paths.tables_dir()
    frames = []
    with tempfile.TemporaryDirectory() as tmp:
        for paper in papers:
            unit = REPLICATION.get(paper, "seed")
            loo = C.stability(paper, root, seed_column=unit)
            frames.append(loo.assign(note="" if unit == "seed" else f"left out: {unit}"))
            spec = OTHER_CPU.get(paper)
            if spec is None:
                continue
            earlier = tables_at(spec.commit, Path(tmp) / paper / "earlier", repo)
            other, notes = other_tables(root, earlier, Path(tmp) / paper / "other", spec.adapt)
            note = f"tables of {spec.commit} ({spec.cpus})" + (f"; {'; '.join(notes)}" if notes else "")
            frames.append(cross_run(paper, root, other, "other CPU", note, current_only=current_only(other)))
    return pd.concat([f for f in frames if len(f)], ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per paper and kind: verdicts compared, how many changed, how many of those are defects."""
    g = df[~df["verdict"].isin(["table format"])].groupby(["paper", "kind"], sort=False)
    out = g.agg(compared=("claim", "size"), changed=("changed", "sum"), defects=("defect", "sum")).reset_index()
    decided = df[~df["verdict_all"].isin(["inconclusive", C.PRECONDITION, "not comparable"])]
    out["decided_unchanged_share"] = out.apply(
        lambda r: 1 - r["defects"] / max(1, int(((decided["paper"] == r["paper"]) & (decided["kind"] == r["kind"])).sum())),
        axis=1)
    return out


def save(df: pd.DataFrame, out_dir: Path | None = None) -> Path:
    out_dir = Path(out_dir) if out_dir is not None else paths.tables_dir()
    io.write_csv(out_dir / "claims_stability.csv", df)
    s = summary(df)
    md = ("# Stability of the verdicts: each seed left out, and another CPU's tables\n\n"
          + C.to_markdown(s.astype(str)) + "\n" + C.to_markdown(df.astype(str)))
    io.write_text(out_dir / "claims_stability.md", md)
    return out_dir / "claims_stability.csv"
