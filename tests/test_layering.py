"""No module imports a layer above it -- at module level, inside a function, relative or absolute.

Layers, low to high (a module may import its own layer and the layers below)::

    0  foundation   io, paths, config, cache, device, utils, text, glove, tables, progress, nlp, plotting (no domain knowledge)
    1  data         loading, splitting and describing datasets
    2  models       classifiers, training
    3  explainers   the explainer interface and every explainer
    4  evaluation   protocols scoring explainers (CEBaB, human-grounded, agreement, ...)
    5  top          survey (serves the human-grounded studies), bench, viz (plots of results), reports

Every module of ``src/xaibench`` is parsed with :mod:`ast`; every ``import``/``from ... import``
anywhere in it (function bodies and ``TYPE_CHECKING`` blocks included) is resolved to the
``xaibench`` module it names.  The test lists every violation at once.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "xaibench"

LAYERS: dict[str, int] = {
    "__init__": 0, "io": 0, "paths": 0, "config": 0, "cache": 0, "device": 0, "utils": 0, "text": 0, "glove": 0,
    "tables": 0, "resources": 0, "progress": 0, "nlp": 0, "plotting": 0,
    "data": 1,
    "models": 2,
    "explainers": 3,
    "evaluation": 4,
    "survey": 5, "bench": 5, "viz": 5, "reports": 5,
}
LAYER_NAMES = {0: "foundation", 1: "data", 2: "models", 3: "explainers", 4: "evaluation", 5: "top"}

# Known upward imports of the CEBaB code: none since its vocabulary moved into the data layer
# (issue 8, section 1).  Nothing may be added here.
PENDING_CEBAB: set[tuple[str, str]] = set()


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
    return out


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
    bad = [v for v in violations() if (v[0], v[2]) not in PENDING_CEBAB]
    assert not bad, "upward imports (importer:line -> imported):\n" + "\n".join(
        f"  {me}:{line} -> {target}  ({why})" for me, line, target, why in bad)


def test_pending_cebab_allow_list_is_not_stale():
    # an entry whose import is gone must leave the list, so the list can only shrink
    current = {(v[0], v[2]) for v in violations()}
    stale = sorted(PENDING_CEBAB - current)
    assert not stale, f"PENDING_CEBAB lists imports that no longer exist; remove them: {stale}"


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
