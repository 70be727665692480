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
    that ran it, and ``metadata.xaibench.make_run``: the ``make`` invocation that ran it (its start time
    as an id, and whether it started cold, with no trained model, stored result or computed cache of the
    profile; see :func:`make_run`).  Both are read by the same benchmark, which tells the notebooks of
    one cold ``make all`` from reruns on stored results.  ``metadata.xaibench.plugins``: the plug-ins the
    notebook imported (``XAIBENCH_PLUGINS``), when there were any.
stripped
    per-cell timings (``metadata.execution``, ``metadata.papermill``), papermill's
    ``environment_variables``, widget state and widget views, terminal escape codes and
    carriage-return redraws in streams and tracebacks (what is left is the final text of each line),
    and machine-specific paths (the checkout, the virtualenv's ``site-packages``, the kernel's
    temporary cell files).

Refreshing a committed report without rerunning its experiments (``python -m xaibench.reports sync``)
    Some edits to a notebook cannot change what its code computes: its prose (markdown cells), an
    import line that names a moved module, and the closing cells tagged ``claims``, which read
    only the committed tables under ``figures/tables`` (see :mod:`xaibench.evaluation.claims`).
    :func:`sync` carries exactly those edits into the report -- markdown copied, import-only
    changes copied, ``claims`` cells executed on their own in a fresh kernel -- and records what it
    did under ``metadata.xaibench.synced``.  Any other change to a code cell is refused with the
    cell's number and the ``make`` target that reruns the notebook.

Rerunning a report when its parameters change (``python -m xaibench.paramstamp``, re-exported here)
    ``make`` reruns a report when the parameters it would run with (``-p NAME VALUE``, the profile
    included, and the plug-ins of ``XAIBENCH_PLUGINS``) differ from those the report records
    (``metadata.papermill.parameters``, ``metadata.xaibench.plugins``), not only when
    its notebook or the data are newer.  Each report has a parameter stamp (``data/cache/params/``,
    not committed) that :func:`refresh_param_stamp` brings up to date on every ``make`` run: newer than
    the report when the parameters differ (and a notice says what the rerun replaces and how to restore
    the committed report), else no newer than the report -- so a fresh clone, whose files carry
    arbitrary times, does not rerun a report whose recorded parameters are the requested ones.
    ``python -m xaibench.reports check NAME=value ...`` checks the Make parameters before any of this
    (:func:`check_make_params`).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import re
from pathlib import Path
from typing import Any

from . import paths
from .device import cpu_model, gpu_name, machine_info  # noqa: F401  (re-exported: reports record the machine)
from .steps import make_run  # noqa: F401  (re-exported: reports record the make run)
from .paramstamp import (PLUGINS_PARAM, papermill_value, parameter_changes,  # noqa: F401  (re-exported)
                         plugins_value, recorded_parameters, refresh_param_stamp, requested_parameters)

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
            if isinstance(data.get("text/plain"), (str, list)) and root:  # e.g. a returned Path's repr
                plain = data["text/plain"]
                plain = "".join(plain) if isinstance(plain, list) else plain
                data["text/plain"] = plain.replace(root.rstrip("/") + "/", "")
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
                   machine: dict[str, Any] | None = None, run: dict[str, Any] | None = None,
                   plugins: str = "") -> dict:
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
    if run is not None:
        meta.setdefault("xaibench", {})["make_run"] = run
    if plugins:
        meta.setdefault("xaibench", {})["plugins"] = plugins
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
    nb = strip_notebook(nb, root, output_path=rel, machine=machine_info(), run=make_run(),
                        plugins=plugins_value(os.environ.get(PLUGINS_PARAM)))
    write_text(dest, nbformat.writes(nbformat.from_dict(nb)) + "\n")
    tmp.unlink()
    return dest


class ReportBusy(RuntimeError):
    """Another live make run is making the same report."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def claim_report(report: str | os.PathLike, claim: str | os.PathLike, owner: int) -> None:
    """Record in the file ``claim`` that the make run ``owner`` (its process id) makes ``report``, or raise
    :class:`ReportBusy` naming the live run that already does (two runs of one report wrote one temporary
    notebook, and the second died with a traceback).  A claim whose owner has ended (a make that failed or
    was killed) is taken over; :func:`release_report` removes it when the report is in place."""
    import datetime

    from .io import file_lock, write_json

    claim = Path(claim)
    claim.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(claim.parent):
        try:
            held = json.loads(claim.read_text(encoding="utf-8"))
            pid = int(held["owner"])
        except (OSError, ValueError, KeyError, TypeError):
            held, pid = None, None
        if held is not None and pid != owner and _alive(pid):
            raise ReportBusy(f"{report} is being made by another make run (process {pid}, since "
                             f"{held.get('since', '?')}): wait for it to finish, or stop it (kill {pid}) and run "
                             "make again")
        write_json(claim, {"report": str(report), "owner": owner,
                           "since": datetime.datetime.now().isoformat(timespec="seconds")})


def release_report(claim: str | os.PathLike, owner: int) -> None:
    """Remove the claim file ``claim`` if the make run ``owner`` holds it."""
    from .io import file_lock

    claim = Path(claim)
    if not claim.parent.is_dir():
        return
    with file_lock(claim.parent):
        try:
            if int(json.loads(claim.read_text(encoding="utf-8"))["owner"]) == owner:
                claim.unlink()
        except (OSError, ValueError, KeyError, TypeError):
            pass


CLAIMS_TAG = "claims"
INJECTED_TAG = "injected-parameters"
IMPORT_LINE = re.compile(r"^\s*(from\s+xaibench[\w.]*\s+import\s|import\s+xaibench)")

#: the notebook whose report ends with each paper's claims table
CLAIMS_NOTEBOOK = {"cebab": "20_cebab_evaluation", "human_grounded": "21_human_grounded_evaluation",
                   "cf_feedback": "22_counterfactual_feedback", "cf_faithfulness": "23_counterfactual_faithfulness",
                   "attribution_gt": "24_attribution_ground_truth"}


class StaleReport(ValueError):
    """A report differs from its notebook by more than :func:`sync` may carry over."""


def _tags(cell: Any) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _without_imports(source: str) -> list[str]:
    """The lines of ``source`` that are not ``xaibench`` import lines (continuations of one included)."""
    out, cont = [], False
    for line in source.splitlines():
        if cont or IMPORT_LINE.match(line):
            cont = line.rstrip().endswith(("(", ",", "\\")) or (cont and not line.rstrip().endswith(")"))
            continue
        out.append(line)
    return out


def _is_anchor(cell: Any) -> bool:
    """Code cells that ran the experiment: everything but ``claims`` cells."""
    return cell.get("cell_type") == "code" and CLAIMS_TAG not in _tags(cell)


def sync(notebook: str | os.PathLike, report: str | os.PathLike, execute: bool = True,
         write: bool = True) -> dict[str, Any]:
    """Carry prose, import-only and ``claims``-cell edits of ``notebook`` into the executed ``report``.

    Code cells are matched in order (the report's papermill-injected parameters cell is kept); each
    must equal its notebook cell up to ``xaibench`` import lines, else :class:`StaleReport` names
    it.  Markdown cells are replaced by the notebook's.  ``claims`` cells are copied and, with
    ``execute``, run on their own in a fresh kernel (working directory ``notebooks/``, the
    report's profile), their outputs stored.  Returns what changed; writes the report atomically.
    """
    import nbformat

    from .io import write_text

    notebook, report = Path(notebook), Path(report)
    nb = nbformat.read(notebook, as_version=4)
    rep = nbformat.read(report, as_version=4)
    injected = [c for c in rep.cells if INJECTED_TAG in _tags(c)]
    rep_cells = [c for c in rep.cells if INJECTED_TAG not in _tags(c)]
    want_code = [c for c in nb.cells if _is_anchor(c)]
    have_code = [c for c in rep_cells if _is_anchor(c)]
    if len(want_code) != len(have_code):
        raise StaleReport(f"{report.name}: the notebook has {len(want_code)} code cells, the report "
                          f"{len(have_code)}; rerun it (make {report})")
    imports_changed = []
    for i, (w, h) in enumerate(zip(want_code, have_code)):
        if w.source == h.source:
            continue
        if _without_imports(w.source) != _without_imports(h.source):
            raise StaleReport(f"{report.name}: code cell {i} of {notebook.name} changed beyond its import lines; "
                              f"rerun it (make {report})")
        imports_changed.append(i)
    # rebuild the report's cell list in the notebook's order
    by_anchor = iter(have_code)
    cells, claims_idx = [], []
    for cell in nb.cells:
        if _is_anchor(cell):
            kept = next(by_anchor)
            kept.source = cell.source
            if _tags(cell):
                kept.metadata["tags"] = _tags(cell)
            cells.append(kept)
            if "parameters" in _tags(cell) and injected:
                cells.extend(injected)
        elif cell.cell_type == "code":  # a claims cell
            old = [c for c in rep_cells if CLAIMS_TAG in _tags(c) and c.source == cell.source]
            new = nbformat.v4.new_code_cell(cell.source, metadata=dict(cell.metadata))
            if old:  # the report's claims cell: its outputs until re-executed, and its id (no churn in the diff)
                new.outputs, new.execution_count = old[0].outputs, old[0].execution_count
                if old[0].get("id"):
                    new.id = old[0].id
            claims_idx.append(len(cells))
            cells.append(new)
        else:  # markdown: the report's own cell where its text is unchanged (keeps its id), else the notebook's
            same = [c for c in rep_cells if c.cell_type == cell.cell_type and c.source == cell.source]
            cells.append(same[0] if same else nbformat.from_dict(dict(cell)))
    markdown_changed = [c.source for c in nb.cells if c.cell_type == "markdown"] != \
        [c.source for c in rep_cells if c.cell_type == "markdown"]
    if execute and claims_idx:
        _execute_cells(cells, claims_idx, notebook.parent, _report_profile(rep))
    root = str(paths.project_root())
    for cell in cells:  # outputs of earlier runs, cleaned as finalize cleans new ones (idempotent)
        if cell.cell_type == "code" and cell.get("outputs"):
            cell.outputs = [nbformat.from_dict(o) for o in _clean_outputs([dict(o) for o in cell.outputs], root)]
    rep.cells = cells
    done = {"markdown": markdown_changed, "import_only_cells": imports_changed,
            "claims_cells_executed": len(claims_idx) if execute else 0}
    if write:
        meta = rep.metadata.setdefault("xaibench", {})
        if any([markdown_changed, imports_changed, execute and claims_idx]):
            meta["synced"] = {**done, "claims_tables": "figures/tables (committed)"}
        write_text(report, nbformat.writes(rep) + "\n")
    return done


def _report_profile(rep: Any) -> str:
    params = rep.metadata.get("papermill", {}).get("parameters", {})
    return str(params.get("profile", "full"))


def _execute_cells(cells: list[Any], idx: list[int], cwd: Path, profile: str) -> None:
    """Run ``cells[i]`` for ``i in idx`` in one fresh kernel, in order, and store their outputs."""
    import nbformat
    from nbclient import NotebookClient

    setup = nbformat.v4.new_code_cell(f"from xaibench.config import use_profile\nuse_profile({profile!r})")
    mini = nbformat.v4.new_notebook(cells=[setup] + [nbformat.from_dict(dict(cells[i])) for i in idx])
    from .notebook_engine import IPCKernelManager

    NotebookClient(mini, kernel_name="python3", timeout=600, kernel_manager_class=IPCKernelManager,
                   resources={"metadata": {"path": str(cwd)}}).execute()
    root = str(paths.project_root())
    for i, ran in zip(idx, mini.cells[1:]):
        cells[i].outputs = _clean_outputs([dict(o) for o in ran.outputs], root)
        cells[i].outputs = [nbformat.from_dict(o) for o in cells[i].outputs]
        cells[i].execution_count = ran.execution_count


def refresh_claims(papers: list[str] | None = None, readme: Path | None = None) -> list[str]:
    """Regenerate each paper's claims table from the committed tables, refresh the ``claims`` cell of its
    committed report (if the report exists), the stability table of the verdicts (every paper: each seed left
    out, another CPU's tables; :mod:`xaibench.evaluation.claims_stability`), the README's status section and
    its scorecard verdict.
    Returns what it wrote."""
    from .evaluation import claims as C
    from .evaluation import scorecard as sc
    from .io import write_text

    root = paths.project_root()
    wrote = []
    for paper in papers or list(C.PAPERS):
        C.save_claims(paper)
        wrote.append(f"figures/tables/{paper}_claims.csv")
        nb = root / "notebooks" / f"{CLAIMS_NOTEBOOK[paper]}.ipynb"
        rep = root / "reports" / "full" / f"{CLAIMS_NOTEBOOK[paper]}.ipynb"
        if rep.is_file():
            sync(nb, rep)
            wrote.append(str(rep.relative_to(root)))
    if papers is None or set(papers) == set(C.PAPERS):  # the stability table covers every paper
        from .evaluation import claims_stability

        claims_stability.save(claims_stability.stability_table())
        wrote.append("figures/tables/claims_stability.csv")
    readme = readme or root / "README.md"
    text = readme.read_text(encoding="utf-8")
    new = C.replace_status(text, C.readme_status())
    if sc.VERDICT_BEGIN in new:
        new = C.replace_between(new, sc.VERDICT_BEGIN, sc.VERDICT_END, sc.readme_verdict())
    if new != text:
        write_text(readme, new)
        wrote.append("README.md")
    return wrote


# ---- parameters of a run: reruns and checks ---------------------------------------------------
#: the Make parameters :func:`check_make_params` knows
MAKE_PARAMS = ("PROFILE", "SEEDS", "INCLUSIVE_SEEDS", "ATTR_GT_SEEDS", "GE_SEEDS", "HG_SEEDS", "MODEL", "MODELS", "ABSA_MODEL", "TASKS",
               "CF_IMDB", "CF_NEWSGROUPS", "XAIBENCH_PLUGINS", "EXPLAINERS", "SCORECARD_SEEDS", "GROUP_SWEEPS", "XAIBENCH_DEVICE", "XAIBENCH_THREADS",
               "XAIBENCH_SCHEDULER", "XAIBENCH_LEVERS")


def check_make_param(name: str, value: str) -> None:
    """Raise a ``ValueError`` naming ``name``, ``value`` and what is allowed when a run cannot use it."""
    from .config import check_profile, check_unique, parse_seeds, positive_int
    from .data.cebab import check_tasks
    from .device import check_device, check_threads
    from .models.zoo import check_model

    if name == "PROFILE":
        check_profile(value)
    elif name.endswith("SEEDS"):
        parse_seeds(value, name)
        if "," in value:
            raise ValueError(f"{name}={value!r}: separate the seeds by spaces, e.g. {name}=\"42 43\"")
    elif name in ("MODEL", "ABSA_MODEL"):
        check_model(value, name)
    elif name == "MODELS":
        if not value.split():
            raise ValueError(f"{name}={value!r} names no model: use e.g. {name}=\"minilm lstm\"")
        check_unique(value.split(), name, value)
        for m in value.split():
            check_model(m, name)
    elif name == "TASKS":
        check_tasks(value, name)
    elif name in ("CF_IMDB", "CF_NEWSGROUPS"):
        positive_int(value, name)
    elif name == "XAIBENCH_PLUGINS":
        from .registry import load_plugins

        load_plugins(value)
    elif name == "EXPLAINERS":
        from .config import check_explainer_list

        words = check_explainer_list(value, name)
        if not [w for w in words if w not in ("all", "paper")]:
            return  # nothing to look up (the protocols' imports take most of a second)
        from .evaluation.protocol import load_builtins
        from .registry import explainer_specs

        load_builtins()
        known = list(dict.fromkeys(s.name for s in explainer_specs()))
        unknown = [w for w in words if w not in ("all", "paper") and w not in known]
        if unknown:
            raise ValueError(f"{name}={value!r}: {unknown} are not registered explainers; use empty (the papers' "
                             f"methods), 'all', or names from {known}")
    elif name == "GROUP_SWEEPS":
        if value.strip().lower() not in ("", "auto", "on", "off"):
            raise ValueError(f"{name}={value!r}: use on, off, or leave it empty (auto: on when a GPU is present)")
    elif name == "XAIBENCH_DEVICE":
        check_device(value)
    elif name == "XAIBENCH_THREADS":
        check_threads(value)
    elif name == "XAIBENCH_SCHEDULER":
        from .executor import check_scheduler

        check_scheduler(value)
    elif name == "XAIBENCH_LEVERS":
        from .levers import check_levers

        check_levers(value)
    else:
        raise ValueError(f"unknown parameter {name}; known: {', '.join(MAKE_PARAMS)}")


#: variables a command line may set that the Makefile reads without defining them
MAKE_ENVIRONMENT = ("HF_HUB_OFFLINE", "TOKENIZERS_PARALLELISM", "OMP_WAIT_POLICY", "JUPYTER_PATH", "PYTHONHASHSEED",
                    "XAIBENCH_HOME", "XAIBENCH_QUIET", "XAIBENCH_MAKE_RUN", "XAIBENCH_MAKE_COLD", "SHELL", "MAKEFLAGS")


def makefile_variables(makefile: str | os.PathLike) -> tuple[list[str], set[str]]:
    """``(documented, defined)``: the parameters a Makefile documents (``#: NAME -- text`` lines, in order) and
    every variable it defines (``NAME =``, ``:=``, ``?=``, ``+=``, ``define NAME``, also after ``export`` or
    ``override``)."""
    import re

    text = Path(makefile).read_text(encoding="utf-8")
    documented = list(dict.fromkeys(re.findall(r"^#: ([A-Za-z_][A-Za-z0-9_]*) -- ", text, flags=re.M)))
    defined = set(re.findall(r"^[ \t]*(?:(?:export|override)[ \t]+)*([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?::{1,3}=|\?=|\+=|!=|=)",
                             text, flags=re.M))
    defined |= set(re.findall(r"^[ \t]*(?:(?:export|override)[ \t]+)*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)", text,
                              flags=re.M))
    return documented, defined


def check_command_line(names: list[str], makefile: str | os.PathLike) -> list[str]:
    """The error message of each variable set on make's command line (``names``) that the Makefile does not
    know but that is close to one of its documented parameters (``SEED=43`` for ``SEEDS``, ``seeds`` for
    ``SEEDS``): make would run with that parameter's default without a word.  Names far from every parameter
    are left alone (a command line may set variables for other purposes)."""
    import difflib

    documented, defined = makefile_variables(makefile)
    known = set(documented) | defined | set(MAKE_ENVIRONMENT)
    errors = []
    for name in dict.fromkeys(names):
        if name in known or name.startswith("NB_PARAMS_"):
            continue
        upper = {p.upper(): p for p in documented}
        close = [upper[name.upper()]] if name.upper() in upper else difflib.get_close_matches(
            name, documented, n=1, cutoff=0.75)
        if close:
            errors.append(f"{name} is not a parameter of the Makefile: did you mean {close[0]}? make would run "
                          f"with the default {close[0]} and ignore {name} (make help lists the parameters; names "
                          "are case-sensitive)")
    return errors


def check_make_params(values: dict[str, str]) -> list[str]:
    """The error message of every bad value in ``values`` (``{NAME: value}``; empty list: all good)."""
    errors = []
    for name, value in values.items():
        try:
            check_make_param(name, value)
        except ValueError as e:
            errors.append(str(e))
    return errors


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m xaibench.reports", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    fin = sub.add_parser("finalize", help="clean papermill's output TMP and move it to DEST")
    fin.add_argument("tmp")
    fin.add_argument("dest")
    fin.add_argument("--release", metavar="CLAIM", help="then remove the claim file CLAIM of --owner")
    fin.add_argument("--owner", type=int, help="the process id of the make run that claimed DEST")
    cla = sub.add_parser("claim", help="claim REPORT for the make run --owner (fails, naming the run, while "
                                       "another live run makes it)")
    cla.add_argument("report")
    cla.add_argument("claim", help="the claim file")
    cla.add_argument("--owner", type=int, required=True, help="the process id of the make run")
    sy = sub.add_parser("sync", help="carry prose, import-only and claims-cell edits of notebooks into their "
                                      "committed reports (refuses other code changes)")
    sy.add_argument("reports", nargs="+", help="reports/full/NB.ipynb (the notebook is notebooks/NB.ipynb)")
    sy.add_argument("--no-execute", action="store_true", help="copy claims cells without running them")
    cl = sub.add_parser("claims", help="regenerate every claims table, the claims cell of each committed report "
                                       "and the README status section")
    cl.add_argument("papers", nargs="*", help="papers (default: all)")
    sub.add_parser("readme-status", help="print the README status section generated from the claims tables")
    ch = sub.add_parser("check", help="check Make parameters (NAME=value ...) before any run")
    ch.add_argument("assignments", nargs="*", metavar="NAME=value")
    ch.add_argument("--command-line", default="", metavar="NAMES",
                    help="the variables set on make's command line: a name close to a parameter is refused")
    ch.add_argument("--makefile", default=None, help="the Makefile whose parameters --command-line is checked "
                                                     "against (default: the project's)")
    args = ap.parse_args(argv)
    if args.cmd == "finalize":
        print(f"wrote {finalize(args.tmp, args.dest)}")
        if args.release:
            release_report(args.release, args.owner)
    elif args.cmd == "claim":
        try:
            claim_report(args.report, args.claim, args.owner)
        except ReportBusy as err:
            raise SystemExit(f"error: {err}") from None
    elif args.cmd == "sync":
        root = paths.project_root()
        for r in args.reports:
            rep = Path(r)
            nb = root / "notebooks" / f"{rep.stem.split('-')[0]}.ipynb"
            try:
                print(f"{rep}: {sync(nb, rep, execute=not args.no_execute)}")
            except StaleReport as err:
                raise SystemExit(str(err)) from None
    elif args.cmd == "claims":
        for w in refresh_claims(args.papers or None):
            print(f"wrote {w}")
    elif args.cmd == "readme-status":
        from .evaluation.claims import readme_status

        print(readme_status())
    elif args.cmd == "check":
        pairs = [a.partition("=") for a in args.assignments]
        bad = [a for a, (_, eq, _) in zip(args.assignments, pairs) if not eq]
        if bad:
            ap.error(f"check takes NAME=value arguments, got {bad[0]!r}")
        errors = check_make_params({k: v for k, _, v in pairs})
        if args.command_line.strip():
            errors = check_command_line(args.command_line.split(),
                                        args.makefile or paths.project_root() / "Makefile") + errors
        if errors:
            raise SystemExit("\n".join(f"error: {e}" for e in errors))


if __name__ == "__main__":
    main()
