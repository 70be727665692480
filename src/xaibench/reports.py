"""Executed notebooks under ``reports/<profile>/``: finalising papermill's output for readers.

``make`` runs each notebook with papermill into ``reports/<profile>/X.ipynb.tmp.ipynb`` and then
calls ``python -m xaibench.reports finalize TMP DEST``, which cleans the notebook and renames it
to ``DEST`` (atomically: an interrupted run never leaves a half-written report).  The full-profile
reports are committed so that readers can open them on the web without running anything, so what
is kept and what is stripped is chosen for a stable, readable diff:

kept
    every output (text, tables, figures), the execution counts (papermill runs each cell once, top
    to bottom, so they are always 1..N and show that the notebook ran in order), the parameters,
    and papermill's notebook-level ``start_time``/``end_time``/``duration`` (``python -m
    xaibench.bench make_all`` reads the durations to record what ``make all`` costs).
added
    ``metadata.xaibench.machine``: cores, CPU model, GPU and ``XAIBENCH_DEVICE`` of the machine
    that ran it (read by the same benchmark).
stripped
    per-cell timings (``metadata.execution``, ``metadata.papermill``), papermill's
    ``environment_variables``, widget state and widget views, terminal escape codes and
    carriage-return redraws in streams and tracebacks (what is left is the final text of each line),
    and machine-specific paths (the checkout, the virtualenv's ``site-packages``, the kernel's
    temporary cell files).
"""
from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any

from . import paths
from .device import cpu_model, gpu_name, machine_info  # noqa: F401  (re-exported: reports record the machine)

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
CELL_FILE = re.compile(r"/tmp/ipykernel_\d+/\d+\.py")
SITE_PACKAGES = re.compile(r"[^\s\"'(]*/site-packages/")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
PAPERMILL_KEEP = ("default_parameters", "duration", "end_time", "exception", "input_path", "output_path",
                  "parameters", "start_time", "version")


def _clean_text(text: str, root: str) -> str:
    text = ANSI.sub("", text)
    # a carriage return redraws the line: keep what was drawn last
    text = "\n".join(line.rsplit("\r", 1)[-1] if "\r" in line.rstrip("\r") else line.rstrip("\r")
                     for line in text.split("\n"))
    text = CELL_FILE.sub("<cell>", text)
    text = SITE_PACKAGES.sub("site-packages/", text)
    if root:
        text = text.replace(root.rstrip("/") + "/", "")
    return text


def _clean_outputs(outputs: list[dict], root: str) -> list[dict]:
    out: list[dict] = []
    for o in outputs:
        kind = o.get("output_type")
        if kind == "stream":
            text = o.get("text", "")
            text = "".join(text) if isinstance(text, list) else text
            if out and out[-1].get("output_type") == "stream" and out[-1].get("name") == o.get("name"):
                out[-1]["text"] += text  # one block per stream, as a reader expects
                continue
            out.append({**o, "text": text})
        elif kind in ("display_data", "execute_result"):
            data = {k: v for k, v in o.get("data", {}).items() if k != WIDGET_MIME}
            if data:
                out.append({**o, "data": data})
        elif kind == "error":
            out.append({**o, "traceback": [_clean_text(t, root) for t in o.get("traceback", [])]})
        else:
            out.append(o)
    for o in out:
        if o.get("output_type") == "stream":
            o["text"] = _clean_text(o["text"], root)
    return [o for o in out if o.get("output_type") != "stream" or o["text"]]


def strip_notebook(nb: dict, root: str | os.PathLike | None = None, output_path: str | None = None,
                   machine: dict[str, Any] | None = None) -> dict:
    """Return ``nb`` (a notebook as a JSON dict) cleaned as the module docstring describes."""
    root = str(root if root is not None else paths.project_root())
    meta = nb.setdefault("metadata", {})
    meta.pop("widgets", None)
    pm = meta.get("papermill")
    if isinstance(pm, dict):
        pm = {k: v for k, v in pm.items() if k in PAPERMILL_KEEP}
        for key in ("input_path", "output_path"):
            if isinstance(pm.get(key), str):
                pm[key] = _clean_text(pm[key], root)
        if output_path is not None:
            pm["output_path"] = output_path
        meta["papermill"] = pm
    if machine is not None:
        meta.setdefault("xaibench", {})["machine"] = machine
    for cell in nb.get("cells", []):
        cmeta = cell.get("metadata", {})
        for key in ("execution", "papermill"):
            cmeta.pop(key, None)
        if cell.get("cell_type") == "code":
            cell["outputs"] = _clean_outputs(cell.get("outputs", []), root)
    return nb


def finalize(tmp: str | os.PathLike, dest: str | os.PathLike) -> Path:
    """Clean papermill's output ``tmp``, write it to ``dest`` atomically, remove ``tmp``."""
    import nbformat

    from .io import write_text

    tmp, dest = Path(tmp), Path(dest)
    nb = nbformat.read(tmp, as_version=4)
    root = paths.project_root()
    try:
        rel = str(dest.resolve().relative_to(root))
    except ValueError:
        rel = dest.name
    nb = strip_notebook(nb, root, output_path=rel, machine=machine_info())
    write_text(dest, nbformat.writes(nbformat.from_dict(nb)) + "\n")
    tmp.unlink()
    return dest


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m xaibench.reports", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    fin = sub.add_parser("finalize", help="clean papermill's output TMP and move it to DEST")
    fin.add_argument("tmp")
    fin.add_argument("dest")
    args = ap.parse_args(argv)
    if args.cmd == "finalize":
        print(f"wrote {finalize(args.tmp, args.dest)}")


if __name__ == "__main__":
    main()
