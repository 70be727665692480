"""Checks on executed notebooks (committed reports and quick smoke runs): figures shown, claims
table, machine paths and progress-bar litter.  Each returns what it found, so a test can list
every problem at once."""
from __future__ import annotations

import ast
import re
from html.parser import HTMLParser

import nbformat

from xaibench.evaluation.claims import PRECONDITION, VERDICTS

# the claims cell of each paper's evaluation notebook (the notebook's two-digit prefix -> paper)
CLAIMS_NOTEBOOKS = {"20": "cebab", "21": "human_grounded", "22": "cf_feedback", "23": "cf_faithfulness",
                    "24": "attribution_gt"}
BINARY_MIME = ("image/png", "image/jpeg", "image/gif", "application/pdf")  # base64: any letters may appear
# an absolute path of the machine that ran the notebook: a home, scratch or work folder, or an
# installed package (the lookbehind keeps URLs and relative paths such as data/tmp/ out)
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|home|root|tmp)/|site-packages")
# tqdm-style progress bars: " 40%|####      | 4/10 [00:01<00:02,  2.9it/s]"
PROGRESS_BAR = re.compile(r"\d%\||\bit/s\]|\bs/it\]")
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
          ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)  # a body that may run any number of times


def code_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


def png_outputs(cell) -> int:
    return sum("image/png" in o.get("data", {}) for o in cell.get("outputs", []))


def _python(source: str) -> ast.Module | None:
    """The cell's source as Python (IPython magics and shell lines blanked), or None if it is not Python."""
    lines = ["" if ln.lstrip().startswith(("%", "!")) else ln for ln in source.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _shows(call: ast.Call) -> bool:
    name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)
    if name != "save_figure":
        return False
    show = next((k.value for k in call.keywords if k.arg == "show"), None)
    return not (isinstance(show, ast.Constant) and show.value is False)  # show=False only saves


def figures_required(source: str) -> int:
    """How many PNGs running this cell must display at least: one per ``save_figure(...)`` call
    outside loops (and function bodies), plus one if any call sits in a loop (it may run any number
    of times, but a report that shows none of them is wrong).  Of an ``if`` with an ``else`` (one of two runs),
    only what both branches show is required: the fewer of the two."""
    tree = _python(source)
    if tree is None:
        return 0

    def count(nodes, in_loop: bool) -> tuple[int, int]:
        plain, looped = 0, 0
        for node in nodes:
            if isinstance(node, ast.If) and node.orelse:
                branches = [count([node.test], in_loop), count(node.body, in_loop), count(node.orelse, in_loop)]
                totals = [b[0] + (1 if b[1] else 0) for b in branches[1:]]
                pick = branches[1 + totals.index(min(totals))]
                plain, looped = plain + branches[0][0] + pick[0], looped + branches[0][1] + pick[1]
                continue
            if isinstance(node, ast.Call) and _shows(node):
                if in_loop:
                    looped += 1
                else:
                    plain += 1
            a, b = count(list(ast.iter_child_nodes(node)), in_loop or isinstance(node, _LOOPS))
            plain, looped = plain + a, looped + b
        return plain, looped

    plain, looped = count([tree], False)
    return plain + (1 if looped else 0)


def missing_figures(report, source_nb) -> str | None:
    """``None`` when ``report`` shows at least as many PNGs as ``source_nb``'s cells save, else why not."""
    need = {i: n for i, c in enumerate(code_cells(source_nb)) if (n := figures_required(c.source))}
    want = sum(need.values())
    got = sum(png_outputs(c) for c in code_cells(report))
    if got >= want:
        return None
    return f"{got} image/png outputs, but its notebook saves at least {want} (code cell: figures {need})"


def _output_texts(nb):
    """``(code cell index, text)`` of every textual part of every output."""
    for i, cell in enumerate(code_cells(nb)):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                yield i, out.get("text", "")
            elif out.get("output_type") == "error":
                yield i, "\n".join([out.get("ename", ""), out.get("evalue", ""), *out.get("traceback", [])])
            else:
                for mime, value in out.get("data", {}).items():
                    if mime not in BINARY_MIME:
                        yield i, value if isinstance(value, str) else str(value)
                for value in out.get("metadata", {}).values():  # e.g. an image's alt text
                    yield i, str(value)


def machine_paths(nb) -> list[str]:
    """``"cell N: ...text around the path..."`` for each output line naming an absolute machine path."""
    found = []
    for i, text in _output_texts(nb):
        for line in text.splitlines():
            if MACHINE_PATH.search(line):
                found.append(f"cell {i}: {line.strip()[:160]}")
    return found


def progress_litter(nb) -> list[str]:
    """``"cell N: ..."`` for each stream-output line that is a progress bar."""
    found = []
    for i, cell in enumerate(code_cells(nb)):
        for out in cell.get("outputs", []):
            if out.get("output_type") != "stream":
                continue
            for line in re.split(r"[\r\n]", out.get("text", "")):
                if PROGRESS_BAR.search(line):
                    found.append(f"cell {i}: {line.strip()[:160]}")
    return found


class _Tables(HTMLParser):
    """Rows (lists of cell texts, th and td alike) of every ``<table>`` in an HTML fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1]:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def html_table_column(html: str, column: str) -> list[str] | None:
    """The values of ``column`` in the first HTML table that has it (pandas' ``to_html`` layout:
    the header row first, an index cell ahead of each row when the header starts blank)."""
    parser = _Tables()
    parser.feed(html)
    for rows in parser.tables:
        if not rows or column not in rows[0]:
            continue
        k = rows[0].index(column)
        return [r[k] for r in rows[1:] if len(r) == len(rows[0])]
    return None


def plain_table_column(text: str, column: str) -> list[str] | None:
    """The values of ``column`` in a pandas ``text/plain`` frame (columns split by 2+ spaces; None when
    the frame is wrapped or truncated so the column cannot be read reliably)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines or "..." in text or "\\" in lines[0]:
        return None
    header = re.split(r"\s{2,}", lines[0].strip())
    if column not in header:
        return None
    k = header.index(column) + 1  # each row starts with its index
    rows = [re.split(r"\s{2,}", ln.strip()) for ln in lines[1:]]
    if any(len(r) != len(header) + 1 for r in rows):
        return None
    return [r[k] for r in rows]


def claims_cell_problems(nb, paper: str) -> list[str]:
    """What is wrong with the claims cell of an executed evaluation notebook (empty when all is right):
    the last code cell is tagged ``claims``, calls ``save_claims("<paper>")`` and shows a table whose
    ``verdict`` column holds one of the verdicts in every row."""
    cells = code_cells(nb)
    if not cells:
        return ["no code cell"]
    last = cells[-1]
    problems = []
    if "claims" not in last.get("metadata", {}).get("tags", []):
        problems.append("the last code cell is not tagged 'claims'")
    if not re.search(rf"""\bsave_claims\(\s*["']{re.escape(paper)}["']""", last.source):
        problems.append(f'the last code cell does not call save_claims("{paper}")')
    verdicts = None
    for out in last.get("outputs", []):
        data = out.get("data", {})
        if "text/html" in data:
            verdicts = html_table_column(data["text/html"], "verdict")
        if verdicts is None and "text/plain" in data:
            verdicts = plain_table_column(data["text/plain"], "verdict")
        if verdicts is not None:
            break
    if verdicts is None:
        problems.append("the last code cell shows no table with a 'verdict' column")
    elif not verdicts:
        problems.append("the claims table has no rows")
    else:
        bad = sorted({v for v in verdicts if v not in VERDICTS + (PRECONDITION,)})
        if bad:
            problems.append(f"verdicts outside {VERDICTS + (PRECONDITION,)}: {bad}")
    return problems


def read(path) -> "nbformat.NotebookNode":
    return nbformat.read(path, as_version=4)
