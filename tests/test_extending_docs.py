"""docs/extending.md runs as written: the explainer file of section 1 (registered with one call and
picked up by every protocol that scores attributions), the protocol of section 2, the script of
sections 4-6, and (slow) the one-command scoring of section 1."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from xaibench import registry

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "extending.md"
EXAMPLE = ROOT / "docs" / "examples" / "occlusion.py"


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def _section(title_prefix: str, until: str | None = None) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(title_prefix)
    end = text.index(until, start) if until else len(text)
    return text[start:end]


@pytest.fixture
def clean_registry():
    from xaibench.evaluation.protocol import load_builtins

    load_builtins()  # the built-ins are part of the state the test starts from and ends with
    before_e, before_p, plugins = dict(registry._EXPLAINERS), dict(registry._PROTOCOLS), set(registry._PLUGINS_LOADED)
    yield
    registry._EXPLAINERS.clear(), registry._EXPLAINERS.update(before_e)
    registry._PROTOCOLS.clear(), registry._PROTOCOLS.update(before_p)
    registry._PLUGINS_LOADED.clear(), registry._PLUGINS_LOADED.update(plugins)


class KeywordModel:
    """p(positive) = 0.9 when "good" is in the text, else 0.2."""

    def predict_proba(self, texts):
        p = np.array([0.9 if "good" in t.split() else 0.2 for t in texts])
        return np.stack([1 - p, p], axis=1)


def test_the_doc_shows_the_example_file_as_it_is():
    [block] = _blocks(_section("## 1.", "## 2."), "python")
    assert block.strip() in EXAMPLE.read_text(encoding="utf-8")
    assert len(block.strip().splitlines()) <= 25  # "an explainer of about 20 lines"


def test_the_example_explainer_registers_and_every_attribution_protocol_takes_it(clean_registry):
    from xaibench.evaluation.protocol import protocols_for

    assert registry.load_plugins(str(EXAMPLE)) == [str(EXAMPLE)]
    spec = registry.explainer_spec("occlusion")
    assert (spec.output, spec.family, spec.source) == ("attribution", "local", "user")
    takers = {p.name for p in protocols_for() if "occlusion" in p.explainer_names("all")}
    assert takers == {"human_grounded", "cf_faithfulness", "attribution_gt", "eraser"}
    [a] = spec.make().fit(KeywordModel()).explain(["a good movie"])
    assert a.target == 1 and a.tokens == ["a", "good", "movie"]
    assert a.scores.tolist() == pytest.approx([0.0, 0.7, 0.0])  # deleting "good": 0.9 -> 0.2


POS = ["a great movie", "i loved it , wonderful", "good acting and a great plot", "really enjoyable film"]
NEG = ["a terrible movie", "i hated it , awful", "bad acting and a boring plot", "really boring film"]


@pytest.fixture(scope="module")
def tiny_cnn():
    from xaibench.models.cnn import CNNClassifier

    return CNNClassifier(2, seed=0, epochs=4, batch_size=4, lr=1e-2, cache=False).fit(
        POS + NEG, [1] * 4 + [0] * 4, POS + NEG, [1] * 4 + [0] * 4)


def test_the_example_explains_the_models_tokens_and_draws_beside_the_projects_explainers(clean_registry, tiny_cnn):
    """Notebook 11 draws each added explainer in one heat map with the paper's (`make human ...
    EXPLAINERS=occlusion`): its tokens must be the CNN's, whatever the case and punctuation of the text."""
    from xaibench import viz
    from xaibench.explainers.local import make_explainer

    registry.load_plugins(str(EXAMPLE))
    text = "A GREAT movie, really good acting!"
    [a] = registry.explainer_spec("occlusion").make().fit(tiny_cnn).explain([text])
    [r] = make_explainer("random_words").fit(tiny_cnn).explain([text])
    assert a.tokens == r.tokens == ["a", "great", "movie", ",", "really", "good", "acting", "!"]
    viz.png_heatmap({"Random (W)": r, "occlusion": a})


def test_an_explainer_with_tokens_of_its_own_is_refused_at_its_first_explanation(tiny_cnn):
    from xaibench.explainers.base import Attribution, LocalExplainer

    class SplitOnSpaces(LocalExplainer):
        def explain(self, texts, targets=None):
            return [Attribution(t, t.split(), np.zeros(len(t.split())), 0) for t in texts]

    assert SplitOnSpaces().fit(tiny_cnn).explain(["a good movie"])[0].tokens == ["a", "good", "movie"]
    with pytest.raises(ValueError, match=r"explains 'A good movie!' as the tokens \['A', 'good', 'movie!'\] but "
                                         r"the protocols score one value per token of the model, here \['a', 'good', "
                                         r"'movie', '!'\]: build each Attribution on self.tokens\(text\)"):
        SplitOnSpaces().fit(tiny_cnn).explain(["A good movie!"])


def occlusion_cell(text: str, explainer_class):
    from tests.test_extending_docs import KeywordModel

    [a] = explainer_class().fit(KeywordModel()).explain([text])
    return a.scores.tolist()


def test_a_plugin_files_explainer_runs_in_worker_processes(clean_registry):
    """A plug-in loaded from a .py file lives in a module no worker can import by name; its classes must
    travel by value to the workers of the parallel backends (here: the class itself is the cell's argument; one worker process)."""
    import functools

    from xaibench import executor

    registry.load_plugins(str(EXAMPLE))
    cls = type(registry.explainer_spec("occlusion").make())
    got = executor.get_executor("processes:1").map(functools.partial(occlusion_cell, explainer_class=cls),
                                                   ["a good movie", "good"])
    assert got[0] == pytest.approx([0.0, 0.7, 0.0]) and got[1] == pytest.approx([0.7])


def test_a_bad_plugin_is_named():
    with pytest.raises(ValueError, match=r"XAIBENCH_PLUGINS='nope/missing.py': 'nope/missing.py' could not be imported"):
        registry.load_plugins("nope/missing.py")


def test_the_protocol_of_section_2_sees_every_attribution_explainer(clean_registry):
    from xaibench.evaluation.protocol import load_builtins

    load_builtins()
    [block] = _blocks(_section("## 2.", "## 3."), "python")
    exec(compile(block, "extending.md section 2", "exec"), {})
    rows = registry.protocols()["mean_relevance"].score("all", profile="quick", seeds=[42])
    assert set(rows["explainer"]) == {s.name for s in registry.explainer_specs(output="attribution")}


@pytest.mark.slow
def test_the_script_of_sections_4_to_6_runs(tmp_path):
    script = tmp_path / "example.py"
    script.write_text("\n".join(_blocks(_section("## 4."), "python")), encoding="utf-8")
    res = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"})
    assert res.returncode == 0, res.stderr[-3000:]
    assert "leave_one_out" in res.stdout and "reloaded NaiveBayesClassifier" in res.stdout


@pytest.mark.slow
def test_the_one_command_of_section_1_scores_the_example():
    [cmd] = [line for b in _blocks(_section("## 1.", "## 2."), "bash") for line in b.splitlines()
             if "xaibench.evaluation.scorecard" in line]
    res = subprocess.run(["bash", "-c", cmd], cwd=ROOT, capture_output=True, text=True, timeout=900,
                         env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"})
    assert res.returncode == 0, res.stderr[-3000:]
    ranked = [line for line in res.stdout.splitlines() if line.startswith("| eraser")]
    assert {"occlusion", "random_words", "lime"} <= {line.split("|")[2].strip() for line in ranked}
