"""No file speaks of how the project was developed: issue numbers, sessions, time budgets, "this
machine", machines that were (not) lent, work that was lost or merged, or files outside the
repository (``../shared/...``).  A reader of the repository has none of that context; the docs
state what the code does, what was measured and why a setting was chosen.

Scanned: README.md, DEVIATIONS.md, docs/, the sources of notebooks/*.ipynb (not outputs), the
Makefile, .ci/ and the text files of src/ and tests/ (this file excluded: it names the patterns; test fixtures excluded:
they are data).  Precision over recall, each pattern documents what it leaves alone:

* ``session`` -- pytest's ``scope="session"`` is code, not prose, and is skipped;
* ``budget`` -- an *epoch* budget is a training setting (the paper's epochs scaled), not a
  development budget, and is allowed; identifiers such as ``EPOCH_BUDGET_SCALE`` never match;
* ``lost`` -- only "was/were/... lost" and "lost in extraction / with its session": the
  verb in a sentence about the project's history, not e.g. a "lost sd" column label;
* ``../shared`` -- ``../shared/data`` on its own is the documented default of
  ``XAIBENCH_DATA_MIRROR`` (code behaviour: the data mirror beside a clone); any other path under
  ``../shared`` (papers, a file inside the mirror) points outside the repository.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT_SUFFIXES = {".py", ".md", ".txt", ".csv", ".json", ".html", ".js", ".css", ".cfg", ".toml", ".yml", ".yaml"}

PATTERNS: dict[str, re.Pattern] = {name: re.compile(rx, re.IGNORECASE) for name, rx in {
    "issue number": r"\bissues?\s*#?\d+\b",
    "the issue's ...": r"\bthe issue'?s\b",
    "session": r"\bsessions?\b",
    "budget": r"(?<!epoch )\bbudgets?\b",
    "this machine": r"\bthis machine\b",
    "shared machine": r"\bshared (?:\d-core )?(?:machine|cpu)s?\b",
    "lent": r"\b(?:was|were|been|is|are|be|not) lent\b|\blent to\b",
    "merged": r"\bbefore (?:they|it) (?:was|were) merged\b",
    "lost": r"\b(?:was|were|been|got|is|are|be) lost\b|\blost (?:in|with) (?:the |its |their )?(?:extraction|session)\b",
    "../shared": r"\.\./shared(?!/data(?![/\w]))",
}.items()}
ALLOWED = [re.compile(r"""scope\s*=\s*["']session["']""")]  # pytest fixture scope: code


def scanned_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "DEVIATIONS.md", ROOT / "Makefile"]
    files += sorted(p for p in (ROOT / ".ci").glob("*") if p.is_file())
    files += sorted(p for p in (ROOT / "docs").rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES)
    files += sorted((ROOT / "notebooks").glob("*.ipynb"))
    for folder in ("src", "tests"):
        files += sorted(p for p in (ROOT / folder).rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES
                        and "__pycache__" not in p.parts and "fixtures" not in p.parts)
    me = Path(__file__).resolve()
    return [p for p in files if p.exists() and p.resolve() != me]


def lines_of(path: Path) -> list[tuple[str, str]]:
    """``(where, line)`` for each line: ``N`` for text files, ``cell C line N`` for notebook sources."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".ipynb":
        return [(str(i), line) for i, line in enumerate(text.splitlines(), 1)]
    out = []
    for c, cell in enumerate(json.loads(text)["cells"]):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        out += [(f"cell {c} line {i}", line) for i, line in enumerate(source.splitlines(), 1)]
    return out


def findings(lines: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """``(where, pattern name, matched text)`` for every development-process phrase in ``lines``."""
    found = []
    for where, line in lines:
        clean = line
        for rx in ALLOWED:
            clean = rx.sub("", clean)
        for name, rx in PATTERNS.items():
            for m in rx.finditer(clean):
                found.append((where, name, m.group(0)))
    return found


def test_no_file_speaks_of_how_the_project_was_developed():
    bad = []
    for path in scanned_files():
        for where, name, text in findings(lines_of(path)):
            bad.append(f"  {path.relative_to(ROOT)}:{where}: {text!r} ({name})")
    assert not bad, ("development-process wording (say what the code does or what was measured instead):\n"
                     + "\n".join(bad))


def test_patterns_catch_the_phrases_and_leave_legitimate_words():
    hits = lambda s: [name for _, name, _ in findings([("1", s)])]  # noqa: E731
    assert hits("checked for issue 12") == ["issue number"]
    assert hits("Targets (issue #2): fast") == ["issue number"]
    assert hits("the issue's 60-min budget") == ["the issue's ...", "budget"]
    assert hits("cut off with its session and resumed") == ["session"]
    assert hits("(budget <= 45 min)") == ["budget"] and hits("CPU budget") == ["budget"]
    assert hits("models trained on this machine") == ["this machine"]
    assert hits("no GPU machine was lent to the project") == ["lent"]
    assert hits("lost with its session before they were merged") == ["session", "merged", "lost"]
    assert hits("the paper's sd was lost in extraction") == ["lost"]
    assert hits("see ../shared/papers/cebab.txt") == ["../shared"]
    assert hits("See `../shared/data/SOURCES.md`") == ["../shared"]
    assert hits("Anchor cost on the shared 2-core machine") == ["shared machine"]
    # legitimate words
    for ok in ['@pytest.fixture(scope="session")', "an eighth of the paper's epoch budget", "EPOCH_BUDGET_SCALE",
               "default ``../shared/data``).", "Shared machinery of the local explainers", "tissue 5",
               "the machine that ran it", "Gradient, SmoothGrad (50 copies, lost sd)", "a lost cause is hard",
               "the editors' issues with long texts"]:
        assert hits(ok) == [], ok


def test_notebook_lines_are_located_by_cell(tmp_path):
    nb = tmp_path / "x.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": ["# Title\n", "as in issue 3\n"]}]}))
    assert findings(lines_of(nb)) == [("cell 0 line 2", "issue number", "issue 3")]
