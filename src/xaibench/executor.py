"""One way to run independent cells (model x task x seed, runs): serially, in local processes, or on Dask.

``XAIBENCH_SCHEDULER`` chooses the backend (:func:`get_executor` reads it):

* empty or ``serial`` (default): a plain loop in this process;
* ``processes`` or ``processes:N``: a local pool of N spawned processes (default: as many as fit
  ``os.cpu_count()`` with ``XAIBENCH_THREADS`` torch threads each, and at least two on a machine with two
  or more cores; more workers than that are warned about, never given fewer threads: results depend on
  the thread count; a runner whose cells keep one core busy, like the editor chains, says so with
  ``cell_threads=1`` and gets a worker per core);
* ``dask-local:N``: a Dask ``LocalCluster`` of N single-threaded worker processes on 127.0.0.1;
* ``tcp://host:port``: the scheduler of a running Dask cluster (e.g. one started by dask-jobqueue on
  SLURM); its workers need the project installed and the same file system.

Every cell computes exactly what it computes serially: each runner seeds inside its cell, and the
workers run with the driver's ``XAIBENCH_*`` variables -- among them ``XAIBENCH_THREADS``, which
results depend on (:mod:`xaibench.device`) -- and its project root (``XAIBENCH_HOME``), so the
results are bit-identical to the serial run.  Cells and their results travel between the driver and the
workers pickled with cloudpickle on every parallel backend (Dask does so itself; the ``processes`` pool is
given bytes), so a result may hold objects whose class is built at run time, like the models' torch modules
(:mod:`xaibench.models`), and a cell may be a closure.  Workers only return results; the driver writes the
result stores, through the ``on_result`` callback of :meth:`Executor.map` as each cell finishes (a
run that is stopped keeps the cells already written).  A ``processes`` worker ends with the driver, however the
driver ends (kill -9 of the kernel, SIGTERM to make: :func:`die_with_parent`); a ``dask-local`` worker process
does so through Dask's own process watch.

When the workers' busy threads exceed the cores (two cells of ``XAIBENCH_THREADS=2`` on 2 cores), local
workers start with ``OMP_WAIT_POLICY=PASSIVE`` unless the variable is set: a torch thread that waits for
work then sleeps instead of spinning.  Measured (``python -m xaibench.bench cores``,
``figures/tables/bench_cores.csv``): two such cells side by side finish 1.15-1.23x as many cells per hour
as one at a time, with bit-identical outputs; with OpenMP's default (spinning) policy they finish 0.52x.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import re
import warnings
from typing import Any, Callable, Iterable, Sequence

#: the forms ``XAIBENCH_SCHEDULER`` accepts (named in the error message)
FORMS = "serial (or empty), processes, processes:N, dask-local:N, tcp://host:port (or tls://host:port)"
_PROCESSES = re.compile(r"processes(?::(\d+))?")
_DASK_LOCAL = re.compile(r"dask-local:(\d+)")
_ADDRESS = re.compile(r"(tcp|tls)://[^\s/]+")


def check_scheduler(raw: Any) -> tuple[str, Any]:
    """``raw`` (a value of ``XAIBENCH_SCHEDULER``) as ``(kind, arg)``: ``("serial", None)``,
    ``("processes", N or None)``, ``("dask-local", N)`` or ``("dask", address)``; else a ``ValueError``
    naming the variable, the value and the allowed forms."""
    text = "" if raw is None else str(raw).strip()
    low = text.lower()
    if low in ("", "serial"):
        return "serial", None
    m = _PROCESSES.fullmatch(low)
    if m and (m.group(1) is None or int(m.group(1)) >= 1):
        return "processes", int(m.group(1)) if m.group(1) else None
    m = _DASK_LOCAL.fullmatch(low)
    if m and int(m.group(1)) >= 1:
        return "dask-local", int(m.group(1))
    if _ADDRESS.fullmatch(text):
        return "dask", text
    raise ValueError(f"XAIBENCH_SCHEDULER={text!r} is not understood; use one of {FORMS} (N an integer >= 1), "
                     "e.g. XAIBENCH_SCHEDULER=processes:2")


def worker_env() -> dict[str, str]:
    """The driver's variables a worker runs with: every ``XAIBENCH_*`` (profile, threads, device, ...),
    the Hugging Face offline switch, ``XAIBENCH_HOME`` set to the driver's project root and
    ``XAIBENCH_PROGRESS`` set to the driver's progress mode (a worker is no kernel, but its output reaches the
    notebook's cell, where a bar is litter: :mod:`xaibench.progress`)."""
    from .paths import project_root

    env = {k: v for k, v in os.environ.items() if k.startswith("XAIBENCH_") and k != "XAIBENCH_SCHEDULER"}
    for k in ("HF_HUB_OFFLINE", "TOKENIZERS_PARALLELISM", "PYTHONHASHSEED"):
        if k in os.environ:
            env[k] = os.environ[k]
    env.setdefault("XAIBENCH_HOME", str(project_root()))
    if "XAIBENCH_PROGRESS" not in env:  # the driver's progress mode: a notebook's workers print text lines, not bars
        from .progress import mode

        env["XAIBENCH_PROGRESS"] = mode()
    return env


def _enter(env: dict[str, str]) -> None:
    """Make this worker process run like the driver: its variables, then torch pinned to its threads."""
    for k in [k for k in os.environ if k.startswith("XAIBENCH_") and k not in env]:
        del os.environ[k]  # a worker kept from an earlier run: none of that run's settings stay
    os.environ.update(env)   # (XAIBENCH_SCHEDULER is never in env: a cell starts no executor of its own)
    from .device import pin_threads

    pin_threads()


def wait_policy(n_workers: int, cell_threads: int | None = None) -> str | None:
    """The ``OMP_WAIT_POLICY`` local workers start with: ``"PASSIVE"`` when ``n_workers`` cells of
    ``cell_threads`` busy threads (``None``: ``XAIBENCH_THREADS``) exceed the cores and the variable is not
    set (see the module docstring), else ``None`` (the inherited environment)."""
    from .device import thread_count

    threads = thread_count() if cell_threads is None else int(cell_threads)
    if "OMP_WAIT_POLICY" in os.environ or n_workers * threads <= (os.cpu_count() or 1):
        return None
    return "PASSIVE"


@contextlib.contextmanager
def _spawn_env(policy: str | None):
    """Processes spawned inside the block inherit ``OMP_WAIT_POLICY=policy`` (OpenMP reads it when torch
    loads, before a worker could set it itself); the driver's environment is restored afterwards."""
    if policy is None:
        yield
        return
    os.environ["OMP_WAIT_POLICY"] = policy
    try:
        yield
    finally:
        os.environ.pop("OMP_WAIT_POLICY", None)


class _Call:
    """``fn(item)`` run under the driver's environment (picklable; used by the Dask backends)."""

    def __init__(self, fn: Callable, env: dict[str, str]):
        self.fn, self.env = fn, env

    def __call__(self, item):
        _enter(self.env)
        return self.fn(item)


_POOL_FN: Callable | None = None
_POOL_ERR: Exception | None = None


def die_with_parent(parent: int, poll_s: float = 0.5) -> None:
    """End this process as soon as the process ``parent`` (its parent's pid) ends, however it ends (kill -9
    of a notebook's kernel, SIGTERM to make): on Linux the kernel sends it SIGKILL then
    (``prctl(PR_SET_PDEATHSIG)``); everywhere, a daemon thread checks every ``poll_s`` seconds whether this
    process was handed to another parent and exits if so.  Without this, workers of a killed run kept
    computing (and holding their memory) for minutes."""
    import signal
    import sys
    import threading
    import time

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1: PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # no prctl: the thread below does it
            pass
    if os.getppid() != parent:  # the parent ended before the signal was armed
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=watch, name="xaibench-parent-watch", daemon=True).start()


def _pool_init(fn: bytes, env: dict[str, str], parent: int | None = None) -> None:
    """A ``processes`` worker's start: it ends with the driver (``parent``: :func:`die_with_parent`), the cell
    function (cloudpickled by the driver), the driver's environment.  A function that does not unpickle here
    is kept as an error for the first cell to raise (an initializer that raises only tells the driver that a
    worker died)."""
    import cloudpickle

    global _POOL_FN, _POOL_ERR
    if parent is not None:
        die_with_parent(parent)
    _enter(env)
    try:
        _POOL_FN = cloudpickle.loads(fn)
    except Exception as err:  # noqa: BLE001 - raised with its cause by _pool_call, in the driver
        _POOL_ERR = err


def _pool_call(item: bytes) -> bytes:
    """One cell in a ``processes`` worker; item and result travel as cloudpickle bytes (the pool itself
    pickles with :mod:`pickle`, which cannot pickle a class built at run time, as the models' modules are)."""
    import cloudpickle

    if _POOL_ERR is not None:
        raise RuntimeError(f"a worker process could not unpickle the cell function ({type(_POOL_ERR).__name__}: "
                           f"{_POOL_ERR}): what a cell uses must be importable in the workers (an installed "
                           "module, or a plug-in named in XAIBENCH_PLUGINS)") from _POOL_ERR
    return cloudpickle.dumps(_POOL_FN(cloudpickle.loads(item)))


class Executor:
    """Maps a function over independent items with the backend of ``spec`` (see the module docstring)."""

    def __init__(self, spec: str | None = None):
        self.spec = "" if spec is None else str(spec).strip()
        self.kind, self.arg = check_scheduler(self.spec)

    def __repr__(self) -> str:
        return f"Executor({self.spec or 'serial'!r})"

    @property
    def parallel(self) -> bool:
        return self.kind != "serial"

    def n_workers(self, cell_threads: int | None = None) -> int:
        """Local worker processes of a ``processes`` or ``dask-local`` backend (explicit N, else as many
        as fit the cores with ``cell_threads`` busy threads each -- ``None``: ``XAIBENCH_THREADS``, the torch
        threads every worker keeps -- and at least two on two or more cores, whose threads then wait
        without spinning: :func:`wait_policy`); more than that is warned about."""
        from .device import thread_count

        threads, cores = thread_count() if cell_threads is None else int(cell_threads), os.cpu_count() or 1
        fit = max(1, cores // max(threads, 1), min(2, cores))  # two side by side fill what one leaves idle
        n = self.arg or fit
        if n > fit:
            warnings.warn(f"XAIBENCH_SCHEDULER={self.spec}: {n} workers x {threads} threads per cell "
                          f"exceed the {cores} cores (workers keep XAIBENCH_THREADS={thread_count()} because results "
                          f"depend on it); use at most {fit} workers", RuntimeWarning, stacklevel=3)
        return n

    def slots(self, cell_threads: int | None = None) -> int:
        """How many cells of ``cell_threads`` busy threads run at once: 1 when serial, the local workers of
        ``processes`` and ``dask-local`` (:meth:`n_workers`, without its warning), the worker threads of a Dask
        cluster (1 when it cannot be asked).  A runner that splits its work to keep every worker busy reads it."""
        if self.kind == "serial":
            return 1
        if self.kind in ("processes", "dask-local"):
            with warnings.catch_warnings():  # map() warns, once, when it starts the workers
                warnings.simplefilter("ignore", RuntimeWarning)
                return self.n_workers(cell_threads)
        try:
            workers = dask_client(self.kind, self.arg).scheduler_info()["workers"].values()
            return max(1, sum(int(w.get("nthreads", 1)) for w in workers))
        except Exception:  # noqa: BLE001 - an unreachable cluster is reported by map(), where the cells go
            return 1

    def map(self, fn: Callable[[Any], Any], items: Iterable, desc: str | None = None,
            on_result: Callable[[int, Any], None] | None = None, cell_threads: int | None = None) -> list:
        """``[fn(item) for item in items]`` in input order, with a progress bar (``desc``).

        ``on_result(i, result)`` is called in this (the driver) process as soon as item ``i`` is
        done -- in input order when serial, in completion order otherwise: that is where a runner
        saves a cell.  For the parallel backends ``fn``, the items and the results must pickle with
        cloudpickle (closures and classes built at run time do).  The first error of a cell is raised here.
        ``cell_threads``: the threads a cell keeps busy, when fewer than ``XAIBENCH_THREADS`` (a cell that is
        mostly single-threaded Python): a ``processes`` backend without N then starts as many workers as fit
        the cores with that many each.  Workers still run with ``XAIBENCH_THREADS`` torch threads, so results do not change."""
        from .progress import progress

        items = list(items)
        results: list = [None] * len(items)
        if not items:
            return results
        bar = progress(total=len(items), desc=desc or "cells")
        try:
            if self.kind == "serial":
                for i, item in enumerate(items):
                    results[i] = fn(item)
                    if on_result is not None:
                        on_result(i, results[i])
                    bar.update(1)
            elif self.kind == "processes":
                self._map_processes(fn, items, results, on_result, bar, cell_threads)
            else:
                self._map_dask(fn, items, results, on_result, bar, cell_threads)
        finally:
            bar.close()
        return results

    def _map_processes(self, fn, items, results, on_result, bar, cell_threads=None) -> None:
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, FIRST_EXCEPTION, ProcessPoolExecutor, wait

        import cloudpickle

        n = min(self.n_workers(cell_threads), len(items))
        with ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"), initializer=_pool_init,
                                 initargs=(cloudpickle.dumps(fn), worker_env(), os.getpid())) as pool:
            with _spawn_env(wait_policy(n, cell_threads)):  # the workers start as the cells are submitted
                futures = {pool.submit(_pool_call, cloudpickle.dumps(item)): i for i, item in enumerate(items)}
            try:
                pending = set(futures)
                while pending:  # a long cell still gets a progress line every interval (bar.refresh)
                    done, pending = wait(pending, timeout=_refresh_seconds(), return_when=FIRST_COMPLETED)
                    bar.refresh()
                    for fut in sorted(done, key=futures.get):
                        i = futures[fut]
                        results[i] = cloudpickle.loads(fut.result())
                        if on_result is not None:
                            on_result(i, results[i])
                        bar.update(1)
            except BaseException:
                for f in futures:
                    f.cancel()
                wait(futures, return_when=FIRST_EXCEPTION)
                raise

    def _map_dask(self, fn, items, results, on_result, bar, cell_threads=None) -> None:
        from distributed import as_completed

        policy = None
        if self.kind == "dask-local":
            policy = wait_policy(self.n_workers(cell_threads), cell_threads)  # n_workers: the warning, if any
        with _spawn_env(policy):  # a LocalCluster's workers start here, on first use
            client = dask_client(self.kind, self.arg)
        call = client.scatter(_Call(fn, worker_env()), broadcast=True, hash=False)
        futures = client.map(_dask_call, [call] * len(items), items, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for fut in as_completed(futures):
                i = index[fut.key]
                results[i] = fut.result()
                if on_result is not None:
                    on_result(i, results[i])
                bar.update(1)
        except BaseException:
            client.cancel(futures)
            raise
        finally:
            del call


def _refresh_seconds() -> float:
    """How long the driver waits for a cell before it refreshes the progress display (the text lines'
    interval, ``XAIBENCH_PROGRESS_INTERVAL``, at most 60 s)."""
    return min(60.0, float(os.environ.get("XAIBENCH_PROGRESS_INTERVAL", 60)))


def _dask_call(call: _Call, item):
    return call(item)


_CLIENTS: dict[tuple, Any] = {}


def dask_client(kind: str, arg: Any):
    """The Dask client of ``dask-local:N`` (a LocalCluster started on first use, kept for the
    process's lifetime) or of a scheduler address; one per backend and process."""
    key = (kind, arg)
    client = _CLIENTS.get(key)
    if client is not None and client.status == "running":
        return client
    from distributed import Client, LocalCluster

    if kind == "dask-local":
        cluster = LocalCluster(n_workers=int(arg), threads_per_worker=1, host="127.0.0.1", processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(arg)
    _CLIENTS[key] = client
    return client


@atexit.register
def close_clients() -> None:
    """Close every Dask client (and local cluster) this process started (also at exit)."""
    while _CLIENTS:
        _, client = _CLIENTS.popitem()
        cluster = client.cluster
        client.close()
        if cluster is not None:
            cluster.close()


def get_executor(spec: str | None = None) -> Executor:
    """The executor of ``spec``; ``None``: of ``XAIBENCH_SCHEDULER`` (unset or empty: serial)."""
    return Executor(os.environ.get("XAIBENCH_SCHEDULER") if spec is None else spec)


def run_cells(fn: Callable, items: Sequence, desc: str | None = None,
              on_result: Callable[[int, Any], None] | None = None, cell_threads: int | None = None) -> list:
    """:meth:`Executor.map` with the executor of ``XAIBENCH_SCHEDULER``."""
    return get_executor().map(fn, items, desc=desc, on_result=on_result, cell_threads=cell_threads)

