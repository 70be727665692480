"""Explainers added beside a paper's list (Make's ``EXPLAINERS``) in notebooks 10/20 (CEBaB), 13/24 (Zhou et al.
text) and 23 (Ge et al.): marked "(added)", kept out of the comparison with the paper and out of the claims, and
computed on their own -- adding one recomputes nothing that is stored."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xaibench import paths
from xaibench.evaluation.protocol import load_builtins


# ---------------------------------------------------------------------------------------------------------------------
# CEBaB (notebooks 10, 20)
# ---------------------------------------------------------------------------------------------------------------------
def _table10(values: dict[str, float], paper: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame([{"task": "5-way", "model": "minilm", "paper_model": "bert-base-uncased", "metric": "cosine",
                          "explainer": e, "ours": v, "ours_std": 0.0, "paper": paper.get(e, np.nan), "paper_std": 0.0,
                          "lower_is_better": True} for e, v in values.items()])


def test_cebab_added_explainer_is_marked_and_never_our_best_against_the_paper():
    from xaibench.evaluation.cebab import runner

    assert runner.explainer_label("approx") == "approx"
    assert runner.explainer_label("mine") == "mine (added)" == runner.explainer_label("mine (added)")
    paper = {"random": 0.9, "approx": 0.3, "conexp": 0.5, "tcav": 0.7}
    ours = {"random": 0.8, "approx": 0.2, "conexp": 0.75, "tcav": 0.7, runner.explainer_label("mine"): 0.01}
    tau = runner.kendall_agreement(_table10(ours, paper))
    # the paper's four in the same order but conexp/tcav swapped: tau = (5 - 1) / 6; the added one is left out
    assert tau.loc[0, "kendall_tau"] == pytest.approx(4 / 6)
    assert tau.loc[0, "n_explainers"] == 4 and tau.loc[0, "best_ours"] == "approx"


def test_cebab_claims_read_only_the_papers_explainers(tmp_path):
    from xaibench.evaluation.cebab import claims
    from xaibench.evaluation.claims import Tables

    _table10({"approx": 0.2, "random": 0.8, "mine (added)": 0.01}, {}).assign(n_seeds=5).to_csv(
        tmp_path / f"{claims.ICACE}.csv", index=False)
    [setting] = claims._settings(Tables(tmp_path), metric="cosine")
    assert sorted(setting.explainers) == ["approx", "random"]


def test_cebab_run_list_adds_a_registered_concept_explainer(monkeypatch):
    from xaibench import registry
    from xaibench.evaluation.cebab.protocol import PROTOCOL
    from xaibench.evaluation.cebab.runner import EXPLAINERS
    from xaibench.explainers.base import ConceptExplainer

    class Zero(ConceptExplainer):
        def explain(self, queries):
            return np.zeros((len(queries), 5))

    load_builtins()  # before the copy: what loads lazily must land in the registry that outlives the test
    monkeypatch.setattr(registry, "_EXPLAINERS", dict(registry._EXPLAINERS))  # restored after the test
    registry.register_explainer("zero_effect", Zero)
    assert PROTOCOL.run_list("") == list(EXPLAINERS)
    assert PROTOCOL.run_list("zero_effect") == [*EXPLAINERS, "zero_effect"]
    assert PROTOCOL.run_list("all")[-1] == "zero_effect"


# ---------------------------------------------------------------------------------------------------------------------
# Zhou et al., text (notebooks 13, 24)
# ---------------------------------------------------------------------------------------------------------------------
@pytest.fixture()
def text(tmp_path, monkeypatch):
    """The text runner with the attention and rationale runs replaced by fakes and the saved first-run model
    by a toy logistic regression explained on two reviews whose first word is the correlating article."""
    from types import SimpleNamespace

    from xaibench.evaluation.attribution_gt import text_data as td
    from xaibench.evaluation.attribution_gt import text_runner as tr

    from tests.helpers.toy_text import sentiment_logreg

    for k in ("results", "cache", "models"):
        monkeypatch.setattr(paths, f"{k}_dir", lambda k=k: tmp_path / k)
    calls = []

    def run_attention(df, cfg):
        calls.append(("attention", tuple(cfg.explainers)))
        for kind in cfg.kinds:
            sentiment_logreg().save(tr.attention_model_dir(kind, cfg.seeds[0], cfg))
        rows = [{"dataset": kind, "run": cfg.seeds[0], "method": m, "test_acc": 0.99, "corr": 0.5}
                for kind in cfg.kinds for m in ("attention", *cfg.explainers)]
        return pd.DataFrame(rows), {}

    def run_rationales(df, cfg):
        calls.append(("rationales", tuple(cfg.explainers)))
        return pd.DataFrame({"dataset": ["article"], "model": ["rl"], "rate": [0.1]})

    texts = ["the great film", "a bad film"]
    split = td.ArticleSplit(texts=texts, labels=np.array([1, 0]), corr=[np.array([1, 0, 0], bool)] * 2,
                            noncorr=[np.zeros(3, bool)] * 2)

    def load_attention(df, kind, cfg, seed=None):
        calls.append(("load", kind))
        return sentiment_logreg(), SimpleNamespace(test=split)

    monkeypatch.setattr(tr, "run_attention", run_attention)
    monkeypatch.setattr(tr, "run_rationales", run_rationales)
    monkeypatch.setattr(tr, "load_attention", load_attention)
    return tr, calls


@pytest.fixture()
def first_word(monkeypatch):
    """A local explainer registered for the test: all relevance on each review's first word."""
    from xaibench import registry
    from xaibench.explainers.base import Attribution, LocalExplainer

    explained = []

    class FirstWord(LocalExplainer):
        def explain(self, texts, targets=None):
            explained.extend(texts)
            return [Attribution(t, t.split(" "), np.eye(len(t.split(" ")))[0], 1) for t in texts]

    load_builtins()
    monkeypatch.setattr(registry, "_EXPLAINERS", dict(registry._EXPLAINERS))  # restored after the test
    registry.register_explainer("first_word", FirstWord)
    return explained


def test_text_added_explainer_is_applied_to_the_saved_model_and_retrains_nothing(text, first_word):
    tr, calls = text
    cfg = tr.TextConfig.for_profile("quick")
    plain = tr.run_text(None, cfg)["attention"]
    assert set(plain["method"]) == {"attention", *tr.EXPLAINERS}
    added = tr.TextConfig.for_profile("quick")
    added.explainers = (*tr.EXPLAINERS, "first_word")
    att = tr.run_text(None, added)["attention"]
    assert [c for c in calls if c[0] in ("attention", "rationales")] == [("attention", tr.EXPLAINERS),
                                                                          ("rationales", tr.EXPLAINERS)]  # reused
    assert tr.attention_model_dir("article", 0, added) == tr.attention_model_dir("article", 0, cfg)
    row = att[att["method"] == "first_word (added)"].iloc[0]
    # all |relevance| on the first word, which is the article: Attr% = 1, nothing elsewhere; the run's columns kept
    assert (row["corr"], row["other"], row["n_reviews"], row["test_acc"]) == (1.0, 0.0, 2, 0.99)
    assert len(att) == len(plain) + 1 and len(first_word) == 2
    tr.run_text(None, added)                                      # stored: neither trained nor explained again
    assert len(first_word) == 2 and calls.count(("load", "article")) == 1
    folder = tr.attention_model_dir("article", 0, cfg)
    (folder / "model.pkl").write_bytes((folder / "model.pkl").read_bytes() + b"\0")   # the model was retrained
    tr.run_text(None, added)
    assert len(first_word) == 4 and calls.count(("load", "article")) == 2   # explained again, not a stale entry
    # naming some of the paper's explainers keeps only those beside attention
    some = tr.TextConfig.for_profile("quick")
    some.explainers = ("lime",)
    assert set(tr.run_text(None, some)["attention"]["method"]) == {"attention", "lime"}


def test_text_protocol_reads_an_added_explainer_under_its_registry_name(tmp_path, monkeypatch):
    from xaibench.evaluation.attribution_gt.protocol import PROTOCOL

    (tmp_path / "tables").mkdir()
    monkeypatch.setattr(paths, "tables_dir", lambda: tmp_path / "tables")
    pd.DataFrame({"dataset": "article", "region": "corr", "method": ["attention", "lime", "first_word (added)"],
                  "ours": [0.6, 0.3, 1.0]}).to_csv(tmp_path / "tables" / "attribution_gt_attention.csv", index=False)
    got = PROTOCOL.stored("full")
    assert dict(zip(got["explainer"], got["value"])) == {"lime": 0.3, "first_word": 1.0}


# ---------------------------------------------------------------------------------------------------------------------
# Ge et al. (notebook 23)
# ---------------------------------------------------------------------------------------------------------------------
def test_faithfulness_added_explainers_are_their_own_runs(tmp_path, monkeypatch):
    from xaibench.evaluation.cf_faithfulness import runner

    monkeypatch.setattr(runner.paths, "results_dir", lambda: tmp_path)
    calls = []

    def fake_run_seed(name, seed, cfg):
        calls.append(tuple(cfg.explainers))
        rows = [{"dataset": name, "seed": seed, "selection": "", "explainer": "", "k": 0, "metric": "test_accuracy",
                 "value": 0.9}]
        return pd.DataFrame(rows + [{"dataset": name, "seed": seed, "selection": "supporting", "explainer": e,
                                     "k": 1, "metric": "dfr", "value": float(i)} for i, e in enumerate(cfg.explainers)])

    monkeypatch.setattr(runner, "run_seed", fake_run_seed)
    cfg = runner.RunConfig(explainers=("random", "lime"))
    runner.run(["adult"], [1], cfg)
    assert runner.run_added(["adult"], [1], cfg, ["lime"]).empty           # nothing beyond the list
    got = runner.run_added(["adult"], [1], cfg, ["lime", "shap", "shap"])
    assert calls == [("random", "lime"), ("shap",)]                          # only the added one computed
    assert list(got["explainer"]) == ["shap (added)"] and list(got["metric"]) == ["dfr"]
    runner.run_added(["adult"], [1], cfg, ["shap"])
    runner.run(["adult"], [1], cfg)
    assert len(calls) == 2                                                   # both stored


def test_one_mark_for_added_explainers():
    from xaibench.evaluation.base import ADDED, mark_added

    assert ADDED == " (added)" and mark_added("shap") == "shap (added)" == mark_added("shap (added)")
    assert mark_added("lime", ("lime", "shap")) == "lime"               # one of the paper's: as it is
    assert mark_added("") == "" and mark_added(None) is None            # summary rows name no method
