"""Claims of Filandrianos et al. (2023): known-value cases on hand-made tables, and every claim on the
committed tables."""
import numpy as np
import pandas as pd
import pytest

from xaibench.evaluation.claims import VERDICTS, Tables, claims_table, evaluate, paper_claims
from xaibench.evaluation.cf_feedback import claims as C

EDITORS = ("mice", "polyjuice", "textfooler")
# the paper's Table 1
INC = {"imdb": {"mice": [0.86, 5.95, 4.65, 4.87, 4.73], "polyjuice": [6.21, 4.65, 3.98, 2.9, 2.22],
                "textfooler": [0.01, 0.33, 0.36, 0.47, 0.49]},
       "newsgroups": {"mice": [11.11, 7.97, 7.89, 6.92, 6.11], "polyjuice": [0.99, 1.29, 1.35, 1.3, 1.21],
                      "textfooler": [0.04, 0.55, 0.46, 0.49, 0.46]}}
NS = (1, 2, 3, 5, 9)
# the paper's Table 2: (flip rate @1, @9)
FLIP = {"imdb": {"mice": (1.0, 0.8561), "polyjuice": (0.8747, 0.9675), "textfooler": (0.6195, 0.7865)},
        "newsgroups": {"mice": (0.87, 0.836), "polyjuice": (0.77, 0.968), "textfooler": (0.79, 0.89)}}


def _write(folder, name, rows):
    pd.DataFrame(rows).to_csv(folder / f"{name}.csv", index=False)


def _tables(tmp_path, inc=INC, flip=FLIP, p_value=1e-4, minimality=(30.0, 5.0)):
    """A full set of the tables notebook 22 writes; ``ours`` from the arguments, ``paper`` from the paper."""
    _write(tmp_path, "cf_feedback_inconsistency",
           [{"dataset": d, "editor": e, "metric": f"inc@{n}", "ours": inc[d][e][i], "ours_std": 1.0,
             "paper": INC[d][e][i], "n_texts": 500, "lower_is_better": True}
            for d in INC for e in EDITORS for i, n in enumerate(NS)])
    _write(tmp_path, "cf_feedback_flip_rate",
           [{"dataset": d, "editor": e, "metric": f"flip_rate@{n}", "ours": flip[d][e][i], "ours_std": np.nan,
             "paper": FLIP[d][e][i], "n_texts": 500, "lower_is_better": False}
            for d in FLIP for e in EDITORS for i, n in enumerate((1, 9))])
    nll = {"mice": (4.9, 5.8), "polyjuice": (5.1, 6.2), "textfooler": (4.4, 4.6)}
    _write(tmp_path, "cf_feedback_fluency",
           [{"dataset": d, "editor": e, "lm": lm, "quantity": q, "step": n, "ours": nll[e][i] * (1 if q == "nll" else 20),
             "ours_std": 0.5, "paper": 4.0, "paper_metric": "ppl_base", "n_texts": 50, "lower_is_better": True}
            for d in INC for e in EDITORS for lm in ("base", "fine") for q in ("nll", "ppl")
            for i, n in enumerate((1, 9))])
    _write(tmp_path, "cf_feedback_sample_size",
           [{"dataset": d, "editor": a, "comparison_editor": b, "sample_size": s, "step": k, "ours": p_value,
             "n_a": s, "n_b": s, "paper": 1e-3, "ours_std": np.nan, "lower_is_better": True}
            for d in INC for a in EDITORS for b in EDITORS if a != b for s in (10, 100, 200, 500) for k in range(1, 9)])
    _write(tmp_path, "cf_feedback_per_step",
           [{"dataset": d, "editor": e, "step": k, "metric": "minimality",
             "ours": float(np.interp(k, [1, 9], minimality)), "ours_std": 1.0, "paper": np.nan, "n_texts": 500,
             "lower_is_better": True} for d in INC for e in EDITORS for k in range(1, 10)])
    return Tables(tmp_path)


def _verdict(tables, claim_id):
    claim = next(c for c in C.CLAIMS if c.id == claim_id)
    return evaluate(claim, tables)


def test_the_papers_own_numbers_reproduce(tmp_path):
    t = _tables(tmp_path)
    for cid in ("imdb-inc9-order", "news-mice-above-polyjuice", "textfooler-lowest-inc", "inc-converges-from-3",
                "mice-even-steps-costlier", "mice-flip-falls", "pj-tf-flip-rises", "ttest-imdb-from-100",
                "ttest-news-from-200", "minimality-decreases", "fluency-textfooler-best", "fluency-base-worsens"):
        assert _verdict(t, cid).verdict == "reproduced", cid


def test_editor_orderings_that_contradict_the_paper(tmp_path):
    inc = {d: dict(v) for d, v in INC.items()}
    # MiCE and Polyjuice swapped on both datasets (what our rule-based Polyjuice does)
    inc["imdb"] = {**INC["imdb"], "mice": INC["imdb"]["polyjuice"], "polyjuice": INC["imdb"]["mice"]}
    inc["newsgroups"] = {**INC["newsgroups"], "mice": INC["newsgroups"]["polyjuice"],
                         "polyjuice": INC["newsgroups"]["mice"]}
    t = _tables(tmp_path, inc=inc)
    out = _verdict(t, "imdb-inc9-order")
    assert out.verdict == "not reproduced" and "ours Polyjuice 4.73 > MiCE 2.22 > TextFooler 0.49" in out.reason
    assert _verdict(t, "news-mice-above-polyjuice").verdict == "not reproduced"
    assert _verdict(t, "textfooler-lowest-inc").verdict == "reproduced"  # TextFooler untouched


def test_textfooler_highest_is_not_reproduced(tmp_path):
    inc = {d: {e: [x + (100 if e == "textfooler" else 0) for x in v] for e, v in INC[d].items()} for d in INC}
    out = _verdict(_tables(tmp_path, inc=inc), "textfooler-lowest-inc")
    assert out.verdict == "not reproduced" and "0/10" in out.reason


def test_mice_even_odd_from_running_means(tmp_path):
    # per-step inc 1, 1, 1 -> running means 1, 1, 1: step 2 is not above steps 1 and 3
    inc = {d: {**INC[d], "mice": [1.0, 1.0, 1.0, 1.0, 1.0]} for d in INC}
    out = _verdict(_tables(tmp_path, inc=inc), "mice-even-steps-costlier")
    assert out.verdict == "not reproduced" and "ours 1.00, 1.00, 1.00" in out.reason
    # the paper: steps 0.86, 2*5.95-0.86 = 11.04, 3*4.65-2*5.95 = 2.05
    assert "paper 0.86, 11.04, 2.05" in out.reason


def test_flip_rate_claims(tmp_path):
    flip = {d: dict(v) for d, v in FLIP.items()}
    flip["imdb"] = {"mice": (1.0, 1.0), "polyjuice": (0.9, 0.8), "textfooler": (0.99, 0.994)}
    t = _tables(tmp_path, flip=flip)
    out = _verdict(t, "mice-flip-falls")
    assert out.verdict == "not reproduced" and out.ours == "1.000 -> 1.000"
    out = _verdict(t, "pj-tf-flip-rises")
    assert out.verdict == "partly" and out.ours == 0.75  # Polyjuice falls on IMDb: 3 of 4 cells


def test_small_mice_fall_is_partly(tmp_path):
    flip = {d: dict(v) for d, v in FLIP.items()}
    flip["imdb"]["mice"] = (0.90, 0.89)  # 1.96 * SE on 500 texts is about 0.038
    assert _verdict(_tables(tmp_path, flip=flip), "mice-flip-falls").verdict == "partly"


def test_no_significant_differences_and_rising_minimality(tmp_path):
    t = _tables(tmp_path, p_value=0.3, minimality=(5.0, 30.0))
    for cid in ("ttest-imdb-from-100", "ttest-news-from-200", "minimality-decreases"):
        assert _verdict(t, cid).verdict == "not reproduced", cid


def test_settings_that_cannot_be_compared(tmp_path):
    t = _tables(tmp_path)
    for cid, why in (("polyjuice-early-erasure", "one random sentence"), ("ppl-values", "per-character"),
                     ("fluency-fine-mice-falls", "bigram")):
        out = _verdict(t, cid)
        assert out.verdict == "not comparable" and why in out.reason, cid


def test_every_claim_on_the_committed_tables():
    title, claims = paper_claims("cf_feedback")
    assert 8 <= len(claims) <= 15 and title == C.PAPER
    assert all(len(c.id) <= 30 and len(c.statement) <= 120 for c in claims)
    df = claims_table("cf_feedback")
    assert len(df) == len(claims)
    assert df["verdict"].isin(VERDICTS).all()
    assert all(r and "\n" not in r for r in df["reason"])


@pytest.mark.parametrize("missing", ["cf_feedback_per_step", "cf_feedback_fluency"])
def test_a_missing_table_is_not_comparable(tmp_path, missing):
    t = _tables(tmp_path)
    (tmp_path / f"{missing}.csv").unlink()
    df = claims_table("cf_feedback", t)
    assert (df["verdict"] == "not comparable").any()
    assert df.loc[df["verdict"] != "not comparable", "reason"].str.len().gt(0).all()


def test_a_quick_run_gives_a_verdict_for_every_claim(tmp_path):
    """Tables built by the runner from two texts and two steps (the quick profile): no claim fails."""
    from xaibench.evaluation.cf_feedback import runner as R
    from xaibench.tables import save_table

    rows = []
    for d in ("imdb", "newsgroups"):
        for e in EDITORS:
            for tid in (0, 1):
                for k, m in enumerate([np.nan, 3.0, 5.0 - tid]):
                    rows.append({"dataset": d, "editor": e, "text_id": tid, "step": k, "minimality": m,
                                 "flipped": np.nan if k == 0 else bool(k % 2), "n_tokens": 20 - 5 * k,
                                 "p_target": np.nan if k == 0 else 0.6, "nll_base": 4.0 + k, "nll_fine": 8.0 + k,
                                 "ppl_base": np.exp(4.0 + k), "ppl_fine": np.exp(8.0 + k)})
    ch = pd.DataFrame(rows)
    for name, df in (("cf_feedback_inconsistency", R.table_inconsistency(ch)),
                     ("cf_feedback_flip_rate", R.table_flip_rate(ch, ns=(1, 2))),
                     ("cf_feedback_fluency", R.table_fluency(ch, ns=(1, 2))),
                     ("cf_feedback_sample_size", R.table_sample_size(ch)),
                     ("cf_feedback_per_step", R.table_per_step(ch))):
        save_table(df, name, out_dir=tmp_path)
    df = claims_table("cf_feedback", Tables(tmp_path))
    assert df["verdict"].isin(VERDICTS).all() and df["reason"].str.len().gt(0).all()
    ttest = df.set_index("claim").loc["ttest-imdb-from-100"]
    assert ttest["verdict"] == "not comparable" and "sample sizes >= 100" in ttest["reason"]


def test_tied_editors_are_not_an_ordering(tmp_path):
    inc = {d: {e: [0.0] * 5 for e in EDITORS} for d in INC}
    assert _verdict(_tables(tmp_path, inc=inc), "imdb-inc9-order").verdict == "not reproduced"


def test_the_non_reproductions_of_a_full_run(tmp_path):
    """The values of a full run that contradict the paper: IMDb inc@9 Polyjuice 8.06 > MiCE 4.18, Newsgroups inc@1
    MiCE 2.08 vs Polyjuice 13.26, MiCE's IMDb flip rate 1.000 -> 1.000, Newsgroups t-tests p = 0.25-0.73."""
    inc = {d: {e: list(v) for e, v in INC[d].items()} for d in INC}
    inc["imdb"]["polyjuice"][-1], inc["imdb"]["mice"][-1] = 8.06, 4.18
    inc["newsgroups"]["mice"][0], inc["newsgroups"]["polyjuice"][0] = 2.08, 13.26
    flip = {d: dict(v) for d, v in FLIP.items()}
    flip["imdb"]["mice"] = (1.0, 1.0)
    t = _tables(tmp_path, inc=inc, flip=flip)
    ss = pd.read_csv(tmp_path / "cf_feedback_sample_size.csv")
    news = ss["dataset"] == "newsgroups"
    ss.loc[news, "ours"] = np.interp(np.arange(news.sum()) % 5, [0, 4], [0.25, 0.73])
    ss.to_csv(tmp_path / "cf_feedback_sample_size.csv", index=False)
    out = {cid: _verdict(Tables(tmp_path), cid) for cid in
           ("imdb-inc9-order", "news-mice-above-polyjuice", "mice-flip-falls", "ttest-news-from-200")}
    assert {k: v.verdict for k, v in out.items()} == dict.fromkeys(out, "not reproduced")
    assert out["imdb-inc9-order"].ours.startswith("Polyjuice 8.06 > MiCE 4.18")
    assert out["news-mice-above-polyjuice"].ours == "MiCE 2.08 vs Polyjuice 13.26"
    assert out["ttest-news-from-200"].ours == 0.0 and "p < 0.05 in 0/" in out["ttest-news-from-200"].reason


def test_fluency_at_every_step_reads_first_and_last_edit_and_marks_the_paper(tmp_path):
    """Fluency scored at steps 0-9: the trend claim compares step 1 with step 9 (not the originals at step 0), and
    the runner's table marks the paper's per-character values not comparable."""
    from xaibench.evaluation.cf_feedback import runner as R

    rows = []
    for e, (a, b) in {"mice": (4.0, 5.0), "polyjuice": (4.5, 6.0), "textfooler": (3.5, 3.6)}.items():
        for tid in (0, 1):
            for k in range(10):
                nll = 9.0 if k == 0 else a + (b - a) * (k - 1) / 8  # step 0 worst: must not be read as the start
                rows.append({"dataset": "imdb", "editor": e, "text_id": tid, "step": k, "nll_base": nll,
                             "nll_fine": nll, "ppl_base": np.exp(nll), "ppl_fine": np.exp(nll)})
    fl = R.table_fluency(pd.DataFrame(rows), ns=range(10))
    on_paper = fl["paper"].notna()
    assert on_paper.any() and fl.loc[on_paper, "paper_comparable"].str.startswith("not comparable").all()
    assert (fl.loc[~on_paper, "paper_comparable"] == "").all()
    fl.to_csv(tmp_path / "cf_feedback_fluency.csv", index=False)
    t = Tables(tmp_path)
    out = _verdict(t, "fluency-base-worsens")
    assert out.verdict == "reproduced" and "@1 -> @9" in out.reason and out.ours == "MiCE 4.00 -> 5.00; Polyjuice 4.50 -> 6.00"
    best = _verdict(t, "fluency-textfooler-best")
    assert best.verdict == "reproduced" and "imdb@0" not in best.reason and "imdb@9 lowest TextFooler" in best.reason
    fine = _verdict(t, "fluency-fine-mice-falls")
    assert fine.verdict == "not comparable" and "for both editors it is circular" in fine.reason
