"""Papermill smoke run of every notebook in the quick profile (outputs go to reports/quick), with
checks on the executed report: each paper's evaluation notebook ends with its claims table, and a
notebook that saves figures shows them."""
from pathlib import Path

import pytest

from tests.helpers.report_checks import CLAIMS_NOTEBOOKS, claims_cell_problems, code_cells, figures_required, png_outputs

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# extra parameters that keep a smoke run small (the MiniLM path of the concept explainers is
# exercised by notebook 10, the LSTM path by notebook 20); notebook 25 runs its species-group sweeps, which the full
# report runs only on a GPU
QUICK_PARAMS = {"20_cebab_evaluation": {"models": "lstm", "tasks": "5-way"},
                "21_human_grounded_evaluation": {"seeds": "42 43"},
                "25_attribution_gt_saliency": {"group_sweeps": "on"}}


def test_sources_are_stored_without_outputs():
    import nbformat

    assert NOTEBOOKS, "no notebooks found"
    for nb_path in NOTEBOOKS:
        nb = nbformat.read(nb_path, as_version=4)
        tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{nb_path.name}: needs exactly one cell tagged 'parameters'"
        assert "profile" in tagged[0].source, f"{nb_path.name}: the parameters cell must define `profile`"
        for c in nb.cells:
            if c.cell_type == "code":
                assert not c.get("outputs"), f"{nb_path.name}: source notebooks are stored without outputs"


def test_every_paper_has_its_evaluation_notebook():
    stems = {p.name[:2] for p in NOTEBOOKS}
    assert set(CLAIMS_NOTEBOOKS) <= stems, f"no evaluation notebook for {sorted(set(CLAIMS_NOTEBOOKS) - stems)}"


def _seed_params(nb_path) -> dict:
    """``seeds="42"`` for a notebook whose parameters take a list of seeds, ``seed=42`` for one that
    takes a single seed."""
    import re

    import nbformat

    nb = nbformat.read(nb_path, as_version=4)
    src = next(c.source for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", []))
    if re.search(r"^seeds\s*=", src, re.M):
        return {"seeds": "42"}
    return {"seed": 42} if re.search(r"^seed\s*=", src, re.M) else {}


# `make test` runs on two pytest-xdist workers: notebooks that reuse what another one stores form one
# test that runs them in order (02 trains the classifiers 03, 10, 20 read; 11 the CNNs of 21; 12 the
# predictors and infillers of 22; 21 the human-grounded rows and 22 the editor chains that the scorecard's
# human_grounded and cf_feedback protocols read, so 30 does not compute them again; 13 the attention runs of 24);
# the other notebooks are tests of their own
CHAINS = [("02", "03", "10", "20"), ("11", "21", "12", "22", "30"), ("13", "24")]


def _notebook_groups() -> list:
    by_prefix = {p.name[:2]: p for p in NOTEBOOKS}
    chained = {n for chain in CHAINS for n in chain}
    groups = [[by_prefix[n] for n in chain if n in by_prefix] for chain in CHAINS]
    groups += [[p] for p in NOTEBOOKS if p.name[:2] not in chained]
    groups = [g for g in groups if g]
    return sorted(groups, key=lambda g: g[0].name)


#: seconds a smoke run of a notebook takes from a fresh clone on 2 CPU cores (about: the cells' durations papermill
#: records in the executed smoke runs of one `make test`), to balance the runs over the two workers; a notebook not
#: listed counts 30 s
SMOKE_SECONDS = {"01": 11, "02": 12, "03": 2, "10": 46, "20": 15, "11": 26, "21": 21, "12": 131, "22": 66, "30": 62,
                 "13": 29, "24": 8, "23": 37, "25": 22}


def _worker_split(groups: list, workers: int = 2) -> list[int]:
    """The worker (0 .. workers-1) of each notebook group: longest first, each to the least loaded worker, so that
    `make test`'s two pytest-xdist workers (``--dist loadgroup``) run about the same notebook time; the unit tests
    fill in around them."""
    load = [0.0] * workers
    out = [0] * len(groups)
    cost = [sum(SMOKE_SECONDS.get(p.name[:2], 30) for p in g) for g in groups]
    for i in sorted(range(len(groups)), key=lambda i: -cost[i]):
        w = load.index(min(load))
        out[i], load[w] = w, load[w] + cost[i]
    return out


def _group_params() -> list:
    groups = _notebook_groups()
    return [pytest.param(g, id="+".join(p.stem for p in g), marks=pytest.mark.xdist_group(f"notebooks-{w}"))
            for g, w in zip(groups, _worker_split(groups))]


@pytest.mark.parametrize("group", _group_params())
def test_notebook_runs_in_quick_profile(group, tmp_path, monkeypatch):
    for nb_path in group:
        _run_quick(nb_path, tmp_path, monkeypatch)


def test_every_notebook_is_smoke_run_once():
    runs = [p for g in _notebook_groups() for p in g]
    assert sorted(runs) == sorted(NOTEBOOKS) and len(runs) == len(set(runs))


def _quick_tradeoff_edits_one_text_of_the_first_dataset():
    """Notebook 22's smoke run edits one text of the first dataset in its MLM-infiller trade-off (each MLM edit of a
    400-word review costs about a second on a CPU), with the words and training texts its quick branch caps."""
    import pandas as pd

    from xaibench import paths

    tab = pd.read_csv(paths.tables_dir() / "cf_feedback_infiller_tradeoff.csv")
    assert tab["dataset"].unique().tolist() == ["imdb"] and set(tab["n_texts"]) == {1}, tab


def _human_grounded_tables_are_over_seeds():
    """Notebook 21 replicates the whole study per seed: the per-seed tables hold each seed once, and the tables
    over seeds are their mean and sample std (two seeds in the smoke run)."""
    import pandas as pd

    from xaibench import paths

    per_seed = pd.read_csv(paths.tables_dir() / "human_grounded_tasks_seeds.csv")
    agg = pd.read_csv(paths.tables_dir() / "human_grounded_tasks.csv")
    # (a method can lose every question of a cell in a smoke run's tiny splits: such rows have one seed)
    assert set(per_seed["seed"]) == {42, 43} and set(agg["n_seeds"]) <= {1, 2} and (agg["n_seeds"] == 2).mean() > 0.5
    keys = ["metric", "task", "dataset", "method", "subset"]
    want = per_seed.groupby(keys, dropna=False)["ours"].agg(["mean", "std"]).reset_index()
    got = agg.merge(want, on=keys, validate="one_to_one")
    assert len(got) == len(agg) and (got["ours"] - got["mean"]).abs().max() < 1e-9
    assert (got["ours_std"].fillna(-1) - got["std"].fillna(-1)).abs().max() < 1e-9
    models = pd.read_csv(paths.tables_dir() / "human_grounded_models_seeds.csv")
    assert sorted(models["seed"]) == sorted([42, 43] * 4)


def _quick_cf_faithfulness_tables_are_the_seed_means():
    """Notebook 23's aggregated scores and correlations are the mean and std over seeds of its per-seed tables
    (xaibench.tables.aggregate_seeds), cell for cell, and the tau ceiling is the mean of the per-seed ceilings."""
    import numpy as np
    import pandas as pd

    from xaibench import paths
    from xaibench.tables import aggregate_seeds

    for name, keys in (("cf_faithfulness_scores", ["dataset", "selection", "k", "metric", "explainer"]),
                       ("cf_faithfulness_correlations",
                        ["dataset", "selection", "k", "explainers", "metric", "statistic"])):
        agg = pd.read_csv(paths.tables_dir() / f"{name}.csv")
        seeds = pd.read_csv(paths.tables_dir() / f"{name}_seeds.csv")
        assert seeds["ours_std"].isna().all() and seeds["seed"].nunique() >= 1
        again = aggregate_seeds(seeds, keys, value="ours")
        both = agg.merge(again, on=keys, suffixes=("", "_seeds"), validate="one_to_one")
        assert len(both) == len(agg) == len(again), name
        for c in ("ours", "ours_std"):
            a, b = both[c].astype(float).to_numpy(), both[f"{c}_seeds"].astype(float).to_numpy()
            assert np.allclose(a, b, equal_nan=True), (name, c)
        if "tau_ceiling" in agg.columns:
            ceil = seeds.groupby(keys)["tau_ceiling"].mean().rename("c").reset_index()
            assert np.allclose(agg.merge(ceil, on=keys)["tau_ceiling"], agg.merge(ceil, on=keys)["c"])


def _predictor_gap_compares_both_predictors_on_the_same_texts():
    """Notebook 12 runs TextFooler's chains against both predictors on the same texts: per predictor a test accuracy,
    flip rates after 1 and 3 edits inside their exact intervals, and inc@1 over those texts."""
    import pandas as pd

    from xaibench import paths

    tab = pd.read_csv(paths.tables_dir() / "cf_feedback_predictor_gap.csv")
    assert sorted(tab["predictor"].unique()) == ["logreg", "minilm"], tab
    for p, g in tab.groupby("predictor"):
        m = g.set_index("metric")
        assert {"test_accuracy", "flip_rate@1", "flip_rate@3", "inc@1"} <= set(m.index), (p, m.index.tolist())
        flips = m.loc[["flip_rate@1", "flip_rate@3"]]
        assert ((flips["ci_low"] <= flips["ours"]) & (flips["ours"] <= flips["ci_high"])).all(), flips
        assert set(flips["n_texts"]) == {2}  # the smoke run's two reviews, the same for both predictors


#: checks of a smoke run's outputs beyond those every notebook gets (the profile is quick while they run)
QUICK_OUTPUT_CHECKS = {"12": _predictor_gap_compares_both_predictors_on_the_same_texts,
                       "21": _human_grounded_tables_are_over_seeds,
                       "22": _quick_tradeoff_edits_one_text_of_the_first_dataset,
                       "23": _quick_cf_faithfulness_tables_are_the_seed_means}


def _run_quick(nb_path, tmp_path, monkeypatch):
    import nbformat

    from xaibench.notebook_engine import execute_notebook

    monkeypatch.setenv("XAIBENCH_PROFILE", "quick")
    out = tmp_path / nb_path.name
    execute_notebook(nb_path, out, parameters={"profile": "quick", **_seed_params(nb_path), **QUICK_PARAMS.get(nb_path.stem, {})},
                        cwd=str(ROOT / "notebooks"), kernel_name="python3", progress_bar=False)
    assert out.exists()
    report = nbformat.read(out, as_version=4)
    paper = CLAIMS_NOTEBOOKS.get(nb_path.name[:2])
    if paper:
        problems = claims_cell_problems(report, paper)
        assert not problems, f"{nb_path.name}: claims cell: " + "; ".join(problems)
    check = QUICK_OUTPUT_CHECKS.get(nb_path.name[:2])
    if check:
        check()
    if any(figures_required(c.source) for c in code_cells(report)):
        assert sum(png_outputs(c) for c in code_cells(report)) >= 1, \
            f"{nb_path.name} saves figures but its executed report shows none (save_figure displays them)"


def test_worker_split_balances_the_notebook_time(monkeypatch):
    from pathlib import Path

    monkeypatch.setitem(globals(), "SMOKE_SECONDS", {"22": 120, "12": 50, "01": 29, "23": 27})  # known costs
    groups = [[Path("22_x")], [Path("12_a"), Path("30_b")], [Path("01_c")], [Path("23_d")]]
    # costs 120, 80 (50 + 30 for a notebook not listed), 29, 27: 120 -> worker 0, 80 -> 1, 29 -> 1 (109), 27 -> 1 (136)
    assert _worker_split(groups) == [0, 1, 1, 1]
    assert _worker_split(groups, workers=1) == [0, 0, 0, 0]
    assert sorted(set(_worker_split(_notebook_groups()))) == [0, 1]
