"""xaibench.

``xaibench.register_explainer`` / ``xaibench.register_protocol`` add an explainer or a protocol to the
one registry (:mod:`xaibench.registry`); see docs/extending.md.
"""
from .progress import quiet_kernel_output as _quiet_kernel_output
from .registry import register_explainer, register_protocol

_quiet_kernel_output()  # executed notebooks: no library progress bars or widget warnings

__all__ = ["register_explainer", "register_protocol"]
