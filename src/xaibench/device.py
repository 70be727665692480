"""Which torch device the project computes on.

``XAIBENCH_DEVICE`` chooses: ``auto`` (default: CUDA when a GPU is visible, else CPU), ``cpu``,
``cuda`` or ``cuda:N`` (the N-th GPU).  Every model, explainer and training loop asks :func:`torch_device` instead of deciding
for itself, so one variable moves the whole project.

``XAIBENCH_THREADS`` (default 2) is the number of torch CPU threads used for training and
inference.  It is pinned because results depend on it: a reduction split over another number of
threads rounds differently (outputs differ by ~1e-7), so trained weights -- and with them the
model fingerprint that keys the output cache -- would change with the machine's core count and a
rerun would miss the cache.  :func:`pin_threads` applies it; :func:`xaibench.utils.set_seed`
calls it, so every model construction, load and training run is pinned.  Set
``XAIBENCH_THREADS`` to trade that reproducibility for speed on a many-core machine.

On CUDA, :func:`xaibench.utils.set_seed` asks torch for deterministic kernels, and cuBLAS is deterministic
only with a fixed workspace: :func:`deterministic_cublas` sets ``CUBLAS_WORKSPACE_CONFIG`` (unless it is set
already), which cuBLAS reads when it starts in a process, so it is called before any CUDA work: by
:func:`torch_device` when it selects a GPU and by ``set_seed``.
"""
from __future__ import annotations

import contextlib
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

CHOICES = ("auto", "cpu", "cuda")
CUDA_INDEX = re.compile(r"cuda:(\d+)")
DEFAULT_THREADS = 2
#: the cuBLAS workspace under which torch.use_deterministic_algorithms(True) holds for cuBLAS calls
CUBLAS_WORKSPACE_CONFIG = ":4096:8"


def deterministic_cublas() -> None:
    """Set ``CUBLAS_WORKSPACE_CONFIG`` to :data:`CUBLAS_WORKSPACE_CONFIG` unless the environment sets it (no
    effect on a CPU; on CUDA it must come before cuBLAS starts, i.e. before the first CUDA computation)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE_CONFIG)


def check_threads(raw: Any) -> int:
    """``raw`` (a value of ``XAIBENCH_THREADS``; empty: the default) as a thread count >= 1, else a
    ``ValueError`` naming the variable, the value and what is allowed."""
    text = str(DEFAULT_THREADS if raw is None or str(raw).strip() == "" else raw).strip()
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"XAIBENCH_THREADS={text!r} is not a positive integer: use an integer >= 1, "
                         f"e.g. XAIBENCH_THREADS={DEFAULT_THREADS}")
    return n


def thread_count() -> int:
    """Torch CPU threads selected by ``XAIBENCH_THREADS`` (default :data:`DEFAULT_THREADS`)."""
    return check_threads(os.environ.get("XAIBENCH_THREADS"))


def pin_threads() -> int:
    """Set torch's intra-op thread count to :func:`thread_count` (returns it)."""
    import torch

    n = thread_count()
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return n


@contextlib.contextmanager
def torch_threads(n: int):
    """Run a block with ``n`` torch CPU threads, then restore the pinned count.

    For many tiny forward passes (a handful of 15-word windows): intra-op threads only add
    synchronisation there, and on a loaded machine two spinning threads were measured 7x slower
    than one (bench: TextFooler's sentence-similarity check)."""
    import torch

    old = torch.get_num_threads()
    if old != n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if torch.get_num_threads() != old:
            torch.set_num_threads(old)


def check_device(raw: Any) -> str:
    """``raw`` (a value of ``XAIBENCH_DEVICE``; empty: ``auto``) normalised, else a ``ValueError``
    naming the variable, the value and what is allowed."""
    choice = (str(raw) if raw is not None else "").strip().lower() or "auto"
    if choice not in CHOICES and not CUDA_INDEX.fullmatch(choice):
        raise ValueError(f"XAIBENCH_DEVICE={choice!r} is not understood; use one of {', '.join(CHOICES)}, cuda:N "
                         "(e.g. XAIBENCH_DEVICE=cpu)")
    return choice


def device_choice() -> str:
    return check_device(os.environ.get("XAIBENCH_DEVICE"))


def torch_device():
    """The :class:`torch.device` selected by ``XAIBENCH_DEVICE``."""
    import torch

    choice = device_choice()
    if choice == "cpu":
        return torch.device("cpu")
    if torch.cuda.is_available():
        index = CUDA_INDEX.fullmatch(choice)
        if index and int(index.group(1)) >= torch.cuda.device_count():
            raise RuntimeError(f"XAIBENCH_DEVICE={choice} but torch sees {torch.cuda.device_count()} CUDA "
                               "device(s), numbered from 0; use XAIBENCH_DEVICE=cuda or a smaller index")
        deterministic_cublas()
        return torch.device(choice if index else "cuda")
    if choice != "auto":
        raise RuntimeError(f"XAIBENCH_DEVICE={choice} but torch sees no CUDA device; unset it or use "
                           "XAIBENCH_DEVICE=cpu")
    return torch.device("cpu")


def place(module):
    """Move ``module`` (an ``nn.Module``) to :func:`torch_device` and return it."""
    return module.to(torch_device())


def module_device(module):
    """The device of ``module``'s first parameter (CPU for a module without parameters)."""
    import torch

    p = next(iter(module.parameters()), None) if module is not None else None
    return p.device if p is not None else torch.device("cpu")


# ---- the machine a run used (bench tables, executed-notebook metadata) ----------------------
#: vector extensions, widest first: the first one a CPU has is recorded with its model
VECTOR_ISAS = ("avx512f", "avx2", "avx", "sse4_2", "neon", "asimd")


def cpu_model(cpuinfo: str | None = None) -> str:
    """The CPU's model name with its family/model numbers and widest vector extension, e.g.
    ``"AMD EPYC (family 25 model 1, avx2)"``.

    The model name alone is too coarse: virtual machines often report just "AMD EPYC", while
    torch's CPU kernels -- and with them the last bits of every result -- differ between CPU
    generations (e.g. with and without AVX-512).  ``cpuinfo`` is the text of ``/proc/cpuinfo``
    (read when omitted)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            cpuinfo = ""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        key = key.strip().lower()
        if sep and key not in fields:  # the first processor's entry
            fields[key] = value.strip()
    name = fields.get("model name") or platform.processor() or platform.machine()
    flags = set((fields.get("flags") or fields.get("features") or "").split())
    details = []
    if "cpu family" in fields and "model" in fields:
        details.append(f"family {fields['cpu family']} model {fields['model']}")
    details += [isa for isa in VECTOR_ISAS if isa in flags][:1]
    return f"{name} ({', '.join(details)})" if details else name


def gpu_name() -> str:
    """The first GPU as ``nvidia-smi`` names it, or ``"none"`` (no torch import needed)."""
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                                 text=True, timeout=20)
            names = [n.strip() for n in out.stdout.splitlines() if n.strip()]
            if out.returncode == 0 and names:
                return names[0] + (f" (x{len(names)})" if len(names) > 1 else "")
        except (OSError, subprocess.SubprocessError):
            pass
    return "none"


def load_average() -> float:
    """The 1-minute load average rounded to 2 decimals (how busy the machine was while a timing was
    taken; ``nan`` where the platform has none). Every bench table records it through this function."""
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return float("nan")


def machine_info() -> dict[str, Any]:
    """What a reader needs to compare run times: cores, CPU model, GPU, the device switch, and the result-changing
    levers where any is on (:mod:`xaibench.levers`)."""
    from .levers import active

    info = {"cpus": os.cpu_count(), "cpu_model": cpu_model(), "gpu": gpu_name(),
            "xaibench_device": os.environ.get("XAIBENCH_DEVICE") or "auto"}
    if active():
        info["xaibench_levers"] = " ".join(active())
    return info
