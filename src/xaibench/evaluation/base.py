"""What every paper's package shares: the one :class:`Metric` description (name and direction).

A metric is declared once, in its paper's ``metrics`` module, with its direction
(``lower_is_better``), so that ranks, "best" markers and rank agreement never guess it.
"""
from __future__ import annotations

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
