"""LIME and Anchor (the ``lime`` and ``anchor-exp`` PyPI packages) on feature rows.

* **LIME** (Ribeiro et al. 2016): Adult through ``LimeTabularExplainer`` with every feature
  categorical (perturbations drawn from the training rows' value frequencies); Movie Reviews
  through ``LimeTextExplainer`` with one feature per word position (``bow=False``), removed words
  replaced by ``<unk>``.  Score = the local linear model's weight for the explained class.
* **Anchor** (Ribeiro et al. 2018): Adult through ``AnchorTabularExplainer`` (all features
  categorical, samples from the training rows); Movie Reviews through ``AnchorText`` with a blank
  spaCy pipeline that splits on whitespace and ``use_unk_distribution=True`` (words outside the
  anchor are replaced by ``UNK`` -> ``<unk>``; never the masked-LM mode, which needs the hub).  The
  anchor's features score ``len(anchor) - rank`` in the order anchor added them, others 0.
"""
from __future__ import annotations

import numpy as np

from ...data.feature_data import PAD_ID
from ._base import PerRowExplainer, row_seed


class _TabularMixin:
    def _values(self, X: np.ndarray) -> np.ndarray:
        return X - self.model.spec.offsets[None, :]

    def _predict_values(self, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V).astype(np.int64)
        return self.model.proba_ids(V + self.model.spec.offsets[None, :])

    def _train_values(self) -> np.ndarray:
        if self.train_X is None:
            raise RuntimeError(f"{type(self).__name__} samples from the training rows on Adult: "
                               "call .fit(model, train_ids)")
        return self._values(self.train_X)


class LimeExplainer(_TabularMixin, PerRowExplainer):
    name = "lime"
    paper_name = "LIME"

    def __init__(self, num_samples: int = 1000, seed: int = 42):
        super().__init__(seed=seed)
        self.num_samples = int(num_samples)
        self._tab = None

    def _explain_one(self, row, target):
        spec = self.model.spec
        M = spec.n_features
        out = np.zeros(M)
        if spec.kind == "tabular":
            from lime.lime_tabular import LimeTabularExplainer

            if self._tab is None:
                self._tab = LimeTabularExplainer(
                    self._train_values().astype(float), feature_names=list(spec.feature_names),
                    categorical_features=list(range(M)),
                    categorical_names={j: list(v) for j, v in enumerate(spec.values)},
                    discretize_continuous=False, random_state=self.seed)
            self._tab.random_state = np.random.RandomState(row_seed(self.seed, row))
            exp = self._tab.explain_instance(self._values(row[None])[0].astype(float), self._predict_values,
                                             labels=(target,), num_features=M, num_samples=self.num_samples)
            for j, w in exp.as_map()[target]:
                out[j] = w
            return out
        from lime.lime_text import LimeTextExplainer

        pos = np.flatnonzero(row != PAD_ID)
        text = spec.to_text(row)
        lte = LimeTextExplainer(split_expression=str.split, bow=False, mask_string="UNK",
                                random_state=row_seed(self.seed, row))
        exp = lte.explain_instance(text, lambda ts: self.model.proba_ids(spec.from_texts(ts)), labels=(target,),
                                   num_features=len(pos), num_samples=self.num_samples)
        for j, w in exp.as_map()[target]:
            out[pos[j]] = w
        return out


class AnchorExplainer(_TabularMixin, PerRowExplainer):
    name = "anchor"
    paper_name = "Anchor"

    def __init__(self, threshold: float = 0.95, seed: int = 42, **anchor_kwargs):
        super().__init__(seed=seed)
        self.threshold = float(threshold)
        self.anchor_kwargs = anchor_kwargs
        self._exp = None

    def _explainer(self):
        if self._exp is not None:
            return self._exp
        spec = self.model.spec
        if spec.kind == "tabular":
            from anchor.anchor_tabular import AnchorTabularExplainer

            self._exp = AnchorTabularExplainer(["0", "1"], list(spec.feature_names), self._train_values(),
                                               categorical_names={j: list(v) for j, v in enumerate(spec.values)})
        else:
            import spacy
            from anchor.anchor_text import AnchorText
            from spacy.tokenizer import Tokenizer

            nlp = spacy.blank("en")
            nlp.tokenizer = Tokenizer(nlp.vocab)  # whitespace only: anchor's words == our slots
            self._exp = AnchorText(nlp, ["0", "1"], use_unk_distribution=True, mask_string="UNK")
        return self._exp

    def _explain_one(self, row, target):
        spec = self.model.spec
        exp = self._explainer()
        np.random.seed(row_seed(self.seed, row) % (2**32 - 1))  # anchor samples with np.random
        out = np.zeros(spec.n_features)
        if spec.kind == "tabular":
            e = exp.explain_instance(self._values(row[None])[0],
                                     lambda V: self._predict_values(V).argmax(1), threshold=self.threshold,
                                     **self.anchor_kwargs)
            feats = list(e.exp_map["feature"])
        else:
            pos = np.flatnonzero(row != PAD_ID)
            e = exp.explain_instance(spec.to_text(row),
                                     lambda ts: self.model.proba_ids(spec.from_texts(list(ts))).argmax(1),
                                     threshold=self.threshold, **self.anchor_kwargs)
            feats = [int(pos[k]) for k in e.exp_map["feature"]]
        seen: list[int] = []
        for f in feats:
            if f not in seen:
                seen.append(int(f))
        for r, f in enumerate(seen):
            out[f] = len(seen) - r
        return out
