"""Claims tables: each paper's headline claims, ours beside them, and a verdict computed from our tables.

Every paper package has a ``claims`` module defining ``PAPER`` (its title) and ``CLAIMS``, a list of
:class:`Claim`.  A claim holds the paper's statement (short), where the paper makes it, the paper's
number where there is one, and a ``check`` function that reads *our committed tables* (through a
:class:`Tables` reader, never a running experiment) and returns an :class:`Outcome`: our number or
short text, the verdict and a one-line reason.  :func:`claims_table` evaluates every claim of a
paper; :func:`save_claims` writes ``figures/tables/<paper>_claims.csv`` and ``.md``.

The verdicts: ``reproduced`` (the claim holds in our tables, within the rule's tolerance), ``partly``
(it holds for some of the cells it covers, or in direction but not size), ``not reproduced`` (our
tables contradict it) and ``not comparable`` (our setting cannot test it; the reason says why).
A claim whose table is missing is ``not comparable`` with the reason naming the table, so a claims
table can always be built.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from .. import io, paths

VERDICTS = ("reproduced", "partly", "not reproduced", "not comparable")
PAPERS = ("cebab", "human_grounded", "cf_feedback", "cf_faithfulness", "attribution_gt")
COLUMNS = ["claim", "where", "statement", "paper", "ours", "verdict", "reason"]


@dataclass(frozen=True)
class Outcome:
    """What a claim's check found: our value (number or short text), the verdict, a one-line reason."""

    ours: float | str | None
    verdict: str
    reason: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}; got {self.verdict!r}")
        if not self.reason or "\n" in self.reason:
            raise ValueError(f"a verdict needs a one-line reason; got {self.reason!r}")


@dataclass(frozen=True)
class Claim:
    """One headline claim of a paper.  ``check(tables) -> Outcome`` computes ours from committed tables."""

    id: str  # a short slug naming the claim (it is what the README lists), e.g. "approx-beats-conexp"
    statement: str
    where: str
    paper: float | str | None
    check: Callable[["Tables"], Outcome]


class MissingTable(FileNotFoundError):
    """A table a claim needs has not been generated (its notebook has not run)."""


class Tables:
    """Reads result tables (``<name>.csv``) from a tables folder, once each.

    ``root`` defaults to the run profile's ``figures/tables``; tests point it at a folder of
    hand-made tables.  A missing table raises :class:`MissingTable` naming the file and the
    notebook that writes it (when given in ``sources``).
    """

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else paths.tables_dir()
        self._cache: dict[str, pd.DataFrame] = {}

    def __call__(self, name: str) -> pd.DataFrame:
        if name not in self._cache:
            path = self.root / f"{name}.csv"
            if not path.is_file():
                raise MissingTable(f"table {path} does not exist yet; run the notebook that writes it")
            self._cache[name] = pd.read_csv(path)
        return self._cache[name].copy()


def evaluate(claim: Claim, tables: Tables) -> Outcome:
    """``claim.check(tables)``; a missing table gives ``not comparable`` naming the table."""
    try:
        out = claim.check(tables)
    except MissingTable as err:
        return Outcome(None, "not comparable", f"no result yet: {err}")
    if not isinstance(out, Outcome):
        raise TypeError(f"claim {claim.id}: check must return an Outcome, got {type(out).__name__}")
    return out


def paper_claims(paper: str) -> tuple[str, list[Claim]]:
    """``(title, claims)`` of a paper, from ``xaibench.evaluation.<paper>.claims``."""
    if paper not in PAPERS:
        raise KeyError(f"unknown paper {paper!r}; choose one of {list(PAPERS)}")
    mod = importlib.import_module(f"xaibench.evaluation.{paper}.claims")
    claims = list(mod.CLAIMS)
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{paper}: claim ids must be unique; got {ids}")
    return mod.PAPER, claims


def claims_table(paper: str, tables: Tables | None = None) -> pd.DataFrame:
    """One row per claim: ``claim, where, statement, paper, ours, verdict, reason``."""
    tables = tables if tables is not None else Tables()
    _, claims = paper_claims(paper)
    rows = []
    for c in claims:
        out = evaluate(c, tables)
        rows.append({"claim": c.id, "where": c.where, "statement": c.statement, "paper": _text(c.paper),
                     "ours": _text(out.ours), "verdict": out.verdict, "reason": out.reason})
    return pd.DataFrame(rows, columns=COLUMNS)


def _text(v: float | str | None, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.{digits}f}"
    return str(v)


def to_markdown(df: pd.DataFrame, title: str | None = None) -> str:
    body = df.to_markdown(index=False, disable_numparse=True)
    return (f"# {title}\n\n" if title else "") + body + "\n"


def save_claims(paper: str, tables: Tables | None = None, out_dir: Path | None = None) -> pd.DataFrame:
    """Evaluate a paper's claims and write ``<paper>_claims.csv`` and ``.md`` (atomically)."""
    title, _ = paper_claims(paper)
    df = claims_table(paper, tables)
    out_dir = Path(out_dir) if out_dir is not None else paths.tables_dir()
    io.write_csv(out_dir / f"{paper}_claims.csv", df)
    io.write_text(out_dir / f"{paper}_claims.md", to_markdown(df, f"Claims of {title}: ours beside the paper's"))
    return df


def verdict_counts(df: pd.DataFrame) -> dict[str, int]:
    """How many claims got each verdict (every verdict listed, zeros included)."""
    return {v: int((df["verdict"] == v).sum()) for v in VERDICTS}


# ---------------------------------------------------------------- verdict rules shared by papers
def within(ours: float, paper: float, tol: float) -> bool:
    """``|ours - paper| <= tol`` (absolute)."""
    return bool(abs(float(ours) - float(paper)) <= tol)


def by_share(share: float, what: str, full: float = 1.0, some: float = 0.0) -> Outcome:
    """Verdict from the share of cells where a claim holds: all -> reproduced, some -> partly, none -> not."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be in [0, 1]; got {share}")
    if share >= full:
        return Outcome(share, "reproduced", f"holds in every {what}")
    if share > some:
        return Outcome(share, "partly", f"holds in {share:.0%} of {what}s")
    return Outcome(share, "not reproduced", f"holds in no {what}")


def same_order(ours: Sequence[str], paper: Sequence[str]) -> bool:
    """Whether the items both lists share appear in the same order."""
    common = [x for x in ours if x in set(paper)]
    return common == [x for x in paper if x in set(common)]


def readme_status(papers: Sequence[str] = PAPERS, root: Path | None = None) -> str:
    """The README's status section: one compact table per paper (claims by verdict), from the claims CSVs."""
    root = Path(root) if root is not None else paths.tables_dir()
    parts = []
    for paper in papers:
        title, _ = paper_claims(paper)
        path = root / f"{paper}_claims.csv"
        if not path.is_file():
            parts.append(f"**{title}**: no claims table yet (`{path.name}`).\n")
            continue
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
        rows = [{"verdict": f"{v} ({int((df['verdict'] == v).sum())})",
                 "claims": "; ".join(df.loc[df["verdict"] == v, "claim"])} for v in VERDICTS
                if (df["verdict"] == v).any()]
        table = "\n".join(["| verdict | claims |", "|:--|:--|"] +
                          [f"| {r['verdict']} | {r['claims']} |" for r in rows])  # unpadded: the README stays short
        parts.append(f"**{title}** ([claims table](figures/tables/{paper}_claims.md))\n\n{table}\n")
    return "\n".join(parts)


STATUS_BEGIN = "<!-- claims-status:begin (generated by `python -m xaibench.reports readme-status`) -->"
STATUS_END = "<!-- claims-status:end -->"


def replace_status(readme: str, status: str) -> str:
    """``readme`` with the text between the status markers replaced by ``status``."""
    return replace_between(readme, STATUS_BEGIN, STATUS_END, status)


def replace_between(readme: str, begin: str, end: str, body: str) -> str:
    """``readme`` with the text between the marker lines ``begin`` and ``end`` replaced by ``body``."""
    if begin not in readme or end not in readme:
        raise ValueError(f"README has no markers for this generated section; add the lines\n{begin}\n{end}")
    head, rest = readme.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body.rstrip()}\n{end}{tail}"
