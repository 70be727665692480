"""The Makefile's user interface: `make help` and the papermill command lines it would run."""
import ast
import os
import re
import shlex
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = (ROOT / "Makefile").read_text()
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")


def _make(*args: str) -> str:
    out = subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, f"make {' '.join(args)} failed:\n{out.stderr}"
    return out.stdout


def test_help_prints_every_target_and_parameter_with_its_value():
    text = _make("help")
    assert "$(" not in text and "$$" not in text, f"make help prints an unexpanded variable:\n{text}"
    targets = re.findall(r"^([a-zA-Z_-]+):.*?## (.*)$", MAKEFILE, flags=re.M)
    assert targets
    for target, desc in targets:
        assert re.search(rf"^  {re.escape(target)}\s+{re.escape(desc)}$", text, flags=re.M), \
            f"make help does not list target {target!r} with its description"
    params = re.findall(r"^#: ([A-Z_]+) -- (.*)$", MAKEFILE, flags=re.M)
    names = {name for name, _ in params}
    assert {"PROFILE", "MODEL", "MODELS", "SEEDS", "TASKS", "ABSA_MODEL", "SURVEY_PORT", "SURVEY_STUDY"} <= names
    for name, desc in params:
        assert re.search(rf"^  {name}\s+{re.escape(desc)} \[.*\]$", text, flags=re.M), \
            f"make help does not list parameter {name} with its description and value"
    assert re.search(r"^  SURVEY_PORT\s+.* \[8765\]$", text, flags=re.M)
    assert re.search(r"^  SEEDS\s+.* \[42 43 44 45 46\]$", text, flags=re.M)
    # every `?=` parameter a user may set is documented
    for var in re.findall(r"^(?:export )?([A-Z_]+) \?=", MAKEFILE, flags=re.M):
        if var not in ("HF_HUB_OFFLINE", "TOKENIZERS_PARALLELISM"):
            assert var in names, f"parameter {var} has no `#: {var} -- ...` line, so make help misses it"


def test_help_reflects_command_line_values():
    assert re.search(r"^  SURVEY_PORT\s+.* \[9999\]$", _make("help", "SURVEY_PORT=9999"), flags=re.M)


def _lab_command(*args: str) -> list[str]:
    lines = [line for line in _make("-n", "lab", *args).splitlines() if "jupyter lab" in line]
    assert len(lines) == 1, f"make -n lab should print one `jupyter lab` command, got {lines}"
    return shlex.split(lines[0])


@pytest.mark.parametrize("uid, allow_root", [("0", True), ("1000", False)])
def test_lab_allows_root_only_when_run_as_root(uid, allow_root):
    """Jupyter refuses root without --allow-root; a normal user's command line stays as it was."""
    cmd = _lab_command(f"EFFECTIVE_UID={uid}")
    assert cmd[1:5] == ["-m", "jupyter", "lab", "--notebook-dir=notebooks"]
    assert ("--allow-root" in cmd) is allow_root, cmd


def test_lab_reads_the_effective_user_id():
    assert ("--allow-root" in _lab_command()) is (os.geteuid() == 0)


def _parameters_cell_names(notebook: Path) -> set[str]:
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    return {t.id for node in ast.parse(cell.source).body if isinstance(node, ast.Assign)
            for t in node.targets if isinstance(t, ast.Name)}


@pytest.mark.parametrize("notebook", sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")), ids=lambda p: p.stem)
def test_papermill_reads_every_parameter_of_the_parameters_cell(notebook):
    """papermill parses the parameters cell with its own regex, not Python's: a comment holding `=` or
    quotes makes it skip the line ("Unable to parse line ...; Passed unknown parameter"), and
    `papermill --help-notebook` then hides that parameter."""
    import nbformat
    from papermill.translators import PythonTranslator

    cell = next(c for c in nbformat.read(notebook, as_version=4).cells
                if "parameters" in c.metadata.get("tags", []))
    assert {p.name for p in PythonTranslator.inspect(cell)} == _parameters_cell_names(notebook), \
        f"{notebook.name}: papermill cannot parse a line of the parameters cell; put its comment on the line above"


def _papermill_lines(*args: str) -> list[list[str]]:
    text = _make("-n", "-B", *args)
    return [shlex.split(line) for line in text.splitlines() if " -m papermill " in line]


@pytest.mark.parametrize("args", [("all",), ("all", "MODEL=lstm", "SEEDS=42 43"), ("all", "PROFILE=quick")],
                         ids=["defaults", "one-model", "quick"])
def test_papermill_lines_pass_each_parameter_once_and_only_known_ones(args):
    lines = _papermill_lines(*args)
    notebooks = sorted({Path(a).name for cmd in lines for a in cmd if a.startswith("notebooks/")})
    assert {p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")} <= set(notebooks), \
        "`make all` does not run every notebook"
    for cmd in lines:
        names = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-p"]
        dup = [n for n, c in Counter(names).items() if c > 1]
        assert not dup, f"papermill gets -p {dup} more than once: {' '.join(cmd)}"
        assert "profile" in names
        source = ROOT / next(a for a in cmd if a.startswith("notebooks/"))
        unknown = set(names) - _parameters_cell_names(source)
        assert not unknown, f"{source.name} has no parameter {sorted(unknown)} in its parameters cell"
        out = cmd[cmd.index(str(source.relative_to(ROOT))) + 1]
        assert out.endswith(".tmp.ipynb"), "papermill must write a temporary file (renamed when done)"


def test_local_explainers_report_is_made_after_the_cebab_classifiers_it_explains():
    """Notebook 11 shows heat maps of the CEBaB 5-way classifiers; `make human` on a fresh clone once made it before
    they were trained, and the report said "no trained CEBaB model" instead."""
    runs = [li for li in _make("-n", "-B", "reports/full/11_local_explainers.ipynb").splitlines() if " -m papermill " in li]
    made = [re.search(r"reports/full/(\S+?)\.ipynb", li).group(1) for li in runs]
    assert made[-1] == "11_local_explainers", made
    assert {"02_train_classifier-minilm-5-way-exclusive", "02_train_classifier-lstm-5-way-exclusive"} <= set(made[:-1])


def test_all_records_its_cost_and_reports_are_finalized():
    text = _make("-n", "-B", "all")
    assert "xaibench.bench make_all" in text.splitlines()[-1], "`make all` must end with the cost recorder"
    assert text.count("-m xaibench.reports finalize") == text.count(" -m papermill ")
    assert "xaibench.bench make_all" not in _make("-n", "-B", "all", "PROFILE=quick")


def test_test_target_prints_what_it_runs():
    line = next(li for li in _make("-n", "-B", "test").splitlines() if "pytest" in li)
    assert " -v" in line and "--durations" in line


def test_readme_names_only_real_targets_and_two_setup_commands():
    readme = (ROOT / "README.md").read_text()
    targets = set(re.findall(r"^([a-zA-Z_-]+):", MAKEFILE, flags=re.M))
    for command in set(re.findall(r"`make ([^`]*)`", readme)):
        for name in (w for w in command.split() if "=" not in w and not w.startswith("-")):
            report = re.fullmatch(r"reports/(?:full|quick)/(\w+)\.ipynb", name)
            if report:  # a file target of the papermill pattern rule: its notebook must exist
                assert (ROOT / "notebooks" / f"{report.group(1)}.ipynb").exists(), f"README mentions `make {name}`, but no such notebook"
            else:
                assert name in targets, f"README mentions `make {name}`, which the Makefile does not define"
    setup = re.search(r"## Set-up and use\s+```bash\n(.*?)```", readme, flags=re.S)
    assert setup, "README needs its set-up block"
    commands = [li.split("#")[0].strip() for li in setup.group(1).splitlines() if li.split("#")[0].strip()]
    assert commands == ["make all", "make test"]


def test_help_lists_every_environment_variable_the_readme_names():
    """A reader who meets XAIBENCH_THREADS (or any XAIBENCH_* / HF_HUB_OFFLINE variable) in the
    README finds it in `make help`, with what it does and its current value."""
    readme = (ROOT / "README.md").read_text()
    named = sorted(set(re.findall(r"\b(XAIBENCH_[A-Z0-9_]*[A-Z0-9]|HF_HUB_OFFLINE)\b", readme)))
    text = _make("help")
    missing = [v for v in named if not re.search(rf"^  {v}\s+\S.* \[.*\]$", text, flags=re.M)]
    assert not missing, f"README names {missing}, which `make help` does not list: add `#: NAME -- text` lines"


def test_claims_target_runs_the_claims_cli():
    assert re.search(r"^claims:.*## regenerate every paper's claims table from the committed tables, refresh the "
                     r"claims cell of each committed report and the README status section$", MAKEFILE, flags=re.M)
    lines = [li for li in _make("-n", "-B", "claims").splitlines() if "xaibench" in li]
    assert lines and lines[-1].endswith("-m xaibench.reports claims")


# ---- parameters: reruns when they change, checks before any work ------------------------------
REPORT = "reports/full/23_counterfactual_faithfulness.ipynb"  # its seeds are GE_SEEDS
GE_DEFAULT = "42 43 44 45 46 47 48 49 50 51"
OLD, NEW = 1_700_000_000, 1_710_000_000  # file times: sources and data, then the report


def _scratch(tmp_path: Path, params: dict | None = None) -> Path:
    """A project with the Makefile, notebook 23 and its report (recorded with ``params``), every source
    older than the report, and a `python` that records papermill runs instead of running them."""
    import json

    for rel in ("Makefile", "pyproject.toml", "notebooks/23_counterfactual_faithfulness.ipynb", REPORT,
                "src/xaibench/resources/checksums.sha256"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    if params is not None:
        nb = json.loads((tmp_path / REPORT).read_text())
        nb["metadata"]["papermill"]["parameters"] = params
        (tmp_path / REPORT).write_text(json.dumps(nb))
    cksum = subprocess.run("cksum < pyproject.toml", shell=True, cwd=tmp_path, capture_output=True,
                           text=True).stdout.split()[0]
    for rel in ("data/raw/.fetched", f".venv/.installed-{cksum}"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).touch()
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/bash\nif [ "$2" = papermill ]; then echo "$*" >> {tmp_path}/papermill.log; exit 0; fi\n'
                    f'if [ "$3" = finalize ]; then exit 0; fi\nexec {shlex.quote(__import__("sys").executable)} "$@"\n')
    fake.chmod(0o755)
    for f in tmp_path.rglob("*"):
        if f.is_file():
            import os

            os.utime(f, (OLD, NEW if f == tmp_path / REPORT else OLD))
    return tmp_path


def _run(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", **(env or {})}
    return subprocess.run(["make", "--no-print-directory", f"PY={cwd / 'python'}", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def _papermill_runs(out: subprocess.CompletedProcess) -> list[str]:
    return [li for li in out.stdout.splitlines() if " -m papermill " in li]


def test_a_report_recorded_with_other_parameters_is_rerun_and_the_notice_says_what_it_replaces(tmp_path):
    """After `make faithfulness`, `make faithfulness GE_SEEDS=43` used to print "Nothing to be done"."""
    cwd = _scratch(tmp_path, {"profile": "full", "seeds": GE_DEFAULT})
    for same in ([], ["GE_SEEDS=42  43 44 45 46 47 48 49 50 51"]):
        out = _run(cwd, "-n", REPORT, *same)
        assert out.returncode == 0, out.stderr
        assert not _papermill_runs(out), f"rerun although the parameters ({same}) are the recorded ones:\n{out.stdout}"
        assert "rerunning it replaces it" not in out.stderr
    out = _run(cwd, "-n", REPORT, "GE_SEEDS=43")
    assert out.returncode == 0, out.stderr
    runs = _papermill_runs(out)
    assert len(runs) == 1 and shlex.split(runs[0])[-6:] == ["-p", "profile", "full", "-p", "seeds", "43"]
    assert REPORT in out.stderr and f"'{GE_DEFAULT}' -> 43" in out.stderr
    assert f"git checkout -- {REPORT}" in out.stderr
    # the profile is a parameter too, and a parameter the report does not record
    cwd2 = _scratch(tmp_path / "p", {"profile": "quick", "seeds": "42 43 44 45 46"})
    assert _papermill_runs(_run(cwd2, "-n", REPORT))


def test_a_report_recorded_with_the_requested_parameters_is_kept_whatever_the_file_times(tmp_path):
    """A fresh clone: the committed report records the requested parameters, and its stamp (left by an
    earlier run, or absent) may be newer than the report."""
    import os

    cwd = _scratch(tmp_path, {"profile": "full", "seeds": GE_DEFAULT})
    stamp = cwd / "data/cache/params/full/23_counterfactual_faithfulness.params"
    stamp.parent.mkdir(parents=True)
    stamp.write_text("{}\n")
    os.utime(stamp, (NEW + 100, NEW + 100))
    out = _run(cwd, "faithfulness")  # a real run (papermill is recorded, not run)
    assert out.returncode == 0, out.stderr
    assert not (cwd / "papermill.log").exists(), "rerun although the parameters are the recorded ones"
    assert stamp.stat().st_mtime <= (cwd / REPORT).stat().st_mtime
    out = _run(cwd, "faithfulness", "GE_SEEDS=43")
    assert out.returncode == 0, out.stderr
    assert "-p seeds 43" in (cwd / "papermill.log").read_text(), "a real run with other seeds must rerun"


def test_a_report_is_rerun_when_the_plugins_differ_from_those_it_records(tmp_path):
    """`make scorecard PROFILE=quick XAIBENCH_PLUGINS=docs/examples/occlusion.py` after a run without the
    plug-in used to print "Nothing to be done": the plug-ins are a parameter of the run."""
    import json

    plugin = "docs/examples/occlusion.py"
    cwd = _scratch(tmp_path, {"profile": "full", "seeds": GE_DEFAULT})
    (cwd / plugin).parent.mkdir(parents=True)
    shutil.copy(ROOT / plugin, cwd / plugin)
    out = _run(cwd, "-n", REPORT, f"XAIBENCH_PLUGINS={plugin}")
    assert out.returncode == 0, out.stderr
    assert len(_papermill_runs(out)) == 1, f"not rerun with a plug-in the report did not import:\n{out.stdout}"
    assert f"XAIBENCH_PLUGINS: (not given) -> '{plugin}'" in out.stderr, out.stderr
    nb = json.loads((cwd / REPORT).read_text())  # a report made with the plug-in records it, relative
    nb["metadata"].setdefault("xaibench", {})["plugins"] = plugin
    (cwd / REPORT).write_text(json.dumps(nb))
    os.utime(cwd / REPORT, (NEW, NEW))
    out = _run(cwd, "-n", REPORT, f"XAIBENCH_PLUGINS={plugin}")
    assert out.returncode == 0 and not _papermill_runs(out), out.stdout + out.stderr
    out = _run(cwd, "-n", REPORT)  # and again without it
    assert len(_papermill_runs(out)) == 1 and f"XAIBENCH_PLUGINS: '{plugin}' -> (not given)" in out.stderr


def test_finalize_records_the_plugins_relative_to_the_project(tmp_path, monkeypatch):
    import json

    from xaibench import paths, reports

    monkeypatch.setenv("XAIBENCH_PLUGINS", f"{paths.project_root() / 'docs/examples/occlusion.py'} my_module")
    tmp = tmp_path / "r.ipynb.tmp.ipynb"
    tmp.write_text(json.dumps({"cells": [], "metadata": {"papermill": {"parameters": {"profile": "quick"}}},
                               "nbformat": 4, "nbformat_minor": 5}))
    reports.finalize(tmp, tmp_path / "r.ipynb")
    assert reports.recorded_parameters(tmp_path / "r.ipynb") == {
        "profile": "quick", "XAIBENCH_PLUGINS": "docs/examples/occlusion.py my_module"}


def test_every_target_specific_parameter_reaches_the_stamp():
    """The stamp compares exactly what papermill gets: for each report, `make -n -B` prints the same
    `-p` list on its stamp line and its papermill line."""
    text = _make("-n", "-B", "all", "MODEL=lstm", "SEEDS=42 43", "CF_IMDB=300")
    stamps = {}
    for line in text.splitlines():
        if " -m xaibench.paramstamp " in line:
            cmd = shlex.split(line.split("then ", 1)[1].split(";")[0])
            stamps[Path(cmd[3]).name] = cmd[5:]
    runs = {}
    for cmd in [shlex.split(li) for li in text.splitlines() if " -m papermill " in li]:
        i = cmd.index("--progress-bar")
        out = next(a for a in cmd if a.endswith(".tmp.ipynb"))
        runs[Path(out).name.removesuffix(".tmp.ipynb")] = cmd[i + 1:]
    assert len(runs) >= 19 and stamps == runs
    assert stamps["22_counterfactual_feedback.ipynb"] == ["-p", "profile", "full", "-p", "n_imdb", "300",
                                                          "-p", "n_newsgroups", "1000"]


@pytest.mark.parametrize("assignment,name", [("SEEDS=abc", "SEEDS"), ("CF_IMDB=-1", "CF_IMDB"),
                                             ("MODEL=nonexistent", "MODEL"), ("XAIBENCH_THREADS=0", "XAIBENCH_THREADS"),
                                             ("XAIBENCH_SCHEDULER=dask", "XAIBENCH_SCHEDULER"),
                                             ("PROFILE=fast", "PROFILE"), ("TASKS=4-way", "TASKS")])
def test_a_bad_parameter_stops_make_before_any_notebook(tmp_path, assignment, name):
    import time

    cwd = _scratch(tmp_path, {"profile": "full", "seeds": "1"})  # out of date: would run without the check
    t = time.time()
    out = _run(cwd, "faithfulness", assignment)
    assert out.returncode != 0 and time.time() - t < 60
    assert not (cwd / "papermill.log").exists(), "a notebook ran with a bad parameter"
    assert f"{assignment.split('=')[0]}='{assignment.split('=', 1)[1]}'" in out.stderr, out.stderr
    assert name in out.stderr


def test_make_dry_run_with_a_bad_parameter_fails():
    out = subprocess.run(["make", "--no-print-directory", "-n", "faithfulness", "SEEDS=abc"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "SEEDS='abc'" in out.stderr and "integers >= 0" in out.stderr


@pytest.mark.parametrize("jobs, preset, expected", [([], None, "unset"), (["-j1"], None, "unset"),
                                                     (["-j2"], None, "PASSIVE"), (["-j", "2"], None, "PASSIVE"),
                                                     (["-j2"], "ACTIVE", "ACTIVE")])
def test_notebooks_side_by_side_wait_without_spinning(tmp_path, jobs, preset, expected):
    """make -jN: a notebook's torch threads share the cores with another notebook's, so its kernel starts with
    OMP_WAIT_POLICY=PASSIVE (bench_cores: spinning side by side halves the throughput); a set value is kept,
    and a serial make leaves the variable alone."""
    import os

    cwd = _scratch(tmp_path, {"profile": "full", "seeds": GE_DEFAULT})
    log = cwd / "policy.log"
    (cwd / "python").write_text(f'#!/bin/bash\nif [ "$2" = papermill ]; then echo "${{OMP_WAIT_POLICY:-unset}}" > {log}; '
                                f'exit 0; fi\nif [ "$3" = finalize ]; then exit 0; fi\n'
                                f'exec {shlex.quote(__import__("sys").executable)} "$@"\n')
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "MAKEFLAGS", "MFLAGS")}
    if preset:
        env["OMP_WAIT_POLICY"] = preset
    out = subprocess.run(["make", "--no-print-directory", f"PY={cwd / 'python'}", *jobs, REPORT, "GE_SEEDS=43"],
                         cwd=cwd, env={**env, "PYTHONPATH": str(ROOT / "src")}, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert log.read_text().strip() == expected


def _cold_checker(folder: Path):
    """A copy of the Makefile in ``folder`` and a function ``cold(*make_args)``: the values ``XAIBENCH_MAKE_COLD``
    takes in that make run (one per make level), run with this process's environment minus the variables of
    the `make test` run that started it (they are exported to this process)."""
    import os

    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, folder / name)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("XAIBENCH_MAKE_") and k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}

    def cold(*args):
        out = subprocess.run(["make", "-n", "-p", *(args or ["help"])], cwd=folder, capture_output=True, text=True,
                             env=env, timeout=120).stdout
        return {line.split(":=")[1].strip() for line in out.splitlines() if line.startswith("XAIBENCH_MAKE_COLD :=")}

    return cold


def test_makefile_marks_a_make_run_cold_only_when_nothing_is_stored(tmp_path):
    """The Makefile's XAIBENCH_MAKE_COLD (read by finalize): parameter stamps do not count, a stored model,
    result or computed cache of the profile does; another profile's stores do not."""
    cold = _cold_checker(tmp_path)

    assert cold() == {"yes"}
    (tmp_path / "data" / "cache" / "params" / "full").mkdir(parents=True)
    assert cold() == {"yes"}
    (tmp_path / "reports" / "quick" / "data" / "results" / "cf_feedback").mkdir(parents=True)
    assert cold() == {"yes"} and cold("PROFILE=quick") == {"no"}
    (tmp_path / "data" / "models" / "cebab").mkdir(parents=True)
    assert cold() == {"no"}
    # `make quick` runs `make all PROFILE=quick` below it, which judges the quick stores (cold) itself
    shutil.rmtree(tmp_path / "reports" / "quick")
    assert cold("quick") == {"no", "yes"}  # the outer make (full: a stored model), the inner one (quick)
    (tmp_path / "reports" / "quick" / "data" / "models" / "cebab").mkdir(parents=True)
    assert cold("quick") == {"no"}
    shutil.rmtree(tmp_path / "data" / "models")
    (tmp_path / "data" / "cache" / "outputs.sqlite").touch()
    assert cold() == {"no"}


def test_makefile_cold_check_covers_every_store_folder_of_the_package(tmp_path, monkeypatch):
    """The cold check names the store folders itself (it runs before the environment exists, so it cannot ask
    xaibench): a file in any folder the package stores computed things in -- the models, results, studies and
    cache of :mod:`xaibench.paths` and :mod:`~xaibench.evaluation.human_grounded.study_files`, in both profiles --
    makes the run not cold, and the package names no folder under data/ that the check does not know."""
    from xaibench import paths
    from xaibench.evaluation.human_grounded.study_files import studies_dir

    # every data/<name> the package builds a path to: the inputs that `make data` prepares, or a store the check knows
    named = set()
    for src in (ROOT / "src" / "xaibench").rglob("*.py"):
        named |= set(re.findall(r"data_dir\(\)\s*/\s*[\"'](\w+)[\"']", src.read_text()))
    cold_line = next(line for line in MAKEFILE.splitlines() if line.startswith("XAIBENCH_MAKE_COLD :="))
    known = set(re.findall(r"(\w+)/\*", cold_line))
    assert {"models", "results", "studies", "cache"} <= named, named
    assert named - {"raw", "processed"} <= known, f"store folders the Makefile's cold check misses: {named - known}"

    cold_of = _cold_checker(tmp_path)
    cold = lambda profile: cold_of("help", f"PROFILE={profile}")  # noqa: E731

    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    monkeypatch.delenv("XAIBENCH_CACHE_DIR", raising=False)
    for profile in ("full", "quick"):
        monkeypatch.setenv("XAIBENCH_PROFILE", profile)
        for folder in (paths.models_dir(), paths.results_dir(), studies_dir(), paths.cache_dir()):
            assert cold(profile) == {"yes"}, (profile, folder)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "stored.parquet").touch()
            assert cold(profile) == {"no"}, f"PROFILE={profile}: a file in {folder} leaves the run cold"
            shutil.rmtree(tmp_path / "data" if folder.is_relative_to(tmp_path / "data") else tmp_path / "reports")


@pytest.mark.parametrize("assignment,message", [
    ("SEED=43", "SEED is not a parameter of the Makefile: did you mean SEEDS?"),
    ("SEEDS=42 42 43", "SEEDS='42 42 43' names 42 more than once"),
    ("SEEDS=42 4294967296", "seed 4294967296 is out of range"),
])
def test_a_misspelt_repeated_or_out_of_range_parameter_stops_make_before_any_notebook(tmp_path, assignment, message):
    """make faithfulness SEED=43 ran the default seeds without a word; SEEDS="42 42 43" counted 42 twice."""
    cwd = _scratch(tmp_path, {"profile": "full", "seeds": "1"})  # out of date: would run without the check
    out = _run(cwd, "faithfulness", assignment)
    assert out.returncode != 0 and message in out.stderr, out.stderr
    assert not (cwd / "papermill.log").exists(), "a notebook ran"
    out = _run(cwd, "faithfulness", "UNRELATED_NAME=1")  # a name far from every parameter is left alone
    assert out.returncode == 0, out.stderr


def test_a_second_make_run_of_a_report_being_made_stops_naming_the_first(tmp_path):
    """Two make runs of one target shared one temporary report, and the second died with a traceback."""
    import time

    cwd = _scratch(tmp_path, {"profile": "full", "seeds": "1"})  # out of date: make runs notebook 23
    fake = cwd / "python"
    fake.write_text(fake.read_text().replace('then echo "$*"', 'then sleep 4; echo "$*"'))
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT / "src")}
    first = subprocess.Popen(["make", "--no-print-directory", f"PY={fake}", REPORT], cwd=cwd, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    claim = cwd / "data/cache/params/full/23_counterfactual_faithfulness.ipynb.running"
    t0 = time.time()
    while not claim.exists() and time.time() - t0 < 30:
        time.sleep(0.05)
    second = _run(cwd, REPORT)
    assert second.returncode != 0 and f"{REPORT} is being made by another make run (process {first.pid}" \
        in second.stderr, second.stderr
    assert "Traceback" not in second.stderr
    assert first.wait(60) == 0, first.stderr.read()
    assert (cwd / "papermill.log").read_text().count("-m papermill ") == 1  # the second ran nothing
    third = _run(cwd, REPORT, "GE_SEEDS=43")  # the first run has ended: its claim is taken over
    assert third.returncode == 0, third.stderr
    assert (cwd / "papermill.log").read_text().count("-m papermill ") == 2


def test_notebook_02_reports_train_in_one_pool_first():
    """Every notebook-02 report make is about to run trains its classifiers in the pool first (one
    `cebab_training --reports` call covering every part), and the reports then run in order."""
    lines = _make("-n", "-B", "reports/full/03_classifier_performance.ipynb").splitlines()
    pool = [i for i, li in enumerate(lines) if "-m xaibench.models.cebab_training" in li]
    runs = [i for i, li in enumerate(lines) if " -m papermill notebooks/02_train_classifier" in li]
    assert len(pool) == 1 and runs and pool[0] < min(runs), (pool, runs)
    call = _continued(lines, pool[0])
    assert "--reports reports/full" in call and "--prereq notebooks/02_train_classifier.ipynb" in call
    assert call.count("--part ") == len(runs) == 13  # 2 models x 3 tasks x 2 splits, and the ABSA model


def _continued(lines: list[str], i: int) -> str:
    """Line ``i`` of a dry run's output joined with the lines its trailing backslashes continue it onto."""
    out = [lines[i]]
    while out[-1].rstrip().endswith("\\") and i + 1 < len(lines):
        i += 1
        out.append(lines[i])
    return " ".join(out)


def test_the_pool_trains_the_classifiers_the_goals_need_whichever_goal_reaches_it_first():
    """make human reaches the pool through notebook 11, which needs the 5-way exclusive classifiers only: the pool
    trains those two parts, not every out-of-date report's.  make all, and make human cebab (where notebook 11
    reaches the pool before CEBaB's notebooks), train all 13; a notebook-02 report named as a goal adds its own."""
    five_way = ["minilm 5-way exclusive", "lstm 5-way exclusive"]
    one = "reports/full/02_train_classifier-lstm-binary-exclusive.ipynb"
    for goals, want in (("human", five_way), ("all", None), ("human cebab", None), (one, ["lstm binary exclusive"]),
                        (f"human {one}", ["minilm 5-way exclusive", "lstm binary exclusive", "lstm 5-way exclusive"])):
        lines = _make("-n", "-B", *goals.split()).splitlines()
        pool = [i for i, li in enumerate(lines) if "-m xaibench.models.cebab_training" in li]
        assert len(pool) == 1, (goals, pool)
        parts = re.findall(r"--part (\S+ \S+ \S+)", _continued(lines, pool[0]))
        assert parts == want if want else len(parts) == 13, (goals, parts)


def test_env_compiles_nothing_ahead_but_the_projects_sources_and_make_writes_the_bytecode_it_compiles():
    """Neither pip (torch, --no-compile) nor uv compiles site-packages ahead; every process make starts writes the
    bytecode of what it imports (make unexports PYTHONDONTWRITEBYTECODE), and the env and test recipes compile
    the project's sources and tests."""
    recipe = MAKEFILE.split("$(STAMP): pyproject.toml\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert any("pip install" in line and "--no-compile" in line and "TORCH_PIN" in line for line in recipe)
    uv = [line for line in recipe if "uv pip install" in line]
    assert len(uv) == 2 and not any("--compile-bytecode" in line for line in uv), uv
    assert not any("-m compileall" in line and "purelib" in line for line in recipe)
    assert re.search(r"^unexport PYTHONDONTWRITEBYTECODE$", MAKEFILE, re.M)
    assert any(line.strip() == "$(BYTECODE)" for line in recipe) and re.search(r"^BYTECODE = .*compileall -q -j0 src tests", MAKEFILE, re.M)
    for target in ("test", "test-all"):
        assert MAKEFILE.split(f"\n{target}: ", 1)[1].split("\n\n", 1)[0].count("$(BYTECODE)") == 1, target


def test_a_process_make_starts_writes_bytecode_where_the_environment_says_not_to():
    probe = '_bytecode_probe: ; @$(PY) -c "import sys; print(sys.dont_write_bytecode)"'
    out = subprocess.run(["make", "-s", f"--eval={probe}", "_bytecode_probe"], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False", out.stdout


def test_a_crashing_test_ends_make_tests_run_naming_it_instead_of_hanging(tmp_path):
    """pytest-xdist's loadgroup scheduling hangs after it replaces a crashed worker; make test's pytest command
    does not replace one, so a test that takes its worker down fails the run, named, and the other tests pass."""
    # a group whose second test crashes its worker while the other worker is busy: the replacement worker then
    # waits for a test that never comes (pytest-xdist 3.8)
    (tmp_path / "test_toy.py").write_text(
        "import os\nimport time\n\nimport pytest\n\n\n"
        "@pytest.mark.xdist_group('g')\ndef test_first():\n    time.sleep(1)\n\n\n"
        "@pytest.mark.xdist_group('g')\ndef test_crashes():\n    os.abort()\n\n\n"
        "@pytest.mark.xdist_group('g')\ndef test_last():\n    time.sleep(1)\n\n\n"
        + "".join(f"def test_other_{i}():\n    time.sleep({s})\n\n\n" for i, s in enumerate((2, 2, 0))))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # the toy suite's own settings, not the project's
    recipe = f"_toy_suite: ; $(PYTEST) -p no:cacheprovider -c {tmp_path}/pytest.ini {tmp_path}/test_toy.py"
    out = subprocess.run(["make", "-s", f"--eval={recipe}", "_toy_suite"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode != 0 and "1 failed" in out.stdout, out.stdout[-3000:]
    assert re.search(r"^FAILED \S*test_toy\.py::test_crashes", out.stdout, re.M) and "crashed" in out.stdout, \
        out.stdout[-3000:]
