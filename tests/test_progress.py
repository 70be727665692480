"""Progress bars: bars on the command line, a few plain lines in notebooks, nothing in tests;
the quick profile announces itself once."""
import sys
import types
from pathlib import Path

import pytest

from xaibench import config, progress as P

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def loud(monkeypatch):
    """Progress as a user sees it (the suite runs with XAIBENCH_QUIET=1)."""
    monkeypatch.delenv("XAIBENCH_QUIET", raising=False)
    monkeypatch.delenv("XAIBENCH_PROGRESS", raising=False)
    for var in ("HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS"):
        monkeypatch.delenv(var, raising=False)  # restored after the test


@pytest.fixture()
def fake_kernel(monkeypatch):
    """What a Jupyter/papermill kernel looks like to xaibench.progress.in_kernel."""
    import IPython

    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    monkeypatch.setattr(IPython, "get_ipython", lambda: types.SimpleNamespace(kernel=object()))


def test_command_line_gets_a_tqdm_bar(loud, capsys):
    from tqdm.std import tqdm

    assert not P.in_kernel() and P.mode() == "bar"
    bar = P.progress(range(3), desc="work", mininterval=0)
    assert isinstance(bar, tqdm) and not bar.disable
    assert list(bar) == [0, 1, 2]
    assert "work: 100%" in capsys.readouterr().err


def test_kernel_gets_sparse_plain_lines_and_no_bars(loud, fake_kernel, capsys):
    import os

    assert P.in_kernel() and P.mode() == "text"
    out = []
    for i in P.progress(range(3), desc="explainers"):
        for j in P.progress(range(50), desc="batches", leave=False):  # inner loop: silent
            out.append((i, j))
    assert len(out) == 150
    captured = capsys.readouterr()
    assert captured.err == ""
    lines = captured.out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("explainers: 3/3 done (")
    assert "\r" not in captured.out and "\x1b" not in captured.out
    assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"  # library bars are off too


def test_kernel_progress_reports_at_most_every_interval(loud, fake_kernel, capsys, monkeypatch):
    monkeypatch.setenv("XAIBENCH_PROGRESS_INTERVAL", "0")
    with P.progress(total=4, desc="download") as bar:  # the update() style used by the fetcher
        bar.update(2)
        bar.update(2)
    lines = capsys.readouterr().out.splitlines()
    assert [li.split(" (")[0] for li in lines] == ["download: 2/4 so far", "download: 4/4 so far", "download: 4/4 done"]


def test_quiet_and_explicit_modes(loud, fake_kernel, monkeypatch, capsys):
    monkeypatch.setenv("XAIBENCH_PROGRESS", "bar")
    assert P.mode() == "bar"
    monkeypatch.setenv("XAIBENCH_PROGRESS", "sometimes")
    with pytest.raises(ValueError, match="XAIBENCH_PROGRESS='sometimes'.*auto, bar, text, off"):
        P.progress(range(2))
    monkeypatch.setenv("XAIBENCH_QUIET", "1")
    assert list(P.progress(range(2), desc="x")) == [0, 1]
    assert capsys.readouterr() == ("", "")


def test_quick_profile_prints_its_banner_once(monkeypatch, capsys):
    monkeypatch.setattr(config, "_banner_shown", False)
    monkeypatch.setenv("XAIBENCH_PROFILE", "full")
    config.use_profile("full")
    assert capsys.readouterr().out == ""
    config.use_profile("quick")
    config.use_profile("quick")
    out = capsys.readouterr().out
    assert out.count("QUICK PROFILE") == 1 and "NOT results" in out


def test_executed_notebook_has_banner_lines_and_no_bar_litter(tmp_path, monkeypatch):
    """A real papermill kernel: the quick banner shows, loops leave plain lines, no escape codes."""
    import nbformat
    import papermill as pm

    monkeypatch.delenv("XAIBENCH_QUIET", raising=False)
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "full"')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(
        "from xaibench.config import use_profile\n"
        "from xaibench.progress import progress\n"
        "prof = use_profile(profile)\n"
        "for i in progress(range(3), desc='outer'):\n"
        "    for j in progress(range(5), desc='inner', leave=False):\n"
        "        pass\n")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src, out = tmp_path / "nb.ipynb", tmp_path / "out.ipynb"
    nbformat.write(nb, src)
    pm.execute_notebook(str(src), str(out), parameters={"profile": "quick"}, kernel_name="python3",
                        progress_bar=False, cwd=str(tmp_path))
    outputs = nbformat.read(out, as_version=4).cells[-1].outputs
    md = [o for o in outputs if o.output_type == "display_data" and "text/markdown" in o.data]
    assert len(md) == 1 and "QUICK PROFILE" in md[0].data["text/markdown"]
    streams = "".join(o.text for o in outputs if o.output_type == "stream")
    assert streams.startswith("outer: 3/3 done") and "inner" not in streams
    assert not any(s in streams for s in ("\r", "\x1b", "IProgress", "%|"))


def test_importing_xaibench_in_a_kernel_silences_tqdm_auto(tmp_path, monkeypatch):
    """tqdm.auto (used by huggingface_hub) warns "IProgress not found" in a kernel without ipywidgets."""
    import nbformat
    import papermill as pm

    monkeypatch.delenv("XAIBENCH_QUIET", raising=False)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import xaibench\nfrom tqdm.auto import tqdm\nprint('imported')")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src, out = tmp_path / "nb.ipynb", tmp_path / "out.ipynb"
    nbformat.write(nb, src)
    pm.execute_notebook(str(src), str(out), kernel_name="python3", progress_bar=False, cwd=str(tmp_path))
    streams = "".join(o.text for o in nbformat.read(out, as_version=4).cells[0].outputs if o.output_type == "stream")
    assert streams == "imported\n"


def _sleep_cell(seconds: float) -> float:
    import time

    time.sleep(seconds)
    return seconds


def test_a_long_cell_in_a_worker_process_still_gets_a_line_every_interval(loud, fake_kernel, capsys, monkeypatch):
    """One cell of several minutes used to leave the notebook without a line until it ended."""
    from xaibench import executor

    monkeypatch.setenv("XAIBENCH_PROGRESS_INTERVAL", "1")
    assert executor.get_executor("processes:1").map(_sleep_cell, [4.0], desc="long cells") == [4.0]
    out = capsys.readouterr().out
    assert "long cells: 0/1 so far, still running" in out and "long cells: 1/1 done" in out
