"""``python -m xaibench.bench faithfulness``: Ge et al. -- seconds (wall and process CPU) per
explanation and per counterfactual search (Algorithms 1 and 2, K = 1), per explainer and dataset.
The measurement itself lives beside the experiment it times
(:func:`xaibench.evaluation.cf_faithfulness.runner.benchmark`)."""
from __future__ import annotations

import pandas as pd


def bench_faithfulness(**kw) -> pd.DataFrame:
    from ..evaluation.cf_faithfulness.runner import benchmark

    return benchmark(**kw)
