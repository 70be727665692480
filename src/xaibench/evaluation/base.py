"""What every paper's package shares: the one :class:`Metric` description (name and direction).

A metric is declared once, in its paper's ``metrics`` module, with its direction
(``lower_is_better``), so that ranks, "best" markers and rank agreement never guess it.  Beside it: the
one protocol interface (:class:`Protocol`, its tidy rows :data:`ROW_COLUMNS`) and :func:`make_with`, which
builds an explainer with the keyword arguments it accepts.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Metric:
    """A metric of a protocol.

    ``lower_is_better``: ``True`` (an error or distance), ``False`` (a score), or ``None`` for a
    quantity that is reported but not ranked (e.g. Ge et al.'s proximity).  ``fn`` computes it where
    one function does; ``label`` is the name printed in the paper's tables.
    """

    name: str
    lower_is_better: bool | None
    description: str = ""
    fn: Callable[..., Any] | None = None
    label: str = ""

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError(f"a Metric needs a non-empty name; got {self.name!r}")
        if self.lower_is_better not in (True, False, None):
            raise ValueError(f"Metric {self.name!r}: lower_is_better must be True, False or None; "
                             f"got {self.lower_is_better!r}")

    @property
    def title(self) -> str:
        return self.label or self.name


def metric_lookup(metrics: dict[str, Metric], name: str) -> Metric:
    """``metrics[name]``, or a ``KeyError`` that lists the known names."""
    if name not in metrics:
        raise KeyError(f"unknown metric {name!r}; choose from {sorted(metrics)}")
    return metrics[name]


# ---- the one protocol interface -----------------------------------------------------------------
#: the columns of every protocol's tidy score rows
#: the mark of an explainer scored beside a paper's own list (Make's ``EXPLAINERS``) in tables and figures
ADDED = " (added)"


def mark_added(name: Any, known: Any = ()) -> Any:
    """``name`` marked :data:`ADDED` (``"shap (added)"``), unless it is in ``known`` (the paper's list and any
    other name shown as it is), is already marked, or is not a non-empty string (a summary row's empty method)."""
    if not isinstance(name, str) or not name or name in known or name.endswith(ADDED):
        return name
    return f"{name}{ADDED}"


def make_with(factory: Any, **kwargs: Any) -> Any:
    """``factory(**kwargs)`` keeping only the keyword arguments it accepts (the protocols pass
    ``seed`` and cost settings such as ``num_samples``; a user's explainer need not take them)."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return factory(**kwargs)
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return factory(**kwargs)
    return factory(**{k: v for k, v in kwargs.items() if k in params})


ROW_COLUMNS = ("protocol", "metric", "lower_is_better", "explainer", "model", "dataset", "seed", "value")


class Protocol:
    """An evaluation protocol: which explainers it can score and how.

    A subclass sets ``name``, ``paper``, ``accepts`` (the explainer output types it scores, see
    :data:`xaibench.registry.OUTPUTS`), ``families`` (the registry families whose ``fit`` arguments it
    supplies; empty: every family of an accepted output), ``models`` (the model kinds it explains: an
    explainer restricted to other kinds does not apply), ``datasets``, ``metrics`` (name ->
    :class:`Metric`, each with its direction) and ``paper_explainers`` (the paper's own list), and
    implements ``_score(names, profile, seeds)`` -> tidy rows (:data:`ROW_COLUMNS`).
    ``stored(profile)`` returns the rows the paper's notebook already stored (default: none), so
    that nothing stored is recomputed.

    The explainers it scores are never listed in the protocol: :meth:`explainer_names` asks the
    registry (:mod:`xaibench.registry`), so a newly registered explainer is scored without editing it.
    """

    name: str = ""
    paper: str = ""
    accepts: tuple[str, ...] = ()
    families: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    metrics: dict[str, Metric] = {}
    paper_explainers: tuple[str, ...] = ()
    #: the committed tables (``figures/tables/<name>.csv``) its paper's notebook writes from the results
    #: :meth:`stored` reads: the scorecard records their fingerprints, so a paper report regenerated after it shows
    paper_tables: tuple[str, ...] = ()
    #: the profiles it can score
    profiles: tuple[str, ...] = ("full", "quick")

    def applies_to(self, spec: Any) -> bool:
        """Whether the registered explainer ``spec`` (:class:`xaibench.registry.ExplainerSpec`) can be scored."""
        if spec.output not in self.accepts or (self.families and spec.family not in self.families):
            return False
        return not spec.models or not self.models or bool(set(spec.models) & set(self.models))

    def applicable_specs(self) -> list[Any]:
        """Every registered explainer it applies to, one per name (the first family in ``families`` wins)."""
        from .. import registry
        from ..explainers import load_builtins

        load_builtins()  # the built-in explainers register when their packages are imported
        specs = [s for s in registry.explainer_specs() if self.applies_to(s)]
        order = {f: i for i, f in enumerate(self.families)}
        out: dict[str, Any] = {}
        for s in sorted(specs, key=lambda s: order.get(s.family, len(order))):
            out.setdefault(s.name, s)
        return list(out.values())

    def explainer_names(self, explainers: Any = None) -> list[str]:
        """The names it scores for ``explainers``: ``None``/``"paper"`` -> the paper's list,
        ``"all"`` -> every applicable registered explainer (paper's first) but those registered ``opt_in`` (run
        only when named), or a list of names (each must be registered and applicable; a name the protocol does not
        apply to is refused)."""
        specs = self.applicable_specs()
        known = [s.name for s in specs]
        if explainers is None or (isinstance(explainers, str) and explainers in ("", "paper")):
            return [n for n in self.paper_explainers if n in known]
        if isinstance(explainers, str) and explainers == "all":
            return [n for n in self.paper_explainers if n in known] + [
                s.name for s in specs if s.name not in self.paper_explainers and not s.opt_in]
        names = explainers.split() if isinstance(explainers, str) else list(explainers)
        bad = [n for n in names if n not in known]
        if bad:
            raise ValueError(f"explainers={bad!r}: protocol {self.name!r} cannot score them; it scores "
                             f"{known} (or 'paper' / 'all')")
        return list(dict.fromkeys(names))

    def run_list(self, explainers: Any = "") -> list[str]:
        """The explainers a paper notebook runs for its ``explainers`` parameter (Make's ``EXPLAINERS``):
        empty or ``"paper"`` -> the paper's list; ``"all"`` -> every applicable registered explainer
        (the paper's first; not those registered ``opt_in``); names -> the paper's methods among them (all of
        the paper's when none is named: its tables keep them), then the named others it can score.  Registered
        names it cannot score (e.g. a concept explainer for an attribution protocol) are left to their own
        protocols."""
        from ..config import check_explainer_list

        words = [w for w in check_explainer_list(explainers, "explainers") if w != "paper"]
        if words == ["all"]:
            return self.explainer_names("all")
        known = [s.name for s in self.applicable_specs()]
        paper = [n for n in self.paper_explainers if n in known]
        named_paper = [w for w in dict.fromkeys(words) if w in paper]
        extra = [w for w in dict.fromkeys(words) if w in known and w not in paper]
        return (named_paper or paper) + extra

    def is_paper(self, explainer: str) -> bool:
        return explainer in self.paper_explainers

    def score(self, explainers: Any = None, profile: str = "quick", seeds: Any = (42,)) -> Any:
        """Tidy rows (:data:`ROW_COLUMNS`) of ``explainers`` (see :meth:`explainer_names`) under
        ``profile`` for every seed."""
        import pandas as pd

        from ..config import check_profile, parse_seeds

        check_profile(profile, "profile", self.profiles)
        seeds = parse_seeds(" ".join(map(str, seeds)) if not isinstance(seeds, str) else seeds, "seeds")
        names = self.explainer_names(explainers)
        rows = self._score(names, profile, seeds) if names else pd.DataFrame(columns=list(ROW_COLUMNS))
        return self.tidy(rows)

    def _score(self, names: list[str], profile: str, seeds: list[int]) -> Any:
        raise NotImplementedError

    def stored(self, profile: str = "full") -> Any:
        """Rows the paper's notebook stored for ``profile`` (same columns); none by default."""
        import pandas as pd

        return pd.DataFrame(columns=list(ROW_COLUMNS))

    def tidy(self, rows: Any) -> Any:
        """``rows`` with :data:`ROW_COLUMNS` in order: ``protocol`` and ``lower_is_better`` filled
        from :attr:`metrics` (a metric it does not declare is refused), ``seed`` an int."""
        import pandas as pd

        df = pd.DataFrame(rows).copy()
        if not len(df):
            return pd.DataFrame(columns=list(ROW_COLUMNS))
        unknown = sorted(set(df["metric"]) - set(self.metrics))
        if unknown:
            raise ValueError(f"protocol {self.name!r} produced metrics {unknown} it does not declare; "
                             f"declared: {sorted(self.metrics)}")
        df["protocol"] = self.name
        df["lower_is_better"] = df["metric"].map(lambda m: self.metrics[m].lower_is_better)
        df["seed"] = df["seed"].astype(int)
        df["value"] = df["value"].astype(float)
        return df[list(ROW_COLUMNS)].reset_index(drop=True)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, accepts={self.accepts})"
