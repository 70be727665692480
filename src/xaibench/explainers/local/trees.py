"""Decision-tree model extraction (Lertvittayakumjorn & Toni, 2019).

``fit(model, texts)`` trains one binary decision tree per class (one-vs-rest) to mimic the
model's *predictions* on ``texts`` and prunes it by reduced-error pruning on a held-out part
(``prune_fraction``), as the authors' code does.  Features:

* ``features="filters"`` (the paper, CNN only; default for models with conv filters): the CNN's
  max-pooled filter activations phi(x).  Each filter's n-gram in a text is the window where its
  max was attained; each filter has a *class identity*, the class whose logit its activation
  correlates with most (Pearson correlation over ``texts``).
* ``features="ngrams"`` (any classifier): binary presence of word n-grams (``ngram_range``).

An explanation of ``text`` for class ``c`` walks tree ``c``: every node where the text goes to the
"present / activated" side (feature > threshold) contributes the corresponding n-gram(s) of the
text.  It is evidence (positive score) when it speaks for ``c`` -- the filter's class identity is
``c`` (filters), or going right raises the tree's probability of ``c`` (n-grams) -- else
counter-evidence (negative score).  Magnitude ``1 / (1 + depth)``: nodes near the root rank first,
the order in which the authors list them.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..base import Attribution
from ._common import BaseLocalExplainer, explained_positions, row_tokens, word_tokens


class _Tree:
    """A copy of a fitted sklearn tree that can be pruned and walked."""

    def __init__(self, clf):
        t = clf.tree_
        self.left = t.children_left.copy()
        self.right = t.children_right.copy()
        self.feature = t.feature.copy()
        self.threshold = t.threshold.copy()
        v = t.value[:, 0, :]
        v = v / np.clip(v.sum(1, keepdims=True), 1e-12, None)
        classes = list(clf.classes_)
        self.p1 = v[:, classes.index(1)] if 1 in classes else np.zeros(len(v))
        self.depth = np.zeros(len(self.left), dtype=int)
        for i in range(len(self.left)):  # parents come before children in sklearn's node order
            if self.left[i] >= 0:
                self.depth[self.left[i]] = self.depth[self.right[i]] = self.depth[i] + 1

    def is_leaf(self, i: int) -> bool:
        return self.left[i] < 0

    def _value(self, X, rows, f):
        col = X[rows, f]
        return np.asarray(col.toarray() if hasattr(col, "toarray") else col).ravel()

    def leaves(self, X) -> np.ndarray:
        n = X.shape[0]
        node = np.zeros(n, dtype=int)
        active = np.ones(n, dtype=bool)
        while active.any():
            rows = np.flatnonzero(active)
            cur = node[rows]
            leaf = self.left[cur] < 0
            active[rows[leaf]] = False
            rows, cur = rows[~leaf], cur[~leaf]
            for f in np.unique(self.feature[cur]):
                sel = self.feature[cur] == f
                r = rows[sel]
                go_right = self._value(X, r, f) > self.threshold[cur[sel]]
                node[r] = np.where(go_right, self.right[cur[sel]], self.left[cur[sel]])
        return node

    def predict_p1(self, X) -> np.ndarray:
        return self.p1[self.leaves(X)]

    def path(self, x) -> list[tuple[int, bool]]:
        """``(node, went_right)`` for the internal nodes on the path of one row ``x`` (1-D array)."""
        out, i = [], 0
        while not self.is_leaf(i):
            right = bool(x[self.feature[i]] > self.threshold[i])
            out.append((i, right))
            i = self.right[i] if right else self.left[i]
        return out

    def prune(self, X, y) -> None:
        """Reduced-error pruning bottom-up on validation data ``(X, y)`` (y in {0, 1})."""
        y = np.asarray(y)

        def rec(i: int, rows: np.ndarray) -> bool:
            if self.is_leaf(i):
                return True
            go_right = self._value(X, rows, self.feature[i]) > self.threshold[i] if len(rows) else np.zeros(0, bool)
            lrows, rrows = rows[~go_right], rows[go_right]
            l_leaf = rec(self.left[i], lrows)
            r_leaf = rec(self.right[i], rrows)
            if not (l_leaf and r_leaf):
                return False
            pred = lambda node: int(self.p1[node] > 0.5)
            merged = int((y[rows] == pred(i)).sum())
            kept = int((y[lrows] == pred(self.left[i])).sum() + (y[rrows] == pred(self.right[i])).sum())
            if merged >= kept:
                self.left[i] = self.right[i] = -1
                return True
            return False

        rec(0, np.arange(X.shape[0]))

    def n_nodes(self) -> int:
        seen, stack = 0, [0]
        while stack:
            i = stack.pop()
            seen += 1
            if not self.is_leaf(i):
                stack += [self.left[i], self.right[i]]
        return seen


def _as_texts(data: Any) -> list[str]:
    if data is None:
        raise ValueError("DecisionTreeExplainer.fit(model, texts) needs training texts to mimic the model on")
    if hasattr(data, "columns") and "text" in data.columns:
        data = data["text"]
    texts = list(data)
    if not texts or not all(isinstance(t, str) for t in texts):
        raise TypeError("pass a non-empty list of texts (or a DataFrame with a 'text' column) to fit()")
    return texts


class DecisionTreeExplainer(BaseLocalExplainer):
    name = "decision_trees"
    paper_name = "DTs (N)"
    granularity = "ngrams"

    def __init__(self, features: str = "auto", ngram_range: tuple[int, int] = (1, 3), min_df: int = 2,
                 max_features: int = 5000, prune_fraction: float = 0.2, min_samples_leaf: int = 1,
                 max_depth: int | None = None, batch_size: int = 64, seed: int = 42):
        super().__init__(batch_size=batch_size, seed=seed)
        if features not in ("auto", "filters", "ngrams"):
            raise ValueError(f"features must be 'auto', 'filters' (CNN) or 'ngrams'; got {features!r}")
        if not 0.0 <= prune_fraction < 1.0:
            raise ValueError(f"prune_fraction must lie in [0, 1); got {prune_fraction}")
        self.features, self.ngram_range, self.min_df, self.max_features = features, tuple(ngram_range), min_df, max_features
        self.prune_fraction, self.min_samples_leaf, self.max_depth = prune_fraction, min_samples_leaf, max_depth

    # --- features -------------------------------------------------------------------------------
    def _cnn_features(self, texts: list[str]):
        """phi(x) and, per filter, the (start, end) of its max window in each text."""
        import torch

        model = self.model
        phis, wins = [], []
        for i in range(0, len(texts), 256):
            chunk = texts[i : i + 256]
            ids, mask = model.encode(chunk)
            model.n_forward += len(chunk)
            keep = explained_positions(model, ids, mask)
            with torch.inference_mode():
                maps = [m.detach().cpu().numpy() for m in model.module.feature_maps(ids, mask)]
            n = keep.sum(1)
            phis.append(np.concatenate([m.max(axis=2) for m in maps], axis=1))
            per_text = np.zeros((len(chunk), sum(m.shape[1] for m in maps), 2), dtype=int)
            col = 0
            for w, M in zip(model.filter_widths, maps):
                for b in range(len(chunk)):
                    nv = max(int(n[b]) - w, 0) + 1
                    s = M[b, :, :nv].argmax(axis=1)
                    per_text[b, col : col + M.shape[1], 0] = s
                    per_text[b, col : col + M.shape[1], 1] = np.minimum(s + w, n[b])
                col += M.shape[1]
            wins.append(per_text)
        return np.concatenate(phis), np.concatenate(wins)

    def _analyzer(self, text: str) -> list[str]:
        toks = word_tokens(self.model, text)
        lo, hi = self.ngram_range
        return [" ".join(toks[s : s + n]) for n in range(lo, hi + 1) for s in range(len(toks) - n + 1)]

    def _featurize(self, texts: list[str]):
        if self.mode_ == "filters":
            return self._cnn_features(texts)[0]
        return self.vectorizer_.transform(texts)

    # --- fitting ----------------------------------------------------------------------------------
    def fit(self, model: Any, data: Any = None) -> "DecisionTreeExplainer":
        from sklearn.tree import DecisionTreeClassifier

        super().fit(model, data)
        texts = _as_texts(data)
        has_filters = hasattr(getattr(model, "module", None), "feature_maps") and hasattr(model, "filter_widths")
        self.mode_ = ("filters" if has_filters else "ngrams") if self.features == "auto" else self.features
        if self.mode_ == "filters" and not has_filters:
            raise TypeError(f"features='filters' needs a CNN with module.feature_maps; {type(model).__name__} has "
                            "none -- use features='ngrams'")
        preds = np.asarray(model.predict(texts))
        if self.mode_ == "filters":
            import torch

            from ...device import module_device

            X = self._cnn_features(texts)[0]
            with torch.inference_mode():
                phi = torch.as_tensor(X, dtype=torch.float32, device=module_device(model.head))
                logits = model.head(phi).detach().cpu().numpy()
            corr = np.zeros((X.shape[1], logits.shape[1]))
            for k in range(X.shape[1]):
                for c in range(logits.shape[1]):
                    if X[:, k].std() > 0 and logits[:, c].std() > 0:
                        corr[k, c] = np.corrcoef(X[:, k], logits[:, c])[0, 1]
            self.class_identity_ = corr.argmax(1)
        else:
            from sklearn.feature_extraction.text import CountVectorizer

            self.vectorizer_ = CountVectorizer(analyzer=self._analyzer, binary=True, min_df=self.min_df,
                                               max_features=self.max_features, dtype=np.float32)
            X = self.vectorizer_.fit_transform(texts).tocsr()
            self.feature_names_ = self.vectorizer_.get_feature_names_out()
        rng = np.random.default_rng(self.seed)
        perm = rng.permutation(len(texts))
        n_val = int(round(self.prune_fraction * len(texts))) if len(texts) >= 10 else 0
        val, tr = perm[:n_val], perm[n_val:]
        self.trees_: list[_Tree] = []
        for c in range(model.n_classes):
            y = (preds == c).astype(int)
            clf = DecisionTreeClassifier(random_state=self.seed, min_samples_leaf=self.min_samples_leaf,
                                         max_depth=self.max_depth).fit(X[tr], y[tr])
            tree = _Tree(clf)
            if n_val:
                tree.prune(X[val], y[val])
            self.trees_.append(tree)
        self.fidelity_ = float((self._predict_X(X) == preds).mean())
        return self

    def _predict_X(self, X) -> np.ndarray:
        return np.stack([t.predict_p1(X) for t in self.trees_], axis=1).argmax(1)

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        """The extracted trees' class predictions (argmax over the one-vs-rest trees)."""
        self._check_fitted()
        return self._predict_X(self._featurize(list(texts)))

    def fidelity(self, texts: Sequence[str]) -> float:
        """Share of ``texts`` on which the trees predict the model's predicted class."""
        texts = list(texts)
        return float((self.predict(texts) == np.asarray(self.model.predict(texts))).mean())

    def _check_fitted(self) -> None:
        if not hasattr(self, "trees_"):
            raise RuntimeError("DecisionTreeExplainer is not fitted: call .fit(model, texts) first")

    # --- explaining ---------------------------------------------------------------------------------
    def _explain_batch(self, texts, targets):
        self._check_fitted()
        if self.mode_ == "filters":
            X, wins = self._cnn_features(texts)
            ids, mask = self.model.encode(texts)
            keep = explained_positions(self.model, ids, mask)
            toks_all = [row_tokens(self.model, t, keep[i]) for i, t in enumerate(texts)]
        else:
            X = self.vectorizer_.transform(texts).toarray()
            toks_all = [word_tokens(self.model, t) for t in texts]
        out = []
        for i, (text, tgt) in enumerate(zip(texts, targets)):
            tree, toks = self.trees_[tgt], toks_all[i]
            frags: dict[tuple[int, int], float] = {}
            for node, right in tree.path(X[i]):
                if not right:
                    continue
                f = tree.feature[node]
                weight = 1.0 / (1.0 + tree.depth[node])
                if self.mode_ == "filters":
                    sign = 1.0 if self.class_identity_[f] == tgt else -1.0
                    spans = [tuple(int(v) for v in wins[i, f])]
                else:
                    sign = 1.0 if tree.p1[tree.right[node]] >= tree.p1[tree.left[node]] else -1.0
                    gram = self.feature_names_[f].split(" ")
                    spans = [(s, s + len(gram)) for s in range(len(toks) - len(gram) + 1)
                             if toks[s : s + len(gram)] == gram]
                for s, e in spans:
                    if e > s:
                        frags[(s, e)] = frags.get((s, e), 0.0) + sign * weight
            scores = np.zeros(len(toks))
            for (s, e), v in frags.items():
                scores[s:e] += v
            ngrams = [(s, e, float(v)) for (s, e), v in frags.items() if v != 0.0]
            out.append(Attribution(text, toks, scores, tgt, ngrams=ngrams, meta={"method": self.name, "mode": self.mode_}))
        return out
