"""Counterfactual-feedback predictors and data (Filandrianos et al. 2023)."""
import numpy as np

from xaibench.data.cf_data import NEWSGROUPS7, strip_post
from xaibench.models.logreg import LogRegClassifier


def test_strip_post_removes_header_quotes_footer():
    post = ("From: a@b.c\nSubject: hi\n\nIn article <1@x> someone wrote:\n> quoted line\n"
            "My own words here.\n\n-- \nsignature line\n")
    out = strip_post(post)
    assert "My own words here." in out
    assert "quoted" not in out and "From:" not in out and "signature" not in out


def test_seven_top_level_groups():
    assert NEWSGROUPS7 == ("alt", "comp", "misc", "rec", "sci", "soc", "talk")


def _tiny(n_classes):
    texts = ["good great fun", "great good movie", "bad awful boring", "awful bad plot",
             "meh so so", "so meh okay"][: 2 * n_classes]
    labels = np.repeat(np.arange(n_classes), 2)
    return LogRegClassifier(n_classes, cache=False, ngram_max=2).fit(texts, labels), texts


def test_input_gradient_is_exact_for_linear_model():
    for k in (2, 3):
        clf, texts = _tiny(k)
        X = clf._featurize([texts[0]]).toarray()[0]
        P = clf._predict_proba([texts[0]])[0]
        rel = clf.input_gradient([texts[0]], [1])[0]
        # finite difference of log p_1 along x (scaling every feature by 1+eps) = sum of grad*x
        eps = 1e-5
        import scipy.sparse as sp

        def logp(x):
            z = clf.clf.decision_function(sp.csr_matrix(x[None]))[0]
            if k == 2:
                return -np.log1p(np.exp(-z))
            z = z - z.max()
            return z[1] - np.log(np.exp(z).sum())

        fd = (logp(X * (1 + eps)) - logp(X * (1 - eps))) / (2 * eps)
        assert np.isclose(sum(rel.values()), fd, rtol=1e-3, atol=1e-7)
        assert set(rel) == {"good", "great", "fun"}
        assert P.shape == (k,)
