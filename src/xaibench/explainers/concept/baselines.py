"""Random, Approx (Eq. 6), CONEXP (Eq. 7) and S-Learner (Eq. 8) -- the explainers that need no
access to the model's internals, only its (cached) predictions."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...data.cebab import ASPECTS, CONCEPT_VALUES
from ._common import (AspectPredictor, FittedConceptExplainer, VALUE_CODE, aspect_labels, check_data,
                      check_queries, label_codes, observed_labels, onehot_aspects, proba_lookup, query_seed)


class RandomExplainer(FittedConceptExplainer):
    """The difference of two random probability vectors (uniform entries, L1-normalised), as in the
    authors' ``RandomExplainer``.  Each query's estimate is a function of ``seed`` and the query
    content only, so results do not depend on batching."""

    name = "random"

    def __init__(self, seed: int = 42):
        self.seed = int(seed)

    def fit(self, model: Any, data: Any = None) -> "RandomExplainer":
        self.model = model
        self.n_classes = int(model.n_classes)
        self._fitted = True
        return self

    def explain(self, queries: pd.DataFrame) -> np.ndarray:
        self._require_fit()
        q = check_queries(queries, need=("text", "aspect", "cf_value"))
        out = np.zeros((len(q), self.n_classes))
        for i, (t, a, c) in enumerate(zip(q["text"], q["aspect"], q["cf_value"])):
            u = query_seed(self.seed, t, a, c).uniform(size=(2, self.n_classes))
            u /= u.sum(axis=1, keepdims=True)
            out[i] = u[1] - u[0]
        return out


class ApproxExplainer(FittedConceptExplainer):
    """Approximate counterfactuals (Eq. 6): ``N(phi(x_{u'}^{C=c'})) - N(phi(x_u^{C=c}))`` where
    ``x_{u'}`` is a training review sampled among those whose aspect labels equal the base's labels
    with aspect ``C`` set to ``c'``.

    Labels come from ``aspect_predictor.predict_aspects`` for both the pool and the queries (the paper
    uses its ABSA models); with ``aspect_predictor=None`` the observed majority labels are used instead
    (pool: ``{aspect}_majority``; queries: ``base_{aspect}_majority``) -- a documented fallback.

    The pool is every fit row (train_exclusive holds one text per real-world review, so each is a
    real review of some other situation ``u'``); ``originals_only=True`` restricts it to
    ``is_original`` rows.  Aspects whose target label is missing ('' / no majority) are ignored.

    Fallback when no review matches all labels: among pool reviews with ``C = c'``, those matching the
    largest number of the other aspects are sampled (``match_info_['level'] = 'partial'``); if no pool
    review has ``C = c'`` the estimate is the zero vector (``'none'``).
    """

    name = "approx"

    def __init__(self, aspect_predictor: AspectPredictor | None = None, seed: int = 42,
                 originals_only: bool = False):
        self.aspect_predictor = aspect_predictor
        self.seed = int(seed)
        self.originals_only = bool(originals_only)

    def fit(self, model: Any, data: pd.DataFrame) -> "ApproxExplainer":
        self.model = model
        data = check_data(data, need_aspects=self.aspect_predictor is None)
        if self.originals_only:
            if "is_original" not in data.columns:
                raise ValueError("originals_only=True needs an `is_original` column")
            data = data[data["is_original"].astype(bool)].reset_index(drop=True)
            if len(data) == 0:
                raise ValueError("no original reviews in the fit data")
        self.pool_texts_ = data["text"].tolist()
        labels = aspect_labels(self.aspect_predictor, data, self.pool_texts_)
        self.pool_codes_ = label_codes(labels)
        self.pool_proba_ = proba_lookup(model, self.pool_texts_)
        self._fitted = True
        return self

    def explain(self, queries: pd.DataFrame) -> np.ndarray:
        self._require_fit()
        q = check_queries(queries, need=("text", "aspect", "cf_value"))
        texts = q["text"].tolist()
        qcodes = label_codes(aspect_labels(self.aspect_predictor, q, texts, prefix="base_"))
        p_base = proba_lookup(self.model, texts)
        out = np.zeros_like(p_base)
        info = []
        for i, (t, a, c) in enumerate(zip(texts, q["aspect"], q["cf_value"])):
            j_aspect = ASPECTS.index(a)
            target = qcodes[i].copy()
            target[j_aspect] = VALUE_CODE[c]
            cand = self.pool_codes_[:, j_aspect] == target[j_aspect]
            if not cand.any():
                info.append(("none", 0, -1))
                continue
            valid = target >= 0
            score = ((self.pool_codes_ == target) & valid).sum(axis=1)
            best = score[cand].max()
            idx = np.nonzero(cand & (score == best))[0]
            level = "full" if best == valid.sum() else "partial"
            j = int(query_seed(self.seed, t, a, c).choice(idx))
            out[i] = self.pool_proba_[j] - p_base[i]
            info.append((level, len(idx), j))
        self.match_info_ = pd.DataFrame(info, columns=["level", "n_candidates", "pool_index"])
        return out


class CONEXPExplainer(FittedConceptExplainer):
    """Conditional expectation (Eq. 7): ``mean N(phi(x)) | C=c'`` minus ``mean N(phi(x)) | C=c`` over
    the fit data, grouped by the observed majority label of ``C``.  Independent of the query text.
    A value with no fit example gives a zero estimate (listed in ``missing_``)."""

    name = "conexp"

    def fit(self, model: Any, data: pd.DataFrame) -> "CONEXPExplainer":
        self.model = model
        data = check_data(data)
        probs = proba_lookup(model, data["text"].tolist())
        labels = observed_labels(data)
        self.means_: dict[tuple[str, str], np.ndarray] = {}
        self.counts_: dict[tuple[str, str], int] = {}
        for a in ASPECTS:
            for v in CONCEPT_VALUES:
                m = (labels[a] == v).to_numpy()
                self.counts_[(a, v)] = int(m.sum())
                if m.any():
                    self.means_[(a, v)] = probs[m].mean(axis=0)
        self.n_classes = int(model.n_classes)
        self._fitted = True
        return self

    def explain(self, queries: pd.DataFrame) -> np.ndarray:
        self._require_fit()
        q = check_queries(queries, need=("text", "aspect", "base_value", "cf_value"))
        out = np.zeros((len(q), self.n_classes))
        self.missing_ = []
        for i, (a, b, c) in enumerate(zip(q["aspect"], q["base_value"], q["cf_value"])):
            if (a, b) in self.means_ and (a, c) in self.means_:
                out[i] = self.means_[(a, c)] - self.means_[(a, b)]
            else:
                self.missing_.append(i)
        return out


class SLearnerExplainer(FittedConceptExplainer):
    """S-Learner (Eq. 8): a logistic regression ``E`` from the one-hot aspect labels (4 x 3) to the
    model's predicted class, fitted on the observed labels of the fit data (as the authors' code);
    the estimate is ``E(x' with C=c') - E(x')`` where ``x'`` are the base's aspect labels predicted by
    ``aspect_predictor`` (fallback without one: the observed ``base_{aspect}_majority`` labels)."""

    name = "s-learner"

    def __init__(self, aspect_predictor: AspectPredictor | None = None, seed: int = 42,
                 C: float = 1.0, max_iter: int = 1000):
        self.aspect_predictor = aspect_predictor
        self.seed = int(seed)
        self.C = float(C)
        self.max_iter = int(max_iter)

    def fit(self, model: Any, data: pd.DataFrame) -> "SLearnerExplainer":
        from sklearn.linear_model import LogisticRegression

        self.model = model
        data = check_data(data)
        X = onehot_aspects(observed_labels(data))
        y = proba_lookup(model, data["text"].tolist()).argmax(axis=1)
        self.n_classes = int(model.n_classes)
        self.classes_ = np.unique(y)
        if len(self.classes_) == 1:  # logistic regression needs two classes; the effect is then zero
            self.lr_ = None
        else:
            self.lr_ = LogisticRegression(C=self.C, max_iter=self.max_iter, random_state=self.seed).fit(X, y)
        self._fitted = True
        return self

    def _proba(self, X: np.ndarray) -> np.ndarray:
        out = np.zeros((len(X), self.n_classes))
        if self.lr_ is None:
            out[:, self.classes_[0]] = 1.0
        else:
            out[:, self.lr_.classes_] = self.lr_.predict_proba(X)
        return out

    def explain(self, queries: pd.DataFrame) -> np.ndarray:
        self._require_fit()
        q = check_queries(queries, need=("text", "aspect", "cf_value"))
        labels = aspect_labels(self.aspect_predictor, q, q["text"].tolist(), prefix="base_")
        cf = labels.copy()
        for a in ASPECTS:
            m = (q["aspect"] == a).to_numpy()
            cf.loc[m, a] = q.loc[m, "cf_value"].to_numpy()
        return self._proba(onehot_aspects(cf)) - self._proba(onehot_aspects(labels))
