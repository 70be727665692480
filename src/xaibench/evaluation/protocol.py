"""The protocols, all behind one interface (:class:`xaibench.evaluation.base.Protocol`).

Each paper's package exposes one protocol object (``<package>.protocol.PROTOCOL``), registered in
:mod:`xaibench.registry` when its module is imported; :func:`load_builtins` imports them all, and
the explainer packages, so that the registry holds every built-in explainer and protocol::

    from xaibench.evaluation.protocol import load_builtins, protocols_for
    load_builtins()
    for p in protocols_for("attribution"):
        rows = p.score("all", profile="quick", seeds=[42])   # tidy rows, one per metric x explainer x ...

========================  ================================  =================================================
protocol                  paper                             scores
========================  ================================  =================================================
``human_grounded``        Lertvittayakumjorn & Toni (2019)  attribution: tasks 1-3, simulated readers
``cf_faithfulness``       Ge et al. (2021)                  attribution: erasure + counterfactual metrics
``attribution_gt``        Zhou et al. (2022), text          attribution: Attr% on the ground-truth region
``attribution_gt_image``  Zhou et al. (2022), images        image attribution: Attr% in the manipulation's ER
``cebab``                 Abraham et al. (2022)             concept effect: ICaCE-Error
``cf_feedback``           Filandrianos et al. (2023)        counterfactual: inc@n, flip rate, minimality
``eraser``                DeYoung et al. (2020), ERASER     attribution: comprehensiveness, sufficiency
========================  ================================  =================================================
"""
from __future__ import annotations

import importlib
from typing import Any

from .. import explainers, registry
from .base import ROW_COLUMNS, Protocol, make_with

#: the packages that register the built-in explainers and protocols when imported
BUILTIN_MODULES = (
    *explainers.BUILTIN_MODULES,
    "xaibench.evaluation.human_grounded.protocol", "xaibench.evaluation.cf_faithfulness.protocol",
    "xaibench.evaluation.attribution_gt.protocol", "xaibench.evaluation.attribution_gt.image_protocol",
    "xaibench.evaluation.cebab.protocol", "xaibench.evaluation.cf_feedback.protocol",
    "xaibench.evaluation.eraser.protocol",
)


def load_builtins() -> dict[str, Any]:
    """Import every built-in explainer and protocol (registering them); returns the protocols."""
    for m in BUILTIN_MODULES:
        module = importlib.import_module(m)
        proto = getattr(module, "PROTOCOL", None)
        if proto is not None and registry.protocols().get(proto.name) is not proto:
            registry.register_protocol(proto, replace=True)  # unregistered since its import: back
    return registry.protocols()


def protocols_for(output: str | None = None) -> list[Protocol]:
    """Every registered protocol (built-ins loaded) that accepts ``output`` (all when ``None``)."""
    return [p for p in load_builtins().values() if output is None or output in p.accepts]


def protocol(name: str) -> Protocol:
    """The registered protocol ``name``."""
    known = load_builtins()
    if name not in known:
        raise KeyError(f"unknown protocol {name!r}; known: {sorted(known)}")
    return known[name]


__all__ = ["ROW_COLUMNS", "Protocol", "BUILTIN_MODULES", "load_builtins", "protocols_for", "protocol", "make_with"]
