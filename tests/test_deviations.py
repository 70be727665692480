"""DEVIATIONS.md stays a reference, not a narrative: at most 15,000 characters, one section per paper, each
with one Markdown table ``deviation | why | measured effect (where shown)``, and no cell longer than about three
lines of a normal-width editor (330 characters)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[1] / "DEVIATIONS.md"
MAX_CHARS = 15_000
MAX_CELL = 330
COLUMNS = ["deviation", "why", "measured effect (where shown)"]
SECTIONS = ["CEBaB", "Human-grounded", "Counterfactuals of counterfactuals", "Counterfactual evaluation (Ge et al.",
            "Attribution ground truth (Zhou et al.", "Scorecard"]


def cells(line: str) -> list[str]:
    """The cells of a Markdown table row (``\\|`` inside a cell is text, not a separator)."""
    inner = line.strip()
    assert inner.startswith("|") and inner.endswith("|"), line
    return [c.strip() for c in re.split(r"(?<!\\)\|", inner[1:-1])]


def sections(text: str) -> dict[str, list[str]]:
    """``{heading: lines}`` for each ``## `` section."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return out


def tables(lines: list[str]) -> list[list[str]]:
    """Runs of consecutive table lines."""
    found, run = [], []
    for line in lines + [""]:
        if line.lstrip().startswith("|"):
            run.append(line)
        elif run:
            found.append(run)
            run = []
    return found


@pytest.fixture(scope="module")
def text() -> str:
    return PATH.read_text(encoding="utf-8")


def test_size(text):
    assert len(text) <= MAX_CHARS, f"DEVIATIONS.md has {len(text):,} characters (at most {MAX_CHARS:,})"


def test_one_section_per_paper(text):
    headings = list(sections(text))
    for name in SECTIONS:
        assert sum(h.startswith(name) for h in headings) == 1, (name, headings)
    assert len(headings) == len(SECTIONS), headings


def test_each_section_is_one_three_column_table(text):
    for heading, lines in sections(text).items():
        found = tables(lines)
        assert len(found) == 1, f"{heading}: {len(found)} tables"
        header, rule, *rows = found[0]
        assert cells(header) == COLUMNS, (heading, header)
        assert all(re.fullmatch(r":?-+:?", c) for c in cells(rule)) and len(cells(rule)) == 3, (heading, rule)
        assert rows, f"{heading}: no rows"
        for row in rows:
            assert len(cells(row)) == 3, (heading, row)
            assert all(cells(row)), (heading, "empty cell", row)
        # nothing but the table in a section (no narrative around it)
        prose = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("|")]
        assert not prose, (heading, prose)


def test_no_cell_longer_than_three_lines(text):
    long = [(c[:60], len(c)) for lines in sections(text).values() for table in tables(lines)
            for row in table for c in cells(row) if len(c) > MAX_CELL]
    assert not long, long


def test_cells_split_on_unescaped_pipes_only():
    assert cells(r"| a \|b\| c | d | e |") == [r"a \|b\| c", "d", "e"]
