"""Claims of Lertvittayakumjorn & Toni (2019): known-value cases on hand-made tables, and every claim
on the committed tables gives a valid verdict with a one-line reason."""
import numpy as np
import pandas as pd
import pytest

from xaibench import paths
from xaibench.evaluation.claims import VERDICTS, Tables, claims_table, evaluate, paper_claims
from xaibench.evaluation.human_grounded import claims as hgc
from xaibench.tables import paper_values

CLAIMS = {c.id: c for c in hgc.CLAIMS}


def _paper_scores() -> pd.DataFrame:
    pv = paper_values("human_grounded", metric="avg_human_score")
    return pv[["task", "dataset", "method", "subset", "value"]].rename(columns={"value": "ours"}).reset_index(drop=True)


def _write(tmp_path, scores: pd.DataFrame, f1: dict | None = None) -> Tables:
    """A tasks table with ``scores`` (``ours``; ``ours_std`` 0) and a models table with ``f1``
    ``{(dataset, condition): (ours, paper)}``."""
    t = scores.assign(metric="avg_score", participants="simulated", ours_std=scores.get("ours_std", 0.0),
                      paper=np.nan, n_participants=5, n_questions=50)
    kappa = pd.DataFrame([{"metric": "fleiss_kappa", "task": f"task_{k}", "dataset": "amazon", "method": "",
                           "subset": "by_answer_full", "participants": "simulated", "ours": 0.5, "ours_std": np.nan,
                           "paper": np.nan, "n_participants": 5, "n_questions": 100} for k in (1, 2, 3)])
    pd.concat([t, kappa], ignore_index=True).to_csv(tmp_path / "human_grounded_tasks.csv", index=False)
    f1 = f1 or {("amazon", "well_trained"): (0.90, 0.90), ("amazon", "worse"): (0.81, 0.81),
                ("arxiv", "well_trained"): (0.94, 0.94), ("arxiv", "worse"): (0.85, 0.85)}
    pd.DataFrame([{"dataset": d, "model_condition": c, "metric": "macro_f1", "ours": o, "ours_std": np.nan,
                   "paper": p} for (d, c), (o, p) in f1.items()]).to_csv(tmp_path / "human_grounded_models.csv",
                                                                           index=False)
    return Tables(tmp_path)


def _set(scores: pd.DataFrame, task: str, dataset: str, method: str, subset: str, value: float) -> None:
    mask = ((scores.task == task) & (scores.dataset == dataset) & (scores.method == method)
            & (scores.subset == subset))
    assert mask.sum() == 1
    scores.loc[mask, "ours"] = value


def test_the_papers_own_numbers_reproduce_its_claims(tmp_path):
    tables = _write(tmp_path, _paper_scores())
    df = claims_table("human_grounded", tables).set_index("claim")
    comparable = [c.id for c in hgc.CLAIMS if df.loc[c.id, "verdict"] != "not comparable"]
    assert set(df.index) - set(comparable) == {"t1-more-evidence", "kappa-human-agreement"}
    assert (df.loc[comparable, "verdict"] == "reproduced").all(), df.loc[comparable, ["verdict", "reason"]]


def test_cnn_f1_within_tolerance_and_far_off(tmp_path):
    near = {("amazon", "well_trained"): (0.88, 0.90), ("amazon", "worse"): (0.80, 0.81),
            ("arxiv", "well_trained"): (0.93, 0.94), ("arxiv", "worse"): (0.84, 0.85)}
    assert evaluate(CLAIMS["cnn-macro-f1"], _write(tmp_path, _paper_scores(), near)).verdict == "reproduced"
    far = {("amazon", "well_trained"): (0.70, 0.90), ("amazon", "worse"): (0.75, 0.81),
           ("arxiv", "well_trained"): (0.80, 0.94), ("arxiv", "worse"): (0.70, 0.85)}
    tables = _write(tmp_path, _paper_scores(), far)
    assert evaluate(CLAIMS["cnn-macro-f1"], tables).verdict == "not reproduced"
    out = evaluate(CLAIMS["worse-cnn-gap"], tables)  # the amazon "worse" CNN is better
    assert out.verdict == "not reproduced" and "not worse" in out.reason


def test_lime_not_best_and_random_not_worst_contradict_task2(tmp_path):
    s = _paper_scores()
    for ds in ("amazon", "arxiv"):
        _set(s, "task_2", ds, "lime", "all", 0.0)       # LIME below everything but random (W)
        _set(s, "task_2", ds, "random_w", "all", 0.95)  # a random baseline on top
        _set(s, "task_2", ds, "random_n", "all", 0.90)
    tables = _write(tmp_path, s)
    assert evaluate(CLAIMS["t2-lime-best"], tables).verdict == "not reproduced"
    assert evaluate(CLAIMS["t2-random-worst"], tables).verdict == "not reproduced"
    assert evaluate(CLAIMS["t2-justify-incorrect"], tables).verdict == "reproduced"  # ✗ column untouched


def test_task2_ranking_reversed_is_not_reproduced(tmp_path):
    s = _paper_scores()
    mask = (s.task == "task_2") & (s.subset == "all")
    s.loc[mask, "ours"] = -s.loc[mask, "ours"]
    out = evaluate(CLAIMS["t2-ranking"], _write(tmp_path, s))
    assert out.verdict == "not reproduced" and "-1.00" in out.reason


def test_word_beats_ngram_and_high_task1_scores(tmp_path):
    s = _paper_scores()
    for task in ("task_2", "task_3"):
        for ds in ("amazon", "arxiv"):
            for fam in ("lrp", "deeplift"):
                _set(s, task, ds, f"{fam}_w", "all", 0.99)
    _set(s, "task_1", "amazon", "lime", "all", 0.5)
    _set(s, "task_1", "arxiv", "lime", "all", 0.5)
    tables = _write(tmp_path, s)
    assert evaluate(CLAIMS["ngram-beats-word"], tables).verdict == "not reproduced"
    assert evaluate(CLAIMS["t1-none-impressive"], tables).verdict == "not reproduced"
    # one dataset only: partly
    _set(s, "task_1", "arxiv", "lime", "all", 0.0)
    assert evaluate(CLAIMS["t1-none-impressive"], _write(tmp_path, s)).verdict == "partly"


def test_correct_minus_incorrect_must_exceed_the_readers_spread(tmp_path):
    s = _paper_scores().assign(ours_std=0.0)
    tables = _write(tmp_path, s)
    assert evaluate(CLAIMS["t2-lrp-dl-correct-only"], tables).verdict == "reproduced"
    s["ours_std"] = 0.5  # every ✓ - ✗ gap of the paper (<= 0.48) is within the spread
    out = evaluate(CLAIMS["t2-lrp-dl-correct-only"], _write(tmp_path, s))
    assert out.verdict == "not reproduced"


def test_task3_ranks(tmp_path):
    s = _paper_scores()
    for ds, dt in (("amazon", -0.5), ("arxiv", 0.9)):  # the trees swap places
        _set(s, "task_3", ds, "dt", "all", dt)
    tables = _write(tmp_path, s)
    out = evaluate(CLAIMS["t3-dt-amazon-only"], tables)
    assert out.verdict == "not reproduced" and "amazon 9" in out.reason and "arxiv 1" in out.reason
    assert evaluate(CLAIMS["t3-lrp-n-works"], tables).verdict == "reproduced"  # arxiv: LRP (N) second
    _set(s, "task_3", "arxiv", "gradcam_text", "all", 0.95)
    out = evaluate(CLAIMS["t3-lrp-n-works"], _write(tmp_path, s))
    assert out.verdict == "partly" and "arxiv 3" in out.reason  # amazon first, arxiv third


def test_a_missing_table_is_not_comparable(tmp_path):
    df = claims_table("human_grounded", Tables(tmp_path))
    comparable = df[~df["claim"].isin(["t1-more-evidence"])]
    assert (comparable["verdict"] == "not comparable").all()
    assert comparable["reason"].str.contains("human_grounded_").all()


def test_claims_are_well_formed():
    title, claims = paper_claims("human_grounded")
    assert 8 <= len(claims) <= 15 and "Lertvittayakumjorn" in title
    for c in claims:
        assert len(c.id) <= 30 and len(c.statement) <= 120 and c.where


def test_every_claim_evaluates_on_the_committed_tables():
    root = paths.project_root() / "figures" / "tables"
    if not (root / "human_grounded_tasks.csv").is_file():
        pytest.skip("no committed human-grounded tables")
    df = claims_table("human_grounded", Tables(root))
    assert len(df) == len(hgc.CLAIMS)
    assert df["verdict"].isin(VERDICTS).all()
    assert not df["reason"].str.contains("\n").any() and (df["reason"].str.len() > 0).all()
    assert not df["reason"].str.startswith("no result yet").any()


def test_a_missing_cell_is_not_comparable(tmp_path):
    s = _paper_scores()
    s = s[~((s.task == "task_2") & (s.dataset == "arxiv") & (s.method == "dt"))]  # e.g. no DT questions
    out = evaluate(CLAIMS["t2-lime-best"], _write(tmp_path, s))
    assert out.verdict == "not comparable" and "task_2 arxiv all for DTs (N)" in out.reason
    assert evaluate(CLAIMS["t3-lime-weak"], _write(tmp_path, s)).verdict == "reproduced"
