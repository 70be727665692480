"""``python -m xaibench.bench editors``: seconds and predictor calls per edit step of each
counterfactual editor (Filandrianos et al. 2023, notebook 22's full sample)."""
from __future__ import annotations

import pandas as pd

from .common import MACHINE_KEYS


def bench_editors(sample: dict[str, int] | None = None, n_steps: int = 9) -> pd.DataFrame:
    """Seconds and predictor calls per edit step of each counterfactual editor.

    The chains are notebook 22's full-profile run (``FULL_SAMPLE`` texts per dataset, 9 edits, TF-IDF predictor),
    so its recorded timings are reported when that run is cached (``data/results/cf_feedback``),
    else it is computed now; the rows carry the machine and its 1-minute load average at the start
    and end of each editor's run (other work on the machine slows it down).
    """
    from ..device import machine_info
    from ..evaluation.cf_feedback.runner import EDITOR_ORDER, FULL_SAMPLE, run_experiment

    here = machine_info()
    rows = []
    for d, n_texts in (sample or FULL_SAMPLE).items():
        for e in EDITOR_ORDER:
            stats = run_experiment(d, e, n_texts, n_steps=n_steps, progress=False)[1]
            rows.append({**stats, **{k: here[k] for k in MACHINE_KEYS if k not in stats}})
    df = pd.DataFrame(rows)
    first = ["dataset", "editor", "predictor", "n_texts", "n_edit_steps", "seconds", "seconds_per_edit",
             "predictor_calls_per_edit", "predictor_texts_per_edit", "predictor_texts_incremental_per_edit",
             *MACHINE_KEYS, "load_start", "load_end"]
    df = df[[c for c in first if c in df.columns] + [c for c in df.columns if c not in first]]
    return df.round({"seconds": 1, "seconds_per_edit": 3, "predictor_calls_per_edit": 2, "predictor_texts_per_edit": 1,
                     "predictor_texts_incremental_per_edit": 1, "load_start": 2, "load_end": 2})
