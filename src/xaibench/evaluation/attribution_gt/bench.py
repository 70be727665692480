"""``python -m xaibench.bench attribution_gt``: training and attribution time per model and method
on the article dataset (Zhou et al. 2022) -> ``figures/tables/bench_attribution_gt.csv``."""
from __future__ import annotations

import time

import pandas as pd


def bench_attribution_gt(n_explain: int = 20, rationale_epochs: int = 2, profile: str = "full") -> pd.DataFrame:
    from ...data.loaders import load
    from ...explainers.local import make_explainer
    from ...models.attention_bilstm import AttentionBiLSTMClassifier
    from ...models.rationale import RationaleModel
    from . import text_eval as te
    from .text_runner import TextConfig, article_dataset

    cfg = TextConfig.for_profile(profile)
    n_explain = min(n_explain, cfg.n_test)
    ds = article_dataset(load("beer"), "article", 0, cfg)
    rows = []
    t0 = time.time()
    m = AttentionBiLSTMClassifier(hidden=cfg.hidden, max_epochs=cfg.max_epochs, seed=0, cache=False)
    m.fit(ds.train.texts, ds.train.labels, ds.val.texts, ds.val.labels)
    n_ep = len(m.history["epochs"])
    rows.append({"model": "attention", "method": "training", "n_items": len(ds.train), "epochs": n_ep,
                 "seconds": time.time() - t0, "seconds_per_item": (time.time() - t0) / (n_ep * len(ds.train)),
                 "test_acc": m.accuracy(ds.test.texts, ds.test.labels)})
    idx = list(range(n_explain))
    t0 = time.time()
    te.attention_attr(m, ds.test, max_reviews=n_explain)
    rows.append({"model": "attention", "method": "attention", "n_items": n_explain, "seconds": time.time() - t0,
                 "seconds_per_item": (time.time() - t0) / n_explain})
    for name in cfg.explainers:
        exp = make_explainer(name, **cfg.explainer_kwargs.get(name, {})).fit(m)
        t0 = time.time()
        te.explainer_attr(exp, ds.test, idx)
        dt = time.time() - t0
        rows.append({"model": "attention", "method": name, "n_items": n_explain, "seconds": dt,
                     "seconds_per_item": dt / n_explain})
    for mode in cfg.rationale_modes:
        r = RationaleModel(mode=mode, selection=0.1, hidden=cfg.rationale_hidden, max_epochs=rationale_epochs, seed=0)
        t0 = time.time()
        r.fit(ds.train.texts, ds.train.labels, ds.val.texts, ds.val.labels)
        dt = time.time() - t0
        n_ep = len(r.history["epochs"])
        rows.append({"model": f"rationale_{mode}", "method": "training", "n_items": len(ds.train), "epochs": n_ep,
                     "seconds": dt, "seconds_per_item": dt / (n_ep * len(ds.train)),
                     "test_acc": r.evaluate(ds.test.texts, ds.test.labels)["acc"]})
    return pd.DataFrame(rows)
