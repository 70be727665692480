"""Parameters of a run: the checks make runs before any notebook (`python -m xaibench.reports check`),
the same checks in the notebooks and runners, and the comparison that decides whether a report is
rerun (`python -m xaibench.paramstamp`, which make runs once per report)."""
import json
import os

import pytest

from xaibench import device, paramstamp, reports
from xaibench.config import check_notebook_parameters, parse_seeds, positive_int, use_profile
from xaibench.data.cebab import check_tasks
from xaibench.models.zoo import check_model

GOOD = {"PROFILE": "quick", "SEEDS": "42 43", "INCLUSIVE_SEEDS": "42", "ATTR_GT_SEEDS": "0 1 2", "MODEL": "lstm",
        "MODELS": "minilm lstm cnn", "ABSA_MODEL": "minilm", "TASKS": "binary 5-way", "CF_IMDB": "300",
        "CF_NEWSGROUPS": "1", "XAIBENCH_DEVICE": "cuda:1", "XAIBENCH_THREADS": "",
        "XAIBENCH_SCHEDULER": "dask-local:2"}


def test_good_make_parameters_pass():
    assert reports.check_make_params(GOOD) == []


@pytest.mark.parametrize("name,value,allowed", [
    ("PROFILE", "fast", "full | quick"),
    ("SEEDS", "abc", "integers >= 0"), ("SEEDS", "", "integers >= 0"), ("SEEDS", "42 -1", "integers >= 0"),
    ("INCLUSIVE_SEEDS", "42,43", "separate the seeds by spaces"), ("ATTR_GT_SEEDS", "0 1.5", "integers >= 0"),
    ("MODEL", "nonexistent", "neither a local model"), ("MODELS", "minilm nonexistent", "neither a local model"),
    ("MODELS", " ", "names no model"), ("ABSA_MODEL", "", "neither a local model"),
    ("TASKS", "binary 4-way", "binary ternary 5-way"), ("TASKS", "", "binary ternary 5-way"),
    ("CF_IMDB", "-1", "integer >= 1"), ("CF_IMDB", "0", "integer >= 1"), ("CF_NEWSGROUPS", "many", "integer >= 1"),
    ("XAIBENCH_DEVICE", "gpu", "auto, cpu, cuda, cuda:N"), ("XAIBENCH_DEVICE", "cuda:x", "cuda:N"),
    ("XAIBENCH_THREADS", "0", "integer >= 1"), ("XAIBENCH_THREADS", "-2", "integer >= 1"),
    ("XAIBENCH_SCHEDULER", "dask", "serial (or empty), processes, processes:N, dask-local:N, tcp://host:port"),
    ("XAIBENCH_SCHEDULER", "processes:0", "N an integer >= 1"),
])
def test_each_bad_make_parameter_is_named_with_its_value_and_what_is_allowed(name, value, allowed):
    errors = reports.check_make_params({**GOOD, name: value})
    assert len(errors) == 1, errors
    shown = "nonexistent" if value == "minilm nonexistent" else value  # the bad model of a list
    assert errors[0].startswith(f"{name}={shown!r}"), errors[0]
    assert allowed in errors[0]


def test_the_check_cli_prints_every_error_and_fails(capsys):
    with pytest.raises(SystemExit) as e:
        reports.main(["check", "SEEDS=abc", "MODEL=nonexistent", "CF_IMDB=300"])
    assert "SEEDS='abc'" in str(e.value) and "MODEL='nonexistent'" in str(e.value) and "CF_IMDB" not in str(e.value)
    reports.main(["check", *(f"{k}={v}" for k, v in GOOD.items())])  # no error


def test_a_model_is_local_or_in_the_hub_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in ("minilm", "lstm", "cnn", "logreg"):
        assert check_model(name) == name
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    assert check_model(str(folder)) == str(folder)
    with pytest.raises(ValueError, match=r"MODEL='org/bert-tiny' is neither a local model .* nor available offline"):
        check_model("org/bert-tiny")
    snap = tmp_path / "hub" / "models--org--bert-tiny" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}")
    assert check_model("org/bert-tiny") == "org/bert-tiny"
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # online: a hub id is downloaded when used
    assert check_model("bert-base-uncased", "ABSA_MODEL") == "bert-base-uncased"
    with pytest.raises(ValueError, match="ABSA_MODEL='not a model!'"):
        check_model("not a model!", "ABSA_MODEL")


def test_seeds_sample_sizes_and_tasks():
    assert parse_seeds("0 1 2", "ATTR_GT_SEEDS") == [0, 1, 2] and parse_seeds(7) == [7]
    for bad in ("-1", "42 x", "", [], "1.5"):
        with pytest.raises(ValueError, match="ATTR_GT_SEEDS="):
            parse_seeds(bad, "ATTR_GT_SEEDS")
    assert positive_int("300", "CF_IMDB") == 300 and positive_int(1, "n") == 1
    for bad in ("-1", 0, "x", True, 2.5):
        with pytest.raises(ValueError, match="CF_IMDB=.* integer >= 1"):
            positive_int(bad, "CF_IMDB")
    assert check_tasks("5-way binary") == ["5-way", "binary"]
    with pytest.raises(ValueError, match="TASKS='3-way'.*binary ternary 5-way"):
        check_tasks("3-way")


def test_threads_below_one_are_rejected(monkeypatch):
    monkeypatch.setenv("XAIBENCH_PROFILE", os.environ.get("XAIBENCH_PROFILE", "full"))  # restored afterwards
    for bad in ("0", "-1", "two"):
        with pytest.raises(ValueError, match=f"XAIBENCH_THREADS='{bad}' is not a positive integer: use an integer >= 1"):
            device.check_threads(bad)
        monkeypatch.setenv("XAIBENCH_THREADS", bad)
        with pytest.raises(ValueError, match="XAIBENCH_THREADS"):
            device.thread_count()
        with pytest.raises(ValueError, match="XAIBENCH_THREADS"):
            use_profile("quick")  # what every notebook calls first
    assert device.check_threads("") == device.DEFAULT_THREADS and device.check_threads(" 3 ") == 3


def test_device_accepts_a_gpu_index(monkeypatch):
    import torch

    assert device.check_device(" CUDA:1 ") == "cuda:1" and device.check_device(None) == "auto"
    for bad in ("gpu", "cuda:", "cuda:-1", "cpu:0"):
        with pytest.raises(ValueError, match="XAIBENCH_DEVICE=.*cuda:N"):
            device.check_device(bad)
    if not torch.cuda.is_available():
        monkeypatch.setenv("XAIBENCH_DEVICE", "cuda:0")
        with pytest.raises(RuntimeError, match="XAIBENCH_DEVICE=cuda:0 but torch sees no CUDA device"):
            device.torch_device()


def test_notebook_parameters_fail_before_any_work():
    """A notebook run with papermill directly checks its parameters in use_profile (its first call)."""
    check_notebook_parameters({"seeds": "42 43", "seed": 42, "n_imdb": 500, "n_newsgroups": "1000", "other": -1})
    cases = [({"seeds": "abc"}, "seeds='abc'.*SEEDS"), ({"seed": -1}, "seed=-1.*SEEDS"),
             ({"n_imdb": -1}, "n_imdb=-1 is not a positive integer.*CF_IMDB"),
             ({"n_newsgroups": 0}, "n_newsgroups=0.*CF_NEWSGROUPS")]
    for params, match in cases:
        with pytest.raises(ValueError, match=match):
            check_notebook_parameters(params)



def test_a_notebook_run_with_a_bad_scheduler_fails_before_any_work(monkeypatch):
    monkeypatch.setenv("XAIBENCH_SCHEDULER", "dask-local:0")
    with pytest.raises(ValueError, match=r"XAIBENCH_SCHEDULER='dask-local:0' is not understood.*dask-local:N"):
        check_notebook_parameters({"seeds": "42"})
    monkeypatch.setenv("XAIBENCH_SCHEDULER", "processes:2")
    check_notebook_parameters({"seeds": "42"})


@pytest.mark.parametrize("recorded,requested,changed", [
    ({"profile": "full", "seeds": "42 43"}, {"profile": "full", "seeds": "42 43"}, []),
    ({"profile": "full", "seeds": 42}, {"profile": "full", "seeds": "42"}, []),  # papermill types "42" as 42
    ({"profile": "full", "seeds": "42 43"}, {"profile": "full", "seeds": "42  43"}, []),
    ({"profile": "full", "n_imdb": 500}, {"profile": "full", "n_imdb": "300"}, ["n_imdb"]),
    ({"profile": "full", "seeds": "42 43 44 45 46"}, {"profile": "full", "seeds": "43"}, ["seeds"]),
    ({"profile": "full"}, {"profile": "quick"}, ["profile"]),
    ({"profile": "full", "seed": 42}, {"profile": "full"}, ["seed"]),
    ({"profile": "full"}, {"profile": "full", "seed": "42"}, ["seed"]),
    ({"profile": "full", "force": False}, {"profile": "full", "force": "False"}, []),
])
def test_parameter_changes_compare_values_as_papermill_types_them(recorded, requested, changed):
    assert sorted(reports.parameter_changes(recorded, requested)) == changed


def _report(path, params):
    path.write_text(json.dumps({"cells": [], "metadata": {"papermill": {"parameters": params}}}))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return path


def test_the_stamp_is_newer_than_the_report_only_when_the_parameters_differ(tmp_path, capsys):
    rep = _report(tmp_path / "23_x.ipynb", {"profile": "full", "seeds": "42 43"})
    stamp = tmp_path / "params" / "23_x.params"
    assert reports.refresh_param_stamp(rep, stamp, {"profile": "full", "seeds": "42 43"}) == "same"
    assert stamp.stat().st_mtime_ns <= rep.stat().st_mtime_ns and capsys.readouterr().err == ""
    os.utime(stamp, (1_800_000_000, 1_800_000_000))  # a fresh clone: the stamp is newer than the report
    paramstamp.main([str(rep), str(stamp), "-p", "profile", "full", "-p", "seeds", "42 43"])
    assert stamp.stat().st_mtime_ns <= rep.stat().st_mtime_ns
    paramstamp.main([str(rep), str(stamp), "-p", "profile", "full", "-p", "seeds", "43"])
    assert stamp.stat().st_mtime_ns > rep.stat().st_mtime_ns
    err = capsys.readouterr().err
    assert str(rep) in err and "seeds: '42 43' -> 43" in err and f"git checkout -- {rep}" in err
    assert reports.refresh_param_stamp(tmp_path / "missing.ipynb", stamp, {"profile": "full"}) == "missing"
    assert stamp.is_file()


def test_a_notebook_run_directly_with_papermill_stops_at_a_bad_parameter(tmp_path, monkeypatch):
    """No Makefile check here: use_profile, the notebook's first call, reads the injected parameters."""
    import nbformat
    import papermill as pm

    monkeypatch.setenv("XAIBENCH_PROFILE", "quick")
    params = nbformat.v4.new_code_cell('profile = "full"\nn_imdb = 500\nseeds = "42"')
    params.metadata["tags"] = ["parameters"]
    nb = nbformat.v4.new_notebook(cells=[params, nbformat.v4.new_code_cell(
        "from xaibench.config import use_profile\nprof = use_profile(profile)\nprint('the work starts')")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src = tmp_path / "nb.ipynb"
    nbformat.write(nb, src)
    with pytest.raises(pm.PapermillExecutionError, match=r"n_imdb=-1 is not a positive integer.*CF_IMDB"):
        pm.execute_notebook(str(src), str(tmp_path / "out.ipynb"), parameters={"profile": "quick", "n_imdb": -1},
                            kernel_name="python3", progress_bar=False, cwd=str(tmp_path))
    outputs = nbformat.read(tmp_path / "out.ipynb", as_version=4).cells[-1].outputs
    assert not [o for o in outputs if o.output_type == "stream" and "the work starts" in o.text]


@pytest.mark.parametrize("name,value,repeated", [
    ("SEEDS", "42 42 43", "42"), ("INCLUSIVE_SEEDS", "7 7", "7"), ("ATTR_GT_SEEDS", "0 1 2 1", "1"),
    ("SCORECARD_SEEDS", "42 43 42", "42"), ("MODELS", "minilm lstm minilm", "'minilm'"),
    ("TASKS", "binary 5-way binary", "'binary'"), ("EXPLAINERS", "lime lime", "'lime'"),
])
def test_a_list_parameter_naming_a_value_twice_is_refused(name, value, repeated):
    """SEEDS="42 42 43" ran seed 42 twice: every mean over the seeds counted it twice."""
    errors = reports.check_make_params({**GOOD, name: value})
    assert len(errors) == 1 and errors[0].startswith(f"{name}={value!r}"), errors
    assert f"names {repeated} more than once" in errors[0] and "give each value once" in errors[0]


def test_seeds_repeated_or_beyond_the_generators_range_are_refused_in_notebooks_too():
    with pytest.raises(ValueError, match="names 42 more than once"):
        parse_seeds("42 42 43")
    with pytest.raises(ValueError, match="names 3 more than once"):
        check_notebook_parameters({"seeds": [3, 3]})
    assert parse_seeds(f"0 {2**32 - 1}") == [0, 2**32 - 1]
    for bad in (2**32, "4294967296", "42 99999999999"):
        with pytest.raises(ValueError, match=r"out of range; seeds are integers 0\.\.4294967295"):
            parse_seeds(bad)
    errors = reports.check_make_params({**GOOD, "SEEDS": "42 4294967296"})
    assert len(errors) == 1 and "SEEDS='42 4294967296'" in errors[0] and "out of range" in errors[0]
    with pytest.raises(ValueError, match="'binary' more than once"):
        check_tasks(["binary", "binary"])


@pytest.mark.parametrize("given,meant", [("SEED", "SEEDS"), ("seeds", "SEEDS"), ("TASK", "TASKS"),
                                         ("PROFLIE", "PROFILE"), ("EXPLAINER", "EXPLAINERS"), ("CF_IMBD", "CF_IMDB")])
def test_a_command_line_variable_close_to_a_parameter_is_refused_naming_it(given, meant):
    from xaibench.paths import project_root

    makefile = project_root() / "Makefile"
    errors = reports.check_command_line([given, "PY", "NB_PARAMS_23_counterfactual_faithfulness", "FOO"], makefile)
    assert len(errors) == 1 and errors[0].startswith(f"{given} is not a parameter"), errors
    assert f"did you mean {meant}?" in errors[0]
    assert reports.check_command_line(["SEEDS", "PY", "FOO", "CC", "DESTDIR", "XAIBENCH_PROGRESS"], makefile) == []
    with pytest.raises(SystemExit, match=f"did you mean {meant}"):
        reports.main(["check", "--makefile", str(makefile), "--command-line", f"FOO {given}", "SEEDS=42"])
