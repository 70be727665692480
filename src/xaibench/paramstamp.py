"""Parameter stamps: whether a report is rerun because it was run with other parameters.

make refreshes the stamp of every report it considers, on every invocation (``make -n`` too), with one process per
report (``python -m xaibench.paramstamp REPORT STAMP -p NAME VALUE ...``), so this module imports the standard library
and :mod:`xaibench.paths` only (the package's ``__init__`` imports nothing else until asked); :mod:`xaibench.reports`
re-exports its functions.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from . import paths


def papermill_value(text: str) -> Any:
    """``text`` typed as ``papermill -p NAME TEXT`` types it: int, float, ``True``/``False``/``None``, else str."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"True": True, "False": False, "None": None}.get(text, text)


def _same_value(a: Any, b: Any) -> bool:
    """Whether two parameter values mean the same run: ``42`` and ``"42"``, ``"42 43"`` and ``"42  43"``."""
    return " ".join(str(a).split()) == " ".join(str(b).split())


#: the run parameter that names the plug-ins a notebook imported (compared like a papermill parameter)
PLUGINS_PARAM = "XAIBENCH_PLUGINS"


def plugins_value(text: str | None) -> str:
    """``XAIBENCH_PLUGINS`` as a report records it: its words, a ``.py`` file inside the project as a path
    relative to the project (the Makefile passes absolute paths), anything else as given."""
    words = []
    for item in (text or "").split():
        if item.endswith(".py"):
            root = paths.project_root()
            path = Path(item).expanduser().resolve()
            item = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        words.append(item)
    return " ".join(words)


def recorded_parameters(report: str | os.PathLike) -> dict[str, Any] | None:
    """The parameters papermill recorded in ``report``, with ``XAIBENCH_PLUGINS`` when the report records
    plug-ins (``metadata.xaibench.plugins``, see :func:`xaibench.reports.finalize`); ``None``: no report, or none
    recorded."""
    try:
        meta = json.loads(Path(report).read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError):
        return None
    params = (meta.get("papermill") or {}).get("parameters")
    if not isinstance(params, dict):
        return None
    plugins = (meta.get("xaibench") or {}).get("plugins")
    return {**params, PLUGINS_PARAM: plugins} if plugins else params


def requested_parameters(params: dict[str, str], plugins: str | None = None) -> dict[str, str]:
    """The parameters of a run: papermill's ``params`` and, when there are any, the plug-ins the notebook
    imports (``plugins``, by default ``$XAIBENCH_PLUGINS``, which make exports to every notebook)."""
    plugins = plugins_value(os.environ.get(PLUGINS_PARAM) if plugins is None else plugins)
    return {**params, PLUGINS_PARAM: plugins} if plugins else dict(params)


def parameter_changes(recorded: dict[str, Any], requested: dict[str, str]) -> dict[str, tuple[Any, Any]]:
    """``{name: (recorded, requested)}`` for each parameter whose value differs (``None``: not given)."""
    out = {}
    for name in sorted({*recorded, *requested}):
        old = recorded.get(name)
        new = papermill_value(requested[name]) if name in requested else None
        if (name in recorded) != (name in requested) or not _same_value(old, new):
            out[name] = (old, new)
    return out


def refresh_param_stamp(report: str | os.PathLike, stamp: str | os.PathLike, requested: dict[str, str],
                        notice=None) -> str:
    """Bring the parameter ``stamp`` of ``report`` up to date for a run with the ``requested`` parameters
    (``{name: text}``, as ``papermill -p`` gets them).  Returns ``"missing"`` (no report: it is run
    anyway), ``"changed"`` (the stamp is now newer than the report, so make reruns it; ``notice`` -- by
    default a print to stderr -- says what the rerun replaces) or ``"same"`` (the stamp exists and is
    no newer than the report; also when the report records no parameters)."""
    report, stamp = Path(report), Path(stamp)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(requested, sort_keys=True) + "\n"
    if not report.is_file():
        stamp.write_text(text)
        return "missing"
    recorded = recorded_parameters(report)
    changes = parameter_changes(recorded, requested) if recorded is not None else {}
    if changes:
        stamp.write_text(text)
        os.utime(stamp, ns=(report.stat().st_atime_ns, max(report.stat().st_mtime_ns + 1, _now_ns())))
        show = lambda v: "(not given)" if v is None else repr(v)  # noqa: E731
        what = "; ".join(f"{k}: {show(o)} -> {show(n)}" for k, (o, n) in changes.items())
        (notice or (lambda m: print(m, file=sys.stderr, flush=True)))(
            f"{report} was run with other parameters ({what}): rerunning it replaces it. "
            f"To get the committed report back afterwards: git checkout -- {report}")
        return "changed"
    if not stamp.is_file() or stamp.read_text() != text:
        stamp.write_text(text)
    st = report.stat()
    if stamp.stat().st_mtime_ns > st.st_mtime_ns:
        os.utime(stamp, ns=(st.st_atime_ns, st.st_mtime_ns))
    return "same"


def _now_ns() -> int:
    import time

    return time.time_ns()


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m xaibench.paramstamp",
                                 description="refresh the parameter stamp STAMP of REPORT for a run with the given "
                                             "papermill parameters (newer than REPORT only when they differ from "
                                             "its own)")
    ap.add_argument("report")
    ap.add_argument("stamp")
    ap.add_argument("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"), dest="params")
    args = ap.parse_args(argv)
    refresh_param_stamp(args.report, args.stamp, requested_parameters(dict(args.params)))


if __name__ == "__main__":
    main()
