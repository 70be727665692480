"""CEBaB claims: known-value cases on hand-made tables, and every claim on the committed tables."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xaibench import paths
from xaibench.evaluation.claims import VERDICTS, Tables, claims_table, paper_claims
from xaibench.tables import paper_values

PAPER_MODELS = {"bert-base-uncased": "minilm", "lstm": "lstm"}
TASK_TABLE = {"Table 10a": "5-way", "Table 10b": "ternary", "Table 10c": "binary"}


def _claim(cid: str):
    _, claims = paper_claims("cebab")
    return next(c for c in claims if c.id == cid)


def _paper_icace() -> pd.DataFrame:
    """Table 10 as the paper prints it for BERT and the LSTM, in the layout of cebab_icace_error,
    with ours = the paper's numbers (ours_std = its std)."""
    pv = paper_values("cebab", paper_table=list(TASK_TABLE), model=list(PAPER_MODELS))
    t = pd.DataFrame({"table": pv["paper_table"], "task": pv["task"], "model": pv["model"].map(PAPER_MODELS),
                      "paper_model": pv["model"], "explainer": pv["method"], "metric": pv["metric"],
                      "paper": pv["value"], "paper_std": pv["std"]})
    return t.assign(ours=t["paper"], ours_std=t["paper_std"], n_seeds=5, lower_is_better=True)


def _write(tmp_path, name: str, df: pd.DataFrame) -> Tables:
    df.to_csv(tmp_path / f"{name}.csv", index=False)
    return Tables(tmp_path)


FIGURE_CLAIMS = ["approx-best-fig2", "approx-slearner-beat-others", "inlp-ties-best-cosine",
                 "direction-aware-win-cosine", "tcav-cshap-not-above-random", "approx-wins-normdiff",
                 "slearner-best-l2-5way", "sota-only-approx-inlp-slearn"]


def test_paper_table10_reproduces_the_papers_own_claims(tmp_path):
    # the rules, applied to the paper's own Table 10 (BERT and LSTM rows), confirm what the paper says
    tables = _write(tmp_path, "cebab_icace_error", _paper_icace())
    for cid in FIGURE_CLAIMS:
        out = _claim(cid).check(tables)
        assert out.verdict == "reproduced", (cid, out)


def test_approx_made_worst_contradicts_the_approx_claims(tmp_path):
    t = _paper_icace()
    t.loc[t["explainer"] == "approx", "ours"] = 2.0  # Approx far behind every method, Random included
    tables = _write(tmp_path, "cebab_icace_error", t)
    assert _claim("approx-best-fig2").check(tables).verdict == "not reproduced"
    assert _claim("approx-wins-normdiff").check(tables).verdict == "not reproduced"
    out = _claim("approx-slearner-beat-others").check(tables)
    assert out.verdict == "partly" and out.ours == "12/24"  # S-Learner still beats the four others


def test_inlp_tie_follows_the_seed_stds(tmp_path):
    t = _paper_icace()
    cos = (t["task"] == "5-way") & (t["model"] == "minilm") & (t["metric"] == "cosine")
    t.loc[cos & (t["explainer"] == "inlp"), ["ours", "ours_std"]] = [0.70, 0.01]  # 0.09 behind Approx's 0.61 (± .01)
    out = _claim("inlp-ties-best-cosine").check(_write(tmp_path, "cebab_icace_error", t))
    assert out.verdict == "not reproduced" and "0.70" in out.reason
    t.loc[cos & (t["explainer"] == "inlp"), ["ours", "ours_std"]] = [0.62, 0.01]  # within 0.01 + 0.01: a tie
    assert _claim("inlp-ties-best-cosine").check(_write(tmp_path, "cebab_icace_error", t)).verdict == "reproduced"


def _table3b(no_majority: float) -> pd.DataFrame:
    counts = {"1_star": 1870, "2_star": 3056, "3_star": 3517, "4_star": 2035, "5_star": 2732, "no_majority": no_majority}
    return pd.DataFrame({"table": "Table 3b", "aspect": "", "direction": "", "group": "review_rating",
                         "label": list(counts), "metric": "count", "ours": list(counts.values()),
                         "paper": [1870, 3056, 3517, 2035, 2732, 1879.0]})


def test_review_majority_share_and_counts(tmp_path):
    tables = _write(tmp_path, "cebab_dataset_stats", _table3b(1879))
    out = _claim("review-majority-88pct").check(tables)
    assert out.verdict == "reproduced" and out.ours == pytest.approx(1 - 1879 / 15089)
    assert _claim("dataset-counts").check(tables).verdict == "reproduced"
    tables = _write(tmp_path, "cebab_dataset_stats", _table3b(6000))  # a third of the texts without a majority
    assert _claim("review-majority-88pct").check(tables).verdict == "not reproduced"
    assert _claim("dataset-counts").check(tables).verdict == "partly"


def test_f1_order_and_levels(tmp_path):
    rows = [("minilm", "bert-base-uncased", task, "exclusive", "test", ours, paper)
            for task, ours, paper in (("binary", 0.96, 0.97), ("ternary", 0.80, 0.82), ("5-way", 0.66, 0.70))]
    t = pd.DataFrame(rows, columns=["model", "paper_model", "task", "condition", "split", "ours", "paper"])
    t = t.assign(ours_std=0.01, n_seeds=5)
    tables = _write(tmp_path, "cebab_model_performance", t)
    assert _claim("f1-binary-ternary-5way").check(tables).verdict == "reproduced"
    assert _claim("f1-table8-levels").check(tables).verdict == "reproduced"
    t.loc[t["task"] == "5-way", "ours"] = 0.85  # 5-way above ternary, and 0.15 above the paper's
    tables = _write(tmp_path, "cebab_model_performance", t)
    assert _claim("f1-binary-ternary-5way").check(tables).verdict == "not reproduced"
    assert _claim("f1-table8-levels").check(tables).verdict == "partly"


def test_ranking_needs_significant_positive_tau(tmp_path):
    k = pd.DataFrame({"task": ["5-way", "binary"], "model": "minilm", "metric": "l2", "ours": [0.9, 0.8],
                      "p_value": [0.001, 0.01]})
    assert _claim("ranking-matches-table10").check(_write(tmp_path, "cebab_kendall_tau", k)).verdict == "reproduced"
    k["ours"], k["p_value"] = [-0.5, 0.1], [0.04, 0.7]
    assert _claim("ranking-matches-table10").check(_write(tmp_path, "cebab_kendall_tau", k)).verdict == "not reproduced"


def test_missing_table_is_not_comparable(tmp_path):
    t = claims_table("cebab", Tables(tmp_path))
    assert (t["verdict"] == "not comparable").all() and t["reason"].str.contains("does not exist").all()


def test_every_claim_evaluates_on_the_committed_tables():
    root = paths.project_root() / "figures" / "tables"
    if not (root / "cebab_icace_error.csv").is_file():
        pytest.skip("no committed CEBaB tables")
    title, claims = paper_claims("cebab")
    assert title.startswith("CEBaB") and 8 <= len(claims) <= 15
    assert all(len(c.id) <= 30 and len(c.statement) <= 120 for c in claims)
    t = claims_table("cebab", Tables(root))
    assert len(t) == len(claims) and t["verdict"].isin(VERDICTS).all()
    assert t["reason"].map(lambda r: bool(r) and "\n" not in r).all()
    assert not t.astype(str).apply(lambda col: col.str.contains("|", regex=False)).any().any()  # Markdown cells
    assert (t["verdict"] != "not comparable").all(), t[t["verdict"] == "not comparable"]
    assert not np.any(t["ours"] == "")


def test_tables_without_the_needed_cells_are_not_comparable(tmp_path):
    # e.g. a run over other models: the tables exist but hold no row a claim reads
    root = paths.project_root() / "figures" / "tables"
    for name in ("cebab_icace_error", "cebab_cace", "cebab_dataset_stats", "cebab_model_performance", "cebab_kendall_tau"):
        cols = pd.read_csv(root / f"{name}.csv", nrows=0).columns if (root / f"{name}.csv").is_file() else ["x"]
        pd.DataFrame(columns=cols).to_csv(tmp_path / f"{name}.csv", index=False)
    t = claims_table("cebab", Tables(tmp_path))
    assert (t["verdict"] == "not comparable").all() and t["reason"].str.startswith(("our tables hold no", "no result")).all()
