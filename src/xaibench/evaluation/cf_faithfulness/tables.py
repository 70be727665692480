"""Ge et al.'s tables from the per-seed results of :mod:`.runner`, beside the paper's printed numbers.

* :func:`data_table` -- dataset sizes and, for Adult, how many test rows repeat a training record;
* :func:`models_table` -- the LR's test accuracy (Sec. 4.2);
* :func:`scores_table` -- Table 1 (K = 1) and the score part of Table 3 (K = 2);
* :func:`correlation_rows` / :func:`correlations_table` -- Table 2 and the tau / rho rows of Table 3;
* :func:`table2` -- the committed ``cf_faithfulness_correlations`` (six and nine explainers);
* :func:`two_features_table` -- the committed ``cf_faithfulness_two_features`` (Table 3);
* :func:`family_summary` -- mean tau per metric and dataset with the metric's family;
* :func:`abstentions_table` -- the committed ``cf_faithfulness_abstentions`` (rows without a selected
  feature, per explainer);
* :func:`omission_removal_table` -- the committed ``cf_faithfulness_omission_removal`` (Omission with
  the zero embedding vs the training-mean embedding);
* :func:`reference_accuracy_table` -- the committed ``cf_faithfulness_reference_accuracy`` (a one-hot LR
  on Adult and a TF-IDF LR on Movie Reviews beside our embedding LR and the paper's);
* :func:`paper_table1_check` / :func:`paper_table2_check` -- the paper's printed tables checked against
  their own equations (Table 1's C and C_soft) and against each other (Table 2 from Table 1).

**Joining the paper's values.**  :data:`PAPER_KEYS` maps our metric names to the paper's, per paper
table and dataset, and every join goes through :func:`xaibench.tables.join_paper`.  A metric missing
from the map has no printed value and its ``paper`` cell stays NaN.  Two readings of the printed tables
are built into the map:

* Table 2 prints 0 in the cells the paper did not compute (Adults: Comp./Suff. (mask) and C (cont.);
  Movie Reviews: C (disc.); Sec. 4.6 says these were not evaluated).  They are not mapped, so they are
  NaN in our tables, never 0.
* Every table built from the results carries a ``selection`` column (``supporting``: features pushing
  towards the predicted class, the default; ``absolute``: by ``|score|``); the paper's value is set
  beside both.
* Adults' C_soft row of Tables 2 and 3 is labelled "C_soft (cont.)", but the paper runs only the
  discrete search (Algorithm 1) on Adults: Table 1 labels the row C_soft (disc.), Table 2's Adults
  value (1.0) is what Table 1's C_soft (disc.) ranks give (:func:`paper_table2_check`), and Table 3
  searches "the combinations" of the two features.  That row joins our ``c_soft_disc``.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ...tables import aggregate_seeds, join_paper, paper_values
from . import metrics as cfm
from .runner import PAPER_DATASET, PAPER_ORDER, PROJECT_ORDER, load_dataset

#: the selection rules in table order (the default first)
SELECTION_ORDER = cfm.SELECTIONS

PAPER = "cf_faithfulness"
#: the explainers of the paper's Table 3 (two features per explanation, Adults)
TABLE3_EXPLAINERS = ("random", "lime", "anchor", "logistic_regression")
STATISTICS = ("kendall_tau", "spearman_rho")
#: the paper's erasure baselines and counterfactual scores (C, C_soft), as in its Table 2
ERASURE = ("comp_del", "suff_del", "comp_mask", "suff_mask", "dfr")
COUNTERFACTUAL = ("c_disc", "c_soft_disc", "c_cont", "c_soft_cont")

_T1_ADULTS = {"comp_del": "comp_del", "suff_del": "suff_del", "dfr": "dfr", "validity_disc": "validity",
              "proximity_disc": "proximity_c", "c_disc": "c_disc", "validity_soft_disc": "validity_soft",
              "proximity_soft_disc": "proximity_c_soft", "c_soft_disc": "c_soft_disc", "ground_truth": "ground_truth"}
_T1_MOVIES = {"comp_del": "comp_del", "suff_del": "suff_del", "comp_mask": "comp_mask", "suff_mask": "suff_mask",
              "dfr": "dfr", "validity_cont": "validity", "proximity_cont": "proximity_c", "c_cont": "c_cont",
              "validity_soft_cont": "validity_soft", "c_soft_cont": "c_soft_cont", "ground_truth": "ground_truth"}
#: (paper table, paper dataset) -> {our metric: the paper's metric key}; unmapped metrics have no printed value
PAPER_KEYS: dict[tuple[str, str], dict[str, str]] = {
    ("Table 1", "adults"): _T1_ADULTS,
    ("Table 1", "movie_reviews"): _T1_MOVIES,
    ("Table 2", "adults"): {"comp_del": "comp_del", "suff_del": "suff_del", "dfr": "dfr", "c_disc": "c_disc",
                            "c_soft_disc": "c_soft_cont"},
    ("Table 2", "movie_reviews"): {m: m for m in ("comp_del", "suff_del", "comp_mask", "suff_mask", "dfr",
                                                  "c_cont", "c_soft_cont")},
    ("Table 3", "adults"): {"comp_del": "comp_del", "suff_del": "suff_del", "dfr": "dfr",
                            "c_soft_disc": "c_soft_cont", "ground_truth": "ground_truth"},
}


def paper_key(table: str, dataset: str, metric: str) -> str:
    """The paper's metric key for our ``metric`` on our ``dataset`` in ``table`` ('' when it prints none)."""
    return PAPER_KEYS.get((table, PAPER_DATASET.get(dataset, dataset)), {}).get(metric, "")


def with_selection(res: pd.DataFrame) -> pd.DataFrame:
    """``res`` with a ``selection`` column (results without one were scored with the default rule)."""
    return res if "selection" in res.columns else res.assign(selection=SELECTION_ORDER[0])


def _sort_selection(df: pd.DataFrame) -> pd.DataFrame:
    order = {s: i for i, s in enumerate(SELECTION_ORDER)}
    return df.sort_values("selection", key=lambda c: c.map(lambda v: order.get(v, len(order))), kind="stable")


def _join(ours: pd.DataFrame, table: str, on_explainer: bool, value: str = "value", **filters) -> pd.DataFrame:
    """``ours`` with the paper's ``value`` of each cell of ``table`` as ``paper`` (NaN where none is printed)."""
    keyed = ours.assign(_pd=[PAPER_DATASET.get(d, d) for d in ours["dataset"]],
                        _pm=[paper_key(table, d, m) for d, m in zip(ours["dataset"], ours["metric"])])
    on = {"_pd": "dataset", "_pm": "metric", **({"explainer": "explainer"} if on_explainer else {}),
          **({"statistic": "statistic"} if "statistic" in ours.columns else {})}
    out = join_paper(keyed, PAPER, on, value=value, paper_table=table, **filters)
    return out.drop(columns=["_pd", "_pm"])


# ----------------------------------------------------------------------------------------------
# data and models
# ----------------------------------------------------------------------------------------------
def data_table(datasets: Sequence[str], seeds: Sequence[int]) -> pd.DataFrame:
    """Rows, features, class counts per dataset; for Adult also the distinct census records and the
    test rows whose record is also in the training split (mean, min and max over ``seeds``)."""
    from ...data.adult import split_indices

    rows = []
    for name in datasets:
        ds = load_dataset(name)
        r = {"dataset": name, "rows": len(ds), "features": ds.spec.n_features,
             "class 0": int((ds.y == 0).sum()), "class 1": int((ds.y == 1).sum())}
        if "source_rows" in (getattr(ds, "meta", None) or {}):
            src = np.asarray(ds.meta["source_rows"])
            overlap = [int(np.isin(src[sp["test"]], src[sp["train"]]).sum())
                       for sp in (split_indices(len(ds), s) for s in seeds)]
            r.update({"distinct census records": len(np.unique(src)),
                      f"test rows also in train (mean over {len(overlap)} seeds)": float(np.mean(overlap)),
                      "min over seeds": min(overlap), "max over seeds": max(overlap)})
        rows.append(r)
    out = pd.DataFrame(rows).set_index("dataset")
    ints = [c for c in out.columns if c not in ("rows", "features", "class 0", "class 1") and not c.startswith("test rows")]
    return out.astype({c: "Int64" for c in ints})


def models_table(res: pd.DataFrame) -> pd.DataFrame:
    """The LR's test accuracy per dataset (mean ± std over seeds) beside the paper's (Sec. 4.2)."""
    t = aggregate_seeds(res[res["metric"] == "test_accuracy"], ["dataset", "metric"])
    keyed = t.assign(_pd=[PAPER_DATASET.get(d, d) for d in t["dataset"]])
    t = join_paper(keyed, PAPER, {"_pd": "dataset", "metric": "metric"}, paper_table="Sec 4.2").drop(columns="_pd")

    def first(d: str, m: str) -> int:
        return int(res[(res["dataset"] == d) & (res["metric"] == m)]["value"].iloc[0])

    t["n_test"] = [first(d, "n_test") for d in t["dataset"]]
    t["n_explained_per_seed"] = [first(d, "n_explained") for d in t["dataset"]]
    return t[["dataset", "metric", "ours", "ours_std", "paper", "n_seeds", "n_test", "n_explained_per_seed"]]


# ----------------------------------------------------------------------------------------------
# Table 1 / Table 3 scores
# ----------------------------------------------------------------------------------------------
def _score_rows(res: pd.DataFrame, k: int, explainers: Sequence[str] | None) -> pd.DataFrame:
    """The per-seed rows of :func:`scores_table` (the metrics of :data:`.metrics.METRICS`, ``explainers``)."""
    res = with_selection(res)
    explainers = (*PAPER_ORDER, *PROJECT_ORDER) if explainers is None else explainers
    return res[(res["k"] == k) & res["metric"].isin(list(cfm.METRICS)) & res["explainer"].isin(list(explainers))]


def scores_seeds_table(res: pd.DataFrame, k: int = 1, explainers: Sequence[str] | None = None) -> pd.DataFrame:
    """``cf_faithfulness_scores_seeds``: the rows of :func:`scores_table` per seed (``ours``: that seed's value,
    ``ours_std`` NaN), beside the paper's value; :func:`scores_table`'s ``ours`` / ``ours_std`` are their mean
    and std (:func:`xaibench.tables.aggregate_seeds`)."""
    t = _score_rows(res, k, explainers)[["dataset", "selection", "metric", "explainer", "seed", "value"]]
    t = _join(t.rename(columns={"value": "ours"}), "Table 1" if k == 1 else "Table 3", on_explainer=True,
              statistic="score")
    t.insert(2, "k", k)
    t["ours_std"] = np.nan
    return t[["dataset", "selection", "k", "metric", "explainer", "seed", "ours", "ours_std", "paper"]].reset_index(drop=True)


def scores_table(res: pd.DataFrame, k: int = 1, explainers: Sequence[str] | None = None) -> pd.DataFrame:
    """Table 1 (K=1) / the scores of Table 3 (K=2): mean ± std over seeds beside the paper's value and
    rank, per ``selection``.

    ``rank`` ranks the seed means among the paper's explainers present (``PAPER_ORDER``), as the
    paper does; ``rank_all`` among every explainer in the table (default: the paper's and the project's
    explainers, not the variants such as ``omission_train_mean``)."""
    agg = aggregate_seeds(_score_rows(res, k, explainers), ["dataset", "selection", "explainer", "metric"])
    agg["rank"], agg["rank_all"] = np.nan, np.nan
    for (_, _, m), g in agg.groupby(["dataset", "selection", "metric"]):
        if cfm.METRICS[m].lower_is_better is None:
            continue
        agg.loc[g.index, "rank_all"] = cfm.ranks(g["ours"].to_numpy(), m)
        gp = g[g["explainer"].isin(PAPER_ORDER)]
        agg.loc[gp.index, "rank"] = cfm.ranks(gp["ours"].to_numpy(), m)
    table = "Table 1" if k == 1 else "Table 3"
    paper_rank = _join(agg, table, on_explainer=True, value="rank", statistic="score")["paper"]
    agg = _join(agg, table, on_explainer=True, statistic="score")
    agg["paper_rank"] = paper_rank.to_numpy()
    agg["lower_is_better"] = [cfm.METRICS[m].lower_is_better for m in agg["metric"]]
    agg.insert(1, "k", k)
    order = {m: i for i, m in enumerate(cfm.METRICS)}
    eorder = {e: i for i, e in enumerate((*PAPER_ORDER, *PROJECT_ORDER))}
    sorder = {e: i for i, e in enumerate(SELECTION_ORDER)}
    agg = agg.sort_values(["dataset", "selection", "metric", "explainer"],
                          key=lambda c: c.map(order) if c.name == "metric" else c.map(eorder) if c.name == "explainer"
                          else c.map(sorder) if c.name == "selection" else c, kind="stable")
    return agg[["dataset", "selection", "k", "metric", "explainer", "lower_is_better", "ours", "ours_std", "rank",
                "rank_all", "paper", "paper_rank", "n_seeds"]].reset_index(drop=True)


# ----------------------------------------------------------------------------------------------
# Table 2 / Table 3 rank agreement
# ----------------------------------------------------------------------------------------------
def correlation_rows(res: pd.DataFrame, k: int = 1, explainers: Sequence[str] = PAPER_ORDER) -> pd.DataFrame:
    """Per dataset, selection, seed and metric: Kendall tau (Eq. 11) and Spearman rho (Eq. 12) of the
    metric's explainer ranking vs GroundTruth's (:func:`.metrics.rank_agreement`), and ``tau_ceiling``, the
    largest tau any ranking reaches against that seed's GroundTruth (:func:`.metrics.tau_ceiling`: below 1
    when GroundTruth ties explainers)."""
    rows = []
    res = with_selection(res)
    sub = res[(res["k"] == k) & res["explainer"].isin(list(explainers))]
    for (d, sel, s), g in sub.groupby(["dataset", "selection", "seed"]):
        wide = g.pivot_table(index="explainer", columns="metric", values="value")
        truth = wide["ground_truth"].to_dict()
        ceiling = cfm.tau_ceiling(wide["ground_truth"].to_numpy())
        for m in wide.columns:
            if m == "ground_truth" or m not in cfm.METRICS or cfm.METRICS[m].lower_is_better is None:
                continue
            ra = cfm.rank_agreement(wide[m].to_dict(), truth, m)
            rows += [{"dataset": d, "selection": sel, "seed": s, "metric": m, "statistic": st, "value": ra[st],
                      "tau_ceiling": ceiling} for st in STATISTICS]
    return pd.DataFrame(rows, columns=["dataset", "selection", "seed", "metric", "statistic", "value", "tau_ceiling"])


def correlations_table(res: pd.DataFrame, k: int = 1, explainers: Sequence[str] = PAPER_ORDER) -> pd.DataFrame:
    """Table 2 (K=1) / the tau, rho rows of Table 3 (K=2): mean ± std over seeds beside the paper
    (NaN where the paper computed no value, see :data:`PAPER_KEYS`)."""
    rows = correlation_rows(res, k, explainers)
    keys = ["dataset", "selection", "metric", "statistic"]
    agg = aggregate_seeds(rows, keys)
    agg = agg.merge(rows.groupby(keys, sort=False)["tau_ceiling"].mean().reset_index(), on=keys, how="left")
    agg = _join(agg, "Table 2" if k == 1 else "Table 3", on_explainer=False, statistic=list(STATISTICS))
    agg.insert(1, "k", k)
    agg.insert(2, "explainers", " ".join(explainers))
    agg = _sort_selection(agg.sort_values("dataset", kind="stable")).sort_values("dataset", kind="stable")
    return agg[["dataset", "selection", "k", "explainers", "metric", "statistic", "ours", "ours_std", "paper",
                "tau_ceiling", "n_seeds"]].reset_index(drop=True)


def correlations_seeds_table(res: pd.DataFrame, k: int = 1, explainers: Sequence[str] = PAPER_ORDER) -> pd.DataFrame:
    """The rows of :func:`correlations_table` per seed (``ours``: that seed's value, ``ours_std`` NaN,
    ``tau_ceiling`` that seed's), beside the paper's value."""
    t = correlation_rows(res, k, explainers).rename(columns={"value": "ours"})
    t = _join(t, "Table 2" if k == 1 else "Table 3", on_explainer=False, statistic=list(STATISTICS))
    t.insert(1, "k", k)
    t.insert(2, "explainers", " ".join(explainers))
    t["ours_std"] = np.nan
    return t[["dataset", "selection", "k", "explainers", "metric", "statistic", "seed", "ours", "ours_std", "paper",
              "tau_ceiling"]].reset_index(drop=True)


def table2(res: pd.DataFrame, per_seed: bool = False) -> pd.DataFrame:
    """``cf_faithfulness_correlations``: Table 2 over the paper's six explainers, then over all nine
    (the project's three added) for the datasets where all nine ran; ``per_seed``: the same rows per seed
    (``cf_faithfulness_correlations_seeds``, :func:`correlations_seeds_table`)."""
    build = correlations_seeds_table if per_seed else correlations_table
    six = build(res, k=1)
    nine_names = (*PAPER_ORDER, *PROJECT_ORDER)
    have = res[res["k"] == 1].groupby("dataset")["explainer"].agg(lambda e: set(nine_names) <= set(e))
    if not have.any():
        return six
    nine = build(res[res["dataset"].isin(have[have].index)], k=1, explainers=nine_names)
    return pd.concat([six, nine], ignore_index=True)


def two_features_table(res: pd.DataFrame) -> pd.DataFrame:
    """``cf_faithfulness_two_features``: Table 3 on Adult (and its de-duplicated variant), scores of the
    four explainers (``statistic`` = score) then the tau / rho rows (``explainer`` empty)."""
    adult = res[res["dataset"].map(lambda d: PAPER_DATASET.get(d, d)) == "adults"]
    scores = scores_table(adult, k=2, explainers=TABLE3_EXPLAINERS)
    corr = correlations_table(adult, k=2, explainers=TABLE3_EXPLAINERS)
    t = pd.concat([scores.assign(statistic="score"), corr.drop(columns="explainers").assign(explainer="")],
                  ignore_index=True)
    return t[["dataset", "selection", "k", "metric", "explainer", "statistic", "ours", "ours_std", "rank", "paper",
              "paper_rank", "n_seeds"]]


def family_summary(corr: pd.DataFrame, statistic: str = "kendall_tau", k: int = 1,
                   explainers: Sequence[str] = PAPER_ORDER, selection: str = SELECTION_ORDER[0]) -> pd.DataFrame:
    """Mean ``statistic`` per metric (rows) and dataset (columns) from a correlations table (one
    ``selection``), with each metric's family: ``counterfactual`` (C, C_soft), ``counterfactual parts``
    (Validity, Validity_soft) or ``erasure``; rows sorted by family, then by the first dataset's value."""
    corr = with_selection(corr)
    sub = corr[(corr["statistic"] == statistic) & (corr["k"] == k) & (corr["explainers"] == " ".join(explainers))
               & (corr["selection"] == selection)]
    wide = sub.pivot_table(index="metric", columns="dataset", values="ours", sort=False)
    wide.columns.name = None
    fam = {m: ("counterfactual" if m in COUNTERFACTUAL else "erasure" if m in ERASURE else "counterfactual parts")
           for m in wide.index}
    wide.insert(0, "family", [fam[m] for m in wide.index])
    rank = {"counterfactual": 0, "counterfactual parts": 1, "erasure": 2}
    first = wide.columns[1] if len(wide.columns) > 1 else None
    wide = wide.assign(_f=wide["family"].map(rank), _v=-wide[first] if first else 0.0)
    return wide.sort_values(["_f", "_v"], kind="stable").drop(columns=["_f", "_v"])


# ----------------------------------------------------------------------------------------------
# abstentions, Omission's removal, reference accuracies
# ----------------------------------------------------------------------------------------------
def abstentions_table(res: pd.DataFrame) -> pd.DataFrame:
    """``cf_faithfulness_abstentions``: per dataset, selection, K and explainer, the rows where the
    explainer selected no feature (``ours`` ± std: per seed; the total over seeds, the rows explained in
    all and the share; ``paper`` empty: the paper reports none).
    Every C / C_soft of the tables counts these rows as failed counterfactuals
    (:func:`.metrics.counterfactual_scores`, ``abstention="fail"``)."""
    res = with_selection(res)
    sub = res[res["metric"] == "abstentions"]
    n = res[res["metric"] == "n_explained"].set_index(["dataset", "seed"])["value"]
    rows = []
    for (d, sel, k, e), g in sub.groupby(["dataset", "selection", "k", "explainer"], sort=False):
        v = g["value"].to_numpy(dtype=float)
        total_rows = float(sum(n.get((d, s), np.nan) for s in g["seed"]))
        rows.append({"dataset": d, "selection": sel, "k": int(k), "explainer": e, "metric": "abstentions",
                     "ours": v.mean(), "ours_std": v.std(ddof=1) if len(v) > 1 else np.nan, "paper": np.nan,
                     "abstentions_total": int(v.sum()),
                     "rows_explained_total": int(total_rows) if np.isfinite(total_rows) else pd.NA,
                     "share": v.sum() / total_rows if total_rows else np.nan, "n_seeds": len(v)})
    out = pd.DataFrame(rows, columns=["dataset", "selection", "k", "explainer", "metric", "ours", "ours_std", "paper",
                                      "abstentions_total", "rows_explained_total", "share", "n_seeds"])
    eorder = {e: i for i, e in enumerate((*PAPER_ORDER, *PROJECT_ORDER))}
    sorder = {e: i for i, e in enumerate(SELECTION_ORDER)}
    return out.sort_values(["dataset", "selection", "k", "explainer"], key=lambda c: c.map(eorder).fillna(99)
                           if c.name == "explainer" else c.map(sorder) if c.name == "selection" else c,
                           kind="stable").reset_index(drop=True)


#: Omission's removals (:data:`xaibench.explainers.feature.simple.OMISSION_REMOVALS`) -> the protocol's explainer
OMISSION_VARIANTS = {"delete": "omission", "zero": "omission_zero", "train_mean": "omission_train_mean"}


def omission_removal_table(res: pd.DataFrame, k: int = 1) -> pd.DataFrame:
    """``cf_faithfulness_omission_removal``: per dataset, selection, ranked metric and Omission ``removal``
    (:data:`OMISSION_VARIANTS`: ``delete``, the default, ``zero``, ``train_mean``): Omission's score (``ours``
    ± std over seeds, beside the paper's Omission value), its ``rank`` among the paper's six explainers with
    that removal in Omission's place, and the metric's mean Kendall tau over those six (``tau``,
    ``tau_std``); datasets where not every removal ran are left out."""
    res = with_selection(res)
    res = res[res["k"] == k]
    ran = res.groupby("dataset")["explainer"].agg(lambda e: set(OMISSION_VARIANTS.values()) <= set(e))
    if not ran.any():
        raise ValueError(f"omission_removal_table needs results of {sorted(OMISSION_VARIANTS.values())} on one "
                         f"dataset; got {sorted(set(res['explainer']))}")
    res = res[res["dataset"].isin(ran[ran].index)]          # only the datasets where every removal ran
    parts = []
    for removal, name in OMISSION_VARIANTS.items():
        r = _in_place(res, "omission", name)
        sc = scores_table(r, k, explainers=PAPER_ORDER)
        sc = sc[(sc["explainer"] == "omission") & ((sc["rank"].notna()) | (sc["metric"] == "ground_truth"))]
        cr = correlation_rows(r, k)
        cr = cr[cr["statistic"] == "kendall_tau"].groupby(["dataset", "selection", "metric"])["value"]
        tau = cr.mean().rename("tau").reset_index().merge(cr.std(ddof=1).rename("tau_std").reset_index(),
                                                          on=["dataset", "selection", "metric"])
        sc = sc.merge(tau, on=["dataset", "selection", "metric"], how="left")
        parts.append(sc.assign(removal=removal))
    out = pd.concat(parts, ignore_index=True)
    order = {m: i for i, m in enumerate(cfm.METRICS)}
    sorder = {e: i for i, e in enumerate(SELECTION_ORDER)}
    rorder = {r: i for i, r in enumerate(OMISSION_VARIANTS)}
    out = out.sort_values(["dataset", "selection", "metric", "removal"],
                          key=lambda c: c.map(order) if c.name == "metric" else c.map(sorder) if c.name == "selection"
                          else c.map(rorder) if c.name == "removal" else c, kind="stable")
    return out[["dataset", "selection", "k", "metric", "removal", "ours", "ours_std", "rank", "paper", "tau", "tau_std",
                "n_seeds"]].reset_index(drop=True)


def _in_place(res: pd.DataFrame, name: str, variant: str) -> pd.DataFrame:
    """``res`` with explainer ``variant``'s rows in ``name``'s place (``name``'s own rows dropped)."""
    if variant == name:
        return res
    return res[res["explainer"] != name].replace({"explainer": {variant: name}})


def under_ground_truth(res: pd.DataFrame, reading: str) -> pd.DataFrame:
    """``res`` scored against the ground truth ``reading`` (:data:`.metrics.GROUND_TRUTHS`): its
    ``ground_truth_<reading>`` rows become ``ground_truth`` and the LR whose explanation is that ground truth
    (:data:`.runner.LR_VARIANT`) takes the LR's place; datasets where that LR did not run are left out."""
    from .runner import LR_VARIANT

    cfm._check_choice("reading", reading, cfm.GROUND_TRUTHS)
    ran = res.groupby("dataset")["explainer"].agg(lambda e: LR_VARIANT[reading] in set(e))
    r = _in_place(res[res["dataset"].isin(ran[ran].index)], "logistic_regression", LR_VARIANT[reading])
    r = r[r["metric"] != "ground_truth"]
    return r.replace({"metric": {f"ground_truth_{reading}": "ground_truth"}})


def ground_truth_readings_table(res: pd.DataFrame, k: int = 1) -> pd.DataFrame:
    """``cf_faithfulness_omission_ground_truth``: GroundTruth* per dataset, selection, explainer and ground-truth
    reading (``ground_truth``: :data:`.metrics.GROUND_TRUTHS`; the LR is the ground truth's own explanation in
    each), with Omission under each of its removals (``explainer`` ``omission`` = ``delete``, the default;
    ``omission_zero``, ``omission_train_mean``), mean ± std over seeds beside the paper's GroundTruth*
    (Table 1; Omission's for every Omission variant)."""
    res = with_selection(res)
    names = (*PAPER_ORDER, *(v for v in OMISSION_VARIANTS.values() if v != "omission"))
    parts = []
    for reading in cfm.GROUND_TRUTHS:
        r = under_ground_truth(res, reading)
        r = r[(r["k"] == k) & (r["metric"] == "ground_truth") & r["explainer"].isin(names)]
        parts.append(aggregate_seeds(r, ["dataset", "selection", "explainer", "metric"]).assign(ground_truth=reading))
    out = pd.concat(parts, ignore_index=True)
    keyed = out.assign(_pe=out["explainer"].map(lambda e: "omission" if e in OMISSION_VARIANTS.values() else e))
    paper = _join(keyed.rename(columns={"explainer": "_e", "_pe": "explainer"}), "Table 1" if k == 1 else "Table 3",
                  on_explainer=True, statistic="score")["paper"]
    out["paper"] = paper.to_numpy()
    out.insert(2, "k", k)
    eorder = {e: i for i, e in enumerate(names)}
    gorder = {g: i for i, g in enumerate(cfm.GROUND_TRUTHS)}
    out = _sort_selection(out.sort_values(["dataset", "ground_truth", "explainer"], kind="stable", key=lambda c: c.map(
        eorder) if c.name == "explainer" else c.map(gorder) if c.name == "ground_truth" else c)).sort_values(
        "dataset", kind="stable")
    return out[["dataset", "selection", "k", "ground_truth", "explainer", "metric", "ours", "ours_std", "paper",
                "n_seeds"]].reset_index(drop=True)


def ground_truth_correlations_table(res: pd.DataFrame, k: int = 1) -> pd.DataFrame:
    """``cf_faithfulness_ground_truths``: Table 2 (six explainers, K = ``k``) under every ground-truth reading
    (``ground_truth`` column, :func:`under_ground_truth`), and per dataset, selection and reading three Kendall
    tau rows: ``best_erasure`` and ``best_counterfactual`` (the erasure metric / C or C_soft with the highest
    mean tau, named in ``best``) and ``erasure_minus_counterfactual`` (their per-seed difference, mean ± std)."""
    res = with_selection(res)
    parts = []
    for reading in cfm.GROUND_TRUTHS:
        r = under_ground_truth(res, reading)
        corr = correlations_table(r, k).drop(columns="explainers").assign(ground_truth=reading, best="")
        rows = correlation_rows(r, k)
        rows = rows[rows["statistic"] == "kendall_tau"]
        extra = []
        for (d, sel), g in corr[corr["statistic"] == "kendall_tau"].groupby(["dataset", "selection"], sort=False):
            g = g[np.isfinite(g["ours"])]
            er, cf = g[g["metric"].isin(ERASURE)], g[g["metric"].isin(COUNTERFACTUAL)]
            if er.empty or cf.empty:
                continue
            be, bc = er.loc[er["ours"].idxmax()], cf.loc[cf["ours"].idxmax()]
            w = rows[(rows["dataset"] == d) & (rows["selection"] == sel)].pivot_table(index="seed", columns="metric",
                                                                                       values="value")
            diff = (w[be["metric"]] - w[bc["metric"]]).rename("value").reset_index()
            dagg = aggregate_seeds(diff.assign(_k=0), ["_k"])
            base = {"dataset": d, "selection": sel, "k": k, "statistic": "kendall_tau", "paper": np.nan,
                    "ground_truth": reading}
            extra += [{**base, "metric": "best_erasure", "best": be["metric"], "ours": be["ours"],
                       "ours_std": be["ours_std"], "tau_ceiling": be["tau_ceiling"], "n_seeds": be["n_seeds"]},
                      {**base, "metric": "best_counterfactual", "best": bc["metric"], "ours": bc["ours"],
                       "ours_std": bc["ours_std"], "tau_ceiling": bc["tau_ceiling"], "n_seeds": bc["n_seeds"]},
                      {**base, "metric": "erasure_minus_counterfactual", "best": f"{be['metric']} - {bc['metric']}",
                       "ours": float(dagg["ours"].iloc[0]), "ours_std": float(dagg["ours_std"].iloc[0]),
                       "tau_ceiling": np.nan, "n_seeds": int(dagg["n_seeds"].iloc[0])}]
        parts += [corr, pd.DataFrame(extra)]
    out = pd.concat(parts, ignore_index=True)
    return out[["dataset", "selection", "k", "ground_truth", "metric", "statistic", "best", "ours", "ours_std", "paper",
                "tau_ceiling", "n_seeds"]].reset_index(drop=True)


# ----------------------------------------------------------------------------------------------
# Algorithm 2's alpha and steps
# ----------------------------------------------------------------------------------------------
#: the paper's lowest printed Validity (cont.) on Movie Reviews, leaving out the LR's 0.1099 that its own
#: C (cont.) contradicts (:func:`paper_table1_check`): the alpha criterion's threshold
PAPER_VALIDITY_CONT_MIN = 0.8743


def sweep_table(sw: pd.DataFrame) -> pd.DataFrame:
    """``cf_faithfulness_alpha_sweep``: per dataset, alpha, steps and metric of :func:`.runner.sweep`: the mean over
    the paper's six explainers of each continuous score (``statistic`` = ``mean_over_explainers``; also
    GroundTruth, ``min_flip_distance`` and ``validity_bound_paper_proximity``, which do not depend on alpha and
    steps: NaN there) and each ranked score's Kendall tau against GroundTruth (``kendall_tau``), mean ± std over
    seeds.  ``paper``: the mean over the paper's explainers other than LR (Table 1, Movie Reviews; the LR's
    Validity contradicts its C) with ``paper_min`` / ``paper_max``, or Table 2's tau."""
    sw = sw[sw["explainer"] != ""]
    keys = ["dataset", "alpha", "steps", "metric"]
    means = sw.groupby([*keys, "seed"], dropna=False, sort=False)["value"].mean().reset_index()
    agg = aggregate_seeds(means, keys).assign(statistic="mean_over_explainers")
    tau_rows = []
    truth = sw[sw["metric"] == "ground_truth"]
    for (d, a, st, s), g in sw[sw["metric"].isin(cfm.METRICS) & sw["alpha"].notna()].groupby(
            ["dataset", "alpha", "steps", "seed"], sort=False):
        t = truth[(truth["dataset"] == d) & (truth["seed"] == s)].set_index("explainer")["value"].to_dict()
        for m, gm in g.groupby("metric", sort=False):
            if m == "ground_truth" or cfm.METRICS[m].lower_is_better is None:
                continue
            tau = cfm.rank_agreement(gm.set_index("explainer")["value"].to_dict(), t, m)["kendall_tau"]
            tau_rows.append({"dataset": d, "alpha": a, "steps": st, "metric": m, "seed": s, "value": tau})
    taus = aggregate_seeds(pd.DataFrame(tau_rows), keys).assign(statistic="kendall_tau")
    out = pd.concat([agg, taus], ignore_index=True)
    pv = paper_values(PAPER, paper_table="Table 1", dataset="movie_reviews", statistic="score")
    pv = pv[pv["explainer"] != "logistic_regression"].groupby("metric")["value"]
    rng = pd.DataFrame({"paper": pv.mean(), "paper_min": pv.min(), "paper_max": pv.max()})
    out["paper"], out["paper_min"], out["paper_max"] = np.nan, np.nan, np.nan
    for i, r in out.iterrows():
        key = paper_key("Table 1" if r["statistic"] != "kendall_tau" else "Table 2", r["dataset"], r["metric"])
        if not key or PAPER_DATASET.get(r["dataset"]) != "movie_reviews":
            continue
        if r["statistic"] == "kendall_tau":
            hit = paper_values(PAPER, paper_table="Table 2", dataset="movie_reviews", metric=key, statistic="kendall_tau")
            out.loc[i, "paper"] = float(hit["value"].iloc[0]) if len(hit) else np.nan
        elif key in rng.index:
            out.loc[i, ["paper", "paper_min", "paper_max"]] = rng.loc[key].to_numpy()
    return out[["dataset", "alpha", "steps", "metric", "statistic", "ours", "ours_std", "paper", "paper_min",
                "paper_max", "n_seeds"]].reset_index(drop=True)


def choose_alpha(table: pd.DataFrame, dataset: str = "rt-polarity", steps: int = 100,
                 threshold: float = PAPER_VALIDITY_CONT_MIN) -> tuple[float, str]:
    """The alpha criterion, fixed before the sweep's results: the smallest swept alpha whose Validity (cont.),
    at ``steps`` Adam steps on ``dataset`` (mean over the six explainers, then over seeds), reaches
    ``threshold`` (the paper's lowest printed value); if none does, the alpha with the highest such Validity.
    Returns (alpha, the reason in words)."""
    v = table[(table["dataset"] == dataset) & (table["steps"] == steps) & (table["metric"] == "validity_cont")
              & (table["statistic"] == "mean_over_explainers")].sort_values("alpha")
    if v.empty:
        raise ValueError(f"the sweep table has no Validity (cont.) of {dataset!r} at {steps} steps")
    ok = v[v["ours"] >= threshold]
    if len(ok):
        r = ok.iloc[0]
        return float(r["alpha"]), f"smallest alpha with Validity (cont.) {r['ours']:.3f} >= {threshold}"
    r = v.loc[v["ours"].idxmax()]
    return float(r["alpha"]), f"no alpha reaches {threshold}; highest Validity (cont.) {r['ours']:.3f}"


def reference_accuracy_table(ref: pd.DataFrame, res: pd.DataFrame) -> pd.DataFrame:
    """``cf_faithfulness_reference_accuracy``: per dataset and model, test accuracy mean ± std over seeds
    (``ref`` from :func:`.runner.reference_accuracy`, beside our embedding LR from ``res``) and the
    paper's LR accuracy (Sec. 4.2)."""
    ours = res[res["metric"] == "test_accuracy"][["dataset", "seed", "value"]].assign(model="embedding LR (ours)")
    both = pd.concat([ours, ref[["dataset", "seed", "model", "value"]]], ignore_index=True)
    both = both[both["dataset"].isin(set(ref["dataset"]))]
    agg = both.groupby(["dataset", "model"], sort=False)["value"].agg(["mean", "std", "count"]).reset_index()
    agg.columns = ["dataset", "model", "ours", "ours_std", "n_seeds"]
    paper = {d: float(paper_values(PAPER, paper_table="Sec 4.2", dataset=PAPER_DATASET.get(d, d))["value"].iloc[0])
             for d in agg["dataset"].unique()}
    agg["paper"] = agg["dataset"].map(paper)
    agg["ours_minus_paper"] = agg["ours"] - agg["paper"]
    agg.insert(2, "metric", "test_accuracy")
    return agg[["dataset", "model", "metric", "ours", "ours_std", "paper", "ours_minus_paper", "n_seeds"]]


# ----------------------------------------------------------------------------------------------
# the paper's own tables, checked against each other
# ----------------------------------------------------------------------------------------------
def paper_table2_check() -> pd.DataFrame:
    """Table 2 recomputed from Table 1 (Eqs. 11-12 on the six explainers), once from its printed ranks and
    once from its printed values, beside the printed Table 2 value, per dataset and ranked metric of
    Table 1 (NaN where Table 2 prints none)."""
    rows = []
    for dataset, our_name in (("adults", "adult"), ("movie_reviews", "rt-polarity")):
        t1 = paper_values(PAPER, paper_table="Table 1", dataset=dataset, statistic="score")
        gt = t1[t1["metric"] == "ground_truth"].set_index("explainer")
        for ours, key in PAPER_KEYS[("Table 1", dataset)].items():
            r = t1[t1["metric"] == key].set_index("explainer").reindex(gt.index)
            if ours == "ground_truth" or r["rank"].isna().any():
                continue
            by_value = cfm.oriented(r["value"].to_numpy(), ours)
            printed = {}
            t2_key = paper_key("Table 2", our_name, ours)
            for st in STATISTICS:
                hit = paper_values(PAPER, paper_table="Table 2", dataset=dataset, metric=t2_key or "-", statistic=st)
                printed[st] = float(hit["value"].iloc[0]) if len(hit) else np.nan
            rows.append({"dataset": dataset, "metric": ours, "table2_row": t2_key,
                         "tau from Table 1 ranks": cfm.kendall_tau(-r["rank"].to_numpy(), -gt["rank"].to_numpy()),
                         "tau from Table 1 values": cfm.kendall_tau(by_value, gt["value"].to_numpy()),
                         "printed tau": printed["kendall_tau"],
                         "rho from Table 1 ranks": cfm.spearman_rho(-r["rank"].to_numpy(), -gt["rank"].to_numpy()),
                         "rho from Table 1 values": cfm.spearman_rho(by_value, gt["value"].to_numpy()),
                         "printed rho": printed["spearman_rho"]})
    return pd.DataFrame(rows)


def paper_table1_check() -> pd.DataFrame:
    """Each C / C_soft value printed in Table 1 beside what its equation gives from the same column's printed
    numbers (``equation``: C = Validity / Proximity, Eq. 3; C_soft = Validity_soft / Proximity, Eq. 5, with
    the Proximity row printed under each) and beside ``1 / Proximity``; ``matches`` names the one that agrees
    with the printed value to 1 % (empty when neither does)."""
    rows = []
    pairs = {"adults": (("c_disc", "validity", "proximity_c"), ("c_soft_disc", "validity_soft", "proximity_c_soft")),
             "movie_reviews": (("c_cont", "validity", "proximity_c"), ("c_soft_cont", "validity_soft", "proximity_c_soft"))}
    for dataset, triples in pairs.items():
        t1 = paper_values(PAPER, paper_table="Table 1", dataset=dataset, statistic="score")
        v = t1.set_index(["metric", "explainer"])["value"]
        for c, val, prox in triples:
            for e in PAPER_ORDER:
                printed, p = float(v[(c, e)]), float(v[(prox, e)])
                eq = float(v[(val, e)]) / p
                match = ("equation" if np.isclose(eq, printed, rtol=0.01) else
                         "1 / Proximity" if np.isclose(1 / p, printed, rtol=0.01) else "")
                rows.append({"dataset": dataset, "metric": c, "explainer": e, "printed": printed,
                             "equation": eq, "1 / Proximity": 1 / p, "matches": match})
    return pd.DataFrame(rows)
