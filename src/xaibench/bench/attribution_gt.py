"""``python -m xaibench.bench attribution_gt``: training and attribution time per model and method
for Zhou et al. (2022) -> ``figures/tables/bench_attribution_gt.csv``.

Text: the attention BiLSTM on the article dataset (trained with the stop rule of the full profile),
attention and every project explainer on ``n_explain`` test reviews, and both rationale models for
``rationale_epochs`` epochs.  Images: one learnable-protocol ResNet run (watermark, r = 0.5) with
every saliency method on the explained test images.  Each row carries the machine, the torch
thread count and the 1-minute load average at the time it was measured, so that timings taken under
load can be recognised.
"""
from __future__ import annotations

import time

import pandas as pd

from .common import machine_context


def bench_text(n_explain: int = 20, rationale_epochs: int = 2, profile: str = "full") -> list[dict]:
    from ..data.loaders import load
    from ..explainers.local import make_explainer
    from ..models.attention_bilstm import AttentionBiLSTMClassifier
    from ..models.rationale import RationaleModel
    from ..evaluation.attribution_gt import text_eval as te
    from ..evaluation.attribution_gt.text_runner import TextConfig, article_dataset

    cfg = TextConfig.for_profile(profile)
    n_explain = min(n_explain, cfg.n_test)
    ds = article_dataset(load("beer"), "article", 0, cfg)
    rows = []
    t0 = time.time()
    m = AttentionBiLSTMClassifier(hidden=cfg.hidden, max_epochs=cfg.max_epochs, seed=0, cache=False)
    m.fit(ds.train.texts, ds.train.labels, ds.val.texts, ds.val.labels)
    dt, n_ep = time.time() - t0, len(m.history["epochs"])
    rows.append({"domain": "text", "model": "attention_bilstm", "method": "training", "n_items": len(ds.train),
                 "epochs": n_ep, "seconds": dt, "seconds_per_item": dt / (n_ep * len(ds.train)),
                 "test_acc": m.accuracy(ds.test.texts, ds.test.labels), **machine_context()})
    t0 = time.time()
    te.attention_attr(m, ds.test, max_reviews=n_explain)
    dt = time.time() - t0
    rows.append({"domain": "text", "model": "attention_bilstm", "method": "attention", "n_items": n_explain,
                 "seconds": dt, "seconds_per_item": dt / n_explain, **machine_context()})
    idx = list(range(n_explain))
    for name in cfg.explainers:
        exp = make_explainer(name, **cfg.explainer_kwargs.get(name, {})).fit(m)
        t0 = time.time()
        te.explainer_attr(exp, ds.test, idx)
        dt = time.time() - t0
        rows.append({"domain": "text", "model": "attention_bilstm", "method": name, "n_items": n_explain,
                     "seconds": dt, "seconds_per_item": dt / n_explain, **machine_context()})
    for mode in cfg.rationale_modes:
        r = RationaleModel(mode=mode, selection=0.1, hidden=cfg.rationale_hidden, max_epochs=rationale_epochs, seed=0)
        t0 = time.time()
        r.fit(ds.train.texts, ds.train.labels, ds.val.texts, ds.val.labels)
        dt, n_ep = time.time() - t0, len(r.history["epochs"])
        rows.append({"domain": "text", "model": f"rationale_{mode}", "method": "training", "n_items": len(ds.train),
                     "epochs": n_ep, "seconds": dt, "seconds_per_item": dt / (n_ep * len(ds.train)),
                     "test_acc": r.evaluate(ds.test.texts, ds.test.labels)["acc"], **machine_context()})
    return rows


def bench_images(profile: str = "full") -> list[dict]:
    from ..data.birds import SIMILAR_PAIRS, load_classes
    from ..evaluation.attribution_gt import image_runner as ir
    from ..evaluation.attribution_gt import manipulations as mp

    cfg = ir.ImageConfig.for_profile(profile)
    pair = SIMILAR_PAIRS[0]
    summary, final, _ = ir.run_one(load_classes(pair), pair, mp.R_SWEEP["watermark"], 0.5, 0, cfg)
    n_train = 2 * cfg.n_train
    rows = [{"domain": "image", "model": f"resnet_small {cfg.widths} @{cfg.canvas}px", "method": "training",
             "n_items": n_train, "epochs": cfg.epochs, "seconds": summary["train_seconds"],
             "seconds_per_item": summary["train_seconds"] / (cfg.epochs * n_train), "test_acc": summary["test_acc"],
             **machine_context()}]
    for method, g in final.groupby("method", sort=False):
        per = float(g["seconds_per_image"].iloc[0])
        rows.append({"domain": "image", "model": rows[0]["model"], "method": method, "n_items": len(g),
                     "seconds": per * len(g), "seconds_per_item": per, **machine_context()})
    return rows


def bench_attribution_gt(n_explain: int = 20, rationale_epochs: int = 2, profile: str = "full") -> pd.DataFrame:
    df = pd.DataFrame(bench_text(n_explain, rationale_epochs, profile) + bench_images(profile))
    df["profile"] = profile
    return df.round({"seconds": 2, "seconds_per_item": 5, "test_acc": 3})
