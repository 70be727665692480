"""The one registry of explainers and protocols (xaibench.registry): one-call registration, the
older per-family registries as live views of it, and entry-point loading of installed packages."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import xaibench
from xaibench import registry
from xaibench.explainers.base import Attribution, LocalExplainer


class AllOnes(LocalExplainer):
    """Every token gets relevance 1."""

    name = "all_ones_test"

    def explain(self, texts, targets=None):
        return [Attribution(t, t.split(), np.ones(len(t.split())), 0) for t in texts]


@pytest.fixture
def clean_registry():
    from xaibench.evaluation.protocol import load_builtins

    load_builtins()  # the built-ins are part of the state the test starts from and ends with
    before_e, before_p = dict(registry._EXPLAINERS), dict(registry._PROTOCOLS)
    loaded = dict(registry._ENTRY_POINTS_LOADED)
    yield
    registry._EXPLAINERS.clear(), registry._EXPLAINERS.update(before_e)
    registry._PROTOCOLS.clear(), registry._PROTOCOLS.update(before_p)
    registry._ENTRY_POINTS_LOADED.update(loaded)


def test_one_call_reaches_the_older_registries(clean_registry):
    from xaibench.explainers.feature import TextExplainerAdapter, feature_explainer_names, make_feature_explainer
    from xaibench.explainers.local import LOCAL_EXPLAINERS, make_explainer
    from xaibench.evaluation.human_grounded import scorable_methods

    assert "all_ones_test" not in LOCAL_EXPLAINERS
    xaibench.register_explainer("all_ones_test", AllOnes)
    assert LOCAL_EXPLAINERS["all_ones_test"] is AllOnes
    assert isinstance(make_explainer("all_ones_test"), AllOnes)
    assert "all_ones_test" in scorable_methods()          # human-grounded tasks
    assert "all_ones_test" in feature_explainer_names()   # Ge et al., through the adapter
    assert isinstance(make_feature_explainer("all_ones_test"), TextExplainerAdapter)
    spec = registry.explainer_spec("all_ones_test")
    assert (spec.output, spec.family, spec.paper, spec.source) == ("attribution", "local", False, "user")


def test_decorator_forms_and_factory_functions(clean_registry):
    @xaibench.register_explainer
    class Bare(AllOnes):
        name = "bare_test"

    @xaibench.register_explainer("named_test")
    class Named(AllOnes):
        pass

    def factory(**kw):
        return AllOnes()

    xaibench.register_explainer("fn_test", factory, output="attribution")
    from xaibench.explainers.base import applicable
    from xaibench.explainers.local import LOCAL_EXPLAINERS

    assert LOCAL_EXPLAINERS["bare_test"] is Bare and LOCAL_EXPLAINERS["named_test"] is Named
    assert {"bare_test", "named_test", "fn_test"} <= set(applicable(LOCAL_EXPLAINERS, "attribution"))
    assert "fn_test" not in applicable(LOCAL_EXPLAINERS, "concept_effect")


def test_bad_registrations_say_what_is_allowed(clean_registry):
    with pytest.raises(ValueError, match="output='saliency' is not allowed"):
        registry.register_explainer("x_test", AllOnes, output="saliency")
    with pytest.raises(ValueError, match="declares no output"):
        registry.register_explainer("x_test", lambda: None)
    with pytest.raises(ValueError, match="name=''"):
        registry.register_explainer("", AllOnes)
    registry.register_explainer("dup_test", AllOnes)
    with pytest.raises(ValueError, match="already registered"):
        registry.register_explainer("dup_test", type("Other", (AllOnes,), {}))
    with pytest.raises(KeyError, match="unknown explainer 'nope_test'"):
        registry.explainer_spec("nope_test")


def _fake_distribution(root, body: str, eps: str) -> None:
    pkg = root / "fake_xai_plugin"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(body))
    info = root / "fake_xai_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-xai-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(eps))


def test_entry_points_of_an_installed_distribution_are_loaded_lazily(tmp_path, monkeypatch, clean_registry):
    _fake_distribution(tmp_path, """
        import numpy as np
        from xaibench.explainers.base import Attribution, LocalExplainer

        class Zeros(LocalExplainer):
            name = "zeros"
            def explain(self, texts, targets=None):
                return [Attribution(t, t.split(), np.zeros(len(t.split())), 0) for t in texts]

        def register():
            import xaibench
            xaibench.register_explainer("plugin_fn_test", Zeros)

        def broken():
            raise RuntimeError("boom")
        """, """
        [xaibench.explainers]
        plugin_cls_test = fake_xai_plugin:Zeros
        plugin_reg_test = fake_xai_plugin:register
        plugin_broken_test = fake_xai_plugin:broken
        """)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.reload_entry_points()
    with pytest.warns(UserWarning, match="plugin_broken_test.*RuntimeError: boom"):
        names = [s.name for s in registry.explainer_specs(output="attribution")]
    assert {"plugin_cls_test", "plugin_fn_test"} <= set(names)
    spec = registry.explainer_spec("plugin_cls_test")
    assert spec.source == "entry point fake-xai-plugin"
    assert spec.make().explain(["a b"])[0].scores.tolist() == [0.0, 0.0]
