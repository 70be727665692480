"""Concept explainers on a toy world where the right answers are known.

The toy model is a bag-of-words TorchTextClassifier: phi(x) has one dimension per aspect word
(food +/-, service +/-, ambiance +/-, noise +/-) and the head reads only the food dimensions, so the
model's output depends on the food label alone.
"""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from xaibench.cache import OutputCache
from xaibench.evaluation.cebab import metrics as cb
from xaibench.explainers.base import ConceptExplainer
from xaibench.explainers.concept import (CONCEPT_EXPLAINERS, ApproxExplainer, CausaLMExplainer, CONEXPExplainer,
                                         ConceptSHAPExplainer, INLPExplainer, RandomExplainer, SLearnerExplainer,
                                         TCAVExplainer, inlp_projection, make_concept_explainer, shapley_values)
from xaibench.explainers.concept.causalm import cramers_v, most_correlated_aspect
from xaibench.explainers.concept.conceptshap import completeness_score, powerset
from xaibench.models.base import TorchTextClassifier

ASPECTS = cb.ASPECTS
WORDS = {  # aspect -> (Positive word, Negative word)
    "food": ("delicious", "awful"), "service": ("friendly", "rude"),
    "ambiance": ("cozy", "dingy"), "noise": ("quiet", "loud"),
}
VOCAB = ["<pad>", "<unk>"] + [w for a in ASPECTS for w in WORDS[a]]


# ----------------------------------------------------------------------------------------------
# toy model
# ----------------------------------------------------------------------------------------------
class BowModule(torch.nn.Module):
    def __init__(self, food_weights=(2.0, -1.0), bias: float = 0.25):
        super().__init__()
        d = len(VOCAB) - 2
        self.emb = torch.nn.Embedding(len(VOCAB), d, padding_idx=0)
        with torch.no_grad():
            self.emb.weight.zero_()
            self.emb.weight[2:] = torch.eye(d)
        self.head = torch.nn.Linear(d, 2)
        with torch.no_grad():  # z = 2 * food_pos - 1 * food_neg + 0.25; logits = (-z, z)
            self.head.weight.zero_()
            self.head.weight[1, 0], self.head.weight[1, 1] = food_weights
            self.head.weight[0] = -self.head.weight[1]
            self.head.bias[:] = torch.tensor([-bias, bias])

    def features(self, ids, mask):
        return (self.emb(ids) * mask.unsqueeze(-1)).sum(1)

    def forward(self, ids, mask):
        return self.head(self.features(ids, mask))


class ToyModel(TorchTextClassifier):
    kind = "toy_bow"

    def __init__(self, n_classes: int = 2, seed: int = 42, cache=None, **kw):
        super().__init__(n_classes=n_classes, seed=seed, cache=cache)
        self.module = BowModule(**kw)
        self.index = {w: i for i, w in enumerate(VOCAB)}

    def encode(self, texts):
        toks = [[self.index.get(w, 1) for w in t.lower().split()] or [1] for t in texts]
        L = max(len(t) for t in toks)
        ids = torch.zeros(len(toks), L, dtype=torch.long)
        mask = torch.zeros(len(toks), L)
        for i, t in enumerate(toks):
            ids[i, :len(t)] = torch.tensor(t)
            mask[i, :len(t)] = 1
        return ids, mask

    def tokens(self, text):
        return text.lower().split()

    @property
    def embedding_layer(self):
        return self.module.emb

    def config(self):
        return {"toy": 1}

    def pretrained_module(self):
        """The 'pretrained LM': word embeddings at half the explained model's scale, an untrained head."""
        m = BowModule(food_weights=(0.0, 0.0), bias=0.0)
        with torch.no_grad():
            m.emb.weight.mul_(0.5)
        return m

    def _fit(self, *a, **k):  # pragma: no cover - not trained in tests
        return {}

    def _save_weights(self, folder: Path):  # pragma: no cover
        pass

    def _load_weights(self, folder: Path):  # pragma: no cover
        pass


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny tensors: one intra-op thread avoids thread-contention overhead."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(autouse=True)
def _scratch_project(tmp_path, monkeypatch):
    """Stored CausaLM encoders go to a scratch project, never to the checkout's data/."""
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path / "home"))


@pytest.fixture
def model(tmp_path):
    return ToyModel(cache=OutputCache(tmp_path / "cache.sqlite"))


# ----------------------------------------------------------------------------------------------
# toy CEBaB world
# ----------------------------------------------------------------------------------------------
def render(values: dict[str, str], uid: str) -> str:
    words = ["we", "visited", uid]
    for a in ASPECTS:
        v = values[a]
        if v == "Positive":
            words.append(WORDS[a][0])
        elif v == "Negative":
            words.append(WORDS[a][1])
    return " ".join(words)


FOOD_STARS = {"Positive": 4, "Negative": 0, "unknown": 2}


def world(copies: int = 1) -> pd.DataFrame:
    """Full factorial train frame (81 * copies rows): text, label (from food), *_majority."""
    rows = []
    for k, combo in enumerate(itertools.product(cb.CONCEPT_VALUES, repeat=4)):
        for c in range(copies):
            vals = dict(zip(ASPECTS, combo))
            uid = f"tr{k}x{c}"
            rows.append({"id": uid, "original_id": uid, "is_original": c == 0, "text": render(vals, uid),
                         "label": FOOD_STARS[vals["food"]], **{f"{a}_majority": vals[a] for a in ASPECTS}})
    return pd.DataFrame(rows)


def pairs(n: int = 24, seed: int = 0) -> pd.DataFrame:
    """Edit pairs: random base label vectors, one aspect changed."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        base = {a: cb.CONCEPT_VALUES[rng.integers(3)] for a in ASPECTS}
        aspect = ASPECTS[i % 4]
        cf_value = [v for v in cb.CONCEPT_VALUES if v != base[aspect]][rng.integers(2)]
        cf = {**base, aspect: cf_value}
        uid = f"te{i}"
        rows.append({"split": "test", "original_id": uid, "aspect": aspect, "pair_kind": "original_edit",
                     "base_id": uid + "b", "cf_id": uid + "c", "base_text": render(base, uid),
                     "cf_text": render(cf, uid), "base_value": base[aspect], "cf_value": cf_value,
                     "direction": cb.direction_name(base[aspect], cf_value), "pair_type": "x",
                     "base_label": FOOD_STARS[base["food"]], "cf_label": FOOD_STARS[cf["food"]],
                     **{f"base_{a}_majority": base[a] for a in ASPECTS}})
    return pd.DataFrame(rows)


class WordAspectPredictor:
    """Reads aspect labels off the words (a perfect ABSA model for the toy world)."""

    def __init__(self):
        self.calls = 0

    def predict_aspects(self, texts):
        self.calls += len(texts)
        out = {a: [] for a in ASPECTS}
        for t in texts:
            w = set(t.split())
            for a in ASPECTS:
                pos, neg = WORDS[a]
                out[a].append("Positive" if pos in w else "Negative" if neg in w else "unknown")
        return pd.DataFrame(out)


# ----------------------------------------------------------------------------------------------
# tests
# ----------------------------------------------------------------------------------------------
def test_registry():
    assert set(CONCEPT_EXPLAINERS) == {"random", "approx", "conexp", "s-learner", "tcav", "conceptshap",
                                       "causalm", "inlp"}
    assert all(issubclass(c, ConceptExplainer) for c in CONCEPT_EXPLAINERS.values())
    e = make_concept_explainer("tcav", seed=1, aspect_predictor=object())
    assert isinstance(e, TCAVExplainer) and e.seed == 1
    with pytest.raises(KeyError, match="unknown concept explainer"):
        make_concept_explainer("lime")


def test_unfitted_and_leaky_queries(model):
    q = cb.make_queries(pairs(4))
    with pytest.raises(RuntimeError, match="not fitted"):
        RandomExplainer().explain(q)
    e = RandomExplainer().fit(model)
    with pytest.raises(ValueError, match="counterfactual-side"):
        e.explain(pairs(4))  # full pairs still carry cf_text
    with pytest.raises(ValueError, match="unknown aspect"):
        e.explain(q.assign(aspect="price"))


def test_random_deterministic_and_valid(model):
    q = cb.make_queries(pairs(12))
    e1 = RandomExplainer(seed=3).fit(model)
    a = e1.explain(q)
    np.testing.assert_array_equal(a, RandomExplainer(seed=3).fit(model).explain(q))
    np.testing.assert_array_equal(a[:5], e1.explain(q.iloc[:5]))  # batch independent
    assert not np.allclose(a, RandomExplainer(seed=4).fit(model).explain(q))
    np.testing.assert_allclose(a.sum(1), 0.0, atol=1e-12)  # difference of two distributions
    assert a.shape == (12, 2) and np.abs(a).max() <= 1.0


def test_conexp_matches_construction(model):
    p = pairs(24)
    e = CONEXPExplainer().fit(model, world())
    per = cb.evaluate_explainer(model, e, p)
    est, truth = np.stack(per["estimate"]), np.stack(per["icace"])
    food = (p["aspect"] == "food").to_numpy()
    # the model depends only on food and the world is balanced: CONEXP is exact everywhere
    np.testing.assert_allclose(est[food], truth[food], atol=1e-6)
    np.testing.assert_allclose(est[~food], 0.0, atol=1e-6)
    np.testing.assert_allclose(truth[~food], 0.0, atol=1e-6)
    # the authors' convention rounds only the true ICaCE (4 decimals): an exact estimate is off by that
    # rounding alone, at most 5e-5 per class
    assert per["l2"].max() <= 5e-5 * np.sqrt(2) + 1e-12
    assert cb.recompute_metrics(per, rounding=None)["l2"].max() < 1e-5


def test_slearner_recovers_food_only_effect(model):
    p = pairs(48)
    pred = WordAspectPredictor()
    e = SLearnerExplainer(aspect_predictor=pred).fit(model, world())
    per = cb.evaluate_explainer(model, e, p)
    est, truth = np.stack(per["estimate"]), np.stack(per["icace"])
    food = (p["aspect"] == "food").to_numpy()
    assert pred.calls == len(p)
    # E is fitted to the model's predicted class: where the class flips (food Negative <-> other) the
    # estimate follows the true effect; food Positive <-> unknown keep class 1 and S-Learner sees ~no effect
    flips = cb.class_score(model.predict_proba(p.base_text.tolist())) != \
        cb.class_score(model.predict_proba(p.cf_text.tolist()))
    assert flips.sum() >= 3 and np.all(flips <= food)
    assert np.all(np.sign(est[flips, 1]) == np.sign(truth[flips, 1]))
    assert np.all(np.abs(est[flips, 1]) > 0.5)
    assert np.abs(est[~flips]).max() < 0.05
    # the observed-label fallback gives the same estimates here (labels are exact)
    e2 = SLearnerExplainer().fit(model, world())
    np.testing.assert_allclose(e2.explain(cb.make_queries(p)), est, atol=1e-9)


def test_approx_is_exact_when_labels_match(model):
    p = pairs(24)
    for predictor in (None, WordAspectPredictor()):
        e = ApproxExplainer(aspect_predictor=predictor, seed=1).fit(model, world(copies=2))
        per = cb.evaluate_explainer(model, e, p)
        np.testing.assert_allclose(np.stack(per["estimate"]), np.stack(per["icace"]), atol=1e-6)
        assert (e.match_info_["level"] == "full").all() and (e.match_info_["n_candidates"] == 2).all()


def test_approx_fallbacks(model):
    w = world()
    # remove every training review with food=Positive & service=Positive: such targets match partially
    w = w[~((w.food_majority == "Positive") & (w.service_majority == "Positive"))]
    p = pairs(40)
    e = ApproxExplainer(seed=0).fit(model, w)
    est = e.explain(cb.make_queries(p))
    targets = p.apply(lambda r: {**{a: r[f"base_{a}_majority"] for a in ASPECTS}, r.aspect: r.cf_value}, axis=1)
    partial = np.array([t["food"] == "Positive" and t["service"] == "Positive" for t in targets])
    assert partial.any()
    np.testing.assert_array_equal(e.match_info_["level"] == "partial", partial)
    # the sampled review always has C = c' and agrees with the target on as many other aspects as possible
    w = w.reset_index(drop=True)
    for i, (t, j) in enumerate(zip(targets, e.match_info_["pool_index"])):
        row = w.iloc[j]
        assert row[f"{p.aspect.iloc[i]}_majority"] == p.cf_value.iloc[i]
        assert sum(row[f"{a}_majority"] == t[a] for a in ASPECTS) == (3 if partial[i] else 4)
    food = (p["aspect"] == "food").to_numpy()  # food is always matched for food queries -> exact
    np.testing.assert_allclose(est[food], cb.true_icace(model, p)[food], atol=1e-6)
    # no review with the target value at all -> zero estimate
    e2 = ApproxExplainer().fit(model, world()[lambda d: d.food_majority != "Positive"])
    q = cb.make_queries(p[(p.aspect == "food") & (p.cf_value == "Positive")])
    np.testing.assert_array_equal(e2.explain(q), 0.0)
    assert (e2.match_info_["level"] == "none").all()


def test_tcav_sign_and_cav(model):
    e = TCAVExplainer(seed=0).fit(model, world())
    assert e.cav_accuracy_["food"] == 1.0
    # the food CAV points towards "food expressed": positive weight on both food dimensions
    assert e.cavs_["food"][0] > 0 and e.cavs_["food"][1] > 0
    est = e.explain(cb.make_queries(pairs(24)))
    q = pairs(24)
    food = (q["aspect"] == "food").to_numpy()
    # logit_1 = 2 food_pos - food_neg: moving towards "food expressed" raises class 1, lowers class 0
    assert np.all(est[food, 1] > 0) and np.all(est[food, 0] < 0)
    # exact value: grad of logit_1 is (2, -1, 0, ...) and grad of logit_0 its negative
    v = np.stack([e.cavs_[a] for a in q["aspect"]])
    np.testing.assert_allclose(est[:, 1], np.tanh(2.0 * v[:, 0] - v[:, 1]), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(est[:, 0], -est[:, 1], atol=1e-7)
    # other aspects' CAVs are (nearly) orthogonal to the food dimensions the head reads
    assert np.abs(est[~food]).max() < 0.5 * np.abs(est[food]).min()


def test_shapley_values_known():
    players = ["a", "b", "c"]
    add = {s: sum({"a": 1.0, "b": 2.0, "c": 4.0}[p] for p in s) for s in powerset(players)}
    sv = shapley_values(add, players)
    assert sv["a"] == pytest.approx(1.0) and sv["b"] == pytest.approx(2.0) and sv["c"] == pytest.approx(4.0)
    inter = {s: float({"a", "b"} <= s) for s in powerset(players)}  # pure a*b interaction
    sv = shapley_values(inter, players)
    assert sv["a"] == pytest.approx(0.5) and sv["b"] == pytest.approx(0.5) and sv["c"] == pytest.approx(0.0)
    with pytest.raises(ValueError, match="lacks"):
        shapley_values({frozenset(): 0.0}, players)
    assert completeness_score([0, 1, 1, 0], [0, 1, 1, 0], [0, 1, 0, 0], 2) == pytest.approx((0.75 - 0.5) / 0.5)


def test_conceptshap_efficiency_and_completeness(tmp_path):
    # CAVs encode whether an aspect is *expressed*; here the model (and the gold label) is
    # "class 1 iff food is expressed", so the food concept score alone is complete
    m = ToyModel(cache=OutputCache(tmp_path / "c.sqlite"), food_weights=(2.0, 2.0), bias=-1.0)
    w = world()
    w["label"] = np.where(w["food_majority"] == "unknown", 0, 4)
    e = ConceptSHAPExplainer(seed=0, hidden=16, epochs=30, batch_size=32).fit(m, w)
    assert e.completeness_ > 0.9
    assert e.completeness(w.text.tolist(), cb.task_label(w["label"].to_numpy(), 2)) == \
        pytest.approx(e.completeness_)
    q = cb.make_queries(pairs(8))
    # efficiency: the four aspects' Shapley vectors sum to eta(all) - eta({})
    phi = m.embed(q["text"].tolist())
    shap = {a: e.explain(q.assign(aspect=a)) for a in ASPECTS}
    np.testing.assert_allclose(sum(shap.values()), e._eta(phi, frozenset(ASPECTS)) - e._eta(phi, frozenset()),
                               atol=1e-6)
    share = {a: np.abs(v).mean() for a, v in shap.items()}
    assert max(share, key=share.get) == "food"
    assert all(share["food"] > 3 * share[a] for a in ASPECTS if a != "food")


def test_inlp_projection_probe_falls_to_chance():
    rng = np.random.default_rng(0)
    n, d = 900, 12
    y = rng.integers(0, 3, size=n)
    X = rng.normal(size=(n, d))
    X[:, 0] += 3.0 * (y == 0)
    X[:, 1] += 3.0 * (y == 2)
    X[:, 2] += 1.5 * (y == 1)
    res = inlp_projection(X[:600], y[:600], n_iter=6, seed=0, X_dev=X[600:], y_dev=y[600:])
    assert res.dev_accuracy[0] > 0.85
    assert res.final_dev_accuracy < res.chance + 0.1
    assert res.dev_accuracy[-1] < res.dev_accuracy[0]
    np.testing.assert_allclose(res.P @ res.P, res.P, atol=1e-8)  # a projection
    np.testing.assert_allclose(res.P, res.P.T, atol=1e-10)
    assert 0 < res.rank_removed <= 3 * 6


def test_inlp_explainer_smoke(model):
    e = INLPExplainer(seed=0, n_iter=3, epochs=1).fit(model, world(copies=2))
    acc = e.probe_accuracy_
    assert set(acc["aspect"]) == set(ASPECTS) and len(acc) == 4 * 4
    assert (acc.groupby("aspect")["train_accuracy"].first() > 0.9).all()  # the labels are linear in phi
    p = pairs(12)
    est = e.explain(cb.make_queries(p))
    assert est.shape == (12, 2) and np.isfinite(est).all()
    np.testing.assert_allclose(est.sum(1), 0.0, atol=1e-6)
    # without head training N' = N, so the estimate is softmax(N(P_a phi)) - softmax(N(phi)) for the query's aspect
    e0 = INLPExplainer(seed=0, n_iter=1, epochs=0).fit(model, world())
    est0 = e0.explain(cb.make_queries(p))
    phi = model.embed(p.base_text.tolist())
    with torch.no_grad():
        for i, a in enumerate(p["aspect"]):
            x = torch.as_tensor(phi[i:i + 1] @ e0.results_[a].P, dtype=torch.float32)
            expected = torch.softmax(model.head(x), -1).numpy()[0] - model.predict_proba([p.base_text.iloc[i]])[0]
            np.testing.assert_allclose(est0[i], expected, atol=1e-5)


def test_control_concept_selection():
    w = world()
    w["noise_majority"] = w["food_majority"]  # make noise a perfect copy of food
    assert most_correlated_aspect(w, "food") == "noise"
    assert cramers_v(["a", "b", "a", "b"], ["x", "y", "x", "y"]) == pytest.approx(1.0)
    assert cramers_v(["a", "a", "b", "b"], ["x", "y", "x", "y"]) == pytest.approx(0.0)
    assert CausaLMExplainer(control="cramers_v")._control_of(w, "food") == "noise"
    assert CausaLMExplainer()._control_of(w, "food") == "service"  # the authors' scripts


def test_causalm_smoke(model):
    e = CausaLMExplainer(seed=0, epochs=1, head_epochs=2, batch_size=32, aspects=("food", "service"),
                         control={"service": "noise"})
    before = {k: v.clone() for k, v in model.module.state_dict().items()}
    e.fit(model, world())
    assert e.control_["service"] == "noise" and e.control_["food"] in ASPECTS
    p = pairs(12)
    p = p[p["aspect"].isin(["food", "service"])]
    est = e.explain(cb.make_queries(p))
    assert est.shape == (len(p), 2) and np.isfinite(est).all()
    np.testing.assert_allclose(est.sum(1), 0.0, atol=1e-6)
    assert len(e.history_["food"]["adversarial"]) == 1
    # every stage of the fit is timed (bench_cebab reports them), the encoder fine-tunes included
    assert set(e.timings_) == {"counterfactual_encoders_s", "counterfactual_heads_s", "factual_encoders_s",
                               "factual_heads_s"}
    # paper staging: no factual encoder is trained (a head on the frozen pretrained encoder)
    assert e.timings_["factual_encoders_s"] == 0.0
    assert all(v > 0 for k, v in e.timings_.items() if k != "factual_encoders_s")
    # the explained model itself is untouched
    assert all(torch.equal(before[k], v) for k, v in model.module.state_dict().items())
    assert all(p.requires_grad for p in model.module.parameters())
    with pytest.raises(ValueError, match="fitted for aspects"):
        e.explain(cb.make_queries(pairs(4)).assign(aspect="noise"))


def _manual_proba(encoder, head, model, texts):
    ids, mask = model.encode(texts)
    with torch.no_grad():
        return torch.softmax(head(encoder.features(ids, mask).float()), -1).numpy()


def test_causalm_factual_model_estimate(model):
    """App. E.2: estimate = N'(phi_CF(x)) - N_F(phi_F(x)), the factual model trained like the
    counterfactual one (control task) but without the adversarial concept task."""
    e = CausaLMExplainer(seed=0, epochs=1, head_epochs=2, batch_size=32, aspects=("food", "service", "noise"),
                         staging="explained")
    e.fit(model, world())
    # the authors' control concepts; one factual model per control concept (service, food)
    assert e.control_ == {"food": "service", "service": "food", "noise": "food"}
    assert set(e.factual_encoders_) == {"service", "food"} and e.baseline == "factual"
    p = pairs(12)
    p = p[p["aspect"].isin(["food", "service", "noise"])].reset_index(drop=True)
    est = e.explain(cb.make_queries(p))
    for i, r in p.iterrows():
        cc = e.control_[r.aspect]
        cf = _manual_proba(e.encoders_[r.aspect], e.heads_[r.aspect], model, [r.base_text])[0]
        fact = _manual_proba(e.factual_encoders_[cc], e.factual_heads_[cc], model, [r.base_text])[0]
        np.testing.assert_allclose(est[i], cf - fact, atol=1e-5)
    # the factual encoder was fine-tuned (control task) and differs from both the model and phi_CF
    w0 = model.module.emb.weight
    assert not torch.equal(e.factual_encoders_["service"].emb.weight, w0)
    assert not torch.equal(e.factual_encoders_["service"].emb.weight, e.encoders_["food"].emb.weight)
    assert e.factual_history_["service"]["control"][0]["adversary"] == 0.0  # no adversarial task


def test_causalm_factual_cancels_the_head_retraining(model):
    """With no encoder training (epochs=0) phi_CF = phi_F = phi and both heads are re-trained the same
    way, so the factual estimate is exactly 0; the 'explained' variant instead reports the difference
    between the re-trained head and the model's own head."""
    kw = dict(seed=0, epochs=0, head_epochs=3, aspects=("food",))
    fact = CausaLMExplainer(**kw).fit(model, world())
    expl = CausaLMExplainer(baseline="explained", **kw).fit(model, world())
    q = cb.make_queries(pairs(8).assign(aspect="food"))
    np.testing.assert_allclose(fact.explain(q), 0.0, atol=1e-7)
    texts = q["text"].tolist()
    expected = _manual_proba(expl.encoders_["food"], expl.heads_["food"], model, texts) - model.predict_proba(texts)
    np.testing.assert_allclose(expl.explain(q), expected, atol=1e-5)
    assert np.abs(expected).max() > 1e-3  # the re-trained head is not the model's head
    with pytest.raises(ValueError, match="baseline"):
        CausaLMExplainer(baseline="nope")


def test_causalm_paper_staging_starts_from_the_pretrained_encoder(model):
    """App. E.2 as the authors run it: phi_CF is trained from the pretrained LM (not the explained model)
    and the factual model is a task head on the frozen pretrained encoder."""
    e = CausaLMExplainer(seed=0, epochs=0, head_epochs=2, aspects=("food", "service"))
    assert e.staging == "paper"
    e.fit(model, world())
    half = 0.5 * model.module.emb.weight
    assert torch.equal(e.encoders_["food"].emb.weight, half)  # 0 epochs: the pretrained weights, untouched
    assert set(e.factual_encoders_) == {"pretrained"} and not e.factual_history_["pretrained"].get("control")
    assert torch.equal(e.factual_encoders_["pretrained"].emb.weight, half)
    p = pairs(12)
    p = p[p["aspect"].isin(["food", "service"])].reset_index(drop=True)
    est = e.explain(cb.make_queries(p))
    for i, r in p.iterrows():
        cf = _manual_proba(e.encoders_[r.aspect], e.heads_[r.aspect], model, [r.base_text])[0]
        fact = _manual_proba(e.factual_encoders_["pretrained"], e.factual_heads_["pretrained"], model,
                             [r.base_text])[0]
        np.testing.assert_allclose(est[i], cf - fact, atol=1e-5)
    # trained for one epoch, the encoder moves away from the pretrained weights
    e1 = CausaLMExplainer(seed=0, epochs=1, head_epochs=1, aspects=("food",), store=False).fit(model, world())
    assert not torch.equal(e1.encoders_["food"].emb.weight, half)
    with pytest.raises(ValueError, match="staging"):
        CausaLMExplainer(staging="nope")


def test_causalm_steps_adam_with_the_multi_tensor_step_and_trains_the_per_parameter_loops_encoders(model, monkeypatch):
    """CausaLM's adversarial fine-tuning builds Adam (two parameter groups: encoder and heads) with foreach=True:
    every counterfactual encoder is bit for bit the per-parameter loop's, and so are the estimates."""
    from tests.helpers.optim import differing, record_adam

    monkeypatch.delenv("XAIBENCH_LEVERS", raising=False)
    kw = dict(seed=0, epochs=2, head_epochs=2, batch_size=16, aspects=("food", "service"), store=False)
    fits = {}
    for force in ({}, {"foreach": False}):
        seen: list = []
        with monkeypatch.context() as m:
            record_adam(m, seen, **force)
            fits["loop" if force else "foreach"] = (CausaLMExplainer(**kw).fit(model, world()), seen)
    (multi, seen), (loop, _) = fits["foreach"], fits["loop"]
    assert [k.get("foreach") for k, _ in seen if "weight_decay" not in k] == [True, True], seen  # one per aspect
    assert not any(k.get("fused") for k, _ in seen)
    for a in ("food", "service"):
        trained = list(multi.encoders_[a].parameters())
        assert differing(trained, list(loop.encoders_[a].parameters())) == []
        assert differing(trained, list(model.module.parameters()))  # trained away from the start
    q = cb.make_queries(pairs(8).assign(aspect="food"))
    assert np.array_equal(multi.explain(q), loop.explain(q))


def test_causalm_encoders_are_stored_and_shared_across_tasks(model):
    """A counterfactual encoder depends on the concept labels and fit rows, not on the task labels:
    a second fit with other task labels reads it from the store (same weights); other fit rows train anew;
    a damaged file is named in a warning and rebuilt."""
    kw = dict(seed=0, epochs=1, head_epochs=1, aspects=("food", "service"))
    w = world()
    first = CausaLMExplainer(**kw).fit(model, w)
    assert first.store_hits_ == 0
    files = sorted((Path(__import__("os").environ["XAIBENCH_HOME"]) / "data" / "models" / "causalm").glob("*.pt"))
    assert len(files) == 2
    other_task = w.assign(label=(w["label"] + 1) % 2)  # another task on the same rows
    second = CausaLMExplainer(**kw).fit(model, other_task)
    assert second.store_hits_ == 2 and second.timings_["counterfactual_encoders_s"] < 5
    for a in ("food", "service"):
        for k, v in first.encoders_[a].state_dict().items():
            if not k.startswith("head."):
                assert torch.equal(v, second.encoders_[a].state_dict()[k])
    fewer = CausaLMExplainer(**kw).fit(model, w.iloc[:60].reset_index(drop=True))
    assert fewer.store_hits_ == 0  # other fit rows: another key
    with pytest.MonkeyPatch.context() as mp:  # results depend on the thread count: another key
        mp.setenv("XAIBENCH_THREADS", "3")
        assert CausaLMExplainer(**kw).fit(model, w).store_hits_ == 0
    files[0].write_bytes(b"not a checkpoint")
    with pytest.warns(RuntimeWarning, match="CausaLM encoder"):
        again = CausaLMExplainer(**kw).fit(model, w)
    assert again.store_hits_ == 1  # the damaged one was rebuilt, the other read
    q = cb.make_queries(pairs(8).assign(aspect="food"))
    np.testing.assert_allclose(again.explain(q), first.explain(q), atol=1e-6)


def test_every_text_runs_through_the_model_once(model):
    """All explainers share the model's cached predict_proba / embed: a second evaluation costs nothing."""
    w, p = world(), pairs(16)
    explainers = [RandomExplainer(), ApproxExplainer(), CONEXPExplainer(), SLearnerExplainer(),
                  TCAVExplainer(), ConceptSHAPExplainer(hidden=8, epochs=1),
                  INLPExplainer(n_iter=2, epochs=1), CausaLMExplainer(epochs=1, head_epochs=1, aspects=ASPECTS)]
    for e in explainers:
        cb.evaluate_explainer(model, e.fit(model, w), p)
    distinct = len(set(w.text) | set(p.base_text) | set(p.cf_text))
    assert model.n_forward <= 2 * distinct  # at most one proba + one embed pass per text
    before = model.n_forward
    for e in explainers:
        cb.evaluate_explainer(model, e, p)
    assert model.n_forward == before


def test_notebook10_stores_its_cell_as_notebook20_would_compute_it(model):
    """Notebook 10 fits every explainer for one (model, task, seed) cell; store_cell saves those per-pair
    results so notebook 20 reuses them: the same estimates as notebook 20's own fit-and-score of each."""
    from xaibench.evaluation.cebab import runner

    w, p = world(), pairs(16)
    names = list(runner.EXPLAINERS)
    fitted = runner.fit_explainers(model, w, names, 0, None, quick=True)
    assert all(e.fit_seconds_ > 0 for e in fitted.values())
    assert runner.store_cell(model, fitted, p, "toy", "5-way", 0) == names
    assert runner.store_cell(model, fitted, p, "toy", "5-way", 0) == []  # files that exist are left alone
    assert runner.missing_explainers("toy", "5-way", 0, names) == []  # notebook 20 computes nothing
    stored = runner.load_results(["toy"], ["5-way"], [0], names)
    for n in names:
        fresh = runner.evaluate_one(model, n, w, p, 0, None, quick=True)
        got = stored[stored.explainer == n].reset_index(drop=True)
        assert len(got) == len(fresh) and set(fresh.columns) <= set(got.columns)
        np.testing.assert_allclose(np.stack(got["estimate"]), np.stack(fresh["estimate"]), atol=1e-6, err_msg=n)
        np.testing.assert_allclose(got["l2"], fresh["l2"], atol=1e-9, err_msg=n)
