"""Run the text experiments of Zhou et al. (2022) for a profile and collect tidy results.

``run_text(cfg)`` trains, per article dataset (article / CN / NC) and run (seed), one attention
model (stopped at the first epoch with val acc >= 0.97), scores attention and the project's local
explainers against the ER, and trains RL / CR rationale models at the target rates.  Results are
stored under ``data/results/attribution_gt/`` (per profile), so the notebooks re-render without
retraining.  Each table is one :class:`~xaibench.store.ResultStore` entry keyed on the whole
configuration; the attention models are saved under a folder keyed the same way.
"""
from __future__ import annotations

import functools
import json
import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd

from ... import paths
from ..base import mark_added
from . import text_data as td
from . import text_eval as te

#: the project's local explainers applied to the attention model (model-generic ones)
EXPLAINERS = ("random_words", "grad_x_input", "integrated_gradients", "lime", "shap")
def method_label(method: str) -> str:
    """``method`` for attention and the explainers of :data:`EXPLAINERS`, ``"method (added)"`` for any other
    (added through notebooks 13 / 24's ``explainers`` parameter, Make's ``EXPLAINERS``)."""
    return mark_added(method, (*EXPLAINERS, "attention"))


@dataclass
class TextConfig:
    name: str = "full"
    n_train: int = 7000
    n_val: int = 1000
    n_test: int = 1000
    seeds: tuple[int, ...] = tuple(range(11))  # the paper's 11 runs per dataset
    kinds: tuple[str, ...] = td.KINDS
    hidden: int = 64
    max_epochs: int = 15
    explainers: tuple[str, ...] = EXPLAINERS
    n_explain: int = 40
    explain_kinds: tuple[str, ...] = ("article",)  # datasets whose first-run model the explainers are applied to
    n_probe: int = 300     # validation reviews scored after every epoch (attention Attr% during training)
    explainer_kwargs: dict = field(default_factory=lambda: {"lime": {"num_samples": 300},
                                                            "shap": {"max_evals": 200},
                                                            "integrated_gradients": {"n_steps": 20}})
    rationale_rates: tuple[float, ...] = (0.05, 0.1, 0.2)
    rationale_modes: tuple[str, ...] = ("rl", "cr")
    rationale_kinds: tuple[str, ...] = ("article", "cn", "nc")
    rationale_cn_rate: float = 0.1
    rationale_hidden: int = 32
    rationale_epochs: int = 5
    rationale_seed: int = 0

    def __post_init__(self) -> None:
        from ...checks import check_count

        for name in ("n_train", "n_val", "n_test", "hidden", "max_epochs", "n_explain", "n_probe", "rationale_hidden",
                     "rationale_epochs"):
            check_count(getattr(self, name), name, 1)
        if not self.seeds:
            raise ValueError(f"seeds must list at least one run seed; got {self.seeds!r}")

    @classmethod
    def for_profile(cls, profile: str) -> "TextConfig":
        if profile == "quick":
            return cls(name="quick", n_train=200, n_val=60, n_test=60, seeds=(0,), hidden=16, max_epochs=1,
                       n_explain=3, n_probe=20, explainer_kwargs={"lime": {"num_samples": 20}, "shap": {"max_evals": 20},
                                                      "integrated_gradients": {"n_steps": 4}},
                       rationale_rates=(0.1,), rationale_kinds=("article",), rationale_hidden=8,
                       rationale_epochs=1)
        return cls()


def article_dataset(df: pd.DataFrame, kind: str, seed: int, cfg: TextConfig, concat: int = 1) -> td.ArticleDataset:
    """The ``kind`` dataset of ``cfg``'s sizes; ``concat`` same-label reviews joined into each (1: unchanged)."""
    return td.build_article_dataset(df, kind, seed=seed, n_train=cfg.n_train, n_val=cfg.n_val, n_test=cfg.n_test,
                                    concat=concat)


def run_attention(df: pd.DataFrame, cfg: TextConfig) -> tuple[pd.DataFrame, dict]:
    """Long table: one row per (dataset, run, method, region) with the mean Attr% over test reviews.

    Each (dataset, run) is an independent cell (:mod:`xaibench.executor`, ``XAIBENCH_SCHEDULER``);
    the first run's model of each dataset is saved here, in the driver, as its cell finishes."""
    from ...executor import run_cells

    cells = [(kind, seed) for kind in cfg.kinds for seed in cfg.seeds]

    def save(i: int, out: tuple[list, dict | None]) -> None:
        if out[1] is not None:
            kind, seed = cells[i]
            out[1]["model"].save(attention_model_dir(kind, seed, cfg))

    done = run_cells(functools.partial(_attention_cell, df=df, cfg=cfg), cells, desc="attention runs",
                     on_result=save)
    rows, keep = [], {}
    for (kind, _), (cell_rows, first) in zip(cells, done):
        rows.extend(cell_rows)
        if first is not None:
            keep[kind] = first
    return pd.DataFrame(rows), keep


def _attention_cell(cell: tuple[str, int], df: pd.DataFrame, cfg: TextConfig) -> tuple[list[dict], dict | None]:
    """One (dataset, run): train the attention model, score attention (and, on the first run, the
    explainers); the rows, and ``{"model", "dataset", "attention"}`` of a first run (else ``None``)."""
    from ...explainers.local import make_explainer
    from ...models.attention_bilstm import AttentionBiLSTMClassifier

    kind, seed = cell
    rows, first = [], None
    ds = article_dataset(df, kind, seed, cfg)
    m = AttentionBiLSTMClassifier(hidden=cfg.hidden, max_epochs=cfg.max_epochs, seed=seed, cache=False)
    m.epoch_probe = attention_probe(ds.val, cfg.n_probe)
    m.fit(ds.train.texts, ds.train.labels, ds.val.texts, ds.val.labels)
    acc = m.accuracy(ds.test.texts, ds.test.labels)
    base = {"dataset": kind, "run": seed, "test_acc": acc, "epochs": len(m.history["epochs"]),
            "val_acc": m.history["epochs"][-1]["dev_acc"], "train_seconds": m.history["train_seconds"],
            "epoch_history": json.dumps(m.history["epochs"])}
    t0 = time.time()
    att = te.attention_attr(m, ds.test)
    summ = te.summarise_shares(att)
    rows.append({**base, "method": "attention", "n_reviews": len(att), "seconds": time.time() - t0, **summ})
    if seed == cfg.seeds[0]:
        first = {"model": m, "dataset": ds, "attention": att}
        idx = list(range(min(cfg.n_explain, len(ds.test))))
        for name in cfg.explainers if kind in cfg.explain_kinds else ():
            exp = make_explainer(name, **cfg.explainer_kwargs.get(name, {})).fit(m)
            t0 = time.time()
            sh = te.explainer_attr(exp, ds.test, idx)
            rows.append({**base, "method": name, "n_reviews": len(sh), "seconds": time.time() - t0,
                         **te.summarise_shares(sh)})
    return rows, first


class AttentionProbe:
    """Epoch probe: attention Attr% (corr / noncorr) on the first ``n`` reviews of ``split`` (validation:
    the test set stays unseen until the end), to follow how attention concentrates during training.
    A class, not a closure, so that a model carrying it can be sent back from a worker process."""

    def __init__(self, split: td.ArticleSplit, n: int):
        self.split, self.n = split, n

    def __call__(self, model) -> dict[str, float]:
        s = te.summarise_shares(te.attention_attr(model, self.split, max_reviews=self.n))
        return {"val_attn_corr": s["corr"], "val_attn_noncorr": s["noncorr"]}


def attention_probe(split: td.ArticleSplit, n: int) -> AttentionProbe:
    """The epoch probe of :class:`AttentionProbe`."""
    return AttentionProbe(split, n)


def run_rationales(df: pd.DataFrame, cfg: TextConfig) -> pd.DataFrame:
    from ...models.rationale import RationaleModel

    rows = []
    jobs = [("article", r) for r in cfg.rationale_rates]
    jobs += [(k, cfg.rationale_cn_rate) for k in cfg.rationale_kinds if k != "article"]
    for kind, rate in jobs:
        if kind not in cfg.rationale_kinds:
            continue
        ds = article_dataset(df, kind, cfg.rationale_seed, cfg)
        for mode in cfg.rationale_modes:
            m = RationaleModel(mode=mode, selection=rate, hidden=cfg.rationale_hidden, max_epochs=cfg.rationale_epochs,
                               seed=cfg.rationale_seed)
            m.fit(ds.train.texts, ds.train.labels, ds.val.texts, ds.val.labels)
            preds, sel = m.predict_select(ds.test.texts)
            sc = te.rationale_scores(sel, ds.test)
            first = np.mean([s[:3].mean() for s in sel if len(s) >= 3])
            examples = [highlight(ds.test.tokens(i), sel[i]) for i in range(min(3, len(sel)))]
            rows.append({"dataset": kind, "model": mode, "target_rate": rate, "run": cfg.rationale_seed,
                         "test_acc": float((preds == ds.test.labels).mean()), "epochs": len(m.history["epochs"]),
                         "reached_target": m.history["reached_target"], "train_seconds": m.history["train_seconds"],
                         "first3_selected_share": float(first), **sc, "examples": "\n".join(examples)})
    return pd.DataFrame(rows)


def highlight(tokens: list[str], selected: np.ndarray) -> str:
    """``tokens`` joined with the selected ones in [brackets] (rationale display)."""
    return " ".join(f"[{t}]" if s else t for t, s in zip(tokens, selected))


def attention_model_dir(kind: str, seed: int, cfg: TextConfig):
    """Folder of the first-run attention model of ``kind`` trained under ``cfg`` (keyed on the whole
    configuration, like the results it belongs to, so a model never pairs with another run's results)."""
    from ...store import config_key

    return (paths.models_dir() / "attribution_gt"
            / f"attention-{kind}-seed{seed}-{config_key(asdict(paper_config(cfg)), TEXT_VERSION)}")


def load_attention(df: pd.DataFrame, kind: str, cfg: TextConfig, seed: int | None = None):
    """The saved first-run attention model of ``kind`` and its (rebuilt, identical) dataset."""
    from ...models.registry import load_model

    seed = cfg.seeds[0] if seed is None else seed
    return load_model(attention_model_dir(kind, seed, cfg), cache=False), article_dataset(df, kind, seed, cfg)


#: result-format version of :func:`run_text` entries (bump when what a run stores changes)
TEXT_VERSION = 2


def text_store(name: str):
    """The store of :func:`run_text`'s ``name`` table (``attention`` or ``rationales``)."""
    from ...store import ResultStore

    return ResultStore(paths.results_dir() / "attribution_gt", f"text_{name}", version=TEXT_VERSION)


def _models_ok(cfg: TextConfig) -> bool:
    """Whether every first-run attention model of ``cfg`` is saved and loads; a damaged one is named in
    a ``RuntimeWarning`` and removed."""
    from ... import io
    from ...models.registry import load_model

    for kind in cfg.kinds:
        folder = attention_model_dir(kind, cfg.seeds[0], cfg)
        if not (folder / "config.json").exists():
            return False
        try:
            load_model(folder, cache=False)
        except Exception as err:  # noqa: BLE001 - any damage means: retrain
            io.discard_damaged(folder, err, "saved attention model")
            return False
    return True


def paper_config(cfg: TextConfig) -> TextConfig:
    """``cfg`` with the explainer list :data:`EXPLAINERS`: what the attention runs, their saved models and the
    rationale runs are stored under.  Explainers beyond that list are applied to the saved first-run models
    afterwards and stored apart (:func:`run_added_explainers`), so adding one retrains nothing."""
    return replace(cfg, explainers=EXPLAINERS)


def run_text(df: pd.DataFrame, cfg: TextConfig, force: bool = False) -> dict[str, pd.DataFrame]:
    """Attention + explainers + rationales; each table stored as an entry keyed on the whole
    configuration with the explainer list :data:`EXPLAINERS` (:func:`paper_config`; reused unless ``force``;
    a damaged entry is reported by name and recomputed).  The attention table is reused only while the
    models it saved are there too.  The attention table holds attention and the explainers of
    ``cfg.explainers``: naming some of :data:`EXPLAINERS` keeps only those; any other name is applied to
    the saved first-run models by :func:`run_added_explainers` (its rows' ``method`` marked "(added)")."""
    out = {}
    base = paper_config(cfg)
    config = asdict(base)
    for name, fn in (("attention", lambda: run_attention(df, base)[0]), ("rationales", lambda: run_rationales(df, base))):
        store = text_store(name)
        cached = None if force else store.load(config)
        if cached is not None and name == "attention" and not _models_ok(base):
            cached = None  # a saved model is missing or damaged: retrain the models with the table
        if cached is not None:
            out[name] = cached["table"]  # same configuration: reuse
        else:
            out[name] = fn()
            out[name]["config"] = str(config)
            store.save(config, {"table": out[name]})
    att = out["attention"]
    named = [n for n in cfg.explainers if n in EXPLAINERS]
    att = att[(att["method"] == "attention") | att["method"].isin(named)]
    added = [n for n in dict.fromkeys(cfg.explainers) if n not in EXPLAINERS]
    if added:
        att = pd.concat([att, run_added_explainers(df, cfg, added, att, force=force)], ignore_index=True)
    out["attention"] = att.reset_index(drop=True)
    return out


def run_added_explainers(df: pd.DataFrame, cfg: TextConfig, names, attention: pd.DataFrame,
                         force: bool = False) -> pd.DataFrame:
    """Rows of the attention table (``method`` marked "(added)") for registered local explainers beyond
    :data:`EXPLAINERS`, applied like those to the saved first-run model of every ``cfg.explain_kinds``
    dataset (the first ``cfg.n_explain`` test reviews).  One store entry per (dataset, explainer), keyed on
    :func:`paper_config`, the explainer, its keyword arguments, its source file and the saved model's files:
    notebooks 13 and 24 share them, and an edited explainer or a retrained model is explained again.  ``attention``: the attention table of ``cfg``
    (its first-run rows give the run columns)."""
    from ...explainers.local import LOCAL_EXPLAINERS, make_explainer
    from ...store import source_digest

    base = paper_config(cfg)
    store = text_store("added_explainers")
    run_cols = ["dataset", "run", "test_acc", "epochs", "val_acc", "train_seconds", "epoch_history", "config"]
    rows = []
    for kind in cfg.explain_kinds:
        first = attention[(attention["method"] == "attention") & (attention["dataset"] == kind)
                          & (attention["run"] == base.seeds[0])]
        if not len(first):
            continue
        run = first.iloc[0][[c for c in run_cols if c in first.columns]].to_dict()
        model_digest = _folder_digest(attention_model_dir(kind, base.seeds[0], base))  # a retrained model: explain again
        loaded = None
        for name in names:
            if name not in LOCAL_EXPLAINERS:
                raise KeyError(f"explainers names {name!r}, which is not a registered local explainer; known: "
                               f"{sorted(LOCAL_EXPLAINERS)}")
            kwargs = cfg.explainer_kwargs.get(name, {})
            key = {"config": asdict(base), "dataset": kind, "explainer": name, "kwargs": kwargs,
                   "explainer_code": source_digest(LOCAL_EXPLAINERS[name]), "model": model_digest}
            hit = None if force else store.load(key)
            if hit is None:
                if loaded is None:
                    loaded = load_attention(df, kind, base)
                model, ds = loaded
                exp = make_explainer(name, **kwargs).fit(model)
                t0 = time.time()
                sh = te.explainer_attr(exp, ds.test, list(range(min(cfg.n_explain, len(ds.test)))))
                hit = {"row": {"method": name, "n_reviews": len(sh), "seconds": time.time() - t0,
                               **te.summarise_shares(sh)}}
                store.save(key, hit)
            rows.append({**run, **hit["row"], "method": method_label(name)})
    return pd.DataFrame(rows)


def _folder_digest(folder) -> str:
    """SHA-256 (16 hex digits) of the names and bytes of the files in ``folder`` (a saved model); ``""`` when
    it does not exist."""
    import hashlib
    from pathlib import Path

    h = hashlib.sha256()
    folder = Path(folder)
    if not folder.is_dir():
        return ""
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(folder)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]
