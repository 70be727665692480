"""Where things live.

Every path is derived from the project root, which is the nearest parent folder holding
``pyproject.toml`` (so notebooks run from ``notebooks/`` and tests from anywhere find the same
folders).  ``XAIBENCH_HOME`` overrides it, e.g. for tests that want a scratch data folder.
"""
from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    env = os.environ.get("XAIBENCH_HOME")
    if env:
        return Path(env).resolve()
    here = Path.cwd().resolve()
    for cand in (here, *here.parents):
        if (cand / "pyproject.toml").exists() and (cand / "src" / "xaibench").exists():
            return cand
    # installed package used outside a checkout: fall back to the source tree location
    src_root = Path(__file__).resolve().parents[2]
    if (src_root / "pyproject.toml").exists():
        return src_root
    return here


def active_profile() -> str:
    """The run profile (``full`` or ``quick``), set by :func:`xaibench.config.use_profile`."""
    return os.environ.get("XAIBENCH_PROFILE", "full") or "full"


def run_dir() -> str:
    """Where the active run's outputs go, relative to ``reports/``: ``""`` for the full profile without levers
    (the project's own folders), else ``<profile>``, ``levers-<names>`` or ``<profile>/levers-<names>``
    (:mod:`xaibench.levers`)."""
    from .levers import tag

    prof = active_profile()
    return "/".join(p for p in ("" if prof == "full" else prof, tag()) if p)


def profiled(path: Path) -> Path:
    """``path`` (inside the project) for the active run: itself in the full profile, else the same place under
    ``reports/<profile>/`` (and under ``levers-<names>/`` with result-changing levers on, :func:`run_dir`), so
    smoke runs and lever runs never overwrite real outputs (figures/, data/models/, data/results/,
    data/studies/)."""
    where = run_dir()
    if not where:
        return path
    return project_root() / "reports" / where / path.relative_to(project_root())


def data_dir() -> Path:
    return project_root() / "data"


def raw_dir() -> Path:
    return data_dir() / "raw"


def processed_dir() -> Path:
    return data_dir() / "processed"


def models_dir() -> Path:
    return profiled(data_dir() / "models")


def results_dir() -> Path:
    """Per-item results of the protocols (parquet), reusable by other protocols."""
    return profiled(data_dir() / "results")


def cache_dir() -> Path:
    """Model-output cache (``XAIBENCH_CACHE_DIR`` overrides it, e.g. for cold-cache benchmarks)."""
    env = os.environ.get("XAIBENCH_CACHE_DIR")
    return Path(env) if env else data_dir() / "cache"


def figures_dir() -> Path:
    return profiled(project_root() / "figures")


def tables_dir() -> Path:
    return figures_dir() / "tables"


def resources_dir() -> Path:
    return Path(__file__).resolve().parent / "resources"


def data_mirror() -> Path | None:
    """The local mirror of the raw data (``XAIBENCH_DATA_MIRROR``; default ``../shared/data``).

    Returns ``None`` when no mirror is configured and the default does not exist; loaders then
    download from the original public sources.
    """
    env = os.environ.get("XAIBENCH_DATA_MIRROR")
    if env is not None:
        return Path(env).expanduser().resolve() if env else None
    default = project_root().parent / "shared" / "data"
    return default.resolve() if default.exists() else None
