"""Question generation and simulated participants of the human-grounded evaluation."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from xaibench.evaluation import human_grounded as hg
from xaibench.explainers.base import Attribution

from tests.helpers.basic_models import TablePredictor

BIN = ("Negative", "Positive")
ARX = ("Computer Science", "Mathematics", "Physics")


# ------------------------------------------------------------------------------------ splits
def test_split_frame_disjoint_sizes_stratified_and_deterministic():
    df = pd.DataFrame({"text": [f"t{i}" for i in range(200)], "label": [0] * 120 + [1] * 80})
    a = hg.split_frame(df, {"dev": 20, "test": 50, "reader": 30}, seed=1)
    b = hg.split_frame(df, {"dev": 20, "test": 50, "reader": 30}, seed=1)
    assert {k: len(v) for k, v in a.items()} == {"train": 100, "dev": 20, "test": 50, "reader": 30}
    idx = [set(v.index) for v in a.values()]
    assert sum(len(s) for s in idx) == 200 and len(set().union(*idx)) == 200  # a partition
    assert a["test"]["label"].mean() == pytest.approx(0.4)  # 60/40 kept
    assert all(a[k].index.equals(b[k].index) for k in a)
    c = hg.split_frame(df, {"dev": 20, "test": 50, "reader": 30}, seed=2)
    assert not a["test"].index.equals(c["test"].index)
    with pytest.raises(ValueError, match="need 250 rows"):
        hg.split_frame(df, {"dev": 100, "test": 150}, seed=1)


# ------------------------------------------------------------------------- question selection
def _toy_task1():
    # 16 examples: both models agree on the first 12, disagree on the last 4
    y = np.array([1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 1, 0])
    pw = np.array([1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0])
    ps = np.array([1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1])
    # agreeing cells: TP rows 0,1,2; TN rows 3,4,5,9,10,11; FP row 6; FN rows 7,8
    return y, pw, ps


def test_task1_balances_tp_tn_fp_fn_and_takes_all_of_a_small_cell():
    y, pw, ps = _toy_task1()
    sel = hg.select_task1(y, pw, ps, n_total=8, seed=0)  # 2 per cell
    assert sel["cell"].value_counts().to_dict() == {"TP": 2, "TN": 2, "FN": 2, "FP": 1}
    assert (pw[sel["pos"]] == ps[sel["pos"]]).all()           # both models agree
    assert (sel["pos"] < 12).all()
    assert sel.set_index("pos").loc[6, "cell"] == "FP" and not sel.set_index("pos").loc[6, "correct"]
    assert set(sel.loc[sel.cell == "FN", "pos"]) == {7, 8}
    for r in sel.itertuples():
        assert r.correct == (y[r.pos] == r.predicted)
    # deterministic under the seed; another seed changes which TN rows are drawn (6 choose 2)
    assert sel.equals(hg.select_task1(y, pw, ps, n_total=8, seed=0))
    draws = {tuple(hg.select_task1(y, pw, ps, n_total=8, seed=s).loc[lambda d: d.cell == "TN", "pos"])
             for s in range(10)}
    assert len(draws) > 1


def test_task1_multiclass_cells_and_default_100_is_25_per_cell():
    assert hg.cell_name(2, False, 3, ARX) == "incorrect:Physics"
    assert [hg.cell_name(p, c, 2) for p, c in [(1, True), (0, True), (1, False), (0, False)]] == ["TP", "TN", "FP", "FN"]
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 1000)
    pw = np.where(rng.random(1000) < 0.8, y, 1 - y)
    sel = hg.select_task1(y, pw, pw.copy(), seed=3)
    assert sel["cell"].value_counts().to_dict() == {"TP": 25, "TN": 25, "FP": 25, "FN": 25}
    y3 = rng.integers(0, 3, 600)
    p3 = np.where(rng.random(600) < 0.7, y3, (y3 + 1) % 3)
    sel3 = hg.select_task1(y3, p3, p3, n_total=12, seed=0, n_classes=3)
    assert sel3["cell"].value_counts().to_dict() == {f"{ok}:{c}": 2 for ok in ("correct", "incorrect") for c in "012"}


def test_task2_and_task3_confidence_thresholds_are_strict():
    proba = np.array([[0.95, 0.05], [0.9, 0.1], [0.05, 0.95], [0.3, 0.7], [0.65, 0.35], [0.45, 0.55],
                      [0.91, 0.09], [0.69, 0.31]])
    y = np.array([0, 0, 0, 1, 0, 0, 1, 1])
    s2 = hg.select_task2(y, proba, n_total=100, seed=0)
    assert sorted(s2["pos"]) == [0, 2, 6]             # 0.9 itself is not > 0.9
    assert s2.set_index("pos")["correct"].to_dict() == {0: True, 2: False, 6: False}
    s3 = hg.select_task3(y, proba, n_total=100, seed=0)
    assert sorted(s3["pos"]) == [4, 5, 7]             # 0.7 itself is not < 0.7
    assert (s3["confidence"] < 0.7).all() and (s2["confidence"] > 0.9).all()


def test_task2_half_correct_half_incorrect_balanced_over_classes():
    rng = np.random.default_rng(1)
    p1 = rng.uniform(0.91, 1.0, 400)
    pred = rng.integers(0, 2, 400)
    proba = np.where(pred[:, None] == 1, np.c_[1 - p1, p1], np.c_[p1, 1 - p1])
    y = np.where(rng.random(400) < 0.5, pred, 1 - pred)
    sel = hg.select_task2(y, proba, n_total=20, seed=0)
    assert sel["cell"].value_counts().to_dict() == {"TP": 5, "TN": 5, "FP": 5, "FN": 5}
    assert sel["correct"].sum() == 10


# ---------------------------------------------------------------------------- answer mapping
@pytest.mark.parametrize("strength,allow_none,expected", [
    (0.0, True, "none"), (0.0999, True, "none"), (0.1, True, "unconfident:X"), (0.4999, True, "unconfident:X"),
    (0.5, True, "confident:X"), (1.0, True, "confident:X"), (0.05, False, "unconfident:X"),
])
def test_strength_to_answer_levels(strength, allow_none, expected):
    assert hg.strength_to_answer(strength, "X", allow_none) == expected


def test_strength_to_answer_rejects_bad_input_and_thresholds():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        hg.strength_to_answer(1.5, "A")
    with pytest.raises(ValueError, match="no_preference <= confident"):
        hg.AnswerThresholds(no_preference=0.6, confident=0.5)
    th = hg.AnswerThresholds(no_preference=0.0, confident=0.9)
    assert hg.strength_to_answer(0.0, "A", True, th) == "unconfident:A"


def _q(**kw):
    base = {"question_id": "q", "dataset": "amazon", "method": "lime", "model_correct": True}
    base.update(kw)
    return hg.study_from_json({"study_id": "s", "seed": 1, "questions": [base]}).questions[0]


def test_reader_task2_margin_and_choice_by_hand():
    m = TablePredictor({"great fun": [0.2, 0.8], "ok fine": [0.47, 0.53], "bad": [0.7, 0.3]}, [0.5, 0.5], 2)
    r = hg.SimulatedReader(m, BIN, "p1")
    mk = lambda ev: _q(task=2, class_names=list(BIN), evidence=ev, key="Positive")
    assert r.answer(mk(["great", "fun"])) == "confident:Positive"      # margin 0.6
    assert r.answer(mk(["ok", "fine"])) == "none"                      # margin 0.06
    assert r.answer(mk(["bad"])) == "unconfident:Negative"             # margin 0.4


def test_reader_task1_compares_support_for_the_predicted_class():
    m = TablePredictor({"waste of money": [0.9, 0.1], "the": [0.55, 0.45], "cheap": [0.7, 0.3]}, [0.5, 0.5], 2)
    r = hg.SimulatedReader(m, BIN, "p1")
    mk = lambda a, b: _q(task=1, class_names=list(BIN), predicted_class="Negative", evidence_a=a, evidence_b=b, key="A")
    assert r.answer(mk(["waste of money"], ["the"])) == "unconfident:A"   # 0.9 - 0.55 = 0.35
    assert r.answer(mk(["the"], ["waste of money"])) == "unconfident:B"
    assert r.answer(mk(["waste of money"], [])) == "unconfident:A"        # 0.9 - prior 0.5 = 0.4
    assert r.answer(mk(["cheap"], ["the"])) == "unconfident:A"            # 0.15
    assert r.answer(mk(["the"], ["the"])) == "none"
    m2 = TablePredictor({"awful": [0.99, 0.01]}, [0.4, 0.6], 2)
    assert hg.SimulatedReader(m2, BIN, "p").answer(mk(["awful"], [])) == "confident:A"  # 0.99 - 0.4


def test_reader_task3_log_odds_pooling_by_hand():
    prior = [0.5, 0.5]
    m = TablePredictor({"good sound": [0.2, 0.8], "cheap foam": [0.8, 0.2], "meh": [0.5, 0.5]}, prior, 2)
    r = hg.SimulatedReader(m, BIN, "p1")

    def mk(ev, ce, p=0.6):
        return _q(task=3, class_names=list(BIN), predicted_class="Positive", predicted_probability=p,
                  evidence=ev, counter_evidence=ce, key="Positive")

    # no information in the fragments: follow the shown probability, b = 0.6 -> strength 0.2
    assert r.answer(mk(["meh"], [])) == "unconfident:Positive"
    # evidence supports Positive (+logit 0.8), counter-evidence is neutral:
    # z = logit(.6) + logit(.8) = 0.405 + 1.386 -> b = 0.857 -> strength 0.71
    assert r.answer(mk(["good sound"], ["meh"])) == "confident:Positive"
    # counter-evidence speaks against Positive: z = 0.405 + logit(0.2) = -0.981 -> b = 0.273
    assert r.answer(mk(["meh"], ["cheap foam"])) == "unconfident:Negative"
    z = math.log(0.6 / 0.4) + math.log(0.2 / 0.8)
    assert abs(2 / (1 + math.exp(-z)) - 1) == pytest.approx(0.4545, abs=1e-3)


def test_reader_task3_three_classes_picks_the_class_counter_evidence_points_to():
    prior = [1 / 3] * 3
    m = TablePredictor({"theorem lemma": [0.05, 0.9, 0.05], "network": [0.6, 0.2, 0.2]}, prior, 3)
    r = hg.SimulatedReader(m, ARX, "p1")
    q = _q(task=3, dataset="arxiv", class_names=list(ARX), predicted_class="Computer Science",
           predicted_probability=0.45, evidence=["network"], counter_evidence=["theorem", "lemma"], key="Mathematics")
    # z = log(0.45*2/0.55) + [logit .6 - logit 1/3] + [logit .05 - logit 1/3] = 0.492 + 1.099 - 2.251 < 0
    assert r.answer(q) == "unconfident:Mathematics"


def test_reader_sees_only_visible_fields():
    m = TablePredictor({"great": [0.1, 0.9]}, [0.5, 0.5], 2)
    r = hg.SimulatedReader(m, BIN, "p1")
    q1 = _q(task=2, class_names=list(BIN), evidence=["great"], key="Positive", model_correct=True)
    q2 = _q(task=2, class_names=list(BIN), evidence=["great"], key="Negative", model_correct=False,
            method="dt", meta={"true_class": "Negative", "example_id": "amazon:1"})
    assert r.answer(q1) == r.answer(q2) == "confident:Positive"
    assert set(hg.visible_fields(q2)) == {"task", "class_names", "evidence"}
    with pytest.raises(ValueError, match="classes"):
        hg.SimulatedReader(m, ARX, "p")  # 2-class model, 3 class names


# ------------------------------------------------------------------ readers: determinism, scores
TOY_TEXTS = ["great product love it", "awful waste of money", "love this great value", "terrible awful broken",
             "works great", "broken on arrival terrible", "i love it", "waste of time and money"] * 3
TOY_LABELS = [1, 0, 1, 0, 1, 0, 1, 0] * 3


def _toy_questions():
    return [
        _q(question_id="a", task=2, class_names=list(BIN), evidence=["love", "great"], key="Positive"),
        _q(question_id="b", task=2, class_names=list(BIN), evidence=["waste", "money"], key="Positive",
           model_correct=False),
        _q(question_id="c", task=1, class_names=list(BIN), predicted_class="Negative",
           evidence_a=["awful", "broken"], evidence_b=["great"], key="A"),
        _q(question_id="d", task=3, class_names=list(BIN), predicted_class="Negative", predicted_probability=0.6,
           evidence=["terrible"], counter_evidence=["love it"], key="Positive", model_correct=False),
    ]


def test_train_readers_deterministic_under_seed_and_bootstrap_differs():
    qs = _toy_questions()
    a = hg.simulate_answers(hg.train_readers(TOY_TEXTS, TOY_LABELS, BIN, n_readers=3, seed=5), qs)
    b = hg.simulate_answers(hg.train_readers(TOY_TEXTS, TOY_LABELS, BIN, n_readers=3, seed=5), qs)
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["participant_id", "question_id", "answer", "participants"]
    assert (a["participants"] == "simulated").all() and len(a) == 12
    assert a["participant_id"].nunique() == 3
    # sensible: evidence "love great" is read as Positive by every reader
    assert set(a.loc[a.question_id == "a", "answer"].str.split(":").str[-1]) == {"Positive"}
    readers = hg.train_readers(TOY_TEXTS, TOY_LABELS, BIN, n_readers=2, seed=5)
    w0, w1 = (r.model.clf.coef_ for r in readers)
    assert w0.shape != w1.shape or not np.allclose(w0, w1)  # different bootstrap resamples


def test_participant_score_table_by_hand():
    qs = _toy_questions()[:2]  # a: correct model, key Positive; b: incorrect model, key Positive
    ans = pd.DataFrame({"participant_id": ["p1", "p1", "p2", "p2"], "question_id": ["a", "b", "a", "b"],
                        "answer": ["confident:Positive", "unconfident:Negative", "none", "confident:Positive"]})
    t = hg.participant_score_table(qs, ans).set_index("subset")
    # p1: (+1, -0.5) mean 0.25; p2: (0, +1) mean 0.5 -> ours 0.375, std of (0.25, 0.5)
    assert t.loc["all", "ours"] == pytest.approx(0.375)
    assert t.loc["all", "ours_std"] == pytest.approx(np.std([0.25, 0.5], ddof=1))
    assert t.loc["correct", "ours"] == pytest.approx(0.5)      # p1 +1, p2 0
    assert t.loc["incorrect", "ours"] == pytest.approx(0.25)   # p1 -0.5, p2 +1
    assert (t["participants"] == "simulated").all()
    assert t.loc["all", "paper"] == pytest.approx(0.69)        # Task 2, Amazon, LIME, column A
    assert t.loc["all", "n_participants"] == 2


def test_rank_agreement_perfect_and_reversed():
    tab = pd.DataFrame({"task": ["task_2"] * 4, "dataset": ["amazon"] * 4, "subset": ["all"] * 4,
                        "ours": [0.1, 0.2, 0.3, 0.4], "paper": [1.0, 2.0, 3.0, 4.0]})
    r = hg.score_agreement(tab).iloc[0]
    assert r["spearman"] == pytest.approx(1.0) and r["kendall"] == pytest.approx(1.0) and r["n_methods"] == 4
    tab["paper"] = tab["paper"][::-1].to_numpy()
    assert hg.score_agreement(tab).iloc[0]["spearman"] == pytest.approx(-1.0)


# ---------------------------------------------------------------- questions -> study JSON -> app
def _attr(text, toks, scores, ngrams=()):
    return Attribution(text, toks, np.asarray(scores, float), 1, ngrams=list(ngrams))


def test_build_questions_save_and_load_through_survey_loader(tmp_path):
    from xaibench.survey.app import render_question

    pool = pd.DataFrame({"text": ["t0", "t1"], "label": [1, 0], "example_id": ["amazon:10", "amazon:11"]})
    toks = ["good", "sound", "but", "cheap", "foam"]
    well = {"lime": {"t0": _attr("t0", toks, [0.9, 0.5, 0.0, -0.4, -0.2]),
                     "t1": _attr("t1", toks, [0.3, 0.0, 0.0, 0.0, 0.0])}}
    worse = {"lime": {"t0": _attr("t0", toks, [0.0, 0.0, 0.0, 0.0, 0.0]),  # no evidence at all
                      "t1": _attr("t1", toks, [-1.0, 0.0, 0.0, 0.0, 0.0])}}
    s1 = pd.DataFrame({"pos": [0, 1], "predicted": [1, 1], "correct": [True, False], "cell": ["TP", "FP"]})
    rep = hg.BuildReport()
    q1 = hg.build_task1("amazon", pool, s1, well, worse, seed=0, report=rep)
    proba = np.array([[0.35, 0.65], [0.4, 0.6]])
    s3 = pd.DataFrame({"pos": [0, 1], "predicted": [1, 1], "correct": [True, False], "cell": ["TP", "FP"]})
    q3 = hg.build_task3("amazon", pool, s3, well, proba, seed=0, report=rep)
    q2 = hg.build_task2("amazon", pool, s3, worse, proba, seed=0, report=rep)
    assert q2 == [] and len(rep.frame()) == 2 and set(rep.frame()["task"]) == {"task_2"}
    qa = next(q for q in q1 if q.meta["example_id"] == "amazon:10")
    well_side = qa.evidence_a if qa.key == "A" else qa.evidence_b
    worse_side = qa.evidence_b if qa.key == "A" else qa.evidence_a
    assert list(well_side) == ["good", "sound"] and list(worse_side) == []
    t3 = next(q for q in q3 if q.meta["example_id"] == "amazon:10")
    assert (list(t3.evidence), list(t3.counter_evidence)) == (["good", "sound"], ["cheap", "foam"])
    assert t3.key == "Positive" and t3.predicted_probability == 0.65
    t3b = next(q for q in q3 if q.meta["example_id"] == "amazon:11")
    assert t3b.key == "Negative" and t3b.counter_evidence == ()          # empty counter-evidence
    files = hg.save_studies(q1 + q3, seed=0, folder=tmp_path)
    assert sorted(p.name for p in files) == ["hg-amazon-task1.json", "hg-amazon-task3.json"]
    loaded = {q.question_id: q for q in hg.load_studies(files)}
    for q in q1 + q3:
        assert loaded[q.question_id] == q
        html = render_question(loaded[q.question_id], hg.DEFAULT_MODEL_LABELS)
        assert 'name="answer"' in html
    raw = json.loads(files[0].read_text())
    assert raw["seed"] == 0 and raw["study_id"] == "hg-amazon-task1"
    assert hg.load_study(files[1]).question(t3b.question_id).counter_evidence == ()


def test_model_folder_uses_zoo_paths_and_profile(monkeypatch):
    from xaibench.models import zoo

    monkeypatch.setenv("XAIBENCH_PROFILE", "full")
    assert hg.model_folder("amazon", "well", 42) == zoo.model_dir("amazon-polarity", "cnn", "well", "train", 42)
    monkeypatch.setenv("XAIBENCH_PROFILE", "quick")
    assert "reports/quick" in hg.model_folder("arxiv", "worse", 7).as_posix()
    assert "reports/quick" in hg.studies_dir().as_posix()
    with pytest.raises(ValueError, match="condition"):
        hg.model_folder("amazon", "best", 42)
    with pytest.raises(KeyError, match="amazon"):
        hg.dataset_spec("imdb")


# ------------------------------------------------------------------------------------ viz
def test_viz_normalise_html_and_png(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from xaibench import viz

    assert viz.normalise([2.0, -4.0, 0.0]).tolist() == [0.5, -1.0, 0.0]
    assert viz.normalise([0.0, 0.0]).tolist() == [0.0, 0.0]
    a = _attr("x", ["<b>", "ok"], [1.0, -0.5])
    h = viz.html_heatmap({"LIME": a})
    table, key = h.split("<div class='xaibench-colour-key'")  # the tokens, then the colour scale under them
    assert "&lt;b&gt;" in table and "<b>" not in table.replace("<b>LIME", "")
    assert "rgba(214, 39, 40, 0.850)" in table and "rgba(31, 119, 180, 0.425)" in table
    assert "colour scale" in key and ">-1</span>" in key and ">+1</span>" in key and "largest |score|" in key
    ax = viz.png_heatmap({"m1": a, "m2": _attr("x", ["<b>", "ok"], [0.0, 1.0])})
    assert [t.get_text() for t in ax.get_yticklabels()] == ["m1", "m2"]
    [cbar] = [c._colorbar for c in ax.figure.axes if hasattr(c, "_colorbar")]
    assert cbar.ax.get_ylabel() == viz.COLOUR_LABEL and (cbar.vmin, cbar.vmax) == (-1, 1)
    with pytest.raises(ValueError, match="different tokens"):
        viz.png_heatmap({"m1": a, "m2": _attr("x", ["a", "b", "c"], [0, 0, 1])})


def test_cut_to_window_keeps_formatting_and_the_models_tokens():
    from xaibench.text import word_tokenize

    text = "Great!!  I wasn't sure... it WORKS, really."
    assert hg.cut_to_window(text, 4) == "Great!!  I"
    assert hg.cut_to_window(text, 100) == text
    cut = hg.cut_to_window(text, 7)
    assert word_tokenize(cut) == word_tokenize(text)[:7]
    with pytest.raises(ValueError, match="max_words"):
        hg.cut_to_window(text, 0)


# ------------------------------------------------------------------ which explainers the tasks score
def test_tasks_score_every_explainer_that_declares_an_attribution(monkeypatch):
    from xaibench.explainers import local
    from xaibench.explainers.base import ConceptExplainer, LocalExplainer, applicable

    class NewLocal(LocalExplainer):
        name = "new_local"

        def __init__(self, seed: int = 42):
            self.seed = seed

        def explain(self, texts, targets=None):
            return [Attribution(t, t.split(), np.ones(len(t.split())), 0) for t in texts]

    class NewConcept(ConceptExplainer):
        name = "new_concept"

        def explain(self, queries):
            return np.zeros((len(queries), 2))

    reg = {**local.LOCAL_EXPLAINERS, "new_local": NewLocal, "new_concept": NewConcept}
    assert applicable(reg, "attribution")[-1] == "new_local" and "new_concept" not in applicable(reg, "attribution")
    assert applicable({"a": NewConcept(), "b": NewLocal()}, "concept_effect") == ["a"]
    with pytest.raises(ValueError, match="attribution"):
        applicable(reg, "heatmap")
    monkeypatch.setattr(local, "LOCAL_EXPLAINERS", reg)
    methods = hg.scorable_methods()
    assert methods[:9] == list(hg.PAPER_METHODS) and "new_local" in methods and "new_concept" not in methods
    # the new explainer goes through the tasks' explanation step without any edit to the protocol
    out = hg.explain_texts(object(), ["a b", "c d e"], ["new_local"], fit_texts=[])
    assert [a.tokens for a in out["new_local"].values()] == [["a", "b"], ["c", "d", "e"]]
    assert hg.method_label("new_local") == "new_local" and hg.method_label("lrp_n") == "LRP (N)"
    with pytest.raises(KeyError, match="new_concept"):
        hg.make_paper_explainer("new_concept", object(), [])


# ---------------------------------------------------------------- tables and figures of notebooks 11, 21
class _FixedModel:
    """Predicts fixed labels, in order, for the texts it is given."""

    def __init__(self, pred, best_epoch=None):
        self.pred, self.history = np.asarray(pred), {"best_epoch": best_epoch}

    def predict(self, texts):
        return self.pred[: len(texts)]


def test_model_table_joins_the_papers_macro_f1():
    test = pd.DataFrame({"text": ["a", "b", "c", "d"], "label": [0, 0, 1, 1]})
    models = {"amazon": {"well": _FixedModel([0, 0, 1, 1], 5), "worse": _FixedModel([0, 1, 1, 1], 1)}}
    t = hg.model_table(models, {"amazon": {"test": test}}, seed=7).set_index("model_condition")
    assert t.loc["well_trained", "ours"] == pytest.approx(1.0) and t.loc["well_trained", "paper"] == pytest.approx(0.90)
    assert t.loc["worse", "accuracy"] == pytest.approx(0.75) and t.loc["worse", "paper"] == pytest.approx(0.81)
    assert (t["seed"] == 7).all() and t["ours_std"].isna().all() and t.loc["worse", "best_epoch"] == 1
    assert list(t.reset_index().columns[:8]) == ["model_condition", "dataset", "metric", "participants", "seed",
                                                  "ours", "ours_std", "paper"]


def test_kappa_table_pairs_the_papers_two_printed_values():
    qs = [hg.Question(question_id=f"q{i}", task=2, dataset="amazon", method="lime", model_correct=True,
                      key="Positive", class_names=BIN, evidence=("good",)) for i in range(3)]
    ans = pd.DataFrame({"question_id": [f"q{i}" for i in range(3) for _ in range(2)],
                        "participant_id": ["p1", "p2"] * 3,
                        "answer": ["confident:Positive", "confident:Positive", "unconfident:Negative",
                                   "confident:Negative", "none", "none"]})
    k = hg.kappa_table(qs, ans)
    assert k.loc[~k["collapse_confidence"], "paper"].eq(0.274).all()  # first printed value of task 2
    assert k.loc[k["collapse_confidence"], "paper"].eq(0.371).all()   # second printed value
    assert list(k.columns) == ["task", "dataset", "by", "collapse_confidence", "ours", "ours_std", "paper",
                               "n_items", "n_raters"]


def test_heatmap_figures_of_notebook_11():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from xaibench import viz
    from xaibench.evaluation.human_grounded import plots

    toks = ["good", "sound", "cheap"]
    a, b = _attr("x", toks, [0.9, 0.1, -0.4]), _attr("x", toks, [0.0, 0.5, -0.1])
    fig = plots.cnn_heatmap_figure([({"LIME (W)": a, "LRP (W)": b}, "amazon · 1"), ({"LIME (W)": b}, "amazon · 2")],
                                   "amazon")
    assert "1D CNN (amazon)" in fig._suptitle.get_text() and len(fig.axes) >= 2
    [cbar] = [c._colorbar for c in fig.axes if hasattr(c, "_colorbar")]  # one colour scale for every panel
    assert cbar.ax.get_ylabel() == viz.COLOUR_LABEL and (cbar.vmin, cbar.vmax) == (-1, 1)
    assert "against" in viz.COLOUR_LABEL and "for the explained class" in viz.COLOUR_LABEL
    plt.close(fig)
    attrs = {m: [_attr("r1", toks, [0.2, 0.0, -0.1]), _attr("r2", toks, [0.0, 0.3, 0.1])]
             for m in hg.CEBAB_METHODS}
    fig = plots.cebab_heatmap_figure(attrs, "lstm")
    assert "CEBaB 5-way lstm" in fig._suptitle.get_text()
    assert [c._colorbar.ax.get_ylabel() for c in fig.axes if hasattr(c, "_colorbar")] == [viz.COLOUR_LABEL]
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert "review 1, predicted 2 stars" in titles  # target 1 -> 2 stars
    plt.close(fig)
    html = plots.cebab_html_heatmaps(attrs, "lstm")
    assert len(html) == 2 and all("SHAP" in h and "IG" in h for h in html)


def test_explain_cebab_skips_an_untrained_model(monkeypatch, tmp_path):
    from xaibench.models import zoo

    monkeypatch.setattr(zoo, "model_dir", lambda *a, **k: tmp_path / "absent")
    assert hg.explain_cebab("lstm", ["a short review"], seed=43) is None


def test_explain_cebab_gives_each_method_the_callers_draws(monkeypatch, tmp_path):
    """LIME gets ``lime_samples`` and SHAP ``shap_evals`` (the settings every protocol on the CNNs offers,
    ``sampling_kwargs``); the gradient methods take neither and are built as before."""
    from xaibench.evaluation.human_grounded.pipeline import CEBAB_METHODS
    from xaibench.explainers import local
    from xaibench.models import registry as model_registry, zoo

    (tmp_path / "config.json").write_text("{}")
    monkeypatch.setattr(zoo, "model_dir", lambda *a, **k: tmp_path)
    monkeypatch.setattr(model_registry, "load_model", lambda folder: "classifier")
    for m in CEBAB_METHODS:
        cls = local.LOCAL_EXPLAINERS[m]
        monkeypatch.setattr(cls, "fit", lambda self, model, data=None: self)
        monkeypatch.setattr(cls, "explain", lambda self, texts, targets=None: [self] * len(texts))
    got = hg.explain_cebab("lstm", ["a short review"], lime_samples=7, shap_evals=9)
    assert sorted(got) == sorted(CEBAB_METHODS)
    assert got["lime"][0].num_samples == 7 and got["shap"][0].max_evals == 9
