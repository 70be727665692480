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
    #: cap on a sampling explainer's draws per explained text (LIME's perturbed samples, SHAP's model
    #: evaluations); None = the number the caller asks for
    max_samples: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def cap_samples(self, n: int | None) -> int | None:
        """``n`` draws per text under this profile: at most :attr:`max_samples`.  ``None`` (the explainer's own
        default) stays ``None`` without a cap and becomes the cap with one."""
        if self.max_samples is None:
            return n
        return self.max_samples if n is None else min(int(n), self.max_samples)


PROFILES = {
    "full": Profile("full", max_train=None, max_eval=None, max_epochs=4, patience=1),
    "quick": Profile("quick", max_train=64, max_eval=48, max_epochs=1, patience=1, max_samples=50),
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
    ``reports/<profile>/`` so that smoke runs never overwrite the committed results.  In a notebook it
    first checks the notebook's parameters and ``XAIBENCH_DEVICE`` / ``XAIBENCH_THREADS``
    (:func:`check_notebook_parameters`), so a bad value fails before any work, also when the notebook is
    run with papermill directly.
    """
    import os

    from .progress import in_kernel, quiet_library_bars

    prof = get_profile(name)
    if in_kernel():  # the notebook's parameters, as papermill injected them: check them before any work
        from IPython import get_ipython

        check_notebook_parameters(get_ipython().user_ns)
    else:
        check_notebook_parameters({})
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


def parse_seeds(seeds: Any, name: str = "SEEDS") -> list[int]:
    """Accept ``"42 43"``, ``"42,43"``, ``42`` or ``[42, 43]`` (what Make/papermill pass): one or more
    integers >= 0.  ``name`` is the Make variable named in the error message."""
    if isinstance(seeds, bool):
        parts: list[Any] = [seeds]
    elif isinstance(seeds, int):
        parts = [seeds]
    elif isinstance(seeds, str):
        parts = seeds.replace(",", " ").split()
    else:
        parts = list(seeds)
    out = []
    for p in parts:
        try:
            if isinstance(p, bool) or (isinstance(p, float) and not p.is_integer()):
                raise ValueError(p)
            out.append(int(p))
        except (TypeError, ValueError):
            out = []
            break
    if not parts:
        raise ValueError(f"{name}={seeds!r} gives no seeds: use one or more integers >= 0, "
                         f'e.g. {name}="42 43 44 45 46"')
    if len(out) != len(parts) or any(s < 0 for s in out):
        raise ValueError(f"{name}={seeds!r} is not a list of seeds: use integers >= 0 separated by spaces, "
                         f'e.g. {name}="42 43"')
    big = [s for s in out if s > MAX_SEED]
    if big:
        raise ValueError(f"{name}={seeds!r}: seed {big[0]} is out of range; seeds are integers 0..{MAX_SEED} "
                         "(2**32 - 1, what numpy's and torch's generators take)")
    check_unique(out, name, seeds)
    return out


#: the largest seed a run takes (numpy's ``RandomState`` and ``default_rng`` accept 0..2**32 - 1)
MAX_SEED = 2**32 - 1


def check_unique(items: Any, name: str, shown: Any = None) -> list:
    """``items`` as a list when no item occurs twice, else a ``ValueError`` naming ``name`` (the Make
    variable or parameter), its value ``shown`` (default: the items) and the repeated items: a repeated
    seed, model or task would be counted twice in every mean and count that runs over the list."""
    items = list(items)
    dup = [x for i, x in enumerate(items) if x in items[:i]]
    if dup:
        shown = items if shown is None else shown
        raise ValueError(f"{name}={shown!r} names {', '.join(map(repr, dict.fromkeys(dup)))} more than once; "
                         "give each value once")
    return items


def positive_int(value: Any, name: str) -> int:
    """``value`` as an integer >= 1 (``"500"``, ``500``), else a ``ValueError`` naming ``name``."""
    try:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError(value)
        n = int(str(value).strip()) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        n = 0
    if n < 1:
        raise ValueError(f"{name}={value!r} is not a positive integer: use an integer >= 1, e.g. {name}=500")
    return n


def check_profile(value: Any, name: str = "PROFILE", allowed: tuple[str, ...] = ("full", "quick")) -> str:
    """``value`` if it is one of ``allowed`` profiles, else a ``ValueError`` naming ``name``."""
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not a run profile: use one of {' | '.join(allowed)}")
    return str(value)


def check_explainer_list(value: Any, name: str = "EXPLAINERS") -> list[str]:
    """The words of an explainer list: empty (the paper's methods), ``all`` (every registered explainer
    that applies) or registry names separated by spaces.  Checks the spelling only; which names are
    registered is checked by ``python -m xaibench.reports check`` and by each protocol."""
    import re

    text = "" if value is None else str(value)
    words = text.split()
    if "," in text:
        raise ValueError(f"{name}={value!r}: separate the explainers by spaces, e.g. {name}=\"lime shap\"")
    bad = [w for w in words if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", w)]
    if bad:
        raise ValueError(f"{name}={value!r}: {bad} are not explainer names (letters, digits, _ . -); "
                         "use empty (the paper's methods), 'all', or registered names")
    if "all" in words and len(words) > 1:
        raise ValueError(f"{name}={value!r}: 'all' stands alone (every registered explainer that applies)")
    return check_unique(words, name, value)


#: notebook parameters (as papermill injects them) checked by :func:`check_notebook_parameters`:
#: parameter -> (Make variable(s) that set it, check)
NOTEBOOK_PARAMETERS = {
    "seeds": ("SEEDS / INCLUSIVE_SEEDS / ATTR_GT_SEEDS / GE_SEEDS / HG_SEEDS", parse_seeds),
    "seed": ("SEEDS (its first seed)", parse_seeds),
    "n_imdb": ("CF_IMDB", positive_int),
    "n_newsgroups": ("CF_NEWSGROUPS", positive_int),
    "explainers": ("EXPLAINERS", check_explainer_list),
}


def check_notebook_parameters(params: dict[str, Any]) -> None:
    """Fail fast, before any work, on a notebook parameter no run can use (seeds that are not integers
    >= 0, sample sizes < 1) and on invalid ``XAIBENCH_DEVICE`` / ``XAIBENCH_THREADS`` /
    ``XAIBENCH_SCHEDULER`` / ``XAIBENCH_LEVERS``.  ``params``: the notebook's namespace (only the names of :data:`NOTEBOOK_PARAMETERS` are read).  The errors name the
    notebook parameter and the Make variable that sets it."""
    import os

    from .device import check_device, check_threads
    from .executor import check_scheduler
    from .levers import check_levers

    check_device(os.environ.get("XAIBENCH_DEVICE"))
    check_threads(os.environ.get("XAIBENCH_THREADS"))
    check_scheduler(os.environ.get("XAIBENCH_SCHEDULER"))
    check_levers(os.environ.get("XAIBENCH_LEVERS"))
    for param, (make_var, check) in NOTEBOOK_PARAMETERS.items():
        if param in params:
            try:
                check(params[param], param)
            except ValueError as e:
                raise ValueError(f"notebook parameter {e} (set by make's {make_var})") from None
