"""``python -m xaibench.bench scorecard``: the bootstrap interval of the scorecard's rank agreement (notebook 30,
:func:`~xaibench.evaluation.scorecard.agreement_matrix`) as computed now, each protocol's replicates read as one
array in its column order, against looking every replicate up by explainer name (:func:`agreement_by_name`, the
path it replaces) -> ``figures/tables/bench_scorecard.csv``.

The rows are the committed ``figures/tables/scorecard_scores.csv`` (what notebook 30 ranks) and ``n_boot`` its
full profile's 1,000 replicates; ``identical`` says whether both ways give the same intervals, bit for bit."""
from __future__ import annotations

import numpy as np
import pandas as pd


def agreement_by_name(rows: pd.DataFrame, n_boot: int = 500, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Per ordered pair of protocols with at least :data:`~xaibench.evaluation.scorecard.MIN_SHARED` shared
    explainers: the bootstrap interval of Kendall's tau, each replicate's mean ranks indexed by explainer name."""
    from ..evaluation import scorecard as sc

    mats = sc.unit_matrices(sc.unit_ranks(rows))
    boots = sc.boot_mean_ranks(mats, n_boot, seed)
    out = []
    for a in mats:
        for b in mats:
            shared = [e for e in mats[a].columns if e in set(mats[b].columns)]
            if len(shared) < sc.MIN_SHARED:
                continue
            taus = np.array([sc.kendall_tau(ba[shared].values, bb[shared].values) for ba, bb in zip(boots[a], boots[b])])
            taus = taus[~np.isnan(taus)]
            lo, hi = np.quantile(taus, [(1 - level) / 2, 1 - (1 - level) / 2]) if len(taus) else (np.nan, np.nan)
            out.append({"protocol_a": a, "protocol_b": b, "tau_low": float(lo), "tau_high": float(hi)})
    return pd.DataFrame(out, columns=["protocol_a", "protocol_b", "tau_low", "tau_high"])


def bench_scorecard(rows: pd.DataFrame | None = None, n_boot: int = 1000, repeats: int = 3) -> pd.DataFrame:
    from .. import paths
    from ..evaluation import scorecard as sc
    from .common import fastest_of, machine_context

    if rows is None:
        rows = pd.read_csv(paths.tables_dir() / "scorecard_scores.csv")
    keys = ["protocol_a", "protocol_b", "tau_low", "tau_high"]
    ways = {"by name (before)": lambda: agreement_by_name(rows, n_boot),
            "arrays (now)": lambda: sc.agreement_matrix(rows, n_boot).dropna(subset=["tau"])[keys]}
    seconds, got = fastest_of(ways, repeats)
    got = {way: frame.reset_index(drop=True) for way, frame in got.items()}
    before = "by name (before)"
    identical = got[before].equals(got["arrays (now)"])
    return pd.DataFrame([{"way": way, "rows": len(rows), "protocols": rows["protocol"].nunique(),
                          "pairs": len(got[way]), "n_boot": n_boot, "seconds": round(s, 2),
                          "speedup_vs_before": round(seconds[before] / s, 2), "identical": identical,
                          **machine_context()} for way, s in seconds.items()])
