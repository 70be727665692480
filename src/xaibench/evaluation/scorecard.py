"""The scorecard: every registered explainer under every protocol that applies to it (notebook 30).

::

    rows = collect("all", profile="quick", seeds=[42])   # tidy rows of every protocol (+ source, paper)
    ranks = rank_table(rows)                            # per protocol x metric: mean value and rank, seed spread
    overall = protocol_ranks(rows)                      # per protocol: mean rank of each explainer
    tau = agreement_matrix(rows)                        # Kendall tau between protocols + bootstrap interval

Stored results come first: a protocol's :meth:`~xaibench.evaluation.base.Protocol.stored` rows (what
its paper notebook already computed) are reused for the explainers they cover, and only the other
explainers are scored -- on the seeds of the stored rows, so that each unit ranks every explainer
(``seeds`` apply to the protocols with nothing stored).  What the scorecard computes is stored too
(:func:`computed_store`, one entry per protocol and explainer, keyed on the profile, the seeds and the
source of the protocol's package and the explainer's module), so a rerun computes only what is new;
``reuse=False`` computes everything again -- needed after a change the key does not see (a retrained model
the protocol reads, a changed model or metric module outside the protocol's package).  A protocol that cannot run (data or models missing), scores nothing,
or applies to none of the explainers asked for is reported in ``rows.attrs["skipped"]`` with the reason,
never silently dropped; :func:`collect` prints them as a table (:func:`skipped_summary`).

Ranks: within each protocol, every *unit* -- one (metric, model, dataset, seed) with a ranked metric
-- ranks the explainers it scores (1 = best, the metric's declared direction, ties averaged); an
explainer's rank under a protocol is its mean over the units.  Two protocols agree as much as the
Kendall tau between those mean ranks over the explainers both score (at least :data:`MIN_SHARED`);
the interval resamples each protocol's units with replacement (``n_boot`` times).
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .base import ROW_COLUMNS

#: explainers two protocols must share for a rank agreement
MIN_SHARED = 3
UNIT = ["metric", "model", "dataset", "seed"]


def collect(explainers: Any = "all", profile: str = "quick", seeds: Sequence[int] = (42,),
            protocols: Sequence[str] | None = None, reuse: bool = True) -> pd.DataFrame:
    """Tidy rows (:data:`~xaibench.evaluation.base.ROW_COLUMNS` + ``source`` (``stored`` /
    ``computed``) + ``paper`` (the explainer is one of the protocol paper's own)) of every protocol
    (or those named in ``protocols``) for ``explainers`` (``"all"``, ``"paper"`` or names: each
    protocol scores those it applies to).  ``rows.attrs["skipped"]``: ``[{protocol, reason}]``."""
    from .protocol import load_builtins

    known = load_builtins()
    names = list(known) if protocols is None else list(protocols)
    bad = [n for n in names if n not in known]
    if bad:
        raise ValueError(f"protocols={bad!r}: unknown; known: {sorted(known)}")
    from ..progress import progress

    frames, skipped = [], []
    for pname in progress(names, desc="scorecard protocols"):
        p = known[pname]
        caught: list[warnings.WarningMessage] = []
        try:
            if isinstance(explainers, str) and explainers in ("all", "paper", ""):
                wanted = p.explainer_names(explainers or None)
            else:  # named explainers: each protocol scores the ones it applies to
                applicable = {s.name for s in p.applicable_specs()}
                asked = explainers.split() if isinstance(explainers, str) else list(explainers)
                wanted = [n for n in asked if n in applicable]
            if not wanted:
                skipped.append({"protocol": pname, "reason": "none of the explainers asked for is of a kind it scores"})
                continue
            stored = p.stored(profile) if reuse else pd.DataFrame(columns=list(ROW_COLUMNS))
            stored = stored[stored["explainer"].isin(wanted)].assign(source="stored")
            todo = [n for n in wanted if n not in set(stored["explainer"])]
            # the others are scored on the seeds of the stored rows, so that every unit ranks them all
            run_seeds = sorted(set(stored["seed"].astype(int))) if len(stored) else list(seeds)
            try:
                with warnings.catch_warnings(record=True) as caught:  # a protocol says why it scored nothing
                    warnings.simplefilter("always")
                    computed = _computed(p, todo, profile, run_seeds, reuse).assign(source="computed") if todo else None
            finally:
                for w in caught:  # shown as they would have been
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            got = pd.concat([f for f in (stored, computed) if f is not None and len(f)], ignore_index=True) \
                if len(stored) or (computed is not None and len(computed)) else None
            if got is None or not len(got):
                said = "; ".join(dict.fromkeys(str(w.message) for w in caught))
                skipped.append({"protocol": pname, "reason": f"no rows: {said}" if said
                                else "no rows (nothing stored, nothing computed)"})
                continue
            frames.append(got.assign(paper=got["explainer"].map(p.is_paper)))
        except Exception as err:  # noqa: BLE001 - one protocol that cannot run must not hide the others
            warnings.warn(f"scorecard: protocol {pname!r} skipped: {type(err).__name__}: {err}", stacklevel=2)
            skipped.append({"protocol": pname, "reason": f"{type(err).__name__}: {err}"})
    rows = (pd.concat(frames, ignore_index=True) if frames
            else pd.DataFrame(columns=[*ROW_COLUMNS, "source", "paper"]))
    rows.attrs["skipped"] = skipped
    print(skipped_summary(rows, names), flush=True)
    return rows


def skipped_summary(rows: pd.DataFrame, protocols: Sequence[str]) -> str:
    """How many of ``protocols`` gave ``rows`` (from :func:`collect`), and a table of those it skipped with
    the reason of each."""
    skipped = pd.DataFrame(rows.attrs.get("skipped", []), columns=["protocol", "reason"])
    if not len(skipped):
        return f"scorecard: all {len(protocols)} protocols gave rows"
    return (f"scorecard: {len(protocols) - len(skipped)} of {len(protocols)} protocols gave rows; skipped:\n"
            + markdown_table(skipped))


def _fingerprint(path: Path) -> str:
    """SHA-256 of a committed table's bytes; ``""`` when it does not exist."""
    from ..utils import sha256_file

    return sha256_file(path) if path.exists() else ""


def input_fingerprints(protocols: Sequence[str], tables_dir: Any = None) -> pd.DataFrame:
    """One row per (protocol, table) of the committed tables each of ``protocols`` names in ``paper_tables`` (the
    tables its paper's notebook writes from the results the scorecard reads): ``sha256`` of the CSV's bytes (empty
    when the table does not exist) and its ``rows``.  Notebook 30 saves it as ``scorecard_inputs.csv``; a paper
    report regenerated after the scorecard changes a fingerprint, which :func:`stale_inputs` reports."""
    from .. import paths, registry

    folder = Path(tables_dir) if tables_dir is not None else paths.tables_dir()
    rows = []
    for name in protocols:
        for table in registry.protocols()[name].paper_tables:
            path = folder / f"{table}.csv"
            rows.append({"protocol": name, "table": table, "sha256": _fingerprint(path),
                         "rows": max(path.read_bytes().count(b"\n") - 1, 0) if path.exists() else 0})
    return pd.DataFrame(rows, columns=["protocol", "table", "sha256", "rows"])


def stale_inputs(recorded: pd.DataFrame, tables_dir: Any = None) -> list[str]:
    """The tables of ``recorded`` (:func:`input_fingerprints` as the scorecard saved it) whose committed CSV no longer
    has the recorded fingerprint: each as ``"<table> (protocol <name>)"``; empty when the scorecard is current."""
    from .. import paths

    folder = Path(tables_dir) if tables_dir is not None else paths.tables_dir()
    out = []
    for r in recorded.itertuples():
        if _fingerprint(folder / f"{r.table}.csv") != (r.sha256 if isinstance(r.sha256, str) else ""):
            out.append(f"{r.table} (protocol {r.protocol})")
    return out


#: result-format version of the scorecard's stored computed rows
COMPUTED_VERSION = 1


def _source_digest(obj: Any) -> str:
    """:func:`xaibench.store.source_digest` (a name tests patch to simulate an edited explainer)."""
    from ..store import source_digest

    return source_digest(obj)


def _package_digest(protocol: Any) -> str:
    """SHA-256 (16 hex digits) of every ``.py`` file of the package that defines ``protocol`` (its metrics
    live beside it); ``""`` when unknown."""
    import hashlib

    from ..store import source_file

    path = source_file(protocol)
    if path is None:
        return ""
    files = sorted(path.parent.glob("*.py")) if (path.parent / "__init__.py").exists() else [path]
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def computed_store():
    """Rows the scorecard computed (explainers no paper notebook stored), one entry per protocol x explainer,
    keyed on the profile, the seeds, and the source of the protocol's package and of the explainer's module."""
    from .. import paths
    from ..store import ResultStore

    return ResultStore(paths.results_dir() / "scorecard", "computed", version=COMPUTED_VERSION)


def _computed(p: Any, names: list[str], profile: str, seeds: list[int], reuse: bool = True) -> pd.DataFrame:
    """``p.score(names, ...)`` with each explainer's rows stored (:func:`computed_store`): a rerun scores only
    what is not stored (``reuse=False``: all, and stores them again).  An explainer without rows is not
    stored, so it is tried again next time."""
    specs = {s.name: s for s in p.applicable_specs()}
    store = computed_store()

    def key(name: str) -> dict:
        return {"protocol": p.name, "explainer": name, "profile": profile, "seeds": [int(s) for s in seeds],
                "protocol_code": _package_digest(p), "explainer_code": _source_digest(specs[name].factory)
                if name in specs else ""}

    frames, missing = [], []
    for name in names:
        hit = store.load(key(name)) if reuse else None
        if hit is not None:
            frames.append(hit["rows"])
        else:
            missing.append(name)
    if missing:
        new = p.score(missing, profile=profile, seeds=seeds)
        for name in missing:
            part = new[new["explainer"] == name].reset_index(drop=True)
            if len(part):
                store.save(key(name), {"rows": part})
        frames.append(new)
    out = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) else frames[-1]
    order = {n: i for i, n in enumerate(names)}
    return out.sort_values("explainer", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)


def unit_ranks(rows: pd.DataFrame) -> pd.DataFrame:
    """Rank of each explainer within each unit (1 = best by the metric's direction, ties averaged);
    rows whose metric is not ranked (``lower_is_better`` None / NaN) are left out."""
    r = rows[rows["lower_is_better"].isin([True, False])].copy()
    if not len(r):
        return r.assign(rank=pd.Series(dtype=float))
    oriented = np.where(r["lower_is_better"].astype(bool), r["value"], -r["value"])
    r["rank"] = pd.Series(oriented, index=r.index).groupby([r["protocol"], *[r[c] for c in UNIT]]).rank(method="average")
    return r


def rank_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per protocol, metric and explainer: value and rank (mean over models/datasets per seed), their
    spread over seeds (population std; NaN with one seed) and the number of seeds."""
    r = unit_ranks(rows)
    cols = ["protocol", "metric", "explainer", "paper", "lower_is_better", "value", "value_std", "rank", "rank_std",
            "n_seeds", "source"]
    if not len(r):
        return pd.DataFrame(columns=cols)
    per_seed = (r.groupby(["protocol", "metric", "explainer", "seed"])
                .agg(value=("value", "mean"), rank=("rank", "mean"), paper=("paper", "first"),
                     lower_is_better=("lower_is_better", "first"), source=("source", "first")).reset_index())
    g = per_seed.groupby(["protocol", "metric", "explainer"])
    out = g.agg(paper=("paper", "first"), lower_is_better=("lower_is_better", "first"), value=("value", "mean"),
                value_std=("value", lambda v: v.std(ddof=0) if len(v) > 1 else np.nan), rank=("rank", "mean"),
                rank_std=("rank", lambda v: v.std(ddof=0) if len(v) > 1 else np.nan), n_seeds=("seed", "nunique"),
                source=("source", "first")).reset_index()
    return out.sort_values(["protocol", "metric", "rank"])[cols].reset_index(drop=True)


def unit_matrices(r: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per protocol: its units x explainers matrix of ranks (NaN where an explainer is missing from a unit)."""
    protos = list(dict.fromkeys(r["protocol"])) if len(r) else []
    return {p: r[r["protocol"] == p].pivot_table(index=UNIT, columns="explainer", values="rank", aggfunc="mean")
            for p in protos}


def boot_mean_ranks(mats: dict[str, pd.DataFrame], n_boot: int, seed: int) -> dict[str, list[pd.Series]]:
    """``n_boot`` bootstrap replicates of every protocol's mean ranks: its units resampled with replacement
    (one generator, protocol by protocol: with the same ``n_boot`` and ``seed``, the ranks and the agreement read
    the same replicates)."""
    rng = np.random.default_rng(seed)
    return {p: [m.iloc[rng.integers(0, len(m), len(m))].mean(axis=0) for _ in range(n_boot)] for p, m in mats.items()}


def protocol_ranks(rows: pd.DataFrame, n_boot: int = 500, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Per protocol and explainer: the mean rank over its units (``rank``), its std over seeds
    (``rank_std``: the spread of the per-seed mean ranks), its bootstrap interval (``rank_low``, ``rank_high``:
    the protocol's units resampled with replacement; NaN for a protocol with fewer than two units, where
    nothing varies), the units it was ranked in, and the explainer's position under the protocol (1 = best)."""
    r = unit_ranks(rows)
    cols = ["protocol", "explainer", "paper", "rank", "rank_std", "rank_low", "rank_high", "n_units", "n_explainers",
            "position"]
    if not len(r):
        return pd.DataFrame(columns=cols)
    seed_means = r.groupby(["protocol", "explainer", "seed"])["rank"].mean()
    spread = seed_means.groupby(["protocol", "explainer"]).agg(lambda v: v.std(ddof=0) if len(v) > 1 else np.nan)
    out = r.groupby(["protocol", "explainer"]).agg(paper=("paper", "first"), rank=("rank", "mean"),
                                                   n_units=("rank", "size")).reset_index()
    out["rank_std"] = [spread.get((p, e)) for p, e in zip(out["protocol"], out["explainer"])]
    mats = unit_matrices(r)
    boots = boot_mean_ranks(mats, n_boot, seed)
    q = [(1 - level) / 2, 1 - (1 - level) / 2]
    bounds = {}
    for p, reps in boots.items():
        if len(mats[p]) < 2 or not reps:
            continue
        b = pd.DataFrame(reps)
        for e in b.columns:
            vals = b[e].dropna().to_numpy()
            if len(vals):
                bounds[(p, e)] = np.quantile(vals, q)
    out["rank_low"] = [bounds.get((p, e), (np.nan, np.nan))[0] for p, e in zip(out["protocol"], out["explainer"])]
    out["rank_high"] = [bounds.get((p, e), (np.nan, np.nan))[1] for p, e in zip(out["protocol"], out["explainer"])]
    out["n_explainers"] = out.groupby("protocol")["explainer"].transform("size")
    out["position"] = out.groupby("protocol")["rank"].rank(method="min")
    return out.sort_values(["protocol", "rank"])[cols].reset_index(drop=True)


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-b of two score vectors (NaN when either is constant)."""
    from scipy.stats import kendalltau

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(kendalltau(a, b).statistic)


def agreement_matrix(rows: pd.DataFrame, n_boot: int = 500, level: float = 0.95, seed: int = 0,
                     min_shared: int = MIN_SHARED) -> pd.DataFrame:
    """Kendall tau between the protocols' explainer rankings (mean ranks, :func:`protocol_ranks`) over
    the explainers each pair shares, with a bootstrap interval that resamples each protocol's units
    (metric x model x dataset x seed) with replacement.  One row per ordered pair (the diagonal is 1):
    ``protocol_a, protocol_b, tau, tau_low, tau_high, n_shared, shared``; NaN below ``min_shared``."""
    from ..checks import check_count

    check_count(n_boot, "n_boot", 0)
    if not 0 < level < 1:
        raise ValueError(f"level={level!r} must lie strictly between 0 and 1 (e.g. 0.95)")
    r = unit_ranks(rows)
    mats = unit_matrices(r)
    protos = list(mats)
    boots = boot_mean_ranks(mats, n_boot, seed)
    # each protocol's replicates as one (n_boot, explainers) array in its matrix's column order: the same values
    # as indexing every replicate Series by name, without pandas' per-lookup cost
    reps = {p: np.array([rep.to_numpy() for rep in boots[p]]).reshape(len(boots[p]), len(mats[p].columns))
            for p in protos}
    out = []
    for a in protos:
        for b in protos:
            shared = [e for e in mats[a].columns if e in set(mats[b].columns)]
            row = {"protocol_a": a, "protocol_b": b, "n_shared": len(shared), "shared": " ".join(shared)}
            if len(shared) < min_shared:
                out.append({**row, "tau": np.nan, "tau_low": np.nan, "tau_high": np.nan})
                continue
            ma, mb = mats[a][shared].mean(axis=0), mats[b][shared].mean(axis=0)
            tau = kendall_tau(ma.values, mb.values)
            ia, ib = mats[a].columns.get_indexer(shared), mats[b].columns.get_indexer(shared)
            taus = [kendall_tau(ra[ia], rb[ib]) for ra, rb in zip(reps[a], reps[b])]
            taus = np.asarray([t for t in taus if not np.isnan(t)])
            lo, hi = (np.quantile(taus, [(1 - level) / 2, 1 - (1 - level) / 2]) if len(taus) else (np.nan, np.nan))
            out.append({**row, "tau": tau, "tau_low": float(lo), "tau_high": float(hi)})
    return pd.DataFrame(out, columns=["protocol_a", "protocol_b", "tau", "tau_low", "tau_high", "n_shared", "shared"])


def agreement_heatmap(agreement: pd.DataFrame):
    """Seaborn heatmap of the tau matrix, each cell ``tau [low, high]`` (n shared explainers)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    protos = list(dict.fromkeys(agreement["protocol_a"]))
    tau = agreement.pivot(index="protocol_a", columns="protocol_b", values="tau").reindex(index=protos, columns=protos)
    lab = agreement.assign(label=[
        "" if np.isnan(t) else (f"{t:+.2f}\n[{lo:+.2f}, {hi:+.2f}]\nn={n}" if a != b else f"n={n}")
        for a, b, t, lo, hi, n in zip(agreement.protocol_a, agreement.protocol_b, agreement.tau, agreement.tau_low,
                                      agreement.tau_high, agreement.n_shared)])
    labels = lab.pivot(index="protocol_a", columns="protocol_b", values="label").reindex(index=protos, columns=protos)
    size = 1.6 + 1.5 * len(protos)
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    sns.heatmap(tau.astype(float), annot=labels.values, fmt="", vmin=-1, vmax=1, cmap="RdBu_r", center=0,
                square=True, linewidths=0.5, cbar_kws={"label": "Kendall tau (shared explainers)"}, ax=ax,
                annot_kws={"fontsize": 8})
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.set_title("Rank agreement between protocols (tau [bootstrap interval], n shared explainers)")
    fig.tight_layout()
    return fig


def better_half(ranks: pd.DataFrame) -> pd.Series:
    """Per row of :func:`protocol_ranks`: ``holds`` when the whole interval of the explainer's mean rank lies in
    the better half (``rank_high`` below the middle rank ``(n_explainers + 1) / 2``), ``fails`` when it lies in the
    worse half, ``covers`` otherwise or without an interval."""
    mid = (ranks["n_explainers"] + 1) / 2
    lo = ranks["rank_low"] if "rank_low" in ranks.columns else pd.Series(np.nan, index=ranks.index)
    hi = ranks["rank_high"] if "rank_high" in ranks.columns else pd.Series(np.nan, index=ranks.index)
    return pd.Series(np.where(hi < mid, "holds", np.where(lo > mid, "fails", "covers")), index=ranks.index)


def verdict(ranks: pd.DataFrame, agreement: pd.DataFrame) -> str:
    """A short reading, each statement made only where its interval supports it: the explainers whose mean rank lies
    in the better half of every protocol that scores them (two or more) over its whole bootstrap interval
    (:func:`better_half`), and the protocol pairs whose rankings agree (the bootstrap interval of tau lies above 0),
    rank in opposite orders (below 0) or cannot be told apart (the interval holds 0, or there is none)."""
    if not len(ranks):
        return "No protocol produced scores."
    if not {"rank_low", "rank_high"} <= set(ranks.columns):
        steady_text = "not stated: the ranks table carries no rank intervals (rerun `make scorecard`)"
    else:
        r = ranks.assign(side=better_half(ranks))
        per = r.groupby("explainer").agg(n=("protocol", "size"), top=("side", lambda v: (v == "holds").all()))
        steady_text = ", ".join(sorted(per[(per["n"] >= 2) & per["top"]].index)) or "none"
    pairs = agreement[(agreement["protocol_a"] < agreement["protocol_b"]) & agreement["tau"].notna()]
    groups: dict[str, list[str]] = {"agree": [], "opposite": [], "open": []}
    for row in pairs.itertuples():
        lo, hi = getattr(row, "tau_low", np.nan), getattr(row, "tau_high", np.nan)
        has_ci = pd.notna(lo) and pd.notna(hi)
        text = f"{row.protocol_a} vs {row.protocol_b} (tau {row.tau:+.2f}" + (
            f", 95% interval {lo:+.2f} to {hi:+.2f})" if has_ci else ", no interval)") + f" over {int(row.n_shared)} explainers"
        if has_ci and lo > 0:
            groups["agree"].append(text)
        elif has_ci and hi < 0:
            groups["opposite"].append(text)
        else:
            groups["open"].append(text)
    lines = [f"- In the better half of every protocol that scores them (two or more), over the whole 95% bootstrap "
             f"interval of the mean rank: {steady_text}.",
             f"- Protocol pairs that agree (tau above 0 over its whole interval): {'; '.join(groups['agree']) or 'none'}.",
             f"- Protocol pairs that rank in opposite orders (tau below 0 over its whole interval): "
             f"{'; '.join(groups['opposite']) or 'none'}.",
             f"- Protocol pairs the data cannot tell apart (the interval holds 0, or there is none): "
             f"{'; '.join(groups['open']) or 'none'}."]
    return "\n".join(lines)


VERDICT_BEGIN = ("<!-- scorecard-verdict:begin (generated by `python -m xaibench.reports claims` from "
                 "figures/tables/scorecard_*.csv) -->")
VERDICT_END = "<!-- scorecard-verdict:end -->"


def readme_verdict(root: Any = None) -> str:
    """The README's scorecard verdict (:func:`verdict`), read from the committed tables
    ``scorecard_protocol_ranks.csv`` and ``scorecard_agreement.csv`` of the full profile."""
    from pathlib import Path

    from .. import paths

    root = Path(root) if root is not None else paths.tables_dir()
    ranks_p, agree_p = root / "scorecard_protocol_ranks.csv", root / "scorecard_agreement.csv"
    if not (ranks_p.is_file() and agree_p.is_file()):
        return f"No scorecard tables yet (`{ranks_p.name}`, `{agree_p.name}`): run `make scorecard`."
    ranks, agreement = pd.read_csv(ranks_p), pd.read_csv(agree_p)
    protos = sorted(set(ranks["protocol"]))
    head = (f"{ranks['explainer'].nunique()} explainers under {len(protos)} protocols ({', '.join(protos)}); "
            "tables: [mean ranks](figures/tables/scorecard_protocol_ranks.md), "
            "[rank agreement](figures/tables/scorecard_agreement.md) (Kendall tau, 95% bootstrap interval), "
            "heatmap `figures/scorecard_agreement.png`.")
    return f"{head}\n\n{verdict(ranks, agreement)}"


def markdown_table(df: pd.DataFrame, digits: int = 3) -> str:
    """``df`` as a Markdown table (floats to ``digits``)."""
    return df.to_markdown(index=False, floatfmt=f".{digits}f")


def save_scorecard_table(df: pd.DataFrame, name: str, title: str) -> Any:
    """``<name>.csv`` and ``<name>.md`` (with ``title``) under the profile's tables folder."""
    from .. import io, paths

    folder = paths.tables_dir()
    io.write_csv(folder / f"{name}.csv", df)
    io.write_text(folder / f"{name}.md", f"**{title}**\n\n{markdown_table(df)}\n")
    return folder / f"{name}.csv"


def main(argv: Sequence[str] | None = None) -> pd.DataFrame:
    """``python -m xaibench.evaluation.scorecard``: score explainers under every protocol that applies
    and print each protocol's ranking (the tables of notebook 30 without the agreement matrix)."""
    import argparse

    from .. import registry
    from ..config import check_explainer_list, parse_seeds, use_profile

    ap = argparse.ArgumentParser(prog="python -m xaibench.evaluation.scorecard", description=main.__doc__.split("\n")[0])
    ap.add_argument("--profile", default="quick", choices=("quick", "full"))
    ap.add_argument("--seeds", default="42", help="seeds, separated by spaces (default: 42)")
    ap.add_argument("--explainers", default="all", help="all, paper, or registered names separated by spaces")
    ap.add_argument("--protocols", default="", help="protocol names separated by spaces (default: every protocol)")
    ap.add_argument("--plugins", default="", help="modules or .py files that register explainers (as XAIBENCH_PLUGINS)")
    ap.add_argument("--recompute", action="store_true",
                    help="score everything again: neither the paper notebooks' stored rows nor the scorecard's own "
                         "stored rows are reused (after retraining a model the protocols read)")
    args = ap.parse_args(argv)
    registry.load_plugins(args.plugins)
    check_explainer_list(args.explainers, "--explainers")
    use_profile(args.profile)
    rows = collect(args.explainers, profile=args.profile, seeds=parse_seeds(args.seeds, "--seeds"),
                   protocols=args.protocols.split() or None, reuse=not args.recompute)
    ranks = protocol_ranks(rows)
    print(markdown_table(ranks[["protocol", "explainer", "paper", "rank", "rank_std", "position", "n_explainers"]], 2))
    return rows


__all__ = ["MIN_SHARED", "main", "collect", "skipped_summary", "computed_store", "rank_table", "unit_ranks", "unit_matrices", "boot_mean_ranks", "protocol_ranks", "kendall_tau", "agreement_matrix",
           "agreement_heatmap", "verdict", "markdown_table", "save_scorecard_table"]


if __name__ == "__main__":
    main()
