"""The papermill engine `make` runs notebooks with: kernels on Unix-domain sockets, unique per kernel."""
from __future__ import annotations

import glob
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from xaibench.notebook_engine import ENGINE_NAME, IPCEngine, IPCKernelManager

ROOT = Path(__file__).resolve().parents[1]


def test_the_kernel_manager_uses_ipc_under_a_path_no_other_kernel_uses():
    a, b = IPCKernelManager(kernel_name="python3"), IPCKernelManager(kernel_name="python3")
    assert a.transport == b.transport == "ipc"
    assert a.ip != b.ip
    assert Path(a.ip).parent == Path(tempfile.gettempdir())
    # asking for TCP still gets a loopback address, not a socket path
    assert IPCKernelManager(kernel_name="python3", transport="tcp").ip in ("127.0.0.1", "localhost")


def test_papermill_finds_the_engine_by_name():
    from papermill.engines import papermill_engines

    from xaibench.notebook_engine import register

    register()
    assert papermill_engines.get_engine(ENGINE_NAME) is IPCEngine


def test_make_runs_every_notebook_on_the_engine():
    out = subprocess.run(["make", "-n", "-B", "--no-print-directory", "all", "PROFILE=quick"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    lines = [li for li in out.stdout.splitlines() if " -m papermill " in li]
    assert lines, out.stderr
    assert all(f"--engine {ENGINE_NAME}" in li for li in lines)


PROBE = """
import time
from ipykernel import get_connection_info
info = get_connection_info(unpack=True)
print(info["transport"], info["ip"])
time.sleep(1)
"""


def _run(nb: Path, out: Path) -> subprocess.Popen:
    code = ("import sys; from xaibench.notebook_engine import execute_notebook; "
            "execute_notebook(sys.argv[1], sys.argv[2], kernel_name='python3', progress_bar=False)")
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen([sys.executable, "-c", code, str(nb), str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_notebooks_run_side_by_side_each_on_its_own_sockets(tmp_path):
    nb = tmp_path / "probe.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PROBE)]), nb)
    procs = [_run(nb, tmp_path / f"out{i}.ipynb") for i in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=240)
        assert p.returncode == 0, err[-2000:]
    seen = []
    for i in range(2):
        text = "".join(o.get("text", "") for o in nbformat.read(tmp_path / f"out{i}.ipynb", 4).cells[0].outputs)
        transport, ip = text.split()
        assert transport == "ipc" and Path(ip).name.startswith("xaibench-kernel-")
        seen.append(ip)
    assert seen[0] != seen[1]
    # the socket files of both kernels are removed when they shut down (other kernels, e.g. another pytest
    # worker's notebooks, may have files of their own meanwhile)
    assert not [f for ip in seen for f in glob.glob(glob.escape(ip) + "-*")]
