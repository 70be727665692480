"""Explainer lists are parameters: Make's EXPLAINERS (checked by `xaibench.reports check`), the
``explainers`` parameter of notebook 21 (Protocol.run_list) and the scorecard."""
from __future__ import annotations

import pytest

from xaibench.config import check_explainer_list
from xaibench.reports import check_make_params


def test_explainer_list_spelling():
    assert check_explainer_list("") == [] and check_explainer_list(" lime  shap ") == ["lime", "shap"]
    with pytest.raises(ValueError, match="EXPLAINERS='lime,shap': separate the explainers by spaces"):
        check_explainer_list("lime,shap")
    with pytest.raises(ValueError, match="'all' stands alone"):
        check_explainer_list("all lime")
    with pytest.raises(ValueError, match=r"\['l!me'\] are not explainer names"):
        check_explainer_list("l!me")


def test_make_check_knows_the_registered_explainers():
    assert check_make_params({"EXPLAINERS": ""}) == []
    assert check_make_params({"EXPLAINERS": "all"}) == []
    assert check_make_params({"EXPLAINERS": "lime tcav omission"}) == []
    [err] = check_make_params({"EXPLAINERS": "lime nope"})
    assert "EXPLAINERS='lime nope': ['nope'] are not registered explainers" in err and "'tcav'" in err


def test_notebook_21_methods_keep_the_paper_list_and_add_others():
    from xaibench.evaluation import human_grounded as hg

    paper = list(hg.PAPER_METHODS)
    assert hg.methods_for("") == paper                                  # the paper's nine
    assert hg.methods_for("tcav") == paper                              # a concept explainer: not for these tasks
    assert hg.methods_for("shap") == paper + ["shap"]                   # added beside the paper's
    assert hg.methods_for("lrp_ngrams shap") == ["lrp_n", "shap"]       # naming paper methods restricts them
    assert hg.methods_for("all")[:9] == paper and "integrated_gradients" in hg.methods_for("all")
    assert hg.table_label("lrp_n") == "LRP (N)" and hg.table_label("shap") == "shap (added)"


def test_notebook_25_methods_keep_the_paper_saliency_maps_and_add_image_explainers(monkeypatch):
    from xaibench import registry
    from xaibench.evaluation.attribution_gt import image_protocol as ipr
    from xaibench.evaluation.protocol import load_builtins
    from xaibench.explainers.base import ImageExplainer
    from xaibench.explainers.saliency import METHODS

    load_builtins()

    class Ones(ImageExplainer):
        def explain(self, x, targets=None, images=None, **context):
            return None

    monkeypatch.setattr(registry, "_EXPLAINERS", dict(registry._EXPLAINERS))  # restored after the test
    registry.register_explainer("toy_ones_25", Ones)
    assert ipr.methods_for("") == METHODS                                # the paper's five
    assert ipr.methods_for("tcav") == METHODS                            # a concept explainer: not for images
    assert ipr.methods_for("lime tcav") == ("lime",)                     # LIME's name is also an image method
    assert ipr.methods_for("toy_ones_25") == (*METHODS, "toy_ones_25")   # added beside the paper's
    assert ipr.methods_for("cam shap") == ("cam", "shap")                # naming paper methods restricts them
    assert ipr.methods_for("all") == (*METHODS, "toy_ones_25")
    assert ipr.method_label("cam") == "cam" and ipr.method_label("toy_ones_25") == "toy_ones_25 (added)"
    assert ipr.method_label("") == "" and ipr.method_label(None) is None   # summary rows name no method


def test_run_list_of_the_cebab_protocol():
    from xaibench.evaluation.cebab.protocol import PROTOCOL
    from xaibench.evaluation.cebab.runner import EXPLAINERS

    assert PROTOCOL.run_list(" ".join(EXPLAINERS)) == list(EXPLAINERS)   # the paper's list
    assert PROTOCOL.run_list("random approx") == ["random", "approx"]
    assert PROTOCOL.run_list("lime") == list(EXPLAINERS) and PROTOCOL.run_list("all")[:8] == list(EXPLAINERS)


def _papermill_params(*args: str) -> dict[str, dict[str, str]]:
    """``{notebook stem: {parameter: value}}`` of the papermill lines ``make -n -B ARGS`` prints."""
    import shlex
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(["make", "--no-print-directory", "-n", "-B", *args], cwd=root, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    params = {}
    for line in out.stdout.splitlines():
        if " -m papermill " in line:
            cmd = shlex.split(line)
            nb = Path(next(a for a in cmd if a.startswith("notebooks/"))).stem
            params[nb] = {cmd[i + 1]: cmd[i + 2] for i, a in enumerate(cmd) if a == "-p"}
    return params


def test_make_passes_explainers_only_where_asked():
    default = _papermill_params("human", "scorecard", "PROFILE=quick")
    assert "explainers" not in default["21_human_grounded_evaluation"]   # the recorded reports stay current
    assert default["30_scorecard"]["explainers"] == "all"
    given = _papermill_params("human", "scorecard", "PROFILE=quick", "EXPLAINERS=lime shap")
    assert given["21_human_grounded_evaluation"]["explainers"] == "lime shap"
    assert given["30_scorecard"]["explainers"] == "lime shap"
    images = _papermill_params("-o", "reports/full/13_attention_rationales.ipynb", "-o",
                               "reports/full/24_attribution_ground_truth.ipynb", "reports/full/25_attribution_gt_saliency.ipynb")
    assert "explainers" not in images["25_attribution_gt_saliency"]
    given = _papermill_params("reports/full/25_attribution_gt_saliency.ipynb", "EXPLAINERS=cam")
    assert given["25_attribution_gt_saliency"]["explainers"] == "cam"


def test_make_passes_explainers_to_every_notebook_with_an_explainer_list():
    targets = ["reports/quick/" + nb + ".ipynb" for nb in LISTS]
    default = _papermill_params(*targets, "PROFILE=quick")
    given = _papermill_params(*targets, "PROFILE=quick", "EXPLAINERS=all")
    for nb in LISTS:
        assert "explainers" not in default[nb], nb                       # the recorded reports stay current
        assert given[nb]["explainers"] == "all", nb


#: the notebooks whose explainer list is the ``explainers`` parameter (besides 21, 25 and 30 above)
LISTS = ("10_concept_explainers", "11_local_explainers", "13_attention_rationales", "20_cebab_evaluation",
         "23_counterfactual_faithfulness", "24_attribution_ground_truth")


@pytest.mark.parametrize("nb", LISTS)
def test_notebook_explainer_parameter_defaults_to_the_papers_list(nb):
    import json
    from pathlib import Path

    cells = json.loads((Path(__file__).resolve().parents[1] / "notebooks" / f"{nb}.ipynb").read_text())["cells"]
    params = next(c for c in cells if "parameters" in c["metadata"].get("tags", []))
    ns: dict = {}
    exec("".join(params["source"]), ns)
    assert ns["explainers"] == ""                                         # empty: the paper's list
    code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code" and c is not params)
    assert "run_list(explainers)" in code or "methods_for(explainers)" in code


def test_make_passes_explainers_to_the_counterfactual_editor_notebooks():
    targets = ["reports/quick/12_counterfactual_editors.ipynb", "reports/quick/22_counterfactual_feedback.ipynb"]
    default = _papermill_params(*targets, "PROFILE=quick")
    given = _papermill_params(*targets, "PROFILE=quick", "EXPLAINERS=all")
    for nb in ("12_counterfactual_editors", "22_counterfactual_feedback"):
        assert "editors" not in default[nb], nb                          # the paper's three, as recorded
        assert given[nb]["editors"] == "all", nb


def test_make_passes_group_sweeps_to_notebook_25_only_when_set():
    target = "reports/quick/25_attribution_gt_saliency.ipynb"
    assert "group_sweeps" not in _papermill_params(target, "PROFILE=quick")["25_attribution_gt_saliency"]
    assert _papermill_params(target, "PROFILE=quick", "GROUP_SWEEPS=on")["25_attribution_gt_saliency"]["group_sweeps"] == "on"
