"""A papermill engine whose kernels talk over Unix-domain sockets, so notebooks can run side by side.

papermill's default kernels use TCP on 127.0.0.1.  ``jupyter_client`` picks five free ports by
binding to port 0 and closing the sockets again; the kernel process binds them a moment later.  Two
kernels started at the same time (``make -j2``, two pytest workers running notebooks, a Dask worker
per notebook) can be handed the same port in that window, and the second kernel then dies at start
with ``ZMQError: Address already in use`` -- papermill reports "Kernel died" (papermill#511,
ipykernel#412).  The ``ipc`` transport has no ports: each kernel binds socket files under a path
that is unique per kernel (a fresh UUID in the temporary folder), so there is nothing to race for,
and the sockets are not reachable from the network either.

``make`` selects the engine with ``papermill --engine xaibench`` (registered as a ``papermill.engine``
entry point in ``pyproject.toml``); :func:`execute_notebook` is the same for Python callers.
"""
from __future__ import annotations

import os
import tempfile
import uuid
from typing import Any

from jupyter_client import AsyncKernelManager
from traitlets import CaselessStrEnum, default

ENGINE_NAME = "xaibench"


class IPCKernelManager(AsyncKernelManager):
    """An :class:`~jupyter_client.AsyncKernelManager` whose default transport is ``ipc``, with its
    socket files under a path no other kernel uses (``$TMPDIR/xaibench-kernel-<uuid>-ipc-<n>``).
    ``jupyter_client`` removes the socket files when the kernel shuts down."""

    transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

    @default("ip")
    def _unique_ip(self) -> str:
        if self.transport != "ipc":
            from jupyter_client.localinterfaces import localhost

            return localhost()
        return os.path.join(tempfile.gettempdir(), f"xaibench-kernel-{uuid.uuid4().hex[:16]}-ipc")


class IPCEngine:
    """papermill's nbclient engine with :class:`IPCKernelManager` as the kernel manager (unless the
    caller passes another ``kernel_manager_class``).

    It delegates to :class:`papermill.engines.NBClientEngine` instead of subclassing it: papermill
    loads its entry points while ``papermill.engines`` is being imported, so this module must not
    import that module at import time."""

    @classmethod
    def execute_notebook(cls, nb, kernel_name, **kwargs: Any):
        from papermill.engines import NBClientEngine

        kwargs.setdefault("kernel_manager_class", IPCKernelManager)
        return NBClientEngine.execute_notebook(nb, kernel_name, **kwargs)

    @classmethod
    def nb_kernel_name(cls, nb, name=None):
        from papermill.engines import NBClientEngine

        return NBClientEngine.nb_kernel_name(nb, name)

    @classmethod
    def nb_language(cls, nb, language=None):
        from papermill.engines import NBClientEngine

        return NBClientEngine.nb_language(nb, language)


def register() -> None:
    """Register the engine with papermill under :data:`ENGINE_NAME` (the entry point does this for an
    installed package; this covers a source tree on ``PYTHONPATH``)."""
    from papermill.engines import papermill_engines

    papermill_engines.register(ENGINE_NAME, IPCEngine)


def execute_notebook(input_path, output_path, **kwargs: Any):
    """:func:`papermill.execute_notebook` on the :class:`IPCEngine` (same arguments)."""
    import papermill as pm

    register()
    kwargs.setdefault("engine_name", ENGINE_NAME)
    return pm.execute_notebook(str(input_path), str(output_path), **kwargs)


__all__ = ["ENGINE_NAME", "IPCKernelManager", "IPCEngine", "register", "execute_notebook"]
