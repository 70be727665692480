"""``python -m xaibench.bench attribution``: cost of each local explainer -- seconds and model
forward passes per explanation, on the CNN and MiniLM (:func:`bench_attribution_models`).

``bench_attribution(model, texts)`` explains ``texts`` with every applicable explainer and
returns one row per explainer.  Forward passes are counted two ways:

* ``forward_calls`` -- calls of the network (batches), counted by a hook on ``model.head``
  (torch models only; every forward path of our models ends in the head);
* ``forward_rows`` -- examples that went through the network (batch rows; IG's 50 interpolation
  steps count 50 rows per text), from the same hook, or from ``model.n_forward`` for non-torch
  models;
* ``n_forward`` -- the model's own ``n_forward`` counter (texts run through the network, as the
  explainers report it; also covers passes that stop before the head, e.g. the decision trees'
  conv feature maps).

The targets (predicted classes) are computed once beforehand and are not part of the cost; the
decision-tree explainer's ``fit`` is timed separately (``fit_seconds``).
"""
from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..device import load_average
from ..explainers.local import LOCAL_EXPLAINERS


def bench_attribution(model: Any, texts: Sequence[str], explainers: Sequence[str] | None = None,
                      fit_texts: Sequence[str] | None = None,
                      options: dict[str, dict[str, Any]] | None = None) -> pd.DataFrame:
    """Time every explainer on ``texts``.

    ``explainers``: registry names (default: all); ``fit_texts``: texts the decision trees are
    extracted from (default: ``texts``); ``options``: per-explainer constructor keywords, e.g.
    ``{"lime": {"num_samples": 500}}``.  Explainers that do not apply to ``model`` get a row with
    ``status = "skipped: <reason>"``.
    """
    texts = list(texts)
    if not texts:
        raise ValueError("bench_attribution needs at least one text")
    names = list(explainers) if explainers is not None else list(LOCAL_EXPLAINERS)
    unknown = [n for n in names if n not in LOCAL_EXPLAINERS]
    if unknown:
        raise KeyError(f"unknown explainers {unknown}; known: {sorted(LOCAL_EXPLAINERS)}")
    options = options or {}
    targets = np.asarray(model.predict(texts))
    counter = {"calls": 0, "rows": 0}
    head = getattr(model, "head", None) if hasattr(model, "module") else None

    def hook(_mod, inputs, _out):
        counter["calls"] += 1
        counter["rows"] += int(inputs[0].shape[0])

    handle = head.register_forward_hook(hook) if head is not None else None
    rows = []
    try:
        for name in names:
            cls = LOCAL_EXPLAINERS[name]
            row: dict[str, Any] = {"explainer": name, "paper_name": cls.paper_name, "granularity": cls.granularity,
                                   "n_texts": len(texts)}
            explainer = cls(**options.get(name, {}))
            t0 = time.perf_counter()
            try:
                explainer.fit(model, list(fit_texts) if fit_texts is not None else texts)
            except TypeError as e:
                rows.append({**row, "status": f"skipped: {e}"})
                continue
            row["fit_seconds"] = time.perf_counter() - t0
            counter["calls"] = counter["rows"] = 0
            n0 = model.n_forward
            t0 = time.perf_counter()
            explainer.explain(texts, targets)
            sec = time.perf_counter() - t0
            n = len(texts)
            row.update({
                "status": "ok",
                "seconds_per_explanation": sec / n,
                "forward_calls_per_explanation": counter["calls"] / n if handle else np.nan,
                "forward_rows_per_explanation": (counter["rows"] if handle else model.n_forward - n0) / n,
                "n_forward_per_explanation": (model.n_forward - n0) / n,
            })
            rows.append(row)
    finally:
        if handle is not None:
            handle.remove()
    return pd.DataFrame(rows)


def bench_attribution_models(n_texts: int = 10) -> pd.DataFrame:
    """Seconds and forward passes per explanation for every local explainer, on the CNN and MiniLM.

    Adds the LIME target check: seconds per LIME explanation divided by the seconds of the same
    number of plain (batched, uncached) forward passes (target <= 2).
    """
    from ..data.cebab import task_frame
    from ..explainers.local import proba_uncached
    from ..models.cebab_training import train_cebab
    from ..models.cnn import CNNClassifier

    test = task_frame("test", "5-way")
    texts = test["text"].iloc[:n_texts].tolist()
    tr = task_frame("train_exclusive", "5-way")
    cnn = CNNClassifier(5, seed=42, cache=None, epochs=5).fit(tr["text"].tolist(), tr["label"].to_numpy())
    minilm = train_cebab("minilm", "5-way", "exclusive", 42, profile="full").model
    frames = []
    for label, model in [("cnn (CEBaB 5-way)", cnn), ("minilm (CEBaB 5-way)", minilm)]:
        df = bench_attribution(model, texts, fit_texts=tr["text"].tolist()[:500])
        df.insert(0, "model", label)
        # the same number of plain forward passes as one LIME explanation (1000 perturbations)
        lime_rows = df.loc[df["explainer"] == "lime", "forward_rows_per_explanation"]
        n_rows = int(lime_rows.iloc[0]) if len(lime_rows) and lime_rows.notna().iloc[0] else 1000
        fake = [" ".join(t.split()[: max(1, len(t.split()) // 2)]) for t in texts]
        pool = (fake * (n_rows // len(fake) + 1))[:n_rows]
        t0 = time.time()
        proba_uncached(model, pool)
        plain = time.time() - t0
        df["plain_forward_seconds_same_rows_as_lime"] = round(plain, 3)
        lime_s = df.loc[df["explainer"] == "lime", "seconds_per_explanation"]
        df["lime_over_plain_forward (target <= 2)"] = round(float(lime_s.iloc[0]) / plain, 2) if len(lime_s) else None
        df["load_avg_1min"] = load_average()  # other work on the machine during the run
        frames.append(df)
    return pd.concat(frames, ignore_index=True)
