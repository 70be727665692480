"""Logistic regression on bag-of-words counts or mean GloVe vectors (scikit-learn).

phi(x) is the feature vector (tf-idf bag of words, or the mean GloVe vector).  Used as the
transparent ground-truth model of the counterfactual-faithfulness protocol and as a reader model.
"""
from __future__ import annotations

import hashlib
import json
import pickle
import re
from pathlib import Path
from typing import Any

import numpy as np

from ..text import word_tokenize
from .base import Classifier
from .embeddings import glove_index, glove_vectors


_ALNUM = re.compile(r"[a-z0-9]+", re.IGNORECASE)


def _logit_proba(logits: np.ndarray) -> np.ndarray:
    """sklearn LogisticRegression's ``predict_proba`` from its decision values (one row)."""
    if logits.shape[0] == 1:  # binary: sigmoid of the single decision value
        p1 = 1.0 / (1.0 + np.exp(-logits[0]))
        return np.array([1.0 - p1, p1])
    e = np.exp(logits - logits.max())
    return e / e.sum()


def _gram_columns(vocab: dict, seq: list[str], lo: int, hi: int, size: int) -> list[int | None]:
    """The vectorizer's column of each ``size``-gram of ``seq`` starting at positions ``lo`` to ``hi`` (None: not in
    the vocabulary); the n-gram is its words joined by one space, as scikit-learn's analyzer joins them."""
    return [vocab.get(" ".join(seq[k:k + size])) for k in range(max(lo, 0), min(hi, len(seq) - size) + 1)]


def _ngram_counts(toks: list[str], vocab: dict, top: int) -> dict[int, int]:
    """Column -> count of the 1- to ``top``-grams of ``toks`` in the vocabulary, in the order scikit-learn's
    analyzer lists them (unigrams, then bigrams, ...)."""
    counts: dict[int, int] = {}
    for size in range(1, top + 1):
        for j in _gram_columns(vocab, toks, 0, len(toks), size):
            if j is not None:
                counts[j] = counts.get(j, 0) + 1
    return counts


class LogRegClassifier(Classifier):
    kind = "logreg"

    def __init__(self, n_classes: int, seed: int = 42, cache=True, features: str = "bow", C: float = 1.0,
                 ngram_max: int = 1, max_features: int | None = 20000):
        super().__init__(n_classes=n_classes, seed=seed, cache=cache)
        if features not in ("bow", "glove"):
            raise ValueError(f"features must be 'bow' or 'glove', got {features!r}")
        self.features, self.C, self.ngram_max, self.max_features = features, C, ngram_max, max_features
        self.vectorizer = None
        self.clf = None

    def config(self) -> dict[str, Any]:
        return {"features": self.features, "C": self.C, "ngram_max": self.ngram_max,
                "max_features": self.max_features}

    def _featurize(self, texts: list[str], fit: bool = False) -> np.ndarray:
        if self.features == "bow":
            from sklearn.feature_extraction.text import TfidfVectorizer

            if fit:
                self.vectorizer = TfidfVectorizer(tokenizer=word_tokenize, lowercase=False, token_pattern=None,
                                                  ngram_range=(1, self.ngram_max), max_features=self.max_features)
                return self.vectorizer.fit_transform(texts)
            return self.vectorizer.transform(texts)
        idx = glove_index()
        out = np.zeros((len(texts), 50), dtype=np.float32)
        for i, t in enumerate(texts):
            words = [w for w in word_tokenize(t) if w in idx]
            if words:
                out[i] = glove_vectors(words)[0].mean(0)
        return out

    def _fit(self, texts, labels, dev_texts, dev_labels):
        from sklearn.linear_model import LogisticRegression

        X = self._featurize(texts, fit=True)
        self.clf = LogisticRegression(C=self.C, max_iter=2000, random_state=self.seed)
        self.clf.fit(X, labels)
        hist: dict[str, Any] = {"n_train": len(texts)}
        if dev_texts is not None and dev_labels is not None and len(dev_texts):
            from .training import macro_f1

            hist["best_dev_f1"] = macro_f1(dev_labels, self._predict_proba(dev_texts).argmax(1))
        return hist

    def _require(self):
        if self.clf is None:
            raise RuntimeError("the logistic regression is not fitted: call fit(...) or xaibench.models.registry.load_model(folder)")

    def _predict_proba(self, texts: list[str]) -> np.ndarray:
        self._require()
        p = np.zeros((len(texts), self.n_classes), dtype=np.float32)
        p[:, self.clf.classes_] = self.clf.predict_proba(self._featurize(texts))
        return p

    def _embed(self, texts: list[str]) -> np.ndarray:
        self._require()
        X = self._featurize(texts)
        return np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float32)

    def input_gradient(self, texts: list[str], targets) -> list[dict[str, float]]:
        """Exact gradient x input of ``log p(target | x)`` per word, for the tf-idf model.

        For softmax regression ``d log p_t / d x = W_t - sum_c p_c W_c`` exactly; each n-gram
        feature's gradient x input is shared equally among its words (a bigram gives half to each
        word) and summed per lower-cased word.  Returns one ``{word: relevance}`` dict per text;
        used by the MiCE-style editor to choose what to mask.
        """
        self._require()
        if self.features != "bow":
            raise NotImplementedError("input_gradient is implemented for features='bow' only")
        X = self._featurize(list(texts)).tocsr()
        P = self._predict_proba(list(texts))
        W = np.zeros((self.n_classes, X.shape[1]))
        W[self.clf.classes_] = self.clf.coef_ if len(self.clf.classes_) > 2 else 0.0
        if len(self.clf.classes_) == 2:  # binary sklearn model: logit of class 1 = w.x + b
            W[self.clf.classes_[1]] = self.clf.coef_[0] / 2
            W[self.clf.classes_[0]] = -self.clf.coef_[0] / 2
        names = self._feature_names_array()
        out = []
        for i, t in enumerate(np.asarray(targets).tolist()):
            row = X.getrow(i)
            g = W[t] - P[i] @ W
            rel: dict[str, float] = {}
            for j, v in zip(row.indices, row.data):
                words = names[j].split(" ")
                for w in words:
                    rel[w] = rel.get(w, 0.0) + float(g[j] * v) / len(words)
            out.append(rel)
        return out

    def _feature_names_array(self) -> np.ndarray:
        if getattr(self, "_names_cache", None) is None:  # sklearn rebuilds it on every call (~0.3 s)
            self._names_cache = self.vectorizer.get_feature_names_out()
        return self._names_cache

    def _coef_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """``(W, b)`` with one row per *fitted* class (``clf.classes_`` order); binary models keep sklearn's single row."""
        return np.asarray(self.clf.coef_, dtype=np.float64), np.asarray(self.clf.intercept_, dtype=np.float64)

    def predict_proba_swaps(self, text: str, swaps) -> np.ndarray | None:
        """``predict_proba`` of ``text`` with one word replaced, for each ``(start, end, new_word)``
        of ``swaps`` (character span of the word in ``text``), computed incrementally.

        Exact for the tf-idf model: replacing token k changes only the counts of that unigram and of
        its two bigrams, so ``W x`` and ``||x||^2`` are updated from the coefficients of those few
        features and the l2 normalisation is redone -- no re-featurisation.  Rows where the swap
        would not be a clean one-token replacement (the span is not exactly one tokenizer token, or
        the new word is not one) are computed by the full ``predict_proba``.  Returns None when the
        model has no such fast path (GloVe features, or a vectorizer configured otherwise).
        """
        from ..text import TOKEN_RE

        self._require()
        if self.features != "bow":
            return None
        vec = self.vectorizer
        if (vec.norm != "l2" or vec.sublinear_tf or not vec.use_idf
                or vec.binary or vec.ngram_range != (1, 2)):
            return None
        swaps = list(swaps)
        out = np.zeros((len(swaps), self.n_classes), dtype=np.float32)
        if not swaps:
            return out
        if getattr(self, "_swap_state", None) is None:
            W, b = self._coef_matrix()
            self._swap_state = (vec.vocabulary_, vec.idf_, W, b)
        vocab, idf, W, b = self._swap_state
        matches = list(TOKEN_RE.finditer(text))
        toks = [m.group(0).lower() for m in matches]
        at = {(m.start(), m.end()): k for k, m in enumerate(matches)}
        counts = _ngram_counts(toks, vocab, 2)
        idx = np.fromiter(counts, dtype=np.int64, count=len(counts))
        v = np.fromiter(counts.values(), dtype=np.float64, count=len(counts)) * idf[idx]
        z0, s0 = W[:, idx] @ v, float(v @ v)
        slow = []
        for r, (start, end, new) in enumerate(swaps):
            k = at.get((start, end))
            if k is None or not _ALNUM.fullmatch(new) or not _ALNUM.fullmatch(toks[k]):
                slow.append(r)
                continue
            new = new.lower()
            delta: dict[int, float] = {}
            changes = [(toks[k], -1.0), (new, 1.0)]
            if k > 0:
                changes += [(f"{toks[k - 1]} {toks[k]}", -1.0), (f"{toks[k - 1]} {new}", 1.0)]
            if k + 1 < len(toks):
                changes += [(f"{toks[k]} {toks[k + 1]}", -1.0), (f"{new} {toks[k + 1]}", 1.0)]
            for f, dc in changes:
                j = vocab.get(f)
                if j is not None:
                    delta[j] = delta.get(j, 0.0) + dc
            z, s = z0.copy(), s0
            for j, dc in delta.items():
                if dc == 0.0:
                    continue
                old = counts.get(j, 0.0) * idf[j]
                newv = (counts.get(j, 0.0) + dc) * idf[j]
                z += W[:, j] * (newv - old)
                s += newv * newv - old * old
            norm = np.sqrt(s) if s > 1e-300 else 1.0
            logits = z / norm + b
            out[r, self.clf.classes_] = _logit_proba(logits)
        if slow:
            texts = [text[:swaps[r][0]] + swaps[r][2] + text[swaps[r][1]:] for r in slow]
            out[slow] = self._predict_proba(texts)
        return out

    def _splice_state(self):
        """What :meth:`predict_proba_splices` needs of the vectorizer, or None when it cannot reproduce the vectorizer's
        count matrix (another tokenizer, preprocessing, analyzer or n-gram range than the project's tf-idf)."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        vec = self.vectorizer
        if self.features != "bow" or type(vec) is not TfidfVectorizer:
            return None
        if (vec.tokenizer is not word_tokenize or vec.analyzer != "word" or vec.lowercase or vec.preprocessor is not None
                or vec.strip_accents is not None or vec.stop_words is not None or vec.input != "content"
                or vec.binary or vec.ngram_range[0] != 1 or vec.dtype is not np.float64):
            return None
        return vec.vocabulary_, int(vec.ngram_range[1])

    def predict_proba_splices(self, text: str, splices, texts=None) -> np.ndarray | None:
        """``predict_proba`` of ``text[:start] + new + text[end:]`` for each ``(start, end, new)`` of ``splices``:
        bit for bit the probabilities of the full path, which featurises every such text from scratch.

        The tokenizer's tokens never hold whitespace, so a text's tokens are those of its whitespace-delimited runs
        one after the other: only the runs a splice touches are tokenised again, and each row's n-gram counts are the
        text's with the n-grams through those runs replaced.  The count matrix is then the vectorizer's own (same
        columns in the same order, same counts) and goes through the same tf-idf weighting and classifier, whose
        rows do not depend on one another.  ``texts`` is not read (the texts themselves, for callers that memoise).
        None where the model has no such path (GloVe features, an on-disk output cache, a vectorizer configured
        otherwise): use ``predict_proba``."""
        import bisect

        import scipy.sparse as sp

        from ..text import TOKEN_RE

        self._require()
        state = self._splice_state()
        if state is None or self.cache is not None:
            return None
        vocab, top = state
        splices = list(splices)
        out = np.zeros((len(splices), self.n_classes), dtype=np.float32)
        if not splices:
            return out
        matches = list(TOKEN_RE.finditer(text))
        toks = [m.group(0).lower() for m in matches]
        starts, ends = [m.start() for m in matches], [m.end() for m in matches]

        base = _ngram_counts(toks, vocab, top)
        cols = np.fromiter(sorted(base), dtype=np.int64, count=len(base))
        counts = np.array([base[j] for j in cols], dtype=np.int64)
        indices, data, indptr = [], [], [0]
        for start, end, new in splices:
            if not 0 <= start <= end <= len(text):
                raise ValueError(f"splice ({start}, {end}) lies outside the text's {len(text)} characters")
            lo, hi = start, end  # widened to the whitespace-delimited runs the splice touches
            while lo > 0 and not text[lo - 1].isspace():
                lo -= 1
            while hi < len(text) and not text[hi].isspace():
                hi += 1
            mid = [t.lower() for t in TOKEN_RE.findall(text[lo:start] + new + text[end:hi])]
            a, b = bisect.bisect_right(ends, lo), bisect.bisect_left(starts, hi)  # toks[a:b] are replaced by mid
            # the n-grams through the replaced tokens, out; those through mid (or across the join), in; a window of
            # top - 1 tokens either side holds every such n-gram
            left, right = toks[max(a - top + 1, 0):a], toks[b:b + top - 1]
            old_seq, new_seq = left + toks[a:b] + right, left + mid + right
            delta: dict[int, int] = {}
            for size in range(1, top + 1):
                for seq, first, last, sign in ((old_seq, len(left), len(left) + b - a - 1, -1),
                                               (new_seq, len(left), len(left) + len(mid) - 1, 1)):
                    for j in _gram_columns(vocab, seq, first - size + 1, last, size):
                        if j is not None:
                            delta[j] = delta.get(j, 0) + sign
            row_cols, row_counts = cols, counts
            changed = {j: d for j, d in delta.items() if d}
            if changed:
                keys = np.fromiter(changed, dtype=np.int64, count=len(changed))
                pos = np.searchsorted(cols, keys)
                present = (pos < len(cols)) & (cols[np.minimum(pos, len(cols) - 1)] == keys) if len(cols) else pos < 0
                row_counts = counts.copy()
                np.add.at(row_counts, pos[present], [changed[j] for j in keys[present]])
                extra = keys[~present]
                row_cols = np.concatenate([cols, extra])
                row_counts = np.concatenate([row_counts, [changed[j] for j in extra]]).astype(np.int64)
                keep = row_counts != 0
                row_cols, row_counts = row_cols[keep], row_counts[keep]
                order = np.argsort(row_cols, kind="stable")
                row_cols, row_counts = row_cols[order], row_counts[order]
            indices.append(row_cols)
            data.append(row_counts)
            indptr.append(indptr[-1] + len(row_cols))
        # the vectorizer's count matrix: int counts as float64, sorted column indices, no stored zeros
        X = sp.csr_array((np.concatenate(data).astype(np.intc), np.concatenate(indices).astype(np.int32),
                          np.asarray(indptr, dtype=np.int32)), shape=(len(splices), len(vocab)),
                         dtype=self.vectorizer.dtype)
        X.sort_indices()
        X = self.vectorizer._tfidf.transform(X, copy=False)
        self.n_forward += len(splices)
        out[:, self.clf.classes_] = self.clf.predict_proba(X)
        return out

    def feature_names(self) -> list[str]:
        self._require()
        if self.features == "bow":
            return list(self.vectorizer.get_feature_names_out())
        return [f"glove_{i}" for i in range(50)]

    def _save_weights(self, folder: Path) -> None:
        self._require()
        (folder / "model.pkl").write_bytes(pickle.dumps({"vectorizer": self.vectorizer, "clf": self.clf}))

    def _load_weights(self, folder: Path) -> None:
        obj = pickle.loads((folder / "model.pkl").read_bytes())
        self.vectorizer, self.clf = obj["vectorizer"], obj["clf"]

    def _weights_digest(self) -> str:
        self._require()
        # the parameters' values, not pickled bytes (which can differ for the same model once it is
        # saved and loaded): coefficients, intercepts and the vocabulary as sorted (term, column) pairs
        h = hashlib.sha1()
        for arr in (self.clf.coef_, self.clf.intercept_):
            a = np.ascontiguousarray(arr, dtype=np.float64)
            h.update(str(a.shape).encode())
            h.update(a.tobytes())
        vocab = getattr(self.vectorizer, "vocabulary_", None) or {}
        h.update(json.dumps(sorted((str(k), int(v)) for k, v in vocab.items())).encode())
        idf = getattr(self.vectorizer, "idf_", None)
        if idf is not None:
            h.update(np.ascontiguousarray(idf, dtype=np.float64).tobytes())
        return h.hexdigest()
