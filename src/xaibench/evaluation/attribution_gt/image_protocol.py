"""Zhou et al.'s image protocol object (ground-truth attribution on images): Attr% -- the share of a
saliency map's |relevance| inside the joint effective region (ER) of the manipulation -- of every
registered image explainer (family ``image``, output ``image_attribution``), on image classifiers that
learned their manipulation.

A *unit* is one species-group run of notebook 25 (:func:`.image_runner.run_groups`: two disjoint random
groups of species, one manipulation, labels reassigned at r = 0.5, so only the manipulation predicts the
label) whose model learned (test accuracy > :data:`~.tables.LEARNED_ACC`); ``seed`` is the run's seed and
``dataset`` ``cub_groups_<manipulation>``.  An explainer's value in a unit is its mean Attr% over the
run's explained test images (class-balanced: manipulated positives and unmanipulated negatives, for both
of which the joint ER is the ground truth).  Runs that did not learn give no unit: their models do not
rely on the ER, so Attr% has no ground truth there.

:meth:`ImageAttributionGtProtocol.stored` reads notebook 25's stored species-group runs (the profile's
:meth:`.image_runner.ImageConfig.groups` and :class:`.image_runner.ImagePlan`, seed
:data:`NOTEBOOK_SEED`); :meth:`~ImageAttributionGtProtocol.score` trains the run of each seed again (the
stored run's species groups, manipulation and training seed when the seed is one of them, so the same
model is explained) and explains it with the requested explainers.
"""
from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd

from ... import registry
from ..base import Metric, Protocol, mark_added
from .tables import LEARNED_ACC

METRIC = Metric("attr_pct", False, label="Attr% (image ground truth)",
                description="share of |saliency| inside the manipulation's joint effective region")
#: the ``seed`` parameter notebook 25 runs with (Make's NB_PARAMS_25_attribution_gt_saliency)
NOTEBOOK_SEED = 0


def _plan(profile: str):
    from . import image_runner as ir

    return ir.ImageConfig.groups(profile), ir.ImagePlan.for_profile(profile)


def unit_rows(runs: pd.DataFrame, attr: pd.DataFrame) -> pd.DataFrame:
    """Tidy rows of a species-group entry: per learned run and method, the mean Attr% over its explained
    images (``runs``: one row per run with ``run``, ``seed``, ``manipulation``, ``test_acc``; ``attr``: one
    row per run, method and image with ``run``, ``method``, ``attr_pct``)."""
    learned = runs[runs["test_acc"] > LEARNED_ACC]
    rows = []
    for r in learned.itertuples():
        a = attr[attr["run"] == r.run]
        for method, g in a.groupby("method", sort=False):
            vals = g["attr_pct"].astype(float)
            if vals.notna().any():
                rows.append({"metric": "attr_pct", "explainer": method, "model": "small_resnet",
                             "dataset": f"cub_groups_{r.manipulation}", "seed": int(r.seed),
                             "value": float(np.nanmean(vals))})
    return pd.DataFrame(rows, columns=["metric", "explainer", "model", "dataset", "seed", "value"])


class ImageAttributionGtProtocol(Protocol):
    name = "attribution_gt_image"
    paper = "Zhou et al. (2022), ground-truth attribution on semi-natural data (image Attr%)"
    accepts = ("image_attribution",)
    families = ("image",)
    models = ("small_resnet",)
    datasets = ("cub_groups",)
    metrics = {"attr_pct": METRIC}
    paper_tables = ("attribution_gt_saliency",)

    @property
    def paper_explainers(self) -> tuple[str, ...]:
        from ...explainers.saliency import METHODS

        return METHODS

    def _score(self, names: list[str], profile: str, seeds: list[int]) -> pd.DataFrame:
        from ...data.birds import all_classes, load_classes
        from . import image_runner as ir

        gcfg, plan = _plan(profile)
        cfg = replace(gcfg, methods=tuple(names))
        species = all_classes()
        # notebook 25's species-group runs by seed (run k has seed NOTEBOOK_SEED + k)
        stored = dict(enumerate(ir.group_jobs(species, plan.group_kinds, plan.group_runs_per_kind, gcfg.group_size,
                                              NOTEBOOK_SEED), start=NOTEBOOK_SEED))
        frames, unlearned = [], []
        for seed in seeds:
            # a stored run's seed: its species groups and manipulation; another seed: a run of its own
            job = stored.get(seed) or ir.group_jobs(species, plan.group_kinds[:1], 1, gcfg.group_size, seed)[0]
            _, pair, manip, r, track = job
            images = load_classes(sorted({c for g in pair for c in g}), size=cfg.preresize or None)
            summary, final, _ = ir.run_one(images, pair, manip, r, seed, cfg, track=track)
            runs = pd.DataFrame([{**summary, "run": 0}])
            frames.append(unit_rows(runs, final.assign(run=0)))
            if summary["test_acc"] <= LEARNED_ACC:
                unlearned.append(f"seed {seed} ({manip.kind}: test accuracy {summary['test_acc']:.3f})")
        rows = pd.concat(frames, ignore_index=True)
        if unlearned and len(rows):
            warnings.warn(f"{self.name}: runs that did not learn their manipulation give no rows: "
                          f"{', '.join(unlearned)}", stacklevel=2)
        if not len(rows):
            raise RuntimeError(f"{self.name}: no image run learned its manipulation (test accuracy > {LEARNED_ACC}), "
                               f"so no Attr% has a ground truth: {', '.join(unlearned)}")
        return rows

    def stored(self, profile: str = "full") -> pd.DataFrame:
        """The learned species-group runs notebook 25 stored for ``profile`` (none: nothing stored yet)."""
        from . import image_runner as ir

        gcfg, plan = _plan(profile)
        entry = ir.images_store().load(ir.groups_config(gcfg, plan.group_kinds, plan.group_runs_per_kind,
                                                        NOTEBOOK_SEED))
        if entry is None:
            return super().stored(profile)
        return self.tidy(unit_rows(entry["images_groups_runs"], entry["images_groups_attr"]))


PROTOCOL = registry.register_protocol(ImageAttributionGtProtocol(), replace=True)


def methods_for(explainers: str = "") -> tuple[str, ...]:
    """The image explainers notebook 25 runs for its ``explainers`` parameter (Make's ``EXPLAINERS``): the
    paper's five saliency maps, then the named registered image explainers (``all``: every one); names of
    other explainer types are left to their own protocols (:meth:`~xaibench.evaluation.base.Protocol.run_list`)."""
    return tuple(PROTOCOL.run_list(explainers))


def method_label(name):
    """``name``, marked ``(added)`` when it names an explainer that is not one of the paper's five saliency
    maps; anything else (a paper method, an empty or missing method of a summary row) unchanged."""
    return mark_added(name, PROTOCOL.paper_explainers)


__all__ = ["METRIC", "NOTEBOOK_SEED", "ImageAttributionGtProtocol", "PROTOCOL", "unit_rows", "methods_for",
           "method_label"]
