"""Scoring and agreement of the human-grounded evaluation (Lertvittayakumjorn & Toni 2019)."""
from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest

from xaibench import paths
from xaibench.evaluation import human_grounded as hg

BIN = ["Negative", "Positive"]
ARXIV = ["Computer Science", "Mathematics", "Physics"]


def t1(qid="q1", key="A", correct=True, method="lime", dataset="amazon"):
    return {"question_id": qid, "task": 1, "dataset": dataset, "method": method, "model_correct": correct,
            "class_names": BIN, "predicted_class": "Negative", "evidence_a": ["bad", "awful"],
            "evidence_b": ["the"], "key": key}


def t2(qid="q2", key="Positive", correct=True, method="lime", dataset="amazon", classes=BIN):
    return {"question_id": qid, "task": 2, "dataset": dataset, "method": method, "model_correct": correct,
            "class_names": classes, "evidence": ["enjoyed reading this", "I enjoyed", "fully"], "key": key}


def t3(qid="q3", key="Negative", correct=False, method="lrp_n", dataset="amazon"):
    return {"question_id": qid, "task": 3, "dataset": dataset, "method": method, "model_correct": correct,
            "class_names": BIN, "predicted_class": "Positive", "predicted_probability": 0.61,
            "evidence": ["Good Sound", "is good"], "counter_evidence": ["would not re -"], "key": key}


def study_dict(*questions, **kw):
    d = {"study_id": "s1", "seed": 7, "questions": list(questions)}
    d.update(kw)
    return d


def Q(d):
    return hg.study_from_json(study_dict(d)).questions[0]


# ------------------------------------------------------------------------------- Fleiss' kappa
WIKI_FLEISS = np.array([  # Fleiss (1971) / Wikipedia worked example: 10 items, 14 raters, 5 categories
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
])


def test_fleiss_kappa_textbook_example():
    assert hg.fleiss_kappa(WIKI_FLEISS) == pytest.approx(0.20993, abs=5e-5)
    assert round(hg.fleiss_kappa(WIKI_FLEISS), 3) == 0.210


def test_fleiss_kappa_small_cases_by_hand():
    # P_i = 1, 1/3, 1 -> P_bar = 7/9; p = (5/9, 4/9) -> P_e = 41/81; kappa = 22/40
    assert hg.fleiss_kappa([[3, 0], [2, 1], [0, 3]]) == pytest.approx(0.55)
    assert hg.fleiss_kappa([[2, 0], [0, 2]]) == pytest.approx(1.0)     # perfect agreement
    assert hg.fleiss_kappa([[1, 1], [1, 1]]) == pytest.approx(-1.0)    # systematic disagreement
    assert np.isnan(hg.fleiss_kappa([[3, 0], [3, 0]]))                # one category only: undefined


def test_fleiss_kappa_invariant_to_item_and_category_order():
    rng = np.random.default_rng(0)
    k = hg.fleiss_kappa(WIKI_FLEISS)
    perm = WIKI_FLEISS[rng.permutation(10)][:, rng.permutation(5)]
    assert hg.fleiss_kappa(perm) == pytest.approx(k)
    # an unused extra category changes nothing
    assert hg.fleiss_kappa(np.c_[WIKI_FLEISS, np.zeros(10, int)]) == pytest.approx(k)


@pytest.mark.parametrize("bad, msg", [
    ([[1, 2], [3, 0], [2, 2]], "same number of ratings"),
    ([1, 2, 3], "2-D"),
    ([[1, -1], [0, 0]], "non-negative integers"),
    ([[1.5, 0.5], [1, 1]], "non-negative integers"),
    ([[1, 0], [0, 1]], "at least 2 ratings"),
])
def test_fleiss_kappa_rejects_bad_counts(bad, msg):
    with pytest.raises(ValueError, match=msg):
        hg.fleiss_kappa(bad)


# ------------------------------------------------------------------------------- scoring rule
def test_score_answer_task1_by_hand():
    q = Q(t1(key="A"))
    assert [hg.score_answer(q, a) for a in
            ["confident:A", "unconfident:A", "none", "unconfident:B", "confident:B"]] == [1, .5, 0, -.5, -1]
    q = Q(t1(key="B"))
    assert hg.score_answer(q, "confident:A") == -1.0
    assert hg.score_answer(q, "unconfident:B") == 0.5


def test_score_answer_task2_correct_means_predicted_class():
    q = Q(t2(key="Positive", correct=False))  # prediction wrong, but "correct" = agreeing with the model
    assert hg.score_answer(q, "confident:Positive") == 1.0
    assert hg.score_answer(q, "unconfident:Positive") == 0.5
    assert hg.score_answer(q, "unconfident:Negative") == -0.5
    assert hg.score_answer(q, "confident:Negative") == -1.0
    assert hg.score_answer(q, "none") == 0.0


def test_score_answer_task3_correct_means_true_class_and_no_none_option():
    q = Q(t3(key="Negative"))  # predicted Positive, true Negative
    assert hg.score_answer(q, "confident:Negative") == 1.0
    assert hg.score_answer(q, "unconfident:Positive") == -0.5
    with pytest.raises(hg.StudyError, match=r"not valid .*\(task 3\)"):
        hg.score_answer(q, "none")


def test_score_answer_multiclass_and_bad_answers():
    q = Q(t2(key="Mathematics", dataset="arxiv", classes=ARXIV))
    assert hg.score_answer(q, "confident:Physics") == -1.0
    assert hg.score_answer(q, "unconfident:Computer Science") == -0.5
    assert hg.score_answer(q, "unconfident:Mathematics") == 0.5
    with pytest.raises(hg.StudyError, match="valid answers: .*confident:Mathematics"):
        hg.score_answer(q, "confident:Biology")
    with pytest.raises(hg.StudyError):
        hg.score_answer(q, "sure:Mathematics")


def test_answer_options_follow_the_paper_scale():
    assert len(hg.answer_options(Q(t1()))) == 5
    assert len(hg.answer_options(Q(t2()))) == 5          # 2 classes x 2 confidences + can't say
    assert len(hg.answer_options(Q(t3()))) == 4          # no "can't say" in task 3
    opts = hg.answer_options(Q(t2(dataset="arxiv", classes=ARXIV, key="Physics")))
    assert len(opts) == 7 and opts[-1][0] == "none"
    codes, labels = zip(*hg.answer_options(Q(t1()), ("Robot C", "Robot L")))
    assert codes == ("confident:A", "unconfident:A", "none", "unconfident:B", "confident:B")
    assert labels[0] == "Robot C seems clearly more reasonable than Robot L."
    assert "Positive review" in hg.answer_options(Q(t2()))[1][1]


# ------------------------------------------------------------------------------- score_table
def test_score_table_by_hand():
    study = hg.study_from_json(study_dict(
        t2("a", key="Positive", correct=True), t2("b", key="Negative", correct=False),
        t3("c", key="Negative", correct=False, method="lime")))
    answers = pd.DataFrame({
        "participant_id": ["p1", "p2", "p1", "p2", "p1"],
        "question_id": ["a", "a", "b", "b", "c"],
        "answer": ["confident:Positive", "unconfident:Negative",   # +1, -0.5
                   "none", "unconfident:Negative",                 # 0, +0.5
                   "unconfident:Negative"],                        # +0.5
    })
    t = hg.score_table(study, answers).set_index(["task", "dataset", "method", "subset"])
    assert t.loc[("task_2", "amazon", "lime", "all"), "ours"] == pytest.approx((1 - .5 + 0 + .5) / 4)
    assert t.loc[("task_2", "amazon", "lime", "correct"), "ours"] == pytest.approx(0.25)
    assert t.loc[("task_2", "amazon", "lime", "incorrect"), "ours"] == pytest.approx(0.25)
    assert t.loc[("task_2", "amazon", "lime", "all"), "n_answers"] == 4
    assert t.loc[("task_2", "amazon", "lime", "all"), "n_questions"] == 2
    assert t.loc[("task_3", "amazon", "lime", "incorrect"), "ours"] == pytest.approx(0.5)
    assert ("task_3", "amazon", "lime", "correct") not in t.index  # no answers -> no row
    # the paper's printed numbers sit beside ours (Task 2, Amazon, LIME: .69 / .74 / .64)
    assert t.loc[("task_2", "amazon", "lime", "all"), "paper"] == pytest.approx(0.69)
    assert t.loc[("task_2", "amazon", "lime", "correct"), "paper"] == pytest.approx(0.74)
    assert t.loc[("task_3", "amazon", "lime", "incorrect"), "paper"] == pytest.approx(-0.45)
    assert t["ours_std"].isna().all()


def test_score_table_errors():
    study = hg.study_from_json(study_dict(t2("a")))
    with pytest.raises(hg.StudyError, match="missing column"):
        hg.score_table(study, pd.DataFrame({"question_id": ["a"]}))
    with pytest.raises(hg.StudyError, match="not in the study"):
        hg.score_table(study, pd.DataFrame({"question_id": ["zzz"], "answer": ["none"]}))
    with pytest.raises(hg.StudyError, match="not valid"):
        hg.score_table(study, pd.DataFrame({"question_id": ["a"], "answer": ["maybe"]}))


def test_kappa_table_by_hand():
    # 3 raters on 3 task-2 questions; by chosen option with confidence merged, the counts are
    # [[3,0],[2,1],[0,3]] over (Negative, Positive) -> kappa 0.55 (see the hand computation above)
    study = hg.study_from_json(study_dict(t2("a", key="Negative"), t2("b", key="Negative"),
                                          t2("c", key="Positive")))
    ans = {"a": ["confident:Negative", "unconfident:Negative", "confident:Negative"],
           "b": ["confident:Negative", "unconfident:Negative", "unconfident:Positive"],
           "c": ["confident:Positive", "confident:Positive", "unconfident:Positive"]}
    rows = [(f"p{i}", q, a) for q, lst in ans.items() for i, a in enumerate(lst)]
    rows.append(("p9", "a", "none"))  # a 4th rater on one question only: that question is dropped
    df = pd.DataFrame(rows, columns=["participant_id", "question_id", "answer"])
    kt = hg.kappa_table(study, df).set_index(["by", "collapse_confidence"])
    assert kt.loc[("answer", True), "n_raters"] == 3 and kt.loc[("answer", True), "n_items"] == 2
    # on b and c only: [[2,1],[0,3]] -> P_bar = (1/3 + 1)/2 = 2/3, p = (1/3, 2/3), P_e = 5/9
    assert kt.loc[("answer", True), "ours"] == pytest.approx((2 / 3 - 5 / 9) / (4 / 9))
    # by correctness (keys b=Negative, c=Positive): b -> [correct 2, incorrect 1], c -> [3, 0]
    # P_bar = 2/3, p = (5/6, 1/6), P_e = 26/36 -> kappa = (24/36 - 26/36) / (10/36) = -0.2
    assert kt.loc[("score", True), "ours"] == pytest.approx(-0.2)
    assert kt.loc[("answer", False), "paper"] == pytest.approx(0.274)
    assert kt.loc[("answer", True), "paper"] == pytest.approx(0.371)


# ------------------------------------------------------------------------------- study format
def test_study_round_trip(tmp_path):
    d = study_dict(t1(), t2(), t3(), model_labels=["Robot C", "Robot L"], instructions="hi")
    study = hg.study_from_json(d)
    p = hg.save_study(study, tmp_path / "sub" / "study.json")
    again = hg.load_study(p)
    assert again == study
    assert again.model_labels == ("Robot C", "Robot L")
    assert [q.task for q in again.questions] == [1, 2, 3]
    assert not list(tmp_path.glob("sub/.*tmp"))  # atomic write left no temp file


@pytest.mark.parametrize("mutate, msg", [
    (lambda d: d["questions"][0].update(task=4), "task must be 1, 2 or 3"),
    (lambda d: d["questions"][0].update(key="C"), "key must be which model"),
    (lambda d: d["questions"][1].update(key="Neutral"), "key must be the predicted class"),
    (lambda d: d["questions"][2].update(key="Neutral"), "key must be the true class"),
    (lambda d: d["questions"][1].update(evidence_a=["x"]), "not shown in task 2"),
    (lambda d: d["questions"][2].pop("predicted_probability"), "task 3 needs field 'predicted_probability'"),
    (lambda d: d["questions"][2].update(predicted_probability=1.5), r"number in \[0, 1\]"),
    (lambda d: d["questions"][1].update(evidence=[]), "task 2 needs field 'evidence'"),
    (lambda d: d["questions"][1].update(evidence="abc"), "must be a list of strings"),
    (lambda d: d["questions"][0].update(model_correct="yes"), "model_correct must be true or false"),
    (lambda d: d["questions"][0].pop("dataset"), "missing required field 'dataset'"),
    (lambda d: d["questions"][0].update(colour="red"), "unknown field"),
    (lambda d: d["questions"][1].update(question_id="q1"), "used twice"),
    (lambda d: d["questions"][1].update(question_id="has space"), "question_id must be"),
    (lambda d: d["questions"][2].update(predicted_class="Neutral"), "not one of class_names"),
    (lambda d: d["questions"][1].update(class_names=["none", "x"], key="x"), "reserved"),
    (lambda d: d.update(seed="42"), "seed must be an integer"),
    (lambda d: d.update(questions=[]), "non-empty list"),
    (lambda d: d.update(model_labels=["R", "R"]), "model_labels"),
])
def test_study_validation_errors(mutate, msg):
    d = copy.deepcopy(study_dict(t1("q1"), t2("q2"), t3("q3")))
    mutate(d)
    with pytest.raises(hg.StudyError, match=msg):
        hg.study_from_json(d)


def test_task1_evidence_list_may_be_empty():
    q = Q(dict(t1(), evidence_b=[]))
    assert q.evidence_b == ()


def test_load_study_errors_name_the_file(tmp_path):
    p = tmp_path / "s.json"
    p.write_text("{not json")
    with pytest.raises(hg.StudyError, match="s.json is not valid JSON"):
        hg.load_study(p)
    p.write_text(json.dumps(study_dict(dict(t2(), task=9))))
    with pytest.raises(hg.StudyError, match=r"s.json: question #0 \('q2'\)"):
        hg.load_study(p)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        hg.load_study(tmp_path / "missing.json")


def test_question_order_is_a_deterministic_per_participant_permutation():
    study = hg.study_from_json(study_dict(*[t2(f"q{i}") for i in range(12)]))
    o1 = study.order_for("alice")
    assert o1 == study.order_for("alice")
    assert sorted(o1) == sorted(q.question_id for q in study.questions)
    assert o1 != study.order_for("bob")
    fixed = hg.study_from_json(study_dict(*[t2(f"q{i}") for i in range(12)], shuffle=False))
    assert fixed.order_for("alice") == [f"q{i}" for i in range(12)]


def test_demo_study_is_valid():
    study = hg.load_study(paths.resources_dir() / "survey_demo_study.json")
    assert {q.task for q in study.questions} == {1, 2, 3}
