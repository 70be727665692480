"""TextFooler (Jin et al., AAAI 2020), reimplemented offline after TextAttack's
``textfooler_jin_2019`` recipe.

1. Word importance by deletion: ``I_i = p_y(x) - p_y(x \\ w_i)`` (+ ``p_y'(x \\ w_i) - p_y'(x)``
   when deleting ``w_i`` changes the label to y').
2. In that order, each word that is not a TextFooler stop word and was not changed already is
   replaced by one of its 50 nearest neighbours with cosine >= 0.5 in **counter-fitted** GloVe
   (:mod:`.counterfit`; the original uses counter-fitted Paragram vectors), with the same part of
   speech (spaCy's tag of the word vs. WordNet's parts of speech of the candidate), **not a WordNet
   antonym of the word** (``antonym_veto``, on the word's and the candidate's lemmas: counter-fitting
   on 50-d GloVe leaves some antonyms among the neighbours; TextFooler relies on them being pushed
   apart), and a sentence-similarity check on the 15-word window around the word (MiniLM encoder
   standing in for USE, angular similarity >= 0.840845057 as in TextAttack's recipe).
3. Greedy, as TextAttack's ``GreedyWordSwapWIR``: among the candidates that pass every constraint,
   one that changes the label ends the search (the highest window similarity among those that do);
   otherwise the passing candidate that lowers ``p_y`` most is kept and the next word is tried.
   The similarity is computed lazily but exactly: for every label-changing candidate, and for the
   others in order of ``p_y`` until the first that passes.

The editor returns the final perturbed text (one candidate), also when the label did not flip
(the runner's selection rule then keeps it as the lowest-minimality candidate), and nothing when no
word could be replaced.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..base import CounterfactualExplainer
from .common import angular_similarity, doc_parts, join_tokens, match_case

STOP_WORDS = frozenset("""a about above across after afterwards again against ain all almost alone along already
also although am among amongst an and another any anyhow anyone anything anyway anywhere are aren aren't around as
at back been before beforehand behind being below beside besides between beyond both but by can cannot could
couldn couldn't d didn didn't doesn doesn't don don't down due during either else elsewhere empty enough even ever
everyone everything everywhere except first for former formerly from hadn hadn't hasn hasn't haven haven't he hence
her here hereafter hereby herein hereupon hers herself him himself his how however hundred i if in indeed into is
isn isn't it it's its itself just latter latterly least ll may me meanwhile mightn mightn't mine more moreover most
mostly must mustn mustn't my myself namely needn needn't neither never nevertheless next no nobody none noone nor
not nothing now nowhere o of off on once one only onto or other others otherwise our ours ourselves out over per
please s same shan shan't she she's should've shouldn shouldn't somehow something sometime somewhere such t than
that that'll the their theirs them themselves then thence there thereafter thereby therefore therein thereupon
these they this those through throughout thru thus to too toward towards under unless until up upon used ve was
wasn wasn't we were weren weren't what whatever when whence whenever where whereafter whereas whereby wherein
whereupon wherever whether which while whither who whoever whole whom whose why with within without won won't
would wouldn wouldn't y yet you you'd you'll you're you've your yours yourself yourselves""".split())

CONTENT_POS = ("NOUN", "VERB", "ADJ", "ADV")


def score_deletions(model, words, spaces, positions, deleted) -> np.ndarray:
    """``model.predict_proba`` of each ``deleted`` text (``words`` without token ``positions[r]`` and its whitespace).

    A predictor with ``predict_proba_splices`` (the tf-idf logistic regression, through
    :class:`~xaibench.evaluation.cf_feedback.metrics.CountingPredictor`) scores them from the text's n-gram counts,
    tokenising again only the runs around each deleted token: the same probabilities, bit for bit.  A deleted
    text differs from the text with that token's span cut out only by whitespace at its ends, which holds no
    token.  Any other predictor gets the full texts."""
    splices = getattr(model, "predict_proba_splices", None)
    if splices is not None:
        raw = "".join(w + s for w, s in zip(words, spaces))
        text, lead = raw.strip(), len(raw) - len(raw.lstrip())
        offsets = np.cumsum([0] + [len(w) + len(s) for w, s in zip(words, spaces)])

        def at(k: int) -> int:
            return int(min(max(offsets[k] - lead, 0), len(text)))

        p = splices(text, [(at(i), at(i + 1), "") for i in positions], deleted)
        if p is not None:
            return p
    return model.predict_proba(deleted)


class TextFooler(CounterfactualExplainer):
    name = "textfooler"
    targeted = False

    def __init__(self, n_neighbours: int = 50, min_cos: float = 0.5, window: int = 15,
                 min_similarity: float = 0.840845057, max_words: int | None = None,
                 vectors=None, wordnet=None, antonym_veto: bool = True, similarity_batch: int = 8):
        if similarity_batch < 1:
            raise ValueError(f"similarity_batch must be a positive integer, got {similarity_batch!r}")
        self.n_neighbours, self.min_cos, self.window = n_neighbours, min_cos, window
        self.min_similarity, self.max_words = min_similarity, max_words
        self.antonym_veto, self.similarity_batch = antonym_veto, similarity_batch
        self._vectors, self._wordnet = vectors, wordnet
        self._nn: dict[str, list[str]] = {}
        #: every accepted swap ``(original word, replacement)`` in order (the antonym count reads it)
        self.swaps: list[tuple[str, str]] = []

    def fit(self, model, data=None):
        self.model = model
        if self._vectors is None:
            from .counterfit import counterfitted_glove

            self._vectors = counterfitted_glove()
        if self._wordnet is None:
            from .wordnet import load_wordnet

            self._wordnet = load_wordnet()
        return self

    def neighbours(self, word: str) -> list[str]:
        """The word's counter-fitted neighbours (WordNet antonyms of the word left out under ``antonym_veto``)."""
        if word not in self._nn:
            nn = [w for w, _ in self._vectors.neighbours(word, self.n_neighbours, self.min_cos)]
            if self.antonym_veto:
                nn = [w for w in nn if not self._wordnet.is_antonym(word, w)]
            self._nn[word] = nn
        return self._nn[word]

    def explain(self, texts: Sequence[str], targets: Sequence[int] | None = None) -> list[list[str]]:
        from ...nlp import parse

        texts, _ = self._check_inputs(texts, targets)
        # only tokens and POS are read: the parser and lemmatizer are skipped (the tagger's and the
        # attribute ruler's output does not depend on them)
        return [self._attack(doc) for doc in parse(texts, disable=("parser", "lemmatizer"))]

    def _window(self, words, spaces, i):
        h = self.window // 2
        lo, hi = max(0, i - h), min(len(words), i + h + 1)
        return join_tokens(words[lo:hi], spaces[lo:hi])

    def _score_variants(self, words, spaces, i, variants) -> np.ndarray:
        """``predict_proba`` of each variant (``words`` with token ``i`` replaced), batched.

        A predictor with ``predict_proba_swaps`` (the tf-idf logistic regression) scores the
        single-word swaps incrementally from its coefficients -- exactly the same probabilities,
        without re-featurising ~50 copies of the text; any other predictor gets the full texts.
        """
        swaps = getattr(self.model, "predict_proba_swaps", None)
        if swaps is not None:
            raw = "".join(w + s for w, s in zip(words, spaces))
            text, lead = raw.strip(), len(raw) - len(raw.lstrip())
            start = sum(len(w) + len(s) for w, s in zip(words[:i], spaces[:i])) - lead
            if start >= 0 and text[start:start + len(words[i])] == words[i]:
                p = swaps(text, [(start, start + len(words[i]), v[i]) for v in variants])
                if p is not None:
                    return p
        return self.model.predict_proba([join_tokens(v, spaces) for v in variants])

    @staticmethod
    def deletion_positions(doc) -> list[int]:
        """The tokens whose deletion scores their importance: alphabetic content words (nouns, verbs, adjectives,
        adverbs) outside the stop list."""
        return [i for i, t in enumerate(doc) if t.is_alpha and t.lower_ not in STOP_WORDS and t.pos_ in CONTENT_POS]

    def _attack(self, doc) -> list[str]:
        words, spaces = doc_parts(doc)
        text = join_tokens(words, spaces)
        p0 = self.model.predict_proba([text])[0]
        y = int(p0.argmax())
        cand_pos = self.deletion_positions(doc)
        if not cand_pos:
            return []
        deleted = [join_tokens(words[:i] + words[i + 1:], spaces[:i] + spaces[i + 1:]) for i in cand_pos]
        pd_ = score_deletions(self.model, words, spaces, cand_pos, deleted)
        imp = p0[y] - pd_[:, y]
        changed = pd_.argmax(1) != y
        imp = imp + np.where(changed, pd_.max(1) - p0[pd_.argmax(1)], 0.0)
        order = [cand_pos[j] for j in np.argsort(-imp, kind="stable")]
        if self.max_words is not None:
            order = order[: self.max_words]
        cur_words, cur_p = list(words), p0
        n_changed = 0
        for i in order:
            tok = doc[i]
            cands = [c for c in self.neighbours(tok.lower_) if tok.pos_ in self._wordnet.pos.get(c, ())]
            if not cands:
                continue
            variants = []
            for c in cands:
                w = list(cur_words)
                w[i] = match_case(c, tok.text)
                variants.append(w)
            pv = self._score_variants(cur_words, spaces, i, variants)
            orig_window = self._window(cur_words, spaces, i)
            flip_idx = [j for j in range(len(variants)) if pv[j].argmax() != y]
            if flip_idx:  # every label-changing candidate's similarity: the most similar passing one wins
                sims = angular_similarity([orig_window] * len(flip_idx),
                                          [self._window(variants[j], spaces, i) for j in flip_idx])
                ok = [(s, -k, j) for k, (j, s) in enumerate(zip(flip_idx, sims)) if s >= self.min_similarity]
                if ok:
                    j = max(ok)[2]  # highest similarity, the first on ties
                    self.swaps.append((tok.lower_, cands[j]))
                    return [join_tokens(variants[j], spaces)]
            rest = [int(j) for j in np.argsort(pv[:, y], kind="stable") if pv[j].argmax() == y and pv[j, y] < cur_p[y]]
            j = self._first_passing(orig_window, variants, spaces, i, rest)
            if j is not None:
                cur_words, cur_p = variants[j], pv[j]
                self.swaps.append((tok.lower_, cands[j]))
                n_changed += 1
        return [join_tokens(cur_words, spaces)] if n_changed else []

    def _first_passing(self, orig_window, variants, spaces, i, order) -> int | None:
        """The first index of ``order`` whose window passes the similarity check (None if none does),
        checked in batches of ``similarity_batch``."""
        for b in range(0, len(order), self.similarity_batch):
            chunk = order[b:b + self.similarity_batch]
            sims = angular_similarity([orig_window] * len(chunk), [self._window(variants[j], spaces, i) for j in chunk])
            for j, s in zip(chunk, sims):
                if s >= self.min_similarity:
                    return j
        return None
