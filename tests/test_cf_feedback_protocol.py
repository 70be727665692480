"""The counterfactual-feedback protocol object (Filandrianos et al.): a user's editor, registered with one call, is
run and scored beside the paper's three with no protocol code edited; its scores have known values; its chains
are stored and read back (never recomputed), and an edited editor runs again."""
import numpy as np
import pandas as pd
import pytest

from xaibench import paths


class _Model:
    """Predicts class 1 exactly when the text contains the word "good"."""
    n_classes = 2
    kind = "fake"

    def predict_proba(self, texts):
        p = np.array([0.9 if "good" in t.split() else 0.2 for t in texts])
        return np.stack([1 - p, p], axis=1)


TEXTS = ["good film here now", "bad film here now"]


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    """A registered toy editor that deletes the first word (one candidate per text), a fake predictor and two
    fixed texts, all results under ``tmp_path``."""
    from xaibench import registry
    from xaibench.data import cf_data
    from xaibench.evaluation.protocol import load_builtins
    from xaibench.explainers.base import CounterfactualExplainer
    from xaibench.models import cf_predictors

    load_builtins()
    monkeypatch.setattr(paths, "results_dir", lambda: tmp_path / "results")
    monkeypatch.setattr(paths, "cache_dir", lambda: tmp_path / "cache")
    monkeypatch.setattr(cf_predictors, "get_predictor", lambda *a, **k: _Model())
    monkeypatch.setattr(cf_data, "sample_test", lambda d, n, seed=42, max_words=None: pd.DataFrame(
        {"text": TEXTS[:n], "label": [1, 0][:n]}))
    monkeypatch.setattr(registry, "_EXPLAINERS", dict(registry._EXPLAINERS))  # restored after the test
    calls = []

    class DropFirst(CounterfactualExplainer):
        name = "toy_drop_first"

        def explain(self, texts, targets=None):
            calls.append(len(texts))
            return [[" ".join(t.split()[1:])] if len(t.split()) > 1 else [] for t in texts]

    registry.register_explainer("toy_drop_first", DropFirst)
    return calls


def test_chain_scores_known_values():
    from xaibench.evaluation.cf_feedback.protocol import chain_scores

    # two texts, two steps: minimality 2 then 3 (inc relu(3-2) = 1) and 4 then 1 (inc 0); step 1 flips one text
    chains = pd.DataFrame({"text_id": [0, 0, 0, 1, 1, 1], "step": [0, 1, 2, 0, 1, 2],
                           "minimality": [0, 2, 3, 0, 4, 1], "flipped": [False, True, False, False, False, True],
                           "carried": [False] * 6})
    got = chain_scores(chains, n_steps=2)
    assert got == {"inc": 0.5, "flip_rate": 0.5, "minimality": 3.0}
    # a carried first step (the editor returned nothing) is no edit: left out of minimality, counted as no flip
    chains.loc[4, ["carried", "minimality"]] = [True, 0]
    assert chain_scores(chains, n_steps=2)["minimality"] == 2.0


def test_a_registered_editor_is_scored_beside_the_paper_editors(toy):
    from xaibench.evaluation.cf_feedback.protocol import PROTOCOL, SETTINGS

    assert PROTOCOL.explainer_names("") == ["mice", "polyjuice", "textfooler"]
    assert PROTOCOL.run_list("all") == ["mice", "polyjuice", "textfooler", "toy_drop_first"]
    assert PROTOCOL.run_list("toy_drop_first") == ["mice", "polyjuice", "textfooler", "toy_drop_first"]
    assert PROTOCOL.run_list("mice toy_drop_first") == ["mice", "toy_drop_first"]
    assert SETTINGS["quick"]["samples"] == {"imdb": 2}

    rows = PROTOCOL.score("toy_drop_first", profile="quick", seeds=[42])
    got = rows.set_index("metric")["value"].to_dict()
    # step 1 drops "good" (flips text 0) and "bad" (no flip): one word each; step 2 drops "film": no change of
    # minimality, so no inconsistency
    assert got == {"inc": 0.0, "flip_rate": 0.5, "minimality": 1.0}
    assert set(rows["explainer"]) == {"toy_drop_first"} and set(rows["dataset"]) == {"imdb"}
    assert dict(zip(rows["metric"], rows["lower_is_better"])) == {"inc": True, "flip_rate": False, "minimality": True}

    # stored: read back by stored() and by a second score, which edits nothing
    n_calls = len(toy)
    stored = PROTOCOL.stored("quick")
    pd.testing.assert_frame_equal(stored.sort_values("metric").reset_index(drop=True),
                                  rows.sort_values("metric").reset_index(drop=True))
    PROTOCOL.score("toy_drop_first", profile="quick", seeds=[42])
    assert len(toy) == n_calls
    assert PROTOCOL.stored("full").empty  # another profile's settings: not these chains


def test_an_edited_editor_runs_again(toy, monkeypatch):
    from xaibench.evaluation.cf_feedback import runner as R
    from xaibench.evaluation.cf_feedback.protocol import PROTOCOL

    PROTOCOL.score("toy_drop_first", profile="quick", seeds=[42])
    n_calls = len(toy)
    key = R.chain_config("imdb", "toy_drop_first", 2, n_steps=2)
    assert key["editor_code"]  # the editor's source file is part of the key
    assert "editor_code" not in R.chain_config("imdb", "mice", 2)  # the paper's three keep their stored entries
    import xaibench.store

    monkeypatch.setattr(xaibench.store, "source_digest", lambda obj: "edited")
    PROTOCOL.score("toy_drop_first", profile="quick", seeds=[42])
    assert len(toy) > n_calls


def test_claims_read_the_paper_editors_only():
    from xaibench.evaluation.cf_feedback.claims import _paper_rows

    df = pd.DataFrame({"editor": ["mice", "toy (added)", "textfooler"],
                       "comparison_editor": ["textfooler", "mice", "toy (added)"]})
    assert _paper_rows(df)["editor"].tolist() == ["mice"]
    assert _paper_rows(df[["editor"]])["editor"].tolist() == ["mice", "textfooler"]


def test_run_experiments_runs_each_missing_setting_once_in_input_order(toy, monkeypatch):
    import xaibench.executor
    from xaibench.evaluation.cf_feedback import runner as R

    sent = []
    real = xaibench.executor.run_cells

    def spy(fn, items, desc=None, on_result=None, cell_threads=None):
        sent.append(([(c.config["editor"], c.config["n_texts"]) for c in items], cell_threads))
        return real(fn, items, desc=desc, on_result=on_result, cell_threads=cell_threads)

    monkeypatch.setattr(xaibench.executor, "run_cells", spy)
    R.run_experiment("imdb", "toy_drop_first", 1, n_steps=2, progress=False)
    one = R.run_experiment("imdb", "toy_drop_first", 1, n_steps=2, progress=False)[0]  # as stored
    runs = [dict(dataset="imdb", editor="toy_drop_first", n_texts=n, n_steps=2) for n in (1, 2, 2)]
    got = R.run_experiments(runs, progress=False)
    # the stored n=1 run is read back; the two identical n=2 runs are one cell, sent with cell_threads=1
    assert sent == [([("toy_drop_first", 2)], 1)]
    pd.testing.assert_frame_equal(got[0][0], one)
    pd.testing.assert_frame_equal(got[1][0], got[2][0])
    assert [len(c) for c, _ in got] == [3, 6, 6] and got[1][1]["n_texts"] == 2
    # all stored now: nothing is sent again, and run_experiment reads the same chains back
    n_calls = len(toy)
    again = R.run_experiments(runs, progress=False)
    assert len(toy) == n_calls and sent[-1][0] == []
    pd.testing.assert_frame_equal(again[1][0], R.run_experiment("imdb", "toy_drop_first", 2, n_steps=2)[0])
    with pytest.raises(ValueError, match="n_texts"):
        R.run_experiments([dict(dataset="imdb", editor="toy_drop_first")])
    with pytest.raises(ValueError, match="infiller='two-sided' is a setting of the mice editor"):
        R.run_experiments([dict(dataset="imdb", editor="toy_drop_first", n_texts=1, infiller="two-sided")])


def test_run_experiments_hands_out_the_longest_runs_first(toy, monkeypatch):
    import xaibench.executor
    from xaibench.evaluation.cf_feedback import runner as R

    sent = []
    def fake_run_cells(fn, items, desc=None, on_result=None, cell_threads=None):  # records the order, runs nothing
        sent.extend((c.config["dataset"], c.config["editor"]) for c in items)
        assert all(c.n_parts == 1 for c in items)  # serial: one worker, no run is split
        for i in range(len(items)):
            on_result(i, (pd.DataFrame(), {}))

    monkeypatch.setattr(xaibench.executor, "run_cells", fake_run_cells)
    monkeypatch.setattr(R, "_merge_parts", lambda config, parts: (pd.DataFrame(), {}))
    monkeypatch.setenv("XAIBENCH_SCHEDULER", "serial")
    runs = [dict(dataset=d, editor=e, n_texts=n) for d, n in (("imdb", 500), ("newsgroups", 1000))
            for e in ("polyjuice", "textfooler", "mice")]
    R.run_experiments(runs, progress=False)
    # texts x CHAIN_COST: 2200, 1600, 1100, 800, 100, 50
    assert sent == [("newsgroups", "textfooler"), ("newsgroups", "mice"), ("imdb", "textfooler"),
                    ("imdb", "mice"), ("newsgroups", "polyjuice"), ("imdb", "polyjuice")]


def test_chain_parts_balance_the_workers():
    from xaibench.evaluation.cf_feedback import runner as R

    # report 22's full run (seconds of each run): TextFooler on Newsgroups, 38 min, is the floor of one cell per run
    costs, texts = [2288, 1497, 1088, 823, 82, 53], [1000, 1000, 500, 500, 1000, 500]
    assert R.chain_parts(costs, texts, 1) == [1] * 6  # one worker: nothing to balance
    # two workers: one cell per run is within a few percent of an even share, and stays so
    assert R.chain_parts([R.chain_cost(R.chain_config(d, e, n)) for d, n in (("imdb", 500), ("newsgroups", 1000))
                          for e in R.EDITOR_ORDER], [500] * 3 + [1000] * 3, 2) == [1] * 6
    for workers in (3, 4, 8):
        ks = R.chain_parts(costs, texts, workers)
        assert ks[0] > 1 and all(1 <= k <= n for k, n in zip(ks, texts))

        def span(ks):
            return R._lpt_span([c / k + R.PART_OVERHEAD for c, k in zip(costs, ks) for _ in range(k)], workers)

        assert span(ks) < span([1] * 6)
        assert span(ks) < 1.15 * (sum(costs) + R.PART_OVERHEAD * sum(ks)) / workers  # close to an even share
    assert R.chain_parts([4.0, 2.0, 0.1], [2, 2, 2], 2) == [1, 1, 1]  # tiny runs: a part's set-up would dominate
    assert R.chain_parts([1000.0], [3], 8) == [3]  # never more parts than texts
    # one editor's two runs (the scorecard's run of an editor): the Newsgroups run is a floor on two workers too
    assert R.chain_parts([2200.0, 1100.0], [1000, 500], 2)[0] > 1
    assert R.chain_cost(R.chain_config("imdb", "textfooler", 500)) == pytest.approx(1100.0)
    assert R._part_bounds(5, 0, 2) == (0, 2) and R._part_bounds(5, 1, 2) == (2, 5)


def test_a_split_run_equals_the_unsplit_run_and_is_stored_as_its_one_entry(toy, monkeypatch):
    """Parts of a run (slices of its texts, in separate cells) give exactly the unsplit chains, stored under the
    unsplit run's key: a store made either way is read back by the other."""
    from xaibench.data import cf_data
    from xaibench.evaluation.cf_feedback import runner as R

    texts = ["good film here now", "bad film here now", "a good plot", "very bad acting here", "good"]
    monkeypatch.setattr(cf_data, "sample_test", lambda d, n, seed=42, max_words=None: pd.DataFrame(
        {"text": texts[:n], "label": [1, 0, 1, 0, 1][:n]}))
    runs = [dict(dataset="imdb", editor="toy_drop_first", n_texts=5, n_steps=3),
            dict(dataset="imdb", editor="toy_drop_first", n_texts=3, n_steps=2)]
    whole = R.run_experiments(runs, progress=False, parts=1)
    for parts in (2, 3, 9):  # 9: capped at one part per text
        split = R.run_experiments(runs, progress=False, parts=parts, refresh=True)
        for (a, sa), (b, sb) in zip(whole, split):
            pd.testing.assert_frame_equal(b.drop(columns="seconds"), a.drop(columns="seconds"), check_exact=True)
            for k in ("n_texts", "n_edit_steps", "n_carried_steps", "n_chains_carried",
                      "n_texts_longer_than_model_reads"):
                assert sb[k] == sa[k], k
            # each part has its own memo of scored texts: a text two parts reach is scored twice
            assert sb["predictor_texts_per_edit"] >= sa["predictor_texts_per_edit"]
            assert "n_parts" not in sa and sb["n_parts"] == min(parts, sa["n_texts"])
    # the split run's entry is the run's one entry: run_experiment reads it back, computing nothing
    n_calls = len(toy)
    again = R.run_experiment("imdb", "toy_drop_first", 5, n_steps=3)
    assert len(toy) == n_calls and again[1]["n_parts"] == 5
    pd.testing.assert_frame_equal(again[0].drop(columns="seconds"), whole[0][0].drop(columns="seconds"),
                                  check_exact=True)
    with pytest.raises(ValueError, match="parts=0"):
        R.run_experiments(runs, parts=0)


@pytest.mark.slow
def test_split_editor_chains_equal_the_unsplit_ones_serial_and_in_worker_processes(tmp_path, monkeypatch):
    """Real editors on real texts, the quick profile's settings: each run split into parts (computed serially in
    this process, and by two worker processes) gives exactly the chains of the unsplit run."""
    from xaibench.evaluation.cf_feedback import runner as R
    from xaibench.evaluation.cf_feedback.protocol import SETTINGS

    monkeypatch.setattr(paths, "results_dir", lambda: tmp_path / "results")  # the driver's stores only
    q = SETTINGS["quick"]
    runs = [dict(dataset=d, editor=e, n_texts=3, n_steps=q["n_steps"], max_train=q["max_train"],
                 lm_max_texts=q["lm_max_texts"], infiller=q["mice_infiller"] if e == "mice" else "bigram")
            for d in ("imdb", "newsgroups") for e in R.EDITOR_ORDER]
    monkeypatch.setenv("XAIBENCH_SCHEDULER", "serial")
    whole = R.run_experiments(runs, progress=False, parts=1)
    split = R.run_experiments(runs, refresh=True, progress=False, parts=3)
    monkeypatch.setenv("XAIBENCH_SCHEDULER", "processes:2")
    parallel = R.run_experiments(runs, refresh=True, progress=False, parts=2)
    for (a, sa), (b, sb), (c, sc) in zip(whole, split, parallel):
        pd.testing.assert_frame_equal(b.drop(columns="seconds"), a.drop(columns="seconds"), check_exact=True)
        pd.testing.assert_frame_equal(c.drop(columns="seconds"), a.drop(columns="seconds"), check_exact=True)
        assert sa["n_edit_steps"] == sb["n_edit_steps"] == sc["n_edit_steps"] and sb["n_parts"] == 3
        assert sa.get("n_swaps") == sb.get("n_swaps") == sc.get("n_swaps")


@pytest.mark.slow
def test_editor_chains_are_the_same_in_worker_processes(tmp_path, monkeypatch):
    """Real editors on real texts: the chains two local worker processes compute equal the serial ones."""
    from xaibench.evaluation.cf_feedback import runner as R

    monkeypatch.setattr(paths, "results_dir", lambda: tmp_path / "results")  # the driver's stores only
    runs = [dict(dataset=d, editor=e, n_texts=2, n_steps=2, max_train=500, lm_max_texts=200)
            for d in ("imdb", "newsgroups") for e in ("polyjuice", "textfooler")]
    monkeypatch.setenv("XAIBENCH_SCHEDULER", "serial")
    serial = R.run_experiments(runs, progress=False)
    monkeypatch.setenv("XAIBENCH_SCHEDULER", "processes:2")
    parallel = R.run_experiments(runs, refresh=True, progress=False)
    for (a, sa), (b, sb) in zip(serial, parallel):
        pd.testing.assert_frame_equal(a.drop(columns="seconds"), b.drop(columns="seconds"))
        assert sa["n_edit_steps"] == sb["n_edit_steps"]
