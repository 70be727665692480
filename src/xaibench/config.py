"""Run profiles and parameter parsing shared by notebooks and the Makefile.

``full`` is the real run; ``quick`` is the smoke profile used by ``make quick`` and the notebook
tests (tiny subsets, one epoch) -- its numbers mean nothing and are never committed, and
:func:`use_profile` says so in a banner at the top of every quick run.
"""
from __future__ import annotations

from dataclasses import dataclass, asdict
from typing import Any

PAPER_SEEDS = (42, 43, 44, 45, 46)


@dataclass(frozen=True)
class Profile:
    name: str
    max_train: int | None      # cap on training examples (None = all)
    max_eval: int | None       # cap on dev/test examples / pairs
    max_epochs: int            # epoch cap (early stopping on dev inside it)
    patience: int              # early-stopping patience in epochs

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


PROFILES = {
    "full": Profile("full", max_train=None, max_eval=None, max_epochs=4, patience=1),
    "quick": Profile("quick", max_train=64, max_eval=48, max_epochs=1, patience=1),
    # benchmark runs: the full recipe, written below reports/bench/ (never over the real models)
    "bench": Profile("bench", max_train=None, max_eval=None, max_epochs=4, patience=1),
}


def get_profile(name: str) -> Profile:
    if name not in PROFILES:
        raise ValueError(f"unknown profile {name!r}; use one of {sorted(PROFILES)} (PROFILE=quick|full)")
    return PROFILES[name]


def use_profile(name: str) -> Profile:
    """Activate a profile for this process and its children (notebooks call it first).

    Under any profile other than ``full``, figures, tables and trained models are written below
    ``reports/<profile>/`` so that smoke runs never overwrite the committed results.
    """
    import os

    from .progress import in_kernel, quiet_library_bars

    prof = get_profile(name)
    os.environ["XAIBENCH_PROFILE"] = prof.name
    if in_kernel():
        quiet_library_bars()  # no download/loading bars in executed notebooks
    if prof.name == "quick":
        show_quick_banner()
    return prof


QUICK_BANNER = ("QUICK PROFILE: a smoke test on tiny subsets (a few dozen examples, one epoch). "
                "The numbers below are NOT results and are never committed; they only show that the code "
                "runs. Outputs go to reports/quick/. The real numbers come from the full profile (`make all`).")
_banner_shown = False


def show_quick_banner() -> None:
    """Print (in a notebook: display) the quick-profile warning, once per process."""
    global _banner_shown
    if _banner_shown:
        return
    _banner_shown = True
    from .progress import in_kernel

    if in_kernel():
        from IPython.display import display

        display({"text/markdown": f"> **⚠ {QUICK_BANNER}**", "text/plain": QUICK_BANNER}, raw=True)
    else:
        print(QUICK_BANNER, flush=True)


def parse_seeds(seeds: Any) -> list[int]:
    """Accept ``"42 43"``, ``"42,43"``, ``42`` or ``[42, 43]`` (what Make/papermill pass)."""
    if isinstance(seeds, int):
        return [seeds]
    if isinstance(seeds, str):
        parts = seeds.replace(",", " ").split()
    else:
        parts = list(seeds)
    try:
        out = [int(p) for p in parts]
    except ValueError as e:
        raise ValueError(f"could not read seeds from {seeds!r}: use integers, e.g. SEEDS=\"42 43\"") from e
    if not out:
        raise ValueError("no seeds given; e.g. SEEDS=\"42 43 44 45 46\"")
    return out
