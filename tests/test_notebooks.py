"""Papermill smoke run of every notebook in the quick profile (outputs go to reports/quick), with
checks on the executed report: each paper's evaluation notebook ends with its claims table, and a
notebook that saves figures shows them."""
from pathlib import Path

import pytest

from tests.helpers.report_checks import CLAIMS_NOTEBOOKS, claims_cell_problems, code_cells, figures_required, png_outputs

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# extra parameters that keep a smoke run small (the MiniLM path of the concept explainers is
# exercised by notebook 10, the LSTM path by notebook 20)
QUICK_PARAMS = {"20_cebab_evaluation": {"models": "lstm", "tasks": "5-way"}}


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


# `make test` runs on two pytest-xdist workers (--dist loadgroup): a notebook that reuses what
# another one stores runs after it on the same worker (tests of one group run in collection order)
GROUPS = {"02": "cebab", "03": "cebab", "10": "cebab", "20": "cebab", "11": "human", "21": "human",
          "12": "cf_feedback", "22": "cf_feedback", "13": "attribution_gt", "24": "attribution_gt"}


def _param(nb_path):
    group = GROUPS.get(nb_path.name[:2], nb_path.stem)
    return pytest.param(nb_path, id=nb_path.stem, marks=pytest.mark.xdist_group(group))


@pytest.mark.parametrize("nb_path", [_param(p) for p in NOTEBOOKS])
def test_notebook_runs_in_quick_profile(nb_path, tmp_path, monkeypatch):
    import nbformat
    import papermill as pm

    monkeypatch.setenv("XAIBENCH_PROFILE", "quick")
    out = tmp_path / nb_path.name
    pm.execute_notebook(str(nb_path), str(out), parameters={"profile": "quick", **_seed_params(nb_path), **QUICK_PARAMS.get(nb_path.stem, {})},
                        cwd=str(ROOT / "notebooks"), kernel_name="python3", progress_bar=False)
    assert out.exists()
    report = nbformat.read(out, as_version=4)
    paper = CLAIMS_NOTEBOOKS.get(nb_path.name[:2])
    if paper:
        problems = claims_cell_problems(report, paper)
        assert not problems, f"{nb_path.name}: claims cell: " + "; ".join(problems)
    if any(figures_required(c.source) for c in code_cells(report)):
        assert sum(png_outputs(c) for c in code_cells(report)) >= 1, \
            f"{nb_path.name} saves figures but its executed report shows none (save_figure displays them)"
