"""Every command of docs/extending.md, docs/running.md and the README's "Rerunning with other parameters" runs here.

The commands are read from the Markdown (each line of a ```bash block, each inline `make ...` /
`python ...` span); :data:`FORMS` says how each one runs, and a test fails when the documented list and
:data:`FORMS` differ, so an edited command is run as edited.  The forms:

``dry``
    ``make -n`` with the documented arguments (fast): make checks every parameter (a bad one fails), loads
    the plug-ins, refreshes the parameter stamps and prints what it would run; nothing is run.  Every
    ``make`` command runs this way, a full-profile one only this way.
``quick``
    run as written (slow marked): a quick-profile run, checked by what it writes.
``cli``
    the Python entry point called in this process with the documented arguments, its long work replaced by a
    recorder (the benchmark writes a committed table; the recompute scores every protocol again).
``run``
    run as written (fast: it only reads or re-checks local files).
``test:NAME``
    run as written by the test NAME of tests/test_extending_docs.py (asserted to exist).
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = {"docs/extending.md": ("", None), "README.md": ("## Rerunning with other parameters", "\n## "),
            "docs/running.md": ("", None)}
PLUGIN = "docs/examples/occlusion.py"
#: the editor that the placeholder `my_editor` of docs/extending.md names, registered for the dry run
MY_EDITOR = '''import xaibench
from xaibench.explainers.base import CounterfactualExplainer


@xaibench.register_explainer("my_editor")
class MyEditor(CounterfactualExplainer):
    def explain(self, texts, targets=None):
        return [[t.upper()] for t in texts]
'''
#: the one-line recipe edit of docs/extending.md section 5 (`"nb": ("naive_bayes", {})` in RECIPES), made by
#: the interpreter that make calls
NB_PYTHON = f'''#!{sys.executable}
import runpy, sys
from xaibench.models import zoo
zoo.RECIPES.setdefault("nb", ("naive_bayes", {{}}))
sys.argv = sys.argv[2:]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
'''

FORMS = {
    # docs/extending.md
    f"make scorecard PROFILE=quick XAIBENCH_PLUGINS={PLUGIN}": "quick",
    f"PYTHONPATH=$PWD/src .venv/bin/python -m xaibench.evaluation.scorecard --plugins {PLUGIN} --explainers "
    '"occlusion random_words lime" --protocols eraser': "test:test_the_one_command_of_section_1_scores_the_example",
    f"make human PROFILE=quick XAIBENCH_PLUGINS={PLUGIN} EXPLAINERS=occlusion": "quick",
    "make cf-feedback EXPLAINERS=my_editor": "dry",  # with a plug-in that registers my_editor
    'make cf-feedback EXPLAINERS="polyjuice_hf mice_t5"': "dry",  # the checks only: the models are the user's
    "python -m xaibench.evaluation.scorecard --recompute": "cli",
    "PYTHONPATH=$PWD/src HF_HUB_OFFLINE=1 .venv/bin/python example.py": "test:test_the_script_of_sections_4_to_6_runs",
    "make bench": "dry",
    "make data": "dry",
    "make models MODELS=nb": "dry",  # after the documented recipe edit
    "make cebab MODEL=nb": "dry",  # after the documented recipe edit
    # README, Rerunning with other parameters
    'make cebab MODEL=lstm SEEDS="42 43"': "dry",
    'make models MODELS="minilm lstm" TASKS=5-way': "dry",
    "make cf-feedback CF_IMDB=200 CF_NEWSGROUPS=200": "dry",
    "make human EXPLAINERS=all": "dry",
    # docs/running.md
    'make attribution-gt ATTR_GT_SEEDS="0 1 2"': "dry",
    "make models-pool": "dry",
    "make quick": "dry",
    "make all": "dry",
    "make test": "dry",
    "make help": "dry",
    "make claims": "dry",
    "make lab": "dry",
    "make survey": "dry",
    "make attention-gap": "dry",
    "make attention-length": "dry",
    "make human": "dry",
    "make cebab": "dry",
    "make human cebab": "dry",
    "make env data": "dry",
    "make --what-if=notebooks/11_local_explainers.ipynb reports/full/11_local_explainers.ipynb": "dry",
    "python -m xaibench.bench cores": "cli",
    "python -m xaibench.bench precision": "cli",
    "python -m xaibench.bench augmentation": "cli",
    "python -m xaibench.bench augmentation_overlap": "cli",
    "python -m xaibench.bench make_paper --targets faithfulness": "cli",
    "python -m xaibench.bench make_steps": "cli",
    "python -m xaibench.bench infillers": "cli",
    "python -m xaibench.bench optimizer": "cli",
    "python -m xaibench.bench scorecard": "cli",
    "python -m xaibench.bench textfooler_deletions": "cli",
    "python -m xaibench.bench cnn_encode": "cli",
    "make -j2 all": "dry",
    "make faithfulness XAIBENCH_LEVERS=bf16": "dry",
    "make levers": "dry",
    "python -m xaibench.data fetch --verify --all": "run",
}


def _section(path: str) -> str:
    text = (ROOT / path).read_text(encoding="utf-8")
    start, end = SECTIONS[path]
    i = text.index(start)
    return text[i:text.index(end, i + len(start))] if end else text[i:]


def doc_commands() -> list[str]:
    """The commands of :data:`SECTIONS`, in order, each once."""
    out = []
    for path in SECTIONS:
        text = _section(path)
        for block in re.findall(r"```bash\n(.*?)```", text, re.S):
            out += [c for c in (re.sub(r"\s+#.*$", "", line).strip() for line in block.splitlines()) if c]
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        out += [c for c in (" ".join(span.split()) for span in re.findall(r"`([^`]+)`", prose))
                if re.match(r"(\S+=\S+ )*(\.venv/bin/)?(make|python) \S", c)]
    return list(dict.fromkeys(out))


def test_every_documented_command_has_a_form():
    """Fails when a command is added to, edited in or removed from the docs: FORMS follows them."""
    assert sorted(doc_commands()) == sorted(FORMS)


def test_the_commands_covered_elsewhere_are_run_there():
    from tests import test_extending_docs

    for form in FORMS.values():
        if form.startswith("test:"):
            assert callable(getattr(test_extending_docs, form.removeprefix("test:"), None)), form


def _dry_run(command: str, tmp_path: Path) -> subprocess.CompletedProcess:
    args = shlex.split(command)[1:]
    if "EXPLAINERS=my_editor" in args:
        (tmp_path / "my_editor.py").write_text(MY_EDITOR)
        args.append(f"XAIBENCH_PLUGINS={tmp_path / 'my_editor.py'}")
    if any(a.endswith("=nb") for a in args):
        (tmp_path / "python").write_text(NB_PYTHON)
        (tmp_path / "python").chmod(0o755)
        args.append(f"PY={tmp_path / 'python'}")
    return subprocess.run(["make", "--no-print-directory", "-n", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
@pytest.mark.parametrize("command", [c for c, f in FORMS.items() if f == "dry"])
def test_each_make_command_passes_its_checks_under_a_dry_run(command, tmp_path):
    out = _dry_run(command, tmp_path)
    assert out.returncode == 0, f"make -n {command[5:]} failed:\n{out.stderr[-3000:]}"
    assert "error" not in out.stderr.lower(), out.stderr[-3000:]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_the_example_scorecard_command_would_run_notebook_30_with_the_plugin(tmp_path):
    """Whether or not a quick scorecard exists, one made without the plug-in does not count."""
    out = _dry_run(f"make scorecard PROFILE=quick XAIBENCH_PLUGINS={PLUGIN}", tmp_path)
    report = ROOT / "reports/quick/30_scorecard.ipynb"
    from xaibench.reports import recorded_parameters

    if (recorded_parameters(report) or {}).get("XAIBENCH_PLUGINS") != PLUGIN:
        assert "notebooks/30_scorecard.ipynb reports/quick/30_scorecard.ipynb.tmp.ipynb" in out.stdout, out.stdout


def test_the_recompute_command_scores_every_protocol_again_in_the_quick_profile(monkeypatch):
    import pandas as pd

    from xaibench.evaluation import scorecard as sc

    [command] = [c for c in FORMS if "--recompute" in c]
    seen = []

    def record(explainers, profile, seeds, protocols, reuse=True):
        seen.append((explainers, profile, list(seeds), protocols, reuse))
        rows = pd.DataFrame(columns=[*sc.ROW_COLUMNS, "source", "paper"])
        rows.attrs["skipped"] = []
        return rows

    monkeypatch.setattr(sc, "collect", record)
    monkeypatch.setattr(sc, "protocol_ranks", lambda rows: pd.DataFrame(
        columns=["protocol", "explainer", "paper", "rank", "rank_std", "position", "n_explainers"]))
    sc.main(shlex.split(command)[3:])
    assert seen == [("all", "quick", [42], None, False)]


@pytest.mark.parametrize("command", [c for c, f in FORMS.items() if f == "cli" and "xaibench.bench" in c])
def test_each_benchmark_command_dispatches_to_its_benchmark(command, monkeypatch):
    from xaibench.bench import __main__ as bench

    name = shlex.split(command)[3]
    seen = []
    monkeypatch.setattr(bench, "write_bench_table", lambda df, table: seen.append(table) or ROOT / table)
    bench.main(shlex.split(command)[3:], run=lambda cmd, args: seen.append((cmd, getattr(args, "workloads", None))))
    workloads = ["image", "minilm", "bilstm"] if name in ("cores", "precision") else None  # their default workloads
    assert seen == [(name, workloads), f"bench_{name}.csv"]


def test_the_data_verify_command_runs():
    cmd = [c for c, f in FORMS.items() if f == "run"]
    assert cmd == ["python -m xaibench.data fetch --verify --all"]
    out = subprocess.run([sys.executable, *shlex.split(cmd[0])[1:]], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]


def _run_quick(command: str) -> subprocess.CompletedProcess:
    out = subprocess.run(shlex.split(command), cwd=ROOT, capture_output=True, text=True, timeout=1800,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    return out


@pytest.mark.slow
def test_the_one_line_scorecard_command_ranks_the_example():
    import pandas as pd

    from xaibench.reports import recorded_parameters

    _run_quick(next(c for c, f in FORMS.items() if f == "quick" and "scorecard" in c))
    assert recorded_parameters(ROOT / "reports/quick/30_scorecard.ipynb")["XAIBENCH_PLUGINS"] == PLUGIN
    ranks = pd.read_csv(ROOT / "reports/quick/figures/tables/scorecard_protocol_ranks.csv")
    assert {"human_grounded", "eraser", "cf_faithfulness", "attribution_gt"} <= set(
        ranks.loc[ranks.explainer == "occlusion", "protocol"])


@pytest.mark.slow
def test_the_human_grounded_command_shows_the_example_beside_the_papers_methods():
    import nbformat

    _run_quick(next(c for c, f in FORMS.items() if f == "quick" and c.startswith("make human")))
    for name in ("11_local_explainers", "21_human_grounded_evaluation"):
        nb = nbformat.read(ROOT / f"reports/quick/{name}.ipynb", as_version=4)
        text = nbformat.writes(nb)
        assert "occlusion" in text and '"output_type": "error"' not in text, name
