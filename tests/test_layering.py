"""No module imports a layer above it -- at module level, inside a function, relative or absolute,
or by name -- and no module reaches itself through its imports: neither between the top-level
packages nor between any two modules.

Layers, low to high (a module may import its own layer and the layers below)::

    0  foundation   io, paths, paramstamp, config, cache, device, utils, checks, text, glove, tables, progress, nlp, plotting, registry, executor (no domain knowledge)
    1  data         loading, splitting and describing datasets
    2  models       classifiers, training
    3  explainers   the explainer interface and every explainer
    4  evaluation   protocols scoring explainers (CEBaB, human-grounded, agreement, ...)
    5  top          survey (serves the human-grounded studies), bench, viz (plots of results), reports, notebook_engine

Every module of ``src/xaibench`` is parsed with :mod:`ast`; every ``import``/``from ... import``
anywhere in it (function bodies and ``TYPE_CHECKING`` blocks included) is resolved to the
``xaibench`` module it names, and so is every import by name:

* ``importlib.import_module(S)`` / ``import_module(S)`` / ``__import__(S)`` where ``S`` is a literal
  string, or an f-string / ``+`` concatenation whose constant prefix names a module
  (``f"xaibench.evaluation.{paper}.claims"`` counts as ``xaibench.evaluation``: the layer of the
  prefix -- the part after it may name any module of that package);
* a string literal that is exactly a dotted xaibench module path, optionally with ``:attribute``
  (``"xaibench.models.cnn:CNNClassifier"`` in a registry, ``"xaibench.bench"`` for ``python -m``).

The test lists every violation at once.

The cycle checks use the same imports (a function-level import counts: it runs whenever the function
does, so a circle through one is as real as a circle at import time, only later).  An import of
``a.b.c`` counts as an edge to ``a.b.c`` alone, not to the packages ``a`` and ``a.b`` that Python
initialises on the way: those are executed first, before ``a.b.c``, and a package that imports its
own submodules would otherwise always form a circle with each of them.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "xaibench"

LAYERS: dict[str, int] = {
    "__init__": 0, "io": 0, "paths": 0, "paramstamp": 0, "config": 0, "cache": 0, "device": 0, "levers": 0, "steps": 0, "utils": 0, "checks": 0, "text": 0, "glove": 0,
    "tables": 0, "resources": 0, "progress": 0, "nlp": 0, "plotting": 0, "viz": 0, "store": 0, "registry": 0, "executor": 0,
    "data": 1,
    "models": 2,
    "explainers": 3,
    "evaluation": 4,
    "survey": 5, "bench": 5, "reports": 5, "notebook_engine": 5,
}
LAYER_NAMES = {0: "foundation", 1: "data", 2: "models", 3: "explainers", 4: "evaluation", 5: "top"}

IMPORT_FUNCTIONS = {"import_module", "__import__"}  # importlib.import_module, import_module, __import__
MODULE_PATH = re.compile(r"xaibench(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?")


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    if top not in LAYERS:
        raise KeyError(f"module {module} is in no layer: add {top!r} to LAYERS in tests/test_layering.py")
    return LAYERS[top]


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` for every xaibench module that ``path`` imports (resolved, deduplicated per line)."""
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "xaibench"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                if node.level > 1:
                    base_parts = base_parts[: -(node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.split(".")[0] != "xaibench":
                continue
            # from pkg import a, b: a name that is a submodule counts as that module, any other name as pkg
            targets = [f"{base}.{a.name}" if _is_module(f"{base}.{a.name}") else base for a in node.names]
            out += [(node.lineno, t) for t in dict.fromkeys(targets)]
        elif isinstance(node, ast.Call) and _call_name(node.func) in IMPORT_FUNCTIONS and node.args:
            target = _module_of_prefix(_constant_prefix(node.args[0]))
            if target:
                out.append((node.lineno, target))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and MODULE_PATH.fullmatch(node.value):
            name = node.value.partition(":")[0]
            if _is_module(name):
                out.append((node.lineno, name))
    return sorted(dict.fromkeys(out), key=lambda hit: hit[0])  # ast.walk is breadth-first: back to line order


def _call_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _constant_prefix(node: ast.expr) -> tuple[str, bool] | None:
    """``(text, complete)``: the constant start of a string expression, and whether that is all of it."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, True
    if isinstance(node, ast.JoinedStr):
        text = ""
        for part in node.values:
            if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
                return text, False
            text += part.value
        return text, True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _constant_prefix(node.left)
        if left is None or not left[1]:
            return left
        right = _constant_prefix(node.right)
        if right is None:
            return left[0], False
        return left[0] + right[0], right[1]
    return None


def _module_of_prefix(prefix: tuple[str, bool] | None) -> str | None:
    """The xaibench module a dotted name (or the constant start of one) is certain to lie in, or None."""
    if prefix is None:
        return None
    text, complete = prefix
    parts = text.split(":")[0].split(".")
    if not complete and ":" not in text:
        parts = parts[:-1]  # the last piece may go on ("xaibench.eval" + x): only the pieces before it are sure
    if not parts or parts[0] != "xaibench":
        return None
    return ".".join(parts)


def _is_module(name: str) -> bool:
    rel = Path(*name.split(".")[1:])
    return (SRC / rel).with_suffix(".py").is_file() or (SRC / rel / "__init__.py").is_file()


def all_modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def violations() -> list[tuple[str, int, str, str]]:
    found = []
    for path in all_modules():
        me = module_name(path)
        mine = layer_of(me)
        for line, target in imported_modules(path):
            theirs = layer_of(target)
            if theirs > mine:
                found.append((me, line, target, f"{LAYER_NAMES[mine]} imports {LAYER_NAMES[theirs]}"))
    return found


def test_every_module_has_a_layer():
    missing = sorted({p.relative_to(SRC).parts[0].removesuffix(".py") for p in all_modules()} - set(LAYERS))
    assert not missing, f"top-level modules in no layer: {missing}; add them to LAYERS"


def test_no_module_imports_a_layer_above_it():
    bad = violations()
    assert not bad, "upward imports (importer:line -> imported):\n" + "\n".join(
        f"  {me}:{line} -> {target}  ({why})" for me, line, target, why in bad)


def top_level(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def package_graph() -> dict[str, dict[str, tuple[str, int, str]]]:
    """Top-level package -> {imported top-level package: one (importer, line, imported) that shows it}."""
    graph: dict[str, dict[str, tuple[str, int, str]]] = {}
    for path in all_modules():
        me = module_name(path)
        edges = graph.setdefault(top_level(me), {})
        for line, target in imported_modules(path):
            if top_level(target) != top_level(me):
                edges.setdefault(top_level(target), (me, line, target))
    return graph


def import_cycles(graph: dict[str, dict]) -> list[list[str]]:
    """Every strongly connected set of more than one package (Tarjan), each sorted; sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(cycles)


def test_no_import_cycle_between_top_level_packages():
    """Packages of one layer may import each other, but not in a circle (each must be importable and
    testable before the ones that use it)."""
    graph = package_graph()
    cycles = import_cycles(graph)
    lines = []
    for comp in cycles:
        for a in comp:
            for b in comp:
                if b in graph.get(a, {}):
                    me, line, target = graph[a][b]
                    lines.append(f"  {a} -> {b}  ({me}:{line} imports {target})")
    assert not cycles, f"import cycles between top-level packages {cycles}:\n" + "\n".join(lines)


def module_graph() -> dict[str, dict[str, int]]:
    """Module -> {xaibench module it imports: the first line that does}, for every module of ``src/xaibench``."""
    graph: dict[str, dict[str, int]] = {}
    for path in all_modules():
        me = module_name(path)
        edges = graph.setdefault(me, {})
        for line, target in imported_modules(path):
            if target != me:
                edges.setdefault(target, line)
    return graph


def cycle_path(graph: dict[str, dict[str, int]], comp: list[str]) -> list[str]:
    """A shortest circle inside the strongly connected set ``comp``, from and back to its first module."""
    start, inside = comp[0], set(comp)
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in graph.get(v, {}):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if w in inside and w not in came:
                    came[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"{comp} is not strongly connected")  # pragma: no cover - Tarjan's sets are


def describe_cycle(graph: dict[str, dict[str, int]], path: list[str]) -> str:
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(path, path[1:])) + f" -> {path[-1]}"


def test_no_import_cycle_between_modules():
    """No module imports itself through others (at module level, in a function or by name): each can be
    understood, imported and tested after the ones it uses."""
    graph = module_graph()
    cycles = import_cycles(graph)
    assert not cycles, f"{len(cycles)} import cycle(s) between modules; one circle of each:\n" + "\n".join(
        f"  {describe_cycle(graph, cycle_path(graph, comp))}\n    (the modules that reach each other: {', '.join(comp)})"
        for comp in cycles)


def test_module_cycle_checker_on_a_toy_tree(tmp_path, monkeypatch):
    """a -> b (in a function) -> c (by name) -> a is a circle; a package importing its own submodules is not."""
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path / "xaibench")
    tree = {"evaluation/__init__.py": "from .a import f\nfrom . import b\n",
            "evaluation/a.py": "from .. import io\n\ndef f():\n    from .b import g\n",
            "evaluation/b.py": "import importlib\n\ndef g():\n    importlib.import_module('xaibench.evaluation.c')\n",
            "evaluation/c.py": "from ..io import x\nfrom .a import f\n", "io.py": ""}
    for rel, text in tree.items():
        _write(tmp_path, rel, text)
    graph = module_graph()
    assert import_cycles(graph) == [["xaibench.evaluation.a", "xaibench.evaluation.b", "xaibench.evaluation.c"]]
    assert describe_cycle(graph, cycle_path(graph, import_cycles(graph)[0])) == (
        "xaibench.evaluation.a (line 4) -> xaibench.evaluation.b (line 4) -> xaibench.evaluation.c (line 2)"
        " -> xaibench.evaluation.a")
    _write(tmp_path, "evaluation/c.py", "from ..io import x\n")
    assert import_cycles(module_graph()) == []
    _write(tmp_path, "evaluation/c.py", "from . import f\n")  # a name of the package itself: its __init__
    assert import_cycles(module_graph()) == [["xaibench.evaluation", "xaibench.evaluation.a",
                                              "xaibench.evaluation.b", "xaibench.evaluation.c"]]


def _write(tmp: Path, rel: str, text: str) -> Path:
    p = tmp / "xaibench" / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_checker_sees_function_level_and_relative_imports(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path / "xaibench")
    for rel in ("evaluation/__init__.py", "evaluation/cebab.py", "evaluation/human_grounded/__init__.py",
                "explainers/base.py", "models/base.py", "io.py"):
        _write(tmp_path, rel, "")
    p = _write(tmp_path, "models/foo.py",
               "from __future__ import annotations\nimport numpy\n\n"
               "def f():\n    from ..evaluation import cebab\n    from ..evaluation.human_grounded import x\n"
               "    import xaibench.explainers.base\n    from . import base\n    from .. import io\n")
    got = [t for _, t in imported_modules(p)]
    assert got == ["xaibench.evaluation.cebab", "xaibench.evaluation.human_grounded",
                   "xaibench.explainers.base", "xaibench.models.base", "xaibench.io"]
    _write(tmp_path, "data/ok.py", "from ..text import word_tokenize\nfrom .loaders import load\n")
    bad = {(me, target) for me, _, target, _ in violations()}
    assert bad == {("xaibench.models.foo", "xaibench.evaluation.cebab"),
                   ("xaibench.models.foo", "xaibench.evaluation.human_grounded"),
                   ("xaibench.models.foo", "xaibench.explainers.base")}


def test_checker_sees_imports_by_name(tmp_path, monkeypatch):
    """import_module / __import__ with a literal, an f-string or a concatenation (the layer of its
    constant prefix), and module-path strings of a registry or a `python -m` command line."""
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path / "xaibench")
    for rel in ("evaluation/__init__.py", "evaluation/cebab/__init__.py", "evaluation/cebab/claims.py",
                "explainers/__init__.py", "explainers/base.py", "bench/__init__.py", "io.py"):
        _write(tmp_path, rel, "")
    p = _write(tmp_path, "models/foo.py",
               "import importlib\nfrom importlib import import_module\n\n"
               "def f(paper, name, x):\n"
               "    importlib.import_module('xaibench.explainers.base')\n"           # 5: literal
               "    __import__('xaibench.io')\n"                                      # 6: literal, own layer
               "    import_module(f'xaibench.evaluation.{paper}.claims')\n"        # 7: f-string prefix
               "    importlib.import_module('xaibench.' + 'evaluation.cebab')\n"    # 8: constant concat
               "    importlib.import_module('xaibench.explainers.' + name)\n"       # 9: prefix concat
               "    importlib.import_module('xaibench.eval' + name)\n"              # 10: partial piece
               "    importlib.import_module(name)\n"                                # 11: unknown: skipped
               "    importlib.import_module(f'{x}.y')\n"                            # 12: no prefix
               "    importlib.import_module('numpy')\n"                             # 13: not ours
               "    return ['python', '-m', 'xaibench.bench']\n"                    # 14: module path
               "KINDS = {'a': 'xaibench.evaluation.cebab.claims:CLAIMS', 'b': 'xaibench.nothing.here',\n"
               "         'c': 'see xaibench.io', 'd': 'xaibench.io'}\n")             # 15, 16
    assert imported_modules(p) == [
        (5, "xaibench.explainers.base"), (6, "xaibench.io"), (7, "xaibench.evaluation"),
        (8, "xaibench.evaluation.cebab"), (9, "xaibench.explainers"), (10, "xaibench"),
        (14, "xaibench.bench"), (15, "xaibench.evaluation.cebab.claims"), (16, "xaibench.io")]
    bad = sorted((line, target) for me, line, target, _ in violations() if me == "xaibench.models.foo")
    assert bad == [(5, "xaibench.explainers.base"), (7, "xaibench.evaluation"), (8, "xaibench.evaluation.cebab"),
                   (9, "xaibench.explainers"), (14, "xaibench.bench"), (15, "xaibench.evaluation.cebab.claims")]
    # the same calls in the top layer are fine
    top = _write(tmp_path, "bench/run.py", "import importlib\n"
                 "def f(paper):\n    return importlib.import_module(f'xaibench.evaluation.{paper}.claims')\n")
    assert imported_modules(top) == [(3, "xaibench.evaluation")]
    assert not [v for v in violations() if v[0] == "xaibench.bench.run"]


def test_cycle_checker_on_a_toy_tree(tmp_path, monkeypatch):
    """survey -> viz -> survey is a cycle within one layer (an import by name counts too); bench -> viz is not."""
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path / "xaibench")
    _write(tmp_path, "survey/__init__.py", "from ..viz import plot\n")
    _write(tmp_path, "viz.py", "import importlib\ndef plot():\n    importlib.import_module('xaibench.survey.app')\n")
    _write(tmp_path, "survey/app.py", "")
    _write(tmp_path, "bench/__init__.py", "from .. import viz\n")
    _write(tmp_path, "io.py", "")
    _write(tmp_path, "paths.py", "from . import io\n")
    graph = package_graph()
    assert graph["survey"]["viz"] == ("xaibench.survey", 1, "xaibench.viz")
    assert graph["viz"]["survey"] == ("xaibench.viz", 3, "xaibench.survey.app")
    assert import_cycles(graph) == [["survey", "viz"]]
    _write(tmp_path, "viz.py", "")
    assert import_cycles(package_graph()) == []


def test_unknown_top_level_module_is_an_error():
    with pytest.raises(KeyError, match="no layer"):
        layer_of("xaibench.newthing.x")


# ------------------------------------------------------------------ private names stay private
def private_imports() -> list[tuple[str, int, str]]:
    """Imports of a ``_private`` name (anywhere), or of a ``_private`` module from outside its package."""
    found = []
    for path in all_modules():
        me = module_name(path)
        package = me if path.name == "__init__.py" else me.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            else:
                base = (node.module or "").split(".")
            if base[0] != "xaibench":
                continue
            modules = [base]
            for a in node.names:
                if _private(a.name):
                    if _is_module(".".join([*base, a.name])):
                        modules.append([*base, a.name])  # a private module: judged below
                    else:
                        found.append((me, node.lineno, f"name {a.name}"))
            for mod in modules:
                for i, part in enumerate(mod):
                    if _private(part) and not (me + ".").startswith(".".join(mod[:i]) + "."):
                        found.append((me, node.lineno, "module " + ".".join(mod)))
                        break
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_private_names_across_modules():
    bad = private_imports()
    assert not bad, "imports of private names (make them public or move them):\n" + "\n".join(
        f"  {me}:{line} imports {what}" for me, line, what in bad)


def test_private_checker_on_a_toy_tree(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path / "xaibench")
    _write(tmp_path, "bench.py", "def f():\n    from .explainers.local._common import helper\n")
    _write(tmp_path, "models/a.py", "from .training import _helper, ok\n")
    _write(tmp_path, "explainers/local/_common.py", "helper = 1\n")
    _write(tmp_path, "explainers/local/b.py", "from ._common import helper\nfrom . import _common\n")
    _write(tmp_path, "explainers/c.py", "from .local import _common\n")
    assert sorted(private_imports()) == [
        ("xaibench.bench", 2, "module xaibench.explainers.local._common"),
        ("xaibench.explainers.c", 1, "module xaibench.explainers.local._common"),
        ("xaibench.models.a", 1, "name _helper"),
    ]
