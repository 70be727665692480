"""Result tables of the attribution ground-truth experiments (Zhou et al. 2022), built from the runs'
per-run results (:func:`.text_runner.run_text`, :func:`.image_runner.run_images`) and joined with the
paper's printed values (src/xaibench/resources/attribution_gt.csv) through
:func:`xaibench.tables.join_paper`.

* :func:`attention_table` -- ``attribution_gt_attention``: Attr% of attention and of the post-hoc
  explainers on correlating / non-correlating articles and other words (Sec. 6, Fig. 1 left);
* :func:`attention_epochs_table` -- ``attribution_gt_attention_epochs``: validation accuracy and
  attention Attr% after every training epoch of every attention run;
* :func:`rationale_table` -- ``attribution_gt_rationales``: precision / recall of the rationale
  selections against the correlating articles, with the dataset-wide optimum (Sec. 7, Figs. 12-13);
* :func:`saliency_table` -- ``attribution_gt_saliency``: saliency Attr% on the joint effective region
  per experiment, manipulation, method and class (Sec. 5, Figs. 5, 7, 8), over all runs and over the
  runs whose model *learned* the manipulation (test accuracy > :data:`LEARNED_ACC`), plus the share of
  the Fig. 5 runs that learned it (the paper: 0.70);
* :func:`image_runs_table` -- ``attribution_gt_image_runs``: one row per image run with its test accuracy,
  test-set size and ``learned`` flag;
* :func:`image_learned_table` -- ``attribution_gt_image_learned``: per protocol (species pairs / species
  groups), experiment and manipulation, the share of runs that learned and the test-set size.

Every table says which runs learned: ``learned`` per run (image runs, rationale models), or the count
``n_learned`` beside ``n_runs`` where rows aggregate runs (attention, saliency).  A rationale model whose
test accuracy is not above :data:`TEXT_LEARNED_ACC` is ``failed``: its precision / recall are not results.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ... import tables

PAPER = "attribution_gt"
#: The paper's "(near-)perfect model" criterion for the image runs (Sec. 5.1): test accuracy over 95 %.
LEARNED_ACC = 0.95
#: The paper's accuracy bound for the text models (Secs. 6-7): over 97 %.
TEXT_LEARNED_ACC = 0.97
SHARE_METRIC = "share_of_runs_test_acc_gt_0.95"
#: the Fig. 5 experiments: species pairs (``er``) and species groups (``er-groups``, :func:`.image_runner.run_groups`)
FIG5_EXPERIMENTS = ("er", "er-groups")
RATIONALE_METRICS = ("precision", "recall", "noncorr_share_of_selection", "rate", "test_acc", "first3_selected_share")


# ------------------------------------------------------------------------------------------- text
def attention_table(att: pd.DataFrame) -> pd.DataFrame:
    """Mean (± std over runs) Attr% per dataset, method and region from :func:`.text_runner.run_attention`.

    ``uniform_share`` is the token share of the region (what a uniform attribution gets); ``test_acc``
    the mean and ``test_acc_min`` the lowest test accuracy over the runs, ``n_learned`` the runs above
    :data:`TEXT_LEARNED_ACC`.  ``paper``: the paper's 8.6 %
    (attention on the article dataset's articles); ``paper_uniform_share``: its 7.9 % article share.
    """
    rows = []
    for (ds_name, method), g in att.groupby(["dataset", "method"], sort=False):
        corr_share, noncorr_share = g["share_corr_tokens"].mean(), g["share_noncorr_tokens"].mean()
        shares = {"corr": corr_share, "noncorr": noncorr_share, "other": 1 - corr_share - noncorr_share}
        for region in ("corr", "noncorr", "other"):
            if ds_name == "article" and region == "noncorr":
                continue  # the article dataset has no non-correlating articles
            rows.append({"dataset": ds_name, "method": method, "region": region, "ours": g[region].mean(),
                         "ours_std": g[region].std() if len(g) > 1 else np.nan, "uniform_share": shares[region],
                         "test_acc": g["test_acc"].mean(), "test_acc_min": g["test_acc"].min(), "n_runs": len(g),
                         "n_learned": int((g["test_acc"] > TEXT_LEARNED_ACC).sum()),
                         "n_reviews": int(g["n_reviews"].iloc[0])})
    table = pd.DataFrame(rows)
    on_articles = (table.dataset == "article") & (table.region == "corr")
    table["_metric"] = np.where(on_articles, "article_word_share_of_all_words", None)
    table = tables.join_paper(table, PAPER, on={"_metric": "metric"}, paper_table="Sec 6.1 (text)")
    table = table.rename(columns={"paper": "paper_uniform_share"})
    table["_metric"] = np.where(on_articles & (table.method == "attention"), "attr_pct_on_article_words", None)
    table = tables.join_paper(table, PAPER, on={"_metric": "metric"}, paper_table="Sec 6.1 (text)")
    table["lower_is_better"] = table.region != "corr"
    return table[["dataset", "method", "region", "ours", "ours_std", "paper", "uniform_share", "paper_uniform_share",
                  "test_acc", "test_acc_min", "n_runs", "n_learned", "n_reviews", "lower_is_better"]]


def attention_epochs_table(att: pd.DataFrame) -> pd.DataFrame:
    """One row per attention run and epoch: validation accuracy (``dev_acc``) and the attention Attr% on the
    correlating / non-correlating articles of the probed validation reviews (``val_attn_corr`` / ``_noncorr``),
    with ``crossed``: whether this epoch is the run's first with validation accuracy >= 0.97 (its stop)."""
    rows = []
    for _, r in att[att.method == "attention"].iterrows():
        crossed = False
        for e in json.loads(r["epoch_history"]):
            first = (not crossed) and e["dev_acc"] >= TEXT_LEARNED_ACC
            crossed = crossed or first
            rows.append({"dataset": r["dataset"], "run": r["run"], "epoch": e["epoch"], "dev_acc": e["dev_acc"],
                         "val_attn_corr": e.get("val_attn_corr", np.nan),
                         "val_attn_noncorr": e.get("val_attn_noncorr", np.nan), "crossed": first})
    return pd.DataFrame(rows, columns=["dataset", "run", "epoch", "dev_acc", "val_attn_corr", "val_attn_noncorr",
                                       "crossed"])


def rationale_table(rat: pd.DataFrame) -> pd.DataFrame:
    """Long table: one row per rationale model and metric (:data:`RATIONALE_METRICS`), with the dataset-wide
    optimum for precision / recall; ``paper`` is the paper's test-accuracy bound (over 97 %, ``paper_bound``
    '>') on the ``test_acc`` rows -- the paper prints no precision / recall numbers (Figs. 12-13 only).
    ``learned``: test accuracy > :data:`TEXT_LEARNED_ACC`; ``failed`` = not learned (its selections are
    not a result); ``reached_target``: the training stop rule (accuracy and selection rate) was met."""
    rows = []
    for _, r in rat.iterrows():
        for metric in RATIONALE_METRICS:
            rows.append({"dataset": r.dataset, "model": r.model, "target_rate": r.target_rate, "metric": metric,
                         "ours": r[metric], "ours_std": np.nan,
                         "optimal": r.optimal_precision if metric == "precision" else
                         r.optimal_recall if metric == "recall" else np.nan,
                         "reached_target": bool(r.reached_target), "epochs": int(r.epochs), "n_runs": 1,
                         "lower_is_better": metric in ("noncorr_share_of_selection", "first3_selected_share")})
    table = pd.DataFrame(rows)
    table["_table"] = np.where(table.dataset == "article", "Sec 7.1 (text)", "Sec 7.2 (text)")
    table["_metric"] = np.where(table.metric == "test_acc", "test_accuracy", None)
    keys, sections = {"_table": "paper_table", "_metric": "metric"}, ["Sec 7.1 (text)", "Sec 7.2 (text)"]
    table = tables.join_paper(table, PAPER, on=keys, value="bound", paper_table=sections)
    table = tables.join_paper(table.rename(columns={"paper": "paper_bound"}), PAPER, on=keys, paper_table=sections)
    table["paper_bound"] = table["paper_bound"].fillna("")
    table = rationale_flags(table)
    return table[["dataset", "model", "target_rate", "metric", "ours", "ours_std", "paper", "paper_bound", "optimal",
                  "learned", "failed", "reached_target", "epochs", "n_runs", "lower_is_better"]]


def rationale_flags(table: pd.DataFrame) -> pd.DataFrame:
    """Add ``learned`` (the model's ``test_acc`` row > :data:`TEXT_LEARNED_ACC`) and ``failed`` (= not learned)
    to every row of a long rationale table (:func:`rationale_table`, or the committed CSV)."""
    keys = ["dataset", "model", "target_rate"]
    acc = table[table.metric == "test_acc"].set_index(keys)["ours"]
    learned = table.set_index(keys).index.map(lambda k: bool(acc.get(k, np.nan) > TEXT_LEARNED_ACC))
    return table.assign(learned=np.asarray(learned, dtype=bool), failed=~np.asarray(learned, dtype=bool))


# ------------------------------------------------------------------------------------------- images
def experiment_group(experiment: pd.Series) -> pd.Series:
    """``visibility-noise-3-2`` -> ``visibility-noise``; ``r-similar`` / ``r-distinct`` -> ``r``; ``er`` stays."""
    return (experiment.str.replace(r"-\d+-\d+$", "", regex=True)
            .str.replace(r"-(similar|distinct)$", "", regex=True))


def visibility_level(experiment: pd.Series) -> pd.Series:
    """The visibility level (0 = least visible) of a ``visibility-<kind>-<group>-<level>`` run, else NaN."""
    lv = experiment.str.extract(r"^visibility-.*-(\d+)$")[0]
    return pd.to_numeric(lv, errors="coerce")


def learned_share(runs: pd.DataFrame, experiment: str = "er", threshold: float = LEARNED_ACC) -> tuple[int, int]:
    """``(runs above threshold, runs)`` among the runs of ``experiment``."""
    acc = runs.loc[runs.experiment == experiment, "test_acc"]
    return int((acc > threshold).sum()), int(len(acc))


def saliency_per_run(attr: pd.DataFrame, threshold: float = LEARNED_ACC) -> pd.DataFrame:
    """Mean Attr% over the explained test images per run, method and class, with the run's test accuracy,
    ER size, experiment group, visibility level and ``learned`` (test accuracy > ``threshold``)."""
    a = attr.assign(**{"class": np.where(attr.label == 1, "positive", "negative"),
                       "group": experiment_group(attr.experiment), "level": visibility_level(attr.experiment)})
    keys = ["group", "level", "manipulation", "method", "class", "r", "run"]
    per_run = a.groupby(keys, as_index=False, dropna=False).agg(
        attr_pct=("attr_pct", "mean"), test_acc=("test_acc", "first"), er_size=("er_size", "first"))
    per_run["learned"] = per_run.test_acc > threshold
    return per_run


def saliency_runs_table(attr: pd.DataFrame, threshold: float = LEARNED_ACC) -> pd.DataFrame:
    """:func:`saliency_per_run` as a tidy table (``ours`` = the run's mean Attr% over its explained images; no
    ``ours_std`` or ``paper``), with the number of images each mean is over (``n_images``)."""
    per_run = saliency_per_run(attr, threshold)
    keys = ["group", "level", "manipulation", "method", "class", "r", "run"]
    n = attr.assign(**{"class": np.where(attr.label == 1, "positive", "negative"),
                       "group": experiment_group(attr.experiment), "level": visibility_level(attr.experiment)})
    n = n.groupby(keys, as_index=False, dropna=False).size().rename(columns={"size": "n_images"})
    out = per_run.merge(n, on=keys, how="left").rename(columns={"attr_pct": "ours"})
    out = out.assign(metric="attr_pct", ours_std=np.nan, paper=np.nan, lower_is_better=False)
    return out[["group", "metric", "manipulation", "method", "class", "r", "level", "run", "ours", "ours_std", "paper",
                "n_images", "test_acc", "er_size", "learned", "lower_is_better"]]


def saliency_table(runs: pd.DataFrame, attr: pd.DataFrame, threshold: float = LEARNED_ACC) -> pd.DataFrame:
    """Attr% on the joint ER per experiment group, visibility level (NaN outside the visibility runs),
    manipulation, method, class and r: ``ours`` (± std) over all runs, ``n_learned`` of ``n_runs`` runs with
    test accuracy > ``threshold`` and ``ours_learned`` (mean over those; NaN when none learned).  The last rows
    (metric ``share_of_runs_test_acc_gt_0.95``) are the share of the Fig. 5 runs that learned, per Fig. 5
    experiment (:data:`FIG5_EXPERIMENTS` present), beside the paper's 0.70.  The paper prints no Attr% numbers (Figs. 5-8 only), so ``paper`` is NaN on the Attr% rows."""
    per_run = saliency_per_run(attr, threshold)
    keys = ["group", "level", "manipulation", "method", "class", "r"]
    g = per_run.groupby(keys, as_index=False, dropna=False)
    tab = g.agg(ours=("attr_pct", "mean"), ours_std=("attr_pct", "std"), er_size=("er_size", "mean"),
                test_acc=("test_acc", "mean"), n_runs=("run", "nunique"), n_learned=("learned", "sum"))
    learned = (per_run[per_run.learned].groupby(keys, as_index=False, dropna=False)
               .agg(ours_learned=("attr_pct", "mean")))
    tab = tab.merge(learned, on=keys, how="left")
    tab["metric"] = "attr_pct"
    shares = []
    for exp in [e for e in FIG5_EXPERIMENTS if e == "er" or (runs.experiment == e).any()]:
        n_up, n = learned_share(runs, exp, threshold)
        shares.append({"group": exp, "level": np.nan, "metric": SHARE_METRIC, "manipulation": "all",
                       "method": "", "class": "", "r": 0.5, "ours": n_up / n if n else np.nan, "ours_std": np.nan,
                       "ours_learned": np.nan, "er_size": np.nan, "test_acc": np.nan, "n_runs": n, "n_learned": n_up})
    share = pd.DataFrame(shares)
    tab = pd.concat([tab, share], ignore_index=True)
    tab["_metric"] = np.where(tab.metric == SHARE_METRIC, "share_of_runs_meeting_accuracy_threshold", None)
    tab = tables.join_paper(tab, PAPER, on={"_metric": "metric"}, paper_table="Sec 5.1 (text)")
    tab["n_learned"] = tab["n_learned"].astype(int)
    tab["lower_is_better"] = False
    return tab[["group", "metric", "manipulation", "method", "class", "r", "level", "ours", "ours_std", "paper",
                "ours_learned", "n_learned", "n_runs", "er_size", "test_acc", "lower_is_better"]]


RUN_COLUMNS = ("experiment", "run", "protocol", "pair", "manipulation", "manip", "r", "er_size", "n_train", "n_test",
               "n_explained", "n_explained_positive", "epochs", "epoch_read", "val_acc", "test_acc", "learned")


def protocol_of(runs: pd.DataFrame) -> pd.Series:
    """``species groups`` for the runs of :func:`.image_runner.run_groups`, else ``species pairs``."""
    return pd.Series(np.where(runs.experiment.astype(str).str.endswith("-groups"), "species groups",
                              "species pairs"), index=runs.index)


def image_runs_table(runs: pd.DataFrame, threshold: float = LEARNED_ACC) -> pd.DataFrame:
    """One row per image run (:data:`RUN_COLUMNS` present in ``runs``) with ``learned`` = test accuracy >
    ``threshold`` and its ``protocol`` (:func:`protocol_of`)."""
    out = runs.assign(learned=runs.test_acc > threshold, protocol=protocol_of(runs))
    out = out[[c for c in RUN_COLUMNS if c in out.columns]].reset_index(drop=True)
    # tidy: the test accuracy is the run's value (no spread, no paper value per run)
    return out.assign(metric="test_acc", ours=out.test_acc, ours_std=np.nan, paper=np.nan, lower_is_better=False)


def watermark_glyph_table(group_runs: pd.DataFrame, glyph_runs: pd.DataFrame,
                          threshold: float = LEARNED_ACC) -> pd.DataFrame:
    """The paired glyph-size experiment: the watermark species-group runs (``group_runs``, :func:`.image_runner.run_groups`)
    beside the same runs with another glyph size (``glyph_runs``, :func:`.image_runner.watermark_glyph_runs`); one
    row per (``run``, ``glyph_px``) of the runs both sizes trained, with the test accuracy (``ours``), the epochs trained
    and read, and ``learned``."""
    cols = ["run", "glyph_px", "manip", "er_size", "epochs", "epoch_read", "val_acc", "test_acc"]
    paired = group_runs[(group_runs.manipulation == "watermark") & group_runs["run"].isin(glyph_runs["run"])]
    both = pd.concat([paired, glyph_runs], ignore_index=True)
    return _test_acc_rows(both[[c for c in cols if c in both.columns]].sort_values(["run", "glyph_px"]), threshold)


def _test_acc_rows(runs: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """A paired experiment's runs as tidy rows: test accuracy as ``ours``, ``learned`` above ``threshold``."""
    out = runs.reset_index(drop=True)
    return out.assign(learned=out.test_acc > threshold, metric="test_acc", ours=out.test_acc, ours_std=np.nan,
                      paper=np.nan, lower_is_better=False)


def stages_table(runs: dict, canvas: int, threshold: float = LEARNED_ACC) -> pd.DataFrame:
    """The paired model experiment: the same species-group runs (same groups, manipulation and training seed;
    ``run``) trained with SmallResNets of other stage widths.  ``runs`` maps each model's stage widths to its runs
    table (:func:`.image_runner.run_groups`, :func:`.image_runner.group_variant_runs`); one row per (``run``,
    model) for the runs that more than one model trained, with the model's depth (``stages``), parameter count
    (``n_params``), the receptive field of its last feature map (``rf_px``,
    :func:`~xaibench.models.resnet_small.receptive_field`; ``rf_share``: its side over the canvas), the epochs trained
    and read, and the test accuracy (``ours``)."""
    from ...models.resnet_small import SmallResNet, receptive_field

    cols = ["run", "manipulation", "manip", "er_size", "epochs", "epoch_read", "val_acc", "test_acc", "train_seconds"]
    parts = []
    for widths, r in runs.items():
        rf = receptive_field(len(widths))
        n_params = sum(p.numel() for p in SmallResNet(2, tuple(widths)).parameters())
        parts.append(r[[c for c in cols if c in r.columns]].assign(
            stages=len(widths), widths="/".join(map(str, widths)), n_params=n_params, rf_px=rf, rf_share=rf / canvas))
    both = pd.concat(parts, ignore_index=True)
    paired = both["run"].map(both["run"].value_counts()) > 1
    return _test_acc_rows(both[paired].sort_values(["run", "stages", "n_params"], kind="stable"), threshold)


def learned_summary(tab: pd.DataFrame, by: str, label: str = "") -> str:
    """One sentence per value of column ``by`` of a paired-experiment table (:func:`watermark_glyph_table`,
    :func:`stages_table`): how many of its runs learned (``learned``), with each run's test accuracy and epochs
    trained, in run order -- what the notebook states under the table, computed rather than typed."""
    parts = []
    for value, g in tab.groupby(by, sort=False):
        g = g.sort_values("run")
        runs = ", ".join(f"run {int(r.run)}: {r.test_acc:.3f} after {int(r.epochs)} epoch{'' if int(r.epochs) == 1 else 's'}"
                         for r in g.itertuples())
        shown = int(value) if isinstance(value, float) and value.is_integer() else value
        parts.append(f"{label}{shown}: {int(g.learned.sum())} of {len(g)} runs learn ({runs}).")
    return " ".join(parts)


def image_learned_table(runs: pd.DataFrame, threshold: float = LEARNED_ACC) -> pd.DataFrame:
    """Per protocol, experiment group and manipulation (and ``all`` over the manipulations): ``n_runs``,
    ``n_learned`` (test accuracy > ``threshold``), their share ``ours`` (metric ``share_learned``; the paper's
    0.70 on the Fig. 5 rows over all manipulations), and the test-set size (``n_test_min`` / ``n_test_mean``, images of both
    classes) and training-set size (``n_train``, both classes) of the runs."""
    r = runs.assign(learned=runs.test_acc > threshold, protocol=protocol_of(runs),
                    group=experiment_group(runs.experiment.astype(str)).str.replace("-groups$", "", regex=True))
    if "n_train" not in r:
        r["n_train"] = np.nan
    rows = []
    for (prot, grp), g in r.groupby(["protocol", "group"], sort=False):
        for kind, h in [*g.groupby("manipulation", sort=True), ("all", g)]:
            rows.append({"protocol": prot, "group": grp, "manipulation": kind, "metric": "share_learned",
                         "ours": float(h.learned.mean()), "n_learned": int(h.learned.sum()), "n_runs": len(h),
                         "n_test_min": int(h.n_test.min()), "n_test_mean": float(h.n_test.mean()),
                         "n_train": float(h.n_train.mean()), "test_acc_mean": float(h.test_acc.mean()),
                         "ours_std": np.nan})
    tab = pd.DataFrame(rows)
    tab["_metric"] = np.where((tab.group == "er") & (tab.manipulation == "all"),
                              "share_of_runs_meeting_accuracy_threshold", None)
    tab = tables.join_paper(tab, PAPER, on={"_metric": "metric"}, paper_table="Sec 5.1 (text)")
    tab["lower_is_better"] = False
    return tab[["protocol", "group", "manipulation", "metric", "ours", "ours_std", "paper", "n_learned", "n_runs",
                "n_test_min", "n_test_mean", "n_train", "test_acc_mean", "lower_is_better"]]


__all__ = ["FIG5_EXPERIMENTS", "stages_table", "learned_summary", "watermark_glyph_table", "RUN_COLUMNS", "protocol_of", "image_runs_table", "image_learned_table", "LEARNED_ACC", "TEXT_LEARNED_ACC", "SHARE_METRIC", "attention_table", "attention_epochs_table",
           "rationale_table", "rationale_flags", "experiment_group", "visibility_level", "learned_share", "saliency_per_run",
           "saliency_table"]
