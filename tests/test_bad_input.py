"""Bad input gives one clear error, never a silent number.

One parametrized case per kind of bad input, each on a public entry point of the counterfactual
editors and chains (Filandrianos et al.), the ground-truth attribution pipelines (Zhou et al.) and
the counterfactual-faithfulness metrics (Ge et al.).  Every case asserts the error type and that
the message names the parameter (and, where it helps, the bad value or what is allowed).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.helpers.toy_text import NEG, POS, TEXTS, sentiment_logreg, toy_vectors, toy_wordnet


# ----------------------------------------------------------------------------------------------
# fixtures: tiny hand-made models and editors (nothing trained beyond a few steps)
# ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def clf():
    return sentiment_logreg()


@pytest.fixture(scope="module")
def editors(clf):
    from xaibench.explainers.counterfactual.mice import MiCE
    from xaibench.explainers.counterfactual.ngram import BigramLM
    from xaibench.explainers.counterfactual.polyjuice import Polyjuice
    from xaibench.explainers.counterfactual.textfooler import TextFooler

    lm = BigramLM(min_count=1).fit([t.split() for t in POS + NEG], [1] * 3 + [0] * 3)
    return {"mice": MiCE(lm=lm, seed=1).fit(clf),
            "polyjuice": Polyjuice(lm=lm, wordnet=toy_wordnet(), seed=3).fit(None),
            "textfooler": TextFooler(vectors=toy_vectors(), wordnet=toy_wordnet(), min_similarity=0.0,
                                     min_cos=0.0).fit(clf)}


@pytest.fixture(scope="module")
def lr3():
    """Ge et al.'s model with 3 tabular features, two values each (ids 1..6), embeddings by hand."""
    from tests.test_cf_faithfulness import hand_lr

    return hand_lr({1: 0.0, 2: 1.0, 3: 0.0, 4: 1.0, 5: 0.0, 6: 1.0})


X1 = np.array([[2, 4, 6]])
TOY = ["the beer head nice", "a beer color dark", "the gold foam nice", "a dark lace head"]


def _raises(call, error, *needles):
    with pytest.raises(error) as e:
        call()
    for n in needles:
        assert n in str(e.value), f"{n!r} not in the message: {e.value}"
    return str(e.value)


# ----------------------------------------------------------------------------------------------
# 1. a single string where a list of texts is expected
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("entry", ["mice", "polyjuice", "textfooler", "run_chains", "rationale_fit"])
def test_single_string_instead_of_texts(entry, editors, clf):
    from xaibench.evaluation.cf_feedback import metrics as cf
    from xaibench.models.rationale import RationaleModel

    text = "a good film"
    calls = {
        **{name: (lambda ed=ed: ed.explain(text)) for name, ed in editors.items()},
        "run_chains": lambda: cf.run_chains(editors["textfooler"], cf.CountingPredictor(clf), text, n_steps=1),
        "rationale_fit": lambda: RationaleModel(hidden=4, max_epochs=1).fit(text, [0, 1], TOY[:2], [0, 1]),
    }
    msg = _raises(calls[entry], TypeError, "texts", "single string")
    assert "wrap it" in msg


# ----------------------------------------------------------------------------------------------
# 2. feature ids that are float, negative or NaN, and NaN explainer scores (Ge et al. metrics)
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["float_ids", "negative_ids", "nan_ids", "nan_scores", "too_large_ids"])
def test_ge_metrics_refuse_bad_ids_and_scores(case, lr3):
    from xaibench.evaluation.cf_faithfulness import metrics as cfm

    t = np.array([1])
    if case == "float_ids":  # 0.0 would be cast to feature 0 silently
        _raises(lambda: cfm.erasure_scores(lr3, X1, np.array([[0.0]]), t), TypeError, "selected", "integer")
    elif case == "negative_ids":  # -2 was ignored like the -1 padding
        _raises(lambda: cfm.discrete_counterfactuals(lr3, X1, np.array([[-2]]), t), ValueError, "selected", "-2",
                "-1 (none)")
    elif case == "nan_ids":  # NaN >= 0 is False: the NaN id was dropped and recall computed without it
        _raises(lambda: cfm.ground_truth_recall(np.array([[np.nan, 1.0]]), np.array([[0, 1]])), TypeError,
                "selected", "NaN")
    elif case == "too_large_ids":
        _raises(lambda: cfm.erasure_scores(lr3, X1, np.array([[3]]), t), ValueError, "selected", "[0, 2]")
    else:  # a NaN score was never selected: top-k chose among the other features
        _raises(lambda: cfm.top_k(np.array([[np.nan, 2.0, 1.0]]), X1, 1), ValueError, "scores", "nan")


# ----------------------------------------------------------------------------------------------
# 3-4. n_explain of 0 or below; n_train below zero
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["image", "text"])
@pytest.mark.parametrize("value", [0, -3])
def test_n_explain_must_be_positive(where, value):
    from xaibench.evaluation.attribution_gt.image_runner import ImageConfig
    from xaibench.evaluation.attribution_gt.text_runner import TextConfig

    cls = ImageConfig if where == "image" else TextConfig
    _raises(lambda: cls(n_explain=value), ValueError, "n_explain", str(value), ">= 1")


@pytest.mark.parametrize("where", ["image", "text", "article_dataset"])
def test_n_train_must_be_positive(where):
    from xaibench.evaluation.attribution_gt.image_runner import ImageConfig
    from xaibench.evaluation.attribution_gt.text_data import build_article_dataset
    from xaibench.evaluation.attribution_gt.text_runner import TextConfig

    df = pd.DataFrame({"text": TOY, "label": [1, 0, 1, 0]})
    calls = {"image": lambda: ImageConfig(n_train=-1), "text": lambda: TextConfig(n_train=-1),
             # n_train=-1 sliced the shuffled reviews from the end: a silently wrong split
             "article_dataset": lambda: build_article_dataset(df, n_train=-1, n_val=1, n_test=1)}
    _raises(calls[where], ValueError, "n_train", "-1", ">= 1")


# ----------------------------------------------------------------------------------------------
# 5. images that are float in [0, 1], above 255 or NaN (were cast to uint8 silently)
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["float01", "above255", "nan"])
@pytest.mark.parametrize("entry", ["manipulation", "normalise"])
def test_images_must_be_uint8(case, entry):
    from xaibench.evaluation.attribution_gt import manipulations as mp
    from xaibench.models.resnet_small import normalise

    rng = np.random.default_rng(0)
    img = {"float01": rng.random((16, 16, 3)),
           "above255": rng.integers(0, 600, (16, 16, 3)),
           "nan": np.full((16, 16, 3), np.nan)}[case]
    error = ValueError if case in ("above255", "nan") else TypeError
    if entry == "manipulation":
        m = mp.Manipulation("noise", {"top": 0, "bottom": 223, "noise_p": 0.5})
        msg = _raises(lambda: m(img, rng), error, "img")
    else:
        msg = _raises(lambda: normalise(img[None]), error, "images")
    assert "0..255" in msg
    if case == "float01":
        assert "[0, 1]" in msg


# ----------------------------------------------------------------------------------------------
# 6. labels that are not 0..K-1 (the rationale model built a 3-class model from labels {0, 2})
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("labels", [[0, 2, 0, 2], [1, 2, 1, 2], [0, 1, 0, -1], [0, 1.5, 0, 1]])
def test_rationale_labels_must_be_class_indices(labels):
    from xaibench.models.rationale import RationaleModel

    _raises(lambda: RationaleModel(hidden=4, max_epochs=1).fit(TOY, labels, TOY[:2], [0, 1]), ValueError, "labels",
            "0..K-1" if 1.5 not in labels else "1.5")


# ----------------------------------------------------------------------------------------------
# 7. an empty effective region (Attr% 0.0 was returned)
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4,), (3, 3)])
def test_attr_pct_refuses_an_empty_region(shape):
    from xaibench.evaluation.attribution_gt import attr_pct

    _raises(lambda: attr_pct(np.ones(shape), np.zeros(shape, bool)), ValueError, "er", "empty")
    assert attr_pct(np.ones(shape), np.zeros(shape, bool), allow_empty=True) == 0.0  # asked for explicitly


# ----------------------------------------------------------------------------------------------
# 8. a target list shorter than the texts (zip dropped the texts without a target)
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["mice", "polyjuice", "textfooler"])
def test_editor_targets_one_per_text(name, editors):
    _raises(lambda: editors[name].explain(TEXTS, [0]), ValueError, "targets", f"{len(TEXTS)} texts but 1")
    if editors[name].uses_predictor:  # the predictor's classes bound the targets
        _raises(lambda: editors[name].explain(TEXTS[:1], [7]), ValueError, "targets", "[0, 1]")


# ----------------------------------------------------------------------------------------------
# 9. feature explainers cut long sentences at the model's word slots: recorded as truncation
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["logistic_regression", "omission"])
def test_feature_explainers_record_truncation(name):
    from xaibench.data.feature_data import FeatureSpec
    from xaibench.explainers.feature import make_feature_explainer
    from xaibench.models.embedding_lr import EmbeddingLR

    spec = FeatureSpec("text", ["w0", "w1", "w2"], vocab=["<pad>", "<unk>", "good", "bad", "film"])
    model = EmbeddingLR(spec=spec, emb_dim=1)
    exp = make_feature_explainer(name).fit(model)
    long, short = "good  film bad good bad", "good film"
    a_long, a_short = exp.explain([long, short])
    assert a_long.truncated is True and a_long.chars_read == len("good  film bad")
    assert a_long.tokens == ["good", "film", "bad"] and long[:a_long.chars_read].split() == a_long.tokens
    assert a_short.truncated is False and a_short.chars_read == len(short)
    assert model.chars_read(long) == a_long.chars_read  # the model says so too (local explainers read it)


# ----------------------------------------------------------------------------------------------
# 10. opaque errors from deep inside pandas, numpy or torch become messages about the input
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["chains_without_text_id", "per_step_without_columns", "empty_texts",
                                  "nan_label", "none_text_to_spacy", "nan_target"])
def test_opaque_errors_name_the_input(case, editors, clf):
    from xaibench.evaluation.cf_feedback import metrics as cf
    from xaibench.evaluation.cf_feedback.runner import table_per_step
    from xaibench.models.rationale import RationaleModel

    if case == "chains_without_text_id":  # was KeyError: 'text_id'
        chains = pd.DataFrame({"step": [0, 1], "minimality": [np.nan, 2.0], "flipped": [np.nan, True]})
        _raises(lambda: cf.chain_distances(chains), ValueError, "chains", "'text_id'", "run_chains")
    elif case == "per_step_without_columns":
        chains = pd.DataFrame({"dataset": ["imdb"], "editor": ["mice"], "text_id": [0], "step": [0]})
        _raises(lambda: table_per_step(chains), ValueError, "chains", "'minimality'")
    elif case == "empty_texts":  # an empty chain table, then KeyError: 'text_id'
        _raises(lambda: cf.run_chains(editors["mice"], cf.CountingPredictor(clf), [], n_steps=1), ValueError,
                "texts", "empty")
    elif case == "none_text_to_spacy":  # was spaCy's "[E1041] Expected a string, Doc, or bytes as input"
        _raises(lambda: editors["polyjuice"].explain(["a good film", None]), TypeError, "texts", "item 1",
                "NoneType")
    elif case == "nan_target":  # was "cannot convert float NaN to integer"
        _raises(lambda: editors["mice"].explain(TEXTS[:1], [np.nan]), ValueError, "targets", "NaN")
    else:  # NaN cast to int: IndexError "Target -9223372036854775808 is out of bounds" inside torch
        _raises(lambda: RationaleModel(hidden=4, max_epochs=1).fit(TOY, [0, 1, np.nan, 1], TOY[:2], [0, 1]),
                ValueError, "labels", "NaN")


# ----------------------------------------------------------------------------------------------
# 11. what an entry cannot honestly compute is refused, saying what was wrong
# ----------------------------------------------------------------------------------------------
def test_attention_and_rationale_models_refuse_texts_without_a_word():
    """Empty text got attention-model probabilities and a one-token rationale, and trained without complaint."""
    from xaibench.models.attention_bilstm import AttentionBiLSTMClassifier
    from xaibench.models.rationale import RationaleModel

    _raises(lambda: RationaleModel(hidden=4, max_epochs=1).fit(TOY[:3] + [" "], [0, 1, 0, 1], TOY[:2], [0, 1]),
            ValueError, "texts: item 3", "without a word")
    _raises(lambda: AttentionBiLSTMClassifier(hidden=4, max_epochs=1, cache=False).fit(
        TOY, [0, 1, 0, 1], TOY[:1] + [""], [0, 1]), ValueError, "dev_texts: item 1", "without a word")
    rat = RationaleModel(hidden=4, max_epochs=1).fit(TOY, [0, 1, 0, 1], TOY[:2], [0, 1])
    _raises(lambda: rat.predict_select(["a beer", ""]), ValueError, "item 1", "without a word")
    att = AttentionBiLSTMClassifier(hidden=4, max_epochs=1, cache=False).fit(TOY, [0, 1, 0, 1], TOY[:2], [0, 1])
    _raises(lambda: att.attention_weights([""]), ValueError, "item 0", "without a word")
    assert len(att.attention_weights(["a beer"])[0]) == 2


def _text_lr():
    from xaibench.data.feature_data import FeatureSpec
    from xaibench.models.embedding_lr import EmbeddingLR

    spec = FeatureSpec("text", ["w0", "w1", "w2"], vocab=["<pad>", "<unk>", "good", "bad", "film"])
    return EmbeddingLR(spec=spec, emb_dim=1)


def test_feature_ids_outside_their_slot_are_refused():
    """A negative id wrapped to the table's end and another feature's value was scored."""
    from xaibench.data.feature_data import FeatureSpec
    from xaibench.models.embedding_lr import EmbeddingLR

    text = _text_lr()
    ok = np.array([[2, 4, 0]])
    assert text.proba_ids(ok).shape == (1, 2)
    for bad, needle in (([[2, -1, 0]], "id -1 in row 0, slot 1"), ([[2, 5, 0]], "id 5 in row 0, slot 1"),
                        ([[2, 4]], "rows of 3 ids")):
        for call in (text.proba_ids, text.contributions, text.embed_ids):
            _raises(lambda: call(np.array(bad)), ValueError, needle)
    tab = EmbeddingLR(spec=FeatureSpec("tabular", ["age", "sex"], values=[["young", "old"], ["f", "m", "x"]]), emb_dim=1)
    assert tab.proba_ids(np.array([[1, 3], [2, 5], [0, 0]])).shape == (3, 2)
    _raises(lambda: tab.proba_ids(np.array([[3, 3]])), ValueError, "id 3 in row 0, slot 0 (age)", "[1, 2]")
    _raises(lambda: tab.fit_ids(np.array([[1, 6]]), np.array([0])), ValueError, "slot 1 (sex)", "[3, 5]")


@pytest.mark.parametrize("name", ["lime", "anchor", "decision_boundary"])
def test_feature_explainers_refuse_empty_texts_and_explain_one_word(name):
    """LIME, Anchor and Decision Boundary crashed on empty or one-word text ("low >= high", "kth out of bounds")."""
    from xaibench.data.feature_data import FeatureSpec  # noqa: F401
    from xaibench.explainers.feature import make_feature_explainer

    model = _text_lr()
    train = model.spec.from_texts(["good film", "bad film bad", "good good", "film"])
    exp = make_feature_explainer(name).fit(model, train)
    _raises(lambda: exp.explain(["good film", ""]), ValueError, "texts: item 1", "without a word")
    _raises(lambda: exp.explain_ids(np.array([[2, 4, 0], [0, 0, 0]])), ValueError, "row 1 has no feature")
    (a,) = exp.explain(["good"])
    assert a.tokens == ["good"] and len(a.scores) == 1 and np.isfinite(a.scores).all()


@pytest.mark.parametrize("params,needle", [
    ({"top": 130, "bottom": 80, "noise_p": 0.03}, "inverted"), ({"top": 80, "bottom": 80, "noise_p": 0.03}, "zero size"),
    ({"top": 80, "bottom": 130, "noise_p": 1.5}, "noise_p=1.5"), ({"top": 80, "bottom": 130, "noise_p": 0}, "(0, 1]"),
    ({"top": 80, "bottom": float("nan"), "noise_p": 0.03}, "not a finite number"),
])
def test_image_manipulations_refuse_degenerate_regions_and_rates(params, needle):
    """An inverted or zero-size region left the image unchanged with an empty region; noise_p=1.5 passed."""
    from xaibench.evaluation.attribution_gt.manipulations import Manipulation

    _raises(lambda: Manipulation("noise", params), ValueError, "noise manipulation", needle)


def test_image_manipulations_refuse_inverted_rectangles_and_regions_off_the_image():
    from xaibench.evaluation.attribution_gt.manipulations import Manipulation

    _raises(lambda: Manipulation("watermark", {"top": 10, "bottom": 60, "left": 150, "right": 40, "fontsize": 13}),
            ValueError, "left=150, right=40 is inverted")
    _raises(lambda: Manipulation("brightness", {"radius": 0, "shift": -0.3}), ValueError, "radius > 0")
    off = Manipulation("hue", {"top": 300, "bottom": 400, "shift": 0.1})
    img = np.full((32, 32, 3), 128, dtype=np.uint8)
    _raises(lambda: off(img, np.random.default_rng(0)), ValueError, "covers no pixel of a 32-px image")
    ok = Manipulation("noise", {"top": 80, "bottom": 130, "noise_p": 1.0})(img, np.random.default_rng(0))
    assert (ok != img).any()


def test_top_k_refuses_k_beyond_the_features():
    """top_k with k larger than the features returned fewer without saying so."""
    from xaibench.evaluation.cf_faithfulness.metrics import top_k

    scores, X = np.array([[0.5, -0.2, 0.1]]), np.array([[2, 3, 4]])
    assert top_k(scores, X, 3, "absolute").tolist() == [[0, 1, 2]]
    _raises(lambda: top_k(scores, X, 4), ValueError, "k=4 exceeds the 3 features", "k <= 3")
