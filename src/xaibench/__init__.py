"""xaibench.

``xaibench.register_explainer`` / ``xaibench.register_protocol`` add an explainer or a protocol to the
one registry (:mod:`xaibench.registry`); see docs/extending.md.  They are imported on first use, so that a process
that needs neither (make's parameter stamps, :mod:`xaibench.paramstamp`) does not pay for the registry's imports.
"""
from .progress import quiet_kernel_output as _quiet_kernel_output

_quiet_kernel_output()  # executed notebooks: no library progress bars or widget warnings

__all__ = ["register_explainer", "register_protocol"]


def __getattr__(name: str):
    if name in __all__:
        from . import registry

        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
