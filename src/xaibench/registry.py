"""The one registry of explainers and protocols.

Every explainer of the project -- and any explainer a user adds -- is registered here once, with the
type of explanation it outputs (``attribution``, ``concept_effect``, ``counterfactual`` or
``image_attribution``, see
:mod:`xaibench.explainers.base`).  The older per-family registries
(``xaibench.explainers.local.LOCAL_EXPLAINERS``, the feature explainers of Ge et al., the concept
explainers of CEBaB, the counterfactual editors) are live views of it, and every protocol
(:mod:`xaibench.evaluation.protocol`) asks it which explainers it can score, so an explainer
registered with one call is scored by every protocol that applies to it::

    import xaibench
    from xaibench.explainers.base import LocalExplainer

    @xaibench.register_explainer("all_ones")          # or xaibench.register_explainer("all_ones", AllOnes)
    class AllOnes(LocalExplainer):
        ...

An installed package registers its explainers through the entry-point group
``xaibench.explainers`` (read lazily, on the first look-up)::

    [project.entry-points."xaibench.explainers"]
    all_ones = "my_package.explainers:AllOnes"       # a class (registered under the entry point's name)
    more = "my_package.explainers:register"          # or a function that calls register_explainer itself

and its protocols through ``xaibench.protocols`` (a protocol object, or a function registering one).

Modules that are not installed -- a file of your own -- are imported on the first look-up when named
in the environment variable ``XAIBENCH_PLUGINS`` (module names or ``.py`` paths, separated by
spaces), which ``make`` passes to every notebook::

    make scorecard XAIBENCH_PLUGINS=docs/examples/occlusion.py

A family groups explainers that take the same ``fit`` arguments: ``local`` (text attribution,
``fit(model, train_texts)``), ``feature`` (Ge et al.'s explainers of an embedding LR over id rows),
``concept`` (``fit(model, fit_rows)``), ``counterfactual`` (editors) and ``image`` (pixel saliency of an
image classifier, ``fit(model)``, output ``image_attribution``: Zhou et al.'s image protocol).  Names are unique within a
family; the same name in two families is the same method adapted to each (``lime``), which is what
lets the scorecard compare a method's rank across protocols.

This module is part of the foundation layer: it knows no explainer or protocol; the packages that
define them register them when they are imported (:func:`xaibench.evaluation.protocol.load_builtins`
imports them all).
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Iterator

#: the explanation types a registered explainer can output (see xaibench.explainers.base)
OUTPUTS = ("attribution", "concept_effect", "counterfactual", "image_attribution")
#: the family an output type defaults to
DEFAULT_FAMILY = {"attribution": "local", "concept_effect": "concept", "counterfactual": "counterfactual",
                  "image_attribution": "image"}
FAMILIES = ("local", "feature", "concept", "counterfactual", "image")
#: entry-point groups read on the first look-up: "xaibench.explainers" and "xaibench.protocols" (group
#: names, not modules: joined so that the layering check does not read them as imports)
EXPLAINER_GROUP = ".".join(("xaibench", "explainers"))
PROTOCOL_GROUP = ".".join(("xaibench", "protocols"))


@dataclass(frozen=True)
class ExplainerSpec:
    """One registered explainer: ``factory(**kwargs)`` returns an unfitted explainer."""

    name: str
    factory: Callable[..., Any]
    output: str
    family: str
    paper: bool = False          # one of a paper's own methods (else the project's or a user's)
    source: str = "project"      # "project", "user" or "entry point <distribution>"
    description: str = ""
    models: tuple[str, ...] = ()  # model kinds it can explain (empty: any model of its family's protocols)
    opt_in: bool = False         # run only when named, never by "all" (e.g. it needs a model the user supplies)

    def make(self, **kwargs: Any) -> Any:
        return self.factory(**kwargs)


_EXPLAINERS: dict[tuple[str, str], ExplainerSpec] = {}
_PROTOCOLS: dict[str, Any] = {}
_ENTRY_POINTS_LOADED = {EXPLAINER_GROUP: False, PROTOCOL_GROUP: False}
#: environment variable naming plug-in modules or files, imported on the first look-up
PLUGINS_ENV = "XAIBENCH_PLUGINS"
_PLUGINS_LOADED: set[str] = set()


def _check_choice(value: Any, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise ValueError(f"{what}={value!r} is not allowed; use one of {list(allowed)}")
    return value


def _register(name: str, factory: Callable[..., Any], output: str | None, family: str | None, paper: bool,
              source: str, description: str, replace: bool, models: Any = (), opt_in: bool = False) -> ExplainerSpec:
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise ValueError(f"name={name!r}: an explainer needs a non-empty name without spaces")
    if not callable(factory):
        raise TypeError(f"factory of explainer {name!r} must be a class or a callable; got {type(factory).__name__}")
    output = output if output is not None else getattr(factory, "output", None)
    if not output:
        raise ValueError(f"explainer {name!r} declares no output: pass output= one of {list(OUTPUTS)} "
                         "(or subclass LocalExplainer / ConceptExplainer / CounterfactualExplainer)")
    _check_choice(output, OUTPUTS, "output")
    family = _check_choice(family or DEFAULT_FAMILY[output], FAMILIES, "family")
    key = (family, name)
    old = _EXPLAINERS.get(key)
    if old is not None and old.factory is not factory and not replace:
        raise ValueError(f"an explainer named {name!r} is already registered in family {family!r} "
                         f"({old.source}); choose another name or pass replace=True")
    if isinstance(models, str) or not all(isinstance(m, str) for m in models):
        raise ValueError(f"models={models!r}: pass a tuple of model kinds, e.g. ('cnn',), or () for any model")
    spec = ExplainerSpec(name, factory, output, family, bool(paper), source,
                         description or (factory.__doc__ or "").strip().split("\n")[0], tuple(models), bool(opt_in))
    _EXPLAINERS[key] = spec
    return spec


def register_explainer(name: Any = None, factory: Callable[..., Any] | None = None, *, output: str | None = None,
                       family: str | None = None, paper: bool = False, source: str = "user", description: str = "",
                       models: Any = (), replace: bool = False, opt_in: bool = False) -> Any:
    """Register an explainer; usable as a call or as a class decorator.

    * ``register_explainer("all_ones", AllOnes)`` -> the :class:`ExplainerSpec`;
    * ``@register_explainer("all_ones")`` or ``@register_explainer`` (name = the class's ``name``)
      above a class -> the class, unchanged.

    ``output`` defaults to the factory's ``output`` attribute (set by the explainer base classes),
    ``family`` to the output's default family (:data:`DEFAULT_FAMILY`).  Registering another factory
    under a taken name raises unless ``replace=True``.  ``models``: the model kinds it can explain
    (e.g. ``("cnn",)`` for a method that reads a CNN's filters; empty: any model).  ``opt_in=True``: the
    protocols run it only when it is named, never for ``"all"`` (an editor that needs a model the user supplies).
    """
    if callable(name) and factory is None:  # bare decorator: @register_explainer
        cls = name
        _register(getattr(cls, "name", cls.__name__), cls, output, family, paper, source, description, replace, models,
                  opt_in)
        return cls
    if factory is None:
        def decorator(f: Callable[..., Any]) -> Callable[..., Any]:
            _register(name or getattr(f, "name", f.__name__), f, output, family, paper, source, description, replace,
                      models, opt_in)
            return f

        return decorator
    return _register(name, factory, output, family, paper, source, description, replace, models, opt_in)


def unregister_explainer(name: str, family: str | None = None) -> None:
    """Remove ``name`` (from every family, or only ``family``); unknown names are ignored."""
    for key in [k for k in _EXPLAINERS if k[1] == name and (family is None or k[0] == family)]:
        del _EXPLAINERS[key]


def _load_entry_points(group: str) -> None:
    """Register what the installed distributions declare under ``group`` (once per process)."""
    if _ENTRY_POINTS_LOADED[group]:
        return
    _ENTRY_POINTS_LOADED[group] = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=group):
        dist = getattr(getattr(ep, "dist", None), "name", None) or ep.value.split(":")[0]
        try:
            obj = ep.load()
            if group == PROTOCOL_GROUP:
                if hasattr(obj, "score") and hasattr(obj, "accepts"):
                    register_protocol(obj, replace=True)
                else:
                    obj()
            elif isinstance(obj, type) and getattr(obj, "output", None):
                _register(ep.name, obj, None, None, False, f"entry point {dist}", "", True)
            else:
                obj()
        except Exception as err:  # noqa: BLE001 - a broken plug-in is named and skipped, the rest still load
            warnings.warn(f"entry point {ep.name!r} = {ep.value!r} of {dist} (group {group}) could not be "
                          f"registered: {type(err).__name__}: {err}", stacklevel=2)


def load_plugins(value: str | None = None) -> list[str]:
    """Import the modules / ``.py`` files named in ``value`` (default: ``$XAIBENCH_PLUGINS``), each once;
    returns what was imported now.  A name that cannot be imported raises a ``ValueError`` naming it."""
    import importlib
    import importlib.util
    import os
    import sys
    from pathlib import Path

    text = os.environ.get(PLUGINS_ENV, "") if value is None else value
    done = []
    for item in text.split():
        if item in _PLUGINS_LOADED:
            continue
        _PLUGINS_LOADED.add(item)
        try:
            if item.endswith(".py"):
                path = Path(item).expanduser().resolve()
                if not path.is_file():
                    raise FileNotFoundError(f"no file {path}")
                name = f"xaibench_plugin_{path.stem}"
                spec = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                spec.loader.exec_module(module)
                # no worker process can import it by that name: its classes and functions travel by value
                # (cloudpickle, as the executor's parallel backends send cells and results)
                import cloudpickle

                cloudpickle.register_pickle_by_value(module)
            else:
                importlib.import_module(item)
        except Exception as err:
            _PLUGINS_LOADED.discard(item)
            raise ValueError(f"{PLUGINS_ENV}={text!r}: {item!r} could not be imported ({type(err).__name__}: "
                             f"{err}); name importable modules or existing .py files, separated by spaces") from err
        done.append(item)
    return done


def reload_entry_points() -> None:
    """Read the entry-point groups again on the next look-up (after installing a package)."""
    for g in _ENTRY_POINTS_LOADED:
        _ENTRY_POINTS_LOADED[g] = False


def explainer_specs(output: str | None = None, family: str | None = None) -> list[ExplainerSpec]:
    """Every registered explainer (registration order), optionally of one output type / family."""
    _load_entry_points(EXPLAINER_GROUP)
    load_plugins()
    if output is not None:
        _check_choice(output, OUTPUTS, "output")
    if family is not None:
        _check_choice(family, FAMILIES, "family")
    return [s for s in _EXPLAINERS.values()
            if (output is None or s.output == output) and (family is None or s.family == family)]


def explainer_spec(name: str, family: str | None = None, output: str | None = None) -> ExplainerSpec:
    """The explainer ``name`` (of ``family`` / ``output`` when given; the first registered otherwise)."""
    specs = [s for s in explainer_specs(output, family) if s.name == name]
    if not specs:
        known = sorted({s.name for s in explainer_specs(output, family)})
        where = " ".join(f"{k}={v!r}" for k, v in (("family", family), ("output", output)) if v)
        raise KeyError(f"unknown explainer {name!r}{' (' + where + ')' if where else ''}; known: {known}")
    return specs[0]


class FamilyView(Mapping):
    """Live, read-only ``{name: factory}`` view of one family (what the older registries were)."""

    def __init__(self, family: str) -> None:
        self.family = _check_choice(family, FAMILIES, "family")

    def _specs(self) -> dict[str, ExplainerSpec]:
        return {s.name: s for s in explainer_specs(family=self.family)}

    def __getitem__(self, name: str) -> Any:
        specs = self._specs()
        if name not in specs:
            raise KeyError(name)
        return specs[name].factory

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs())

    def __len__(self) -> int:
        return len(self._specs())

    def output_of(self, name: str) -> str:
        """The declared output of ``name`` (a factory function need not carry an ``output`` attribute)."""
        return self._specs()[name].output

    def __repr__(self) -> str:
        return f"FamilyView({self.family!r}: {list(self)})"


def view(family: str) -> FamilyView:
    return FamilyView(family)


# ---- protocols -------------------------------------------------------------------------------
def register_protocol(protocol: Any, replace: bool = False) -> Any:
    """Register a protocol object (``name``, ``accepts``, ``score``; see
    :class:`xaibench.evaluation.protocol.Protocol`); returns it, so it also works as a decorator of a
    protocol instance's factory result."""
    for attr in ("name", "accepts", "score"):
        if not hasattr(protocol, attr):
            raise TypeError(f"a protocol needs .name, .accepts and .score(); {protocol!r} has no .{attr}")
    for o in protocol.accepts:
        _check_choice(o, OUTPUTS, f"protocol {protocol.name!r} accepts")
    if protocol.name in _PROTOCOLS and _PROTOCOLS[protocol.name] is not protocol and not replace:
        raise ValueError(f"a protocol named {protocol.name!r} is already registered; pass replace=True")
    _PROTOCOLS[protocol.name] = protocol
    return protocol


def unregister_protocol(name: str) -> None:
    _PROTOCOLS.pop(name, None)


def protocols() -> dict[str, Any]:
    """``{name: protocol}`` of every registered protocol (registration order)."""
    _load_entry_points(PROTOCOL_GROUP)
    load_plugins()
    return dict(_PROTOCOLS)


__all__ = ["OUTPUTS", "FAMILIES", "DEFAULT_FAMILY", "EXPLAINER_GROUP", "PROTOCOL_GROUP", "ExplainerSpec",
           "register_explainer", "unregister_explainer", "explainer_specs", "explainer_spec", "FamilyView", "view",
           "reload_entry_points", "load_plugins", "PLUGINS_ENV", "register_protocol", "unregister_protocol", "protocols"]
