"""The scorecard (xaibench.evaluation.scorecard): ranks with the declared direction, and the rank
agreement between protocols on hand-built rankings (identical: tau = 1, reversed: tau = -1)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xaibench.bench.scorecard import agreement_by_name
from xaibench.evaluation import scorecard as sc


def _rows(protocol: str, values: dict[str, list[float]], lower_is_better: bool = False, metric: str = "m") -> list[dict]:
    """One row per explainer and seed (``values[explainer][i]`` = the value at seed i)."""
    return [{"protocol": protocol, "metric": metric, "lower_is_better": lower_is_better, "explainer": e, "model": "x",
             "dataset": "d", "seed": 40 + i, "value": v, "source": "computed", "paper": False}
            for e, vs in values.items() for i, v in enumerate(vs)]


def test_ranks_follow_the_declared_direction_and_report_the_seed_spread():
    rows = pd.DataFrame(_rows("p", {"a": [3, 3], "b": [2, 1], "c": [1, 2]})
                        + _rows("q", {"a": [3, 3], "b": [2, 2], "c": [1, 1]}, lower_is_better=True))
    ranks = sc.protocol_ranks(rows).set_index(["protocol", "explainer"])
    assert ranks.loc[("p", "a"), "rank"] == 1 and ranks.loc[("q", "a"), "rank"] == 3  # higher vs lower is better
    assert ranks.loc[("p", "b"), "rank"] == 2.5 and ranks.loc[("p", "b"), "rank_std"] == 0.5  # ranks 2 and 3
    assert ranks.loc[("p", "a"), "rank_std"] == 0.0
    table = sc.rank_table(rows).set_index(["protocol", "explainer"])
    assert table.loc[("p", "b"), "value"] == 1.5 and table.loc[("p", "b"), "value_std"] == 0.5


def test_identical_rankings_agree_with_tau_one_and_reversed_with_minus_one():
    scores = {"a": [4.0, 4.1], "b": [3.0, 3.1], "c": [2.0, 2.1], "d": [1.0, 1.1]}
    rows = pd.DataFrame(_rows("same_1", scores) + _rows("same_2", scores)
                        + _rows("reversed", scores, lower_is_better=True))
    m = sc.agreement_matrix(rows, n_boot=50).set_index(["protocol_a", "protocol_b"])
    assert m.loc[("same_1", "same_2"), "tau"] == pytest.approx(1.0)
    assert m.loc[("same_1", "same_2"), ["tau_low", "tau_high"]].tolist() == pytest.approx([1.0, 1.0])
    assert m.loc[("same_1", "reversed"), "tau"] == pytest.approx(-1.0)
    assert m.loc[("reversed", "same_1"), "tau_high"] == pytest.approx(-1.0)
    assert m.loc[("same_1", "same_1"), "tau"] == pytest.approx(1.0) and m.loc[("same_1", "same_2"), "n_shared"] == 4


def test_agreement_uses_only_shared_explainers_and_needs_three():
    rows = pd.DataFrame(_rows("p", {"a": [3], "b": [2], "c": [1], "z": [0]}) + _rows("q", {"a": [1], "b": [2], "c": [3]})
                        + _rows("r", {"a": [1], "y": [2]}))
    m = sc.agreement_matrix(rows, n_boot=10).set_index(["protocol_a", "protocol_b"])
    assert m.loc[("p", "q"), "n_shared"] == 3 and m.loc[("p", "q"), "tau"] == pytest.approx(-1.0)
    assert m.loc[("p", "r"), "n_shared"] == 1 and np.isnan(m.loc[("p", "r"), "tau"])


def test_a_noisy_unit_widens_the_bootstrap_interval():
    rows = pd.DataFrame(_rows("p", {"a": [3, 1], "b": [2, 2], "c": [1, 3]}) + _rows("q", {"a": [3, 3], "b": [2, 2], "c": [1, 1]}))
    m = sc.agreement_matrix(rows, n_boot=200).set_index(["protocol_a", "protocol_b"])
    assert m.loc[("p", "q"), "tau_low"] < m.loc[("p", "q"), "tau_high"]


def test_agreement_reads_the_bootstrap_replicates_as_indexing_each_by_explainer_name_would():
    """The replicates are read as arrays in each protocol's column order; the matrix is bit for bit the one that
    looks every replicate up by explainer name (protocols sharing some explainers, in other orders, with gaps)."""
    rng = np.random.default_rng(5)
    rows = []
    for p, names in (("p", "abcde"), ("q", "edcbx"), ("r", "cabyd")):
        for metric in ("m1", "m2"):
            scores = {e: list(rng.normal(size=3)) for e in names}
            rows += _rows(p, scores, metric=metric, lower_is_better=metric == "m2")
    rows = pd.DataFrame(rows).drop(index=[3, 17])  # a missing score: a NaN in its unit
    got = sc.agreement_matrix(rows, n_boot=40, seed=3)
    assert got.tau.isna().sum() == 0  # every pair shares at least MIN_SHARED explainers
    by_name = agreement_by_name(rows, n_boot=40, seed=3)
    pd.testing.assert_frame_equal(got[by_name.columns.tolist()], by_name, check_exact=True)
    assert got.tau_low.notna().sum() == 9 and sorted(set(got.n_shared)) == [3, 4, 5]
    assert sc.agreement_matrix(rows, n_boot=0).tau_low.isna().all()  # no replicates: no interval


def test_bad_agreement_arguments_name_the_parameter():
    rows = pd.DataFrame(_rows("p", {"a": [1]}))
    with pytest.raises(ValueError, match="level=1.5"):
        sc.agreement_matrix(rows, level=1.5)


@pytest.fixture
def results_tmp(tmp_path, monkeypatch):
    """The scorecard's computed rows are stored under a temporary results folder."""
    from xaibench import paths

    monkeypatch.setattr(paths, "results_dir", lambda: tmp_path / "results")
    return tmp_path / "results"


def test_collect_scores_the_other_explainers_on_the_stored_seeds(monkeypatch, results_tmp):
    """Stored rows are reused; the explainers they lack are scored on their seeds (not the asked ones),
    so every unit ranks every explainer."""
    from xaibench.evaluation.base import Metric, Protocol

    calls = []

    class P(Protocol):
        name, paper, accepts, datasets = "p_test", "toy", ("attribution",), ("d",)
        metrics = {"m": Metric("m", False)}
        paper_explainers = ("random_words", "lime")

        def stored(self, profile="full"):
            return self.tidy(pd.DataFrame([{"metric": "m", "explainer": "random_words", "model": "x", "dataset": "d",
                                            "seed": 7, "value": 0.5}]))

        def _score(self, names, profile, seeds):
            calls.append((tuple(names), tuple(seeds)))
            return pd.DataFrame([{"metric": "m", "explainer": n, "model": "x", "dataset": "d", "seed": s, "value": 1.0}
                                 for n in names for s in seeds])

    from xaibench import registry
    from xaibench.evaluation.protocol import load_builtins

    load_builtins()
    monkeypatch.setitem(registry._PROTOCOLS, "p_test", P())
    rows = sc.collect(["random_words", "lime"], profile="quick", seeds=[42, 43], protocols=["p_test"])
    assert calls == [(("lime",), (7,))]
    assert dict(zip(rows.explainer, rows.source)) == {"random_words": "stored", "lime": "computed"}
    assert set(rows.seed) == {7} and rows.set_index("explainer")["paper"].to_dict() == {"random_words": True, "lime": True}


def test_readme_verdict_is_read_from_the_saved_tables_and_replaces_its_block(tmp_path):
    from xaibench.evaluation.claims import replace_between

    assert "run `make scorecard`" in sc.readme_verdict(tmp_path)  # nothing saved yet: says so
    scores = {"a": [4.0], "b": [3.0], "c": [2.0], "d": [1.0]}
    rows = pd.DataFrame(_rows("p", scores) + _rows("q", scores) + _rows("r", scores, lower_is_better=True))
    sc.protocol_ranks(rows).to_csv(tmp_path / "scorecard_protocol_ranks.csv", index=False)
    sc.agreement_matrix(rows, n_boot=5).to_csv(tmp_path / "scorecard_agreement.csv", index=False)
    text = sc.readme_verdict(tmp_path)
    assert text.startswith("4 explainers under 3 protocols (p, q, r)")
    # a is first under p and q but last under r; b is 2nd, 2nd and 3rd of 4: no one is in every better half
    assert "interval of the mean rank: none." in text
    assert "agree (tau above 0 over its whole interval): p vs q (tau +1.00, 95% interval +1.00 to +1.00) over 4" in text
    assert ("opposite orders (tau below 0 over its whole interval): p vs r (tau -1.00, 95% interval -1.00 to -1.00) "
            "over 4 explainers; q vs r") in text
    assert "cannot tell apart (the interval holds 0, or there is none): none." in text
    readme = f"intro\n{sc.VERDICT_BEGIN}\nold verdict\n{sc.VERDICT_END}\nrest\n"
    new = replace_between(readme, sc.VERDICT_BEGIN, sc.VERDICT_END, text)
    assert "old verdict" not in new and text in new and new.startswith("intro\n") and new.endswith("rest\n")
    with pytest.raises(ValueError, match="no markers"):
        replace_between("no markers here", sc.VERDICT_BEGIN, sc.VERDICT_END, text)


def test_verdict_reads_the_interval_not_only_the_sign_of_tau():
    ranks = pd.DataFrame({"protocol": ["p", "q"], "explainer": ["a", "a"], "position": [1, 1], "n_explainers": [3, 3],
                          "rank_low": [1.0, 1.0], "rank_high": [1.5, 1.9]})
    agreement = pd.DataFrame({"protocol_a": ["p", "p", "p"], "protocol_b": ["q", "r", "s"], "tau": [0.6, 0.2, -0.5],
                              "tau_low": [0.1, -0.4, np.nan], "tau_high": [0.9, 0.7, np.nan], "n_shared": [5, 5, 3]})
    text = sc.verdict(ranks, agreement)
    assert "interval of the mean rank: a." in text
    assert "whole interval): p vs q (tau +0.60, 95% interval +0.10 to +0.90) over 5 explainers." in text
    # a tau without an interval supports no statement of agreement or opposition
    assert "opposite orders (tau below 0 over its whole interval): none." in text
    assert "p vs r (tau +0.20, 95% interval -0.40 to +0.70) over 5 explainers; p vs s (tau -0.50, no interval)" in text
    # a mean rank whose interval reaches the middle rank (2 of 3) is not in the better half
    wide = ranks.assign(rank_high=[1.5, 2.2])
    assert "interval of the mean rank: none." in sc.verdict(wide, agreement)
    # a table without rank intervals states nothing about the better half
    assert "not stated" in sc.verdict(ranks.drop(columns=["rank_low", "rank_high"]), agreement)


def test_rank_intervals_resample_the_units_and_need_two():
    """Each explainer's mean rank gets a bootstrap interval over the protocol's units; a protocol with one unit has
    nothing to resample (NaN); units that always agree give a zero-width interval; better_half reads it."""
    steady = pd.DataFrame(_rows("p", {"a": [3, 3, 3], "b": [2, 2, 2], "c": [1, 1, 1]}))
    r = sc.protocol_ranks(steady, n_boot=100).set_index("explainer")
    assert (r.loc["a", "rank_low"], r.loc["a", "rank_high"]) == (1.0, 1.0)
    assert sc.better_half(r.reset_index()).tolist() == ["holds", "covers", "fails"]
    noisy = pd.DataFrame(_rows("p", {"a": [3, 1, 3], "b": [2, 2, 2], "c": [1, 3, 1]}))
    n = sc.protocol_ranks(noisy, n_boot=200).set_index("explainer")
    assert n.loc["a", "rank_low"] == 1.0 and n.loc["a", "rank_high"] == 3.0  # the unit where a was last can recur
    one = sc.protocol_ranks(pd.DataFrame(_rows("p", {"a": [3], "b": [2], "c": [1]})))
    assert one["rank_low"].isna().all() and (sc.better_half(one) == "covers").all()


def test_computed_rows_are_stored_and_a_rerun_computes_only_what_is_new(monkeypatch, results_tmp):
    """A second collect computes nothing (same rows, source 'computed'); another seed list, a new explainer,
    a changed explainer module or reuse=False compute again -- only what changed."""
    from xaibench import registry
    from xaibench.evaluation.base import Metric, Protocol
    from xaibench.evaluation.protocol import load_builtins

    calls = []

    class Q(Protocol):
        name, paper, accepts, datasets = "q_test", "toy", ("attribution",), ("d",)
        metrics = {"m": Metric("m", None)}  # an unranked metric: lower_is_better None survives the store
        paper_explainers = ("random_words", "lime")

        def _score(self, names, profile, seeds):
            calls.append((tuple(names), tuple(seeds)))
            return pd.DataFrame([{"metric": "m", "explainer": n, "model": "x", "dataset": "d", "seed": s,
                                  "value": len(n) + s / 10} for n in names for s in seeds])

    load_builtins()
    monkeypatch.setitem(registry._PROTOCOLS, "q_test", Q())
    first = sc.collect(["random_words", "lime"], profile="quick", seeds=[1, 2], protocols=["q_test"])
    again = sc.collect(["random_words", "lime"], profile="quick", seeds=[1, 2], protocols=["q_test"])
    assert calls == [(("random_words", "lime"), (1, 2))]
    pd.testing.assert_frame_equal(first, again)
    assert (again["source"] == "computed").all() and again["lower_is_better"].isna().all()
    assert again["value"].tolist() == pytest.approx([12.1, 12.2, 4.1, 4.2])
    sc.collect(["random_words", "lime", "shap"], profile="quick", seeds=[1, 2], protocols=["q_test"])
    assert calls[-1] == (("shap",), (1, 2))  # only the new explainer
    sc.collect(["lime"], profile="quick", seeds=[3], protocols=["q_test"])
    assert calls[-1] == (("lime",), (3,))  # other seeds: another entry
    real = sc._source_digest
    monkeypatch.setattr(sc, "_source_digest", lambda obj: real(obj) + "-edited")  # the explainers' code changed
    sc.collect(["lime"], profile="quick", seeds=[3], protocols=["q_test"])
    assert calls[-1] == (("lime",), (3,)) and len(calls) == 4
    sc.collect(["lime"], profile="quick", seeds=[3], protocols=["q_test"], reuse=False)
    assert len(calls) == 5


def test_the_command_line_recomputes_only_when_asked(monkeypatch):
    seen = []

    def fake_collect(explainers, profile, seeds, protocols, reuse=True):
        seen.append(reuse)
        rows = pd.DataFrame(columns=["protocol", "metric", "lower_is_better", "explainer", "model", "dataset", "seed",
                                     "value", "source", "paper"])
        rows.attrs["skipped"] = []
        return rows

    monkeypatch.setattr(sc, "collect", fake_collect)
    monkeypatch.setattr(sc, "protocol_ranks", lambda rows: pd.DataFrame(
        columns=["protocol", "explainer", "paper", "rank", "rank_std", "rank_low", "rank_high", "position",
                 "n_explainers"]))
    monkeypatch.setenv("XAIBENCH_PROFILE", "quick")
    sc.main(["--protocols", "eraser"])
    sc.main(["--protocols", "eraser", "--recompute"])
    assert seen == [True, False]


def test_collect_prints_each_skipped_protocol_with_its_reason(monkeypatch, results_tmp, capsys):
    """The quick scorecard ran 5 of 7 protocols and said so only in warnings: a protocol that scores nothing
    gives the reason it warned, one that applies to none of the explainers asked for is named too, and
    collect prints them as a table."""
    import warnings

    from xaibench import registry
    from xaibench.evaluation.base import Metric, Protocol
    from xaibench.evaluation.protocol import load_builtins

    class NoModels(Protocol):
        name, paper, accepts, datasets = "p_empty", "toy", ("attribution",), ("d",)
        metrics = {"m": Metric("m", False)}

        def _score(self, names, profile, seeds):
            warnings.warn("p_empty: no quick-profile model for seed 42 (make models trains it): skipped")
            return pd.DataFrame(columns=["metric", "explainer", "model", "dataset", "seed", "value"])

    class Concepts(NoModels):
        name, accepts = "p_concepts", ("concept_effect",)

    load_builtins()
    monkeypatch.setitem(registry._PROTOCOLS, "p_empty", NoModels())
    monkeypatch.setitem(registry._PROTOCOLS, "p_concepts", Concepts())
    with pytest.warns(UserWarning, match="no quick-profile model"):  # still shown as a warning
        rows = sc.collect(["lime"], profile="quick", seeds=[42], protocols=["p_empty", "p_concepts"])
    assert rows.attrs["skipped"] == [
        {"protocol": "p_empty", "reason": "no rows: p_empty: no quick-profile model for seed 42 (make models trains it): skipped"},
        {"protocol": "p_concepts", "reason": "none of the explainers asked for is of a kind it scores"}]
    out = capsys.readouterr().out
    assert "scorecard: 0 of 2 protocols gave rows; skipped:" in out
    assert "| p_empty    | no rows: p_empty: no quick-profile model" in out and "| p_concepts | none of" in out
    rows.attrs["skipped"] = []
    assert sc.skipped_summary(rows, ["a", "b"]) == "scorecard: all 2 protocols gave rows"


# ------------------------------------------------------------------ the scorecard's inputs
def test_input_fingerprints_and_stale_inputs(tmp_path):
    """Fingerprints are the SHA-256 of each paper table's bytes; a table rewritten after the scorecard (or one that
    appears later) is reported stale, an unchanged one is not."""
    import hashlib

    from xaibench.evaluation import scorecard as sc
    from xaibench.evaluation.protocol import load_builtins

    load_builtins()
    data = b"metric,ours\nx,1\ny,2\n"
    (tmp_path / "human_grounded_tasks_seeds.csv").write_bytes(data)
    rec = sc.input_fingerprints(["human_grounded", "cf_feedback"], tables_dir=tmp_path)
    hg = rec[rec.protocol == "human_grounded"].iloc[0]
    assert hg.table == "human_grounded_tasks_seeds" and hg.sha256 == hashlib.sha256(data).hexdigest() and hg.rows == 2
    assert set(rec[rec.protocol == "cf_feedback"].sha256) == {""}  # not written yet
    assert sc.stale_inputs(rec, tables_dir=tmp_path) == []
    (tmp_path / "human_grounded_tasks_seeds.csv").write_bytes(data + b"z,3\n")
    (tmp_path / "cf_feedback_flip_rate.csv").write_bytes(data)
    assert sc.stale_inputs(rec, tables_dir=tmp_path) == ["human_grounded_tasks_seeds (protocol human_grounded)",
                                                         "cf_feedback_flip_rate (protocol cf_feedback)"]


def test_every_paper_protocol_names_committed_tables():
    """Each protocol that reads a paper notebook's results names tables that notebook commits (ERASER's rows are the
    scorecard's own, so it names none)."""
    from xaibench import paths
    from xaibench.evaluation.protocol import load_builtins

    for name, p in load_builtins().items():
        if name == "eraser":
            assert p.paper_tables == ()
            continue
        assert p.paper_tables, name
        missing = [t for t in p.paper_tables if not (paths.tables_dir() / f"{t}.csv").exists()]
        assert not missing, f"{name}: {missing}"


def test_committed_scorecard_read_the_committed_paper_tables():
    """The committed scorecard (report 30) was regenerated after every paper report whose tables it reads: each
    fingerprint it recorded is the committed table's."""
    import pandas as pd

    from xaibench import paths
    from xaibench.evaluation import scorecard as sc

    path = paths.tables_dir() / "scorecard_inputs.csv"
    if not path.exists():
        pytest.skip("the committed scorecard predates its input fingerprints (regenerate report 30)")
    assert sc.stale_inputs(pd.read_csv(path, keep_default_na=False)) == []
