"""The one protocol interface (xaibench.evaluation.base.Protocol): every paper's protocol object is
registered, a toy protocol sees every registered explainer of its output type, the ERASER metrics on
hand-computed cases, and a toy explainer defined here scored by every protocol that applies to it."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import xaibench
from xaibench import registry
from xaibench.config import Profile, get_profile
from xaibench.evaluation.base import ROW_COLUMNS, Metric, Protocol
from xaibench.evaluation.eraser import comprehensiveness, sufficiency
from xaibench.evaluation.eraser.protocol import perturbed_texts, top_tokens
from xaibench.evaluation.protocol import load_builtins, protocols_for
from xaibench.explainers.base import Attribution, ConceptExplainer, LocalExplainer


@pytest.fixture
def clean_registry():
    from xaibench.evaluation.protocol import load_builtins

    load_builtins()  # the built-ins are part of the state the test starts from and ends with
    before_e, before_p = dict(registry._EXPLAINERS), dict(registry._PROTOCOLS)
    yield
    registry._EXPLAINERS.clear(), registry._EXPLAINERS.update(before_e)
    registry._PROTOCOLS.clear(), registry._PROTOCOLS.update(before_p)


class TokenLength(LocalExplainer):
    """Relevance = the token's length (a toy)."""

    def explain(self, texts, targets=None):
        words = getattr(self.model, "words", None) or str.split
        return [Attribution(t, words(t), np.array([len(w) for w in words(t)], float), 0) for t in texts]


def test_every_paper_package_exposes_one_registered_protocol():
    ps = load_builtins()
    assert {"human_grounded", "cf_faithfulness", "attribution_gt", "cebab", "eraser", "cf_feedback"} <= set(ps)
    assert [p.name for p in protocols_for("counterfactual")] == ["cf_feedback"]
    for p in ps.values():
        assert isinstance(p, Protocol) and p.paper and p.accepts and p.metrics and p.datasets
        assert all(m.lower_is_better in (True, False, None) for m in p.metrics.values())
    assert [p.name for p in protocols_for("concept_effect")] == ["cebab"]


def test_a_toy_protocol_sees_every_registered_explainer_of_its_output_type(clean_registry):
    load_builtins()

    class Toy(Protocol):
        name, paper, accepts, datasets = "toy", "none", ("attribution",), ("d",)
        metrics = {"m": Metric("m", False)}

        def _score(self, names, profile, seeds):
            return pd.DataFrame([{"metric": "m", "explainer": n, "model": "x", "dataset": "d", "seed": s, "value": 1.0}
                                 for n in names for s in seeds])

    xaibench.register_protocol(Toy())
    xaibench.register_explainer("toy_len_a", TokenLength)

    class Concept(ConceptExplainer):
        def explain(self, queries):
            return np.zeros((len(queries), 5))

    xaibench.register_explainer("toy_concept", Concept)
    toy = registry.protocols()["toy"]
    expected = {s.name for s in registry.explainer_specs(output="attribution")}
    assert set(toy.explainer_names("all")) == expected and "toy_len_a" in expected
    assert "toy_concept" not in expected and "toy_concept" in registry.protocols()["cebab"].explainer_names("all")
    rows = toy.score("all", profile="quick", seeds=[1, 2])
    assert list(rows.columns) == list(ROW_COLUMNS) and len(rows) == 2 * len(expected)
    assert (rows["protocol"] == "toy").all() and not rows["lower_is_better"].any()


def test_protocol_refuses_what_it_cannot_score(clean_registry):
    hg = load_builtins()["human_grounded"]
    with pytest.raises(ValueError, match=r"explainers=\['tcav'\]: protocol 'human_grounded' cannot score"):
        hg.explainer_names(["tcav"])
    assert "omission" not in hg.explainer_names("all")  # Ge et al.'s feature explainers explain an embedding LR only
    assert "lrp_words" not in load_builtins()["cf_faithfulness"].explainer_names("all")  # reads CNN layers
    with pytest.raises(ValueError, match="profile='medium'"):
        hg.score(profile="medium")
    with pytest.raises(ValueError, match="does not declare"):
        hg.tidy(pd.DataFrame([{"metric": "nope", "explainer": "e", "model": "m", "dataset": "d", "seed": 1, "value": 0}]))


def test_eraser_metrics_known_values():
    p_full = np.array([0.9, 0.6])
    p_removed = np.array([[0.5, 0.1], [0.6, 0.6]])
    assert comprehensiveness(p_full, p_removed).tolist() == pytest.approx([0.6, 0.0])
    assert sufficiency(p_full, np.array([[1.0, 0.8], [0.2, 0.4]])).tolist() == pytest.approx([0.0, 0.3])
    with pytest.raises(ValueError, match="p_removed must have shape"):
        comprehensiveness(p_full, np.zeros(2))


def test_a_profile_caps_the_draws_per_text_and_gives_a_default_its_cap():
    capped = Profile("p", max_train=None, max_eval=None, max_epochs=1, patience=1, max_samples=50)
    assert [capped.cap_samples(n) for n in (1000, 50, 20, None)] == [50, 50, 20, 50]
    uncapped = Profile("p", max_train=None, max_eval=None, max_epochs=1, patience=1)
    assert [uncapped.cap_samples(n) for n in (1000, 20, None)] == [1000, 20, None]
    assert get_profile("quick").max_samples == 50 and get_profile("full").max_samples is None


def test_sampling_explainers_cost_less_only_in_the_quick_profile(monkeypatch):
    """SHAP's evaluations and LIME's samples per text: the quick smoke runs of the scorecard's human-grounded and
    ERASER protocols use 50 of each; the full profile keeps SHAP's default (500) and LIME's 1000."""
    from xaibench.evaluation.eraser.protocol import cost
    from xaibench.evaluation.human_grounded.methods import make_paper_explainer
    from xaibench.evaluation.protocol import make_with
    from xaibench.explainers.local import LimeWords, ShapPartition

    monkeypatch.setattr(ShapPartition, "fit", lambda self, model, data=None: self)
    assert make_paper_explainer("shap", object(), [], shap_evals=get_profile("quick").cap_samples(None)).max_evals == 50
    assert make_paper_explainer("shap", object(), [], shap_evals=get_profile("full").cap_samples(None)).max_evals == 500
    assert make_with(ShapPartition, seed=0, **cost("quick")).max_evals == 50
    assert make_with(ShapPartition, seed=0, **cost("full")).max_evals == 500
    assert make_with(LimeWords, seed=0, **cost("quick")).num_samples == 50
    assert make_with(LimeWords, seed=0, **cost("full")).num_samples == 1000


class SamplingToy(TokenLength):
    """A user's sampling explainer: it records the draws per text it was built with."""

    def __init__(self, num_samples: int = 3, max_evals: int = 4, seed: int = 0):
        super().__init__()
        self.num_samples, self.max_evals = num_samples, max_evals

    def fit(self, model, data=None):
        return self


def test_a_users_sampling_explainer_gets_the_same_draws_from_both_protocols_on_the_cnn(clean_registry):
    """The human-grounded and ERASER protocols offer every explainer they build the same sampling settings
    (LIME's ``num_samples``, SHAP's ``max_evals``), not only the registered LIME and SHAP: a user's explainer
    that accepts them gets 1000 samples and its own ``max_evals`` in the full profile, 50 of each in the quick one."""
    from xaibench.evaluation.eraser.protocol import cost
    from xaibench.evaluation.human_grounded.methods import LIME_SAMPLES, make_paper_explainer
    from xaibench.evaluation.protocol import make_with

    xaibench.register_explainer("toy_sampler", SamplingToy)
    factory = registry.explainer_spec("toy_sampler", family="local").factory
    for profile, expected in (("full", (1000, 4)), ("quick", (50, 50))):
        cap = get_profile(profile).cap_samples
        hg = make_paper_explainer("toy_sampler", object(), [], lime_samples=cap(LIME_SAMPLES), shap_evals=cap(None))
        eraser = make_with(factory, seed=0, **cost(profile))
        assert (hg.num_samples, hg.max_evals) == (eraser.num_samples, eraser.max_evals) == expected, profile


def test_both_protocols_take_the_sampling_cap_from_the_profile(monkeypatch):
    """One place sets the quick profile's sampling cap (:class:`xaibench.config.Profile`): a profile with another
    cap reaches the human-grounded protocol's questions and the ERASER protocol's explainers."""
    from dataclasses import replace

    from xaibench import config
    from xaibench.evaluation.eraser.protocol import cost
    from xaibench.evaluation.human_grounded import pipeline as pl
    from xaibench.evaluation.human_grounded.protocol import PROTOCOL

    monkeypatch.setitem(config.PROFILES, "quick", replace(config.PROFILES["quick"], max_samples=7))
    assert cost("quick") == {"num_samples": 7, "max_evals": 7} and cost("full") == {"num_samples": 1000}

    class Asked(Exception):
        pass

    def build_questions(setups, selections, methods, seed, lime_samples, shap_evals=None):
        raise Asked(lime_samples, shap_evals)

    monkeypatch.setattr(pl, "prepare", lambda datasets, seed, quick=False: {})
    monkeypatch.setattr(pl, "select_questions", lambda setups, n, seed: {})
    monkeypatch.setattr(pl, "build_questions", build_questions)
    for profile, asked in (("quick", (7, 7)), ("full", (1000, None))):
        with pytest.raises(Asked) as e:
            PROTOCOL._score(["lime"], profile, [42])
        assert e.value.args == asked


def test_eraser_token_bins():
    assert top_tokens([0.1, 0.9, 0.5, 0.9], 0.01).tolist() == [1]          # at least one; ties by position
    assert top_tokens([0.1, 0.9, 0.5, 0.9], 0.5).tolist() == [1, 3]
    removed, kept = perturbed_texts(["a", "b", "c", "d"], [0.1, 0.9, 0.5, 0.2], bins=(0.25, 0.5))
    assert removed == ["a c d", "a d"] and kept == ["b", "b c"]


@pytest.mark.slow
def test_a_toy_explainer_is_scored_by_every_applicable_protocol_in_the_quick_profile(clean_registry):
    from xaibench.config import use_profile

    use_profile("quick")
    xaibench.register_explainer("toy_len_b", TokenLength)
    applicable = [p for p in protocols_for() if p.applies_to(registry.explainer_spec("toy_len_b"))]
    assert {p.name for p in applicable} == {"human_grounded", "cf_faithfulness", "attribution_gt", "eraser"}
    for p in applicable:
        rows = p.score(["toy_len_b"], profile="quick", seeds=[42])
        assert len(rows) and set(rows["explainer"]) == {"toy_len_b"}, p.name
        assert rows["value"].notna().all() and set(rows["metric"]) <= set(p.metrics), p.name


def test_stored_rows_are_the_committed_tables(monkeypatch):
    """The scorecard reuses what notebooks 21 and 24 stored: the human-grounded column A of every
    task, and the explainer rows of the text Attr% table, value for value."""
    monkeypatch.setenv("XAIBENCH_PROFILE", "full")
    from xaibench import paths

    ps = load_builtins()
    hg = ps["human_grounded"].stored("full")
    table = pd.read_csv(paths.tables_dir() / "human_grounded_tasks_seeds.csv")
    a = table[(table.metric == "avg_score") & (table.subset == "all")]
    seeds = set(a["seed"])
    assert len(seeds) >= 5 and len(hg) == len(a) == 9 * 3 * 2 * len(seeds) and set(hg["seed"]) == seeds
    for seed in seeds:
        lrp = hg[(hg.explainer == "lrp_ngrams") & (hg.metric == "task_2") & (hg.dataset == "amazon") & (hg.seed == seed)]
        want = a[(a.method == "lrp_n") & (a.task == "task_2") & (a.dataset == "amazon") & (a.seed == seed)]["ours"]
        assert lrp["value"].item() == pytest.approx(want.item())
    gt = ps["attribution_gt"].stored("full")
    att = pd.read_csv(paths.tables_dir() / "attribution_gt_attention.csv")
    corr = att[(att.region == "corr") & (att.dataset == "article") & (att.method != "attention")]
    assert dict(zip(gt.explainer, gt.value)) == pytest.approx(dict(zip(corr.method, corr.ours)))
    assert (gt["metric"] == "attr_pct").all() and not gt["lower_is_better"].any()


def test_cf_faithfulness_reuses_every_stored_entry_and_stores_what_it_computes(tmp_path, monkeypatch):
    """Entries of the profile's settings are read whatever explainers they hold (notebook 23's list, an
    earlier scorecard's); only the default selection is scored; what the protocol computes is stored,
    so a second call computes nothing."""
    from xaibench import paths
    from xaibench.evaluation.cf_faithfulness import runner
    from xaibench.evaluation.cf_faithfulness.protocol import SETTINGS, CfFaithfulnessProtocol

    monkeypatch.setattr(paths, "results_dir", lambda: tmp_path)
    calls = []

    def run_seed(name, seed, cfg):
        calls.append((name, seed, tuple(cfg.explainers)))
        return pd.DataFrame([{"dataset": name, "seed": seed, "selection": sel, "explainer": e, "k": 1,
                              "metric": "dfr", "value": v + (0.5 if sel == "absolute" else 0.0)}
                             for e, v in zip(cfg.explainers, (0.1, 0.2, 0.3)) for sel in ("supporting", "absolute")])

    monkeypatch.setattr(runner, "run_seed", run_seed)
    monkeypatch.setattr("xaibench.evaluation.cf_faithfulness.protocol.SETTINGS",
                        {**SETTINGS, "quick": (("rt-polarity",), SETTINGS["quick"][1])})
    p = CfFaithfulnessProtocol()
    assert p.stored("quick").empty
    cfg = runner.RunConfig(**{**SETTINGS["quick"][1], "explainers": ("random", "omission")})
    runner.run(["rt-polarity"], [42], cfg)                     # as notebook 23 would store it
    got = p.score(["lime", "anchor"], profile="quick", seeds=[42])
    assert calls == [("rt-polarity", 42, ("random", "omission")), ("rt-polarity", 42, ("lime", "anchor"))]
    assert sorted(got["explainer"]) == ["anchor", "lime"] and sorted(got["value"]) == [0.1, 0.2]  # supporting only
    stored = p.stored("quick")
    assert dict(zip(stored["explainer"], stored["value"])) == {"random": 0.1, "omission": 0.2, "lime": 0.1,
                                                               "anchor": 0.2}
    p.score(["lime", "anchor"], profile="quick", seeds=[42])
    assert len(calls) == 2                                      # read back from the store


# ---- Zhou et al.'s image protocol ----------------------------------------------------------------
def test_image_protocol_units_are_learned_runs_and_their_mean_attr():
    """Known values: one unit per learned run (test accuracy > 0.95), the mean Attr% over its explained
    images (a NaN map -- all-zero saliency -- is left out); the unlearned run gives nothing."""
    from xaibench.evaluation.attribution_gt.image_protocol import PROTOCOL, unit_rows

    runs = pd.DataFrame({"run": [0, 1], "seed": [7, 8], "manipulation": ["noise", "blur"], "test_acc": [0.99, 0.6]})
    attr = pd.DataFrame({"run": [0, 0, 0, 0, 1], "method": ["cam", "cam", "lime", "lime", "cam"],
                         "attr_pct": [0.2, 0.6, 0.5, np.nan, 0.9]})
    got = PROTOCOL.tidy(unit_rows(runs, attr))
    assert got[["explainer", "dataset", "seed"]].values.tolist() == [["cam", "cub_groups_noise", 7],
                                                                     ["lime", "cub_groups_noise", 7]]
    assert got["value"].tolist() == pytest.approx([0.4, 0.5])
    assert (got["protocol"] == "attribution_gt_image").all() and not got["lower_is_better"].any()


def test_image_saliency_methods_are_registered_image_explainers_of_the_image_protocol_only(clean_registry):
    from xaibench.explainers.base import ImageExplainer
    from xaibench.explainers.saliency import METHODS

    ps = load_builtins()
    image = [s for s in registry.explainer_specs(family="image")]
    assert [s.name for s in image] == list(METHODS)
    assert all(s.paper and s.output == "image_attribution" for s in image)
    assert [p.name for p in protocols_for("image_attribution")] == ["attribution_gt_image"]

    class Ones(ImageExplainer):
        def explain(self, x, targets=None, images=None, **context):
            return np.ones((x.shape[0], x.shape[2], x.shape[3]))

    xaibench.register_explainer("toy_ones_image", Ones)
    assert registry.explainer_spec("toy_ones_image").family == "image"  # the output's default family
    assert ps["attribution_gt_image"].explainer_names("all") == [*METHODS, "toy_ones_image"]
    for name, p in ps.items():
        if name != "attribution_gt_image":
            assert "toy_ones_image" not in p.explainer_names("all"), name


def _fake_birds(monkeypatch, n_species=8, n_images=32, size=40):
    from xaibench.data import birds

    rng = np.random.default_rng(0)
    species = [f"sp{i}" for i in range(n_species)]
    pool = {s: [rng.integers(0, 256, (size, size, 3), dtype=np.uint8) for _ in range(n_images)] for s in species}
    monkeypatch.setattr(birds, "all_classes", lambda: list(species))
    monkeypatch.setattr(birds, "load_classes", lambda classes, size=None: {c: pool[c] for c in classes})


def test_a_toy_image_explainer_is_scored_by_the_image_protocol_with_its_known_value(clean_registry, monkeypatch):
    """A uniform map puts on the ER exactly the ER's share of the canvas; the built-in gradient is scored
    beside it in the same unit.  Random images cannot be learned: the accuracy bar is lowered to let the
    tiny quick-profile run through, and at the real bar the protocol says that no run learned."""
    from xaibench.data import birds
    from xaibench.evaluation.attribution_gt import image_protocol as ipr
    from xaibench.evaluation.attribution_gt import image_runner as ir
    from xaibench.explainers.base import ImageExplainer

    _fake_birds(monkeypatch)

    class Uniform(ImageExplainer):
        def explain(self, x, targets=None, images=None, **context):
            self._targets(x, targets)
            return np.ones((x.shape[0], x.shape[2], x.shape[3]))

    xaibench.register_explainer("toy_uniform_image", Uniform)
    p = load_builtins()["attribution_gt_image"]
    with pytest.raises(RuntimeError, match="no image run learned its manipulation"):
        p.score(["toy_uniform_image"], profile="quick", seeds=[5])
    monkeypatch.setattr(ipr, "LEARNED_ACC", -1.0)
    rows = p.score(["toy_uniform_image", "gradient"], profile="quick", seeds=[5])
    assert sorted(rows["explainer"]) == ["gradient", "toy_uniform_image"] and set(rows["seed"]) == {5}
    gcfg, plan = ipr._plan("quick")
    _, _, manip, _, _ = ir.group_jobs(birds.all_classes(), plan.group_kinds[:1], 1, gcfg.group_size, 5)[0]
    er = manip.er(gcfg.canvas)
    uniform = rows.loc[rows.explainer == "toy_uniform_image", "value"].item()
    assert uniform == pytest.approx(er.mean())
    assert 0 <= rows.loc[rows.explainer == "gradient", "value"].item() <= 1
    assert set(rows["dataset"]) == {f"cub_groups_{manip.kind}"}


def test_the_image_protocol_scores_an_added_explainer_on_the_stored_runs_own_model(clean_registry, monkeypatch, tmp_path):
    """score() trains a stored run again (same species groups, manipulation, seed): the built-in gradient's
    values equal the ones notebook 25's run stored, so added and stored explainers share their units."""
    from xaibench import paths
    from xaibench.evaluation.attribution_gt import image_protocol as ipr
    from xaibench.evaluation.attribution_gt import image_runner as ir

    _fake_birds(monkeypatch)
    monkeypatch.setattr(paths, "results_dir", lambda: tmp_path / "results")
    monkeypatch.setattr(ipr, "LEARNED_ACC", -1.0)
    gcfg, plan = ipr._plan("quick")
    ir.run_groups(gcfg, plan.group_kinds, plan.group_runs_per_kind, seed=ipr.NOTEBOOK_SEED)
    p = load_builtins()["attribution_gt_image"]
    stored = p.stored("quick")
    assert len(stored) == len(ipr.PROTOCOL.paper_explainers) * plan.group_runs_per_kind * len(plan.group_kinds)
    seed = int(stored["seed"].iloc[0])
    again = p.score(["gradient", "cam"], profile="quick", seeds=[seed])
    want = stored[stored.explainer.isin(["gradient", "cam"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(again[list(ROW_COLUMNS[:-1])].sort_values("explainer").reset_index(drop=True),
                                  want[list(ROW_COLUMNS[:-1])].sort_values("explainer").reset_index(drop=True))
    assert again.sort_values("explainer")["value"].tolist() == pytest.approx(
        want.sort_values("explainer")["value"].tolist(), abs=1e-9)
