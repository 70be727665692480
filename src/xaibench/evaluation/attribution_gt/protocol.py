"""Zhou et al.'s text protocol object (ground-truth attribution): Attr% -- the share of an
explanation's |relevance| on the semi-natural ground-truth region (the inserted correlated article)
-- of every registered attribution explainer that can explain any model, applied to the
attention BiLSTM trained on the BeerAdvocate reviews with the article shortcut.

It wraps the public functions of the text runner and evaluation (:func:`.text_runner.load_attention`,
:func:`.text_eval.explainer_attr`, :func:`.text_eval.summarise_shares`) unchanged: the saved first-run
model of notebook 24 is used when it exists (same configuration), else one model is trained for the
seed (in memory; nothing of notebook 24 is overwritten).  :meth:`AttributionGtProtocol.stored` reads the
explainer rows of notebook 24's ``attribution_gt_attention`` table.
"""
from __future__ import annotations

import pandas as pd

from ... import paths, registry
from ..base import ADDED, Metric, Protocol

METRIC = Metric("attr_pct", False, label="Attr% (ground truth)",
                description="share of |relevance| on the ground-truth (correlated article) tokens")


class AttributionGtProtocol(Protocol):
    name = "attribution_gt"
    paper = "Zhou et al. (2022), ground-truth attribution on semi-natural data (text Attr%)"
    accepts = ("attribution",)
    families = ("local",)
    models = ("attention_bilstm",)
    datasets = ("beer_article",)
    metrics = {"attr_pct": METRIC}
    paper_tables = ("attribution_gt_attention",)

    @property
    def paper_explainers(self) -> tuple[str, ...]:
        from .text_runner import EXPLAINERS

        return EXPLAINERS

    def _model(self, df: pd.DataFrame, cfg, seed: int):
        from ...models.attention_bilstm import AttentionBiLSTMClassifier
        from . import text_runner as tr

        if (tr.attention_model_dir("article", seed, cfg) / "config.json").exists():
            try:
                return tr.load_attention(df, "article", cfg, seed)
            except Exception:  # noqa: BLE001 - unreadable: train one below
                pass
        ds = tr.article_dataset(df, "article", seed, cfg)
        m = AttentionBiLSTMClassifier(hidden=cfg.hidden, max_epochs=cfg.max_epochs, seed=seed, cache=False)
        m.fit(ds.train.texts, ds.train.labels, ds.val.texts, ds.val.labels)
        return m, ds

    def _score(self, names: list[str], profile: str, seeds: list[int]) -> pd.DataFrame:
        from ...data.loaders import load
        from ...progress import progress
        from ..base import make_with
        from . import text_eval as te
        from . import text_runner as tr

        cfg = tr.TextConfig.for_profile(profile)
        beer = load("beer")
        rows = []
        for seed in seeds:
            model, ds = self._model(beer, cfg, seed)
            idx = list(range(min(cfg.n_explain, len(ds.test))))
            for name in progress(names, desc=f"Attr% explainers (seed {seed})"):
                kw = {"seed": seed, **cfg.explainer_kwargs.get(name, {})}
                exp = make_with(registry.explainer_spec(name, family="local").factory, **kw).fit(model)
                shares = te.summarise_shares(te.explainer_attr(exp, ds.test, idx))
                rows.append({"metric": "attr_pct", "explainer": name, "model": "attention_bilstm",
                             "dataset": "beer_article", "seed": seed, "value": shares["corr"]})
        return pd.DataFrame(rows)

    def stored(self, profile: str = "full") -> pd.DataFrame:
        """Explainer rows (region ``corr``) of notebook 24's attention table; the explainers are applied
        to the first run's model, seed 0."""
        path = paths.tables_dir() / "attribution_gt_attention.csv"
        if not path.exists():
            return super().stored(profile)
        t = pd.read_csv(path)
        t = t[(t["region"] == "corr") & (t["dataset"] == "article") & (t["method"] != "attention")]
        names = t["method"].str.removesuffix(ADDED)  # an explainer notebook 24 added beside the paper's list
        return self.tidy(pd.DataFrame({"metric": "attr_pct", "explainer": names.values,
                                       "model": "attention_bilstm", "dataset": "beer_article", "seed": 0,
                                       "value": t["ours"].values}))


PROTOCOL = registry.register_protocol(AttributionGtProtocol(), replace=True)

__all__ = ["METRIC", "AttributionGtProtocol", "PROTOCOL"]
