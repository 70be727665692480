"""Polyjuice-style editor (Wu et al., ACL 2021), approximated offline.  Never calls the predictor.

Blanks are drawn as Polyjuice's ``get_random_blanked_sentences`` does: on the dependency parse,
random single-token blanks, random subtree blanks and empty insertion blanks, **plus always one
blank over the whole text**.  Polyjuice's GPT-2 generator (fine-tuned on paired sentences with
control codes) is replaced by one rule per control code, applied to the blanked span:

* ``negation``: remove a ``neg`` dependent, else add "not" after the auxiliary (or "does not" +
  lemma before a verb);
* ``quantifier``: swap quantifiers (all/some/many/few/no/every/more/less/always/never) or a number;
* ``lexical``: replace one content word by a WordNet antonym, else by a raw-GloVe neighbour;
* ``resemantic``: replace the blanked span by as many words sampled from the in-domain bigram LM;
* ``insert``: insert 1-3 sampled words at the insertion blank;
* ``delete``: delete the blanked span;
* ``shuffle``: swap two noun chunks of the sentence;
* ``restructure``: move a prepositional/adverbial subtree to the front of its sentence.

The whole-text blank reproduces what Polyjuice's generator does when the blank covers the whole
text: it writes *one sentence* -- here one sentence of the text chosen at random, perturbed with a
control code -- which is the "extreme erasure" the paper sees on long reviews (its Fig. 4).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..base import CounterfactualExplainer
from .common import join_tokens, match_case

CONTROL_CODES = ("negation", "quantifier", "lexical", "resemantic", "insert", "delete", "shuffle", "restructure")
_QUANT = {"all": "some", "some": "all", "many": "few", "few": "many", "no": "some", "every": "no",
          "more": "less", "less": "more", "most": "least", "least": "most", "always": "never",
          "never": "always", "several": "no", "any": "no", "much": "little", "little": "much"}


class Polyjuice(CounterfactualExplainer):
    name = "polyjuice"
    uses_predictor = False

    def __init__(self, lm=None, dataset: str | None = None, n_blanks: int = 3, seed: int = 42,
                 wordnet=None, vectors=None):
        self.lm, self.dataset, self.n_blanks, self.seed = lm, dataset, n_blanks, seed
        self._wordnet, self._vectors = wordnet, vectors
        self._words = None  # (doc, its token texts), so the 8 control codes x 4 blanks share one list

    def fit(self, model=None, data=None):
        # the predictor is *not* used; only the in-domain LM (label-pooled) for resemantic/insert
        self.model = None
        if self.lm is None:
            from .mice import cached_infiller

            self.lm = cached_infiller(self.dataset, model, 20000, self.seed) if model is not None else None
        if self._wordnet is None:
            from .wordnet import load_wordnet

            self._wordnet = load_wordnet()
        return self

    # ---- blanks ------------------------------------------------------------------------------
    def _blanks(self, doc, rng) -> list[tuple[int, int]]:
        n = len(doc)
        spans: list[tuple[int, int]] = []
        if n == 0:
            return spans
        for _ in range(self.n_blanks):
            kind = rng.integers(3)
            i = int(rng.integers(n))
            if kind == 0:
                spans.append((i, i + 1))
            elif kind == 1:
                sub = list(doc[i].subtree)
                spans.append((sub[0].i, sub[-1].i + 1))
            else:
                spans.append((i, i))
        return spans

    # ---- control codes -------------------------------------------------------------------------
    def _apply(self, code, doc, span, rng) -> list[str] | None:
        words = self._words[1] if self._words is not None and self._words[0] is doc else [t.text for t in doc]
        s, e = span
        sent = doc[s].sent if s < len(doc) else doc[-1].sent
        if code == "delete":
            return words[:s] + words[e:] if e > s else None
        if code == "negation":
            negs = [t.i for t in sent if t.dep_ == "neg"]
            if negs:
                return words[:negs[0]] + words[negs[0] + 1:]
            aux = [t for t in sent if t.pos_ == "AUX"]
            if aux:
                return words[:aux[0].i + 1] + ["not"] + words[aux[0].i + 1:]
            verbs = [t for t in sent if t.pos_ == "VERB"]
            if verbs:
                v = verbs[0]
                return words[:v.i] + ["does", "not", v.lemma_] + words[v.i + 1:]
            return None
        if code == "quantifier":
            for t in list(doc[s:max(e, s + 1)]) + list(sent):
                if t.lower_ in _QUANT:
                    return words[:t.i] + [match_case(_QUANT[t.lower_], t.text)] + words[t.i + 1:]
                if t.like_num and t.is_digit:
                    return words[:t.i] + [str(int(t.text) + int(rng.integers(1, 10)))] + words[t.i + 1:]
            return None
        if code == "lexical":
            pool = [t for t in (doc[s:e] if e > s else sent) if t.pos_ in ("ADJ", "ADV", "VERB", "NOUN")]
            for t in pool:
                ants = self._wordnet.antonyms_of(t.lower_)
                if ants:
                    return words[:t.i] + [match_case(ants[int(rng.integers(len(ants)))], t.text)] + words[t.i + 1:]
            if pool and self._vectors is not None:
                t = pool[int(rng.integers(len(pool)))]
                nn = self._vectors.neighbours(t.lower_, 10, 0.0)
                if nn:
                    return words[:t.i] + [match_case(nn[int(rng.integers(len(nn)))][0], t.text)] + words[t.i + 1:]
            return None
        if code == "resemantic":
            if e <= s or self.lm is None:
                return None
            prev = words[s - 1] if s > 0 else "<s>"
            return words[:s] + self.lm.sample(prev, e - s, rng) + words[e:]
        if code == "insert":
            if self.lm is None:
                return None
            prev = words[s - 1] if s > 0 else "<s>"
            return words[:s] + self.lm.sample(prev, int(rng.integers(1, 4)), rng) + words[s:]
        if code == "shuffle":
            chunks = [c for c in doc.noun_chunks if c.start >= sent.start and c.end <= sent.end]
            if len(chunks) < 2:
                return None
            a, b = chunks[0], chunks[-1]
            return (words[:a.start] + words[b.start:b.end] + words[a.end:b.start] + words[a.start:a.end]
                    + words[b.end:])
        if code == "restructure":
            for t in sent:
                if t.dep_ in ("prep", "advcl", "advmod", "npadvmod") and t.head.dep_ == "ROOT":
                    sub = list(t.subtree)
                    a, b = sub[0].i, sub[-1].i + 1
                    if a == sent.start:
                        continue
                    moved = [match_case(words[a], "X")] + words[a + 1:b] + [","]
                    rest = words[sent.start:a] + words[b:sent.end]
                    if rest:
                        rest[0] = rest[0] if rest[0] == "I" else rest[0][:1].lower() + rest[0][1:]
                    return words[:sent.start] + moved + rest + words[sent.end:]
            return None
        raise ValueError(f"unknown control code {code!r}; use one of {CONTROL_CODES}")

    def explain(self, texts: Sequence[str], targets: Sequence[int] | None = None) -> list[list[str]]:
        from ...nlp import parse

        texts, _ = self._check_inputs(texts, targets)
        out = []
        for doc in parse(texts):
            self._words = (doc, [t.text for t in doc])  # read by every _apply on this doc
            rng = np.random.default_rng([self.seed, len(doc.text), sum(map(ord, doc.text[:200]))])
            cands: list[str] = []
            for span in self._blanks(doc, rng):
                for code in CONTROL_CODES:
                    w = self._apply(code, doc, span, rng)
                    if w:
                        cands.append(_detok(w))
            # the whole-text blank: the generator writes one (perturbed) sentence
            sents = list(doc.sents)
            if sents:
                sent = sents[int(rng.integers(len(sents)))]
                sdoc = sent.as_doc()
                self._words = (sdoc, [t.text for t in sdoc])
                for code in CONTROL_CODES:
                    w = self._apply(code, sdoc, (0, len(sdoc)), rng)
                    if w:
                        cands.append(_detok(w))
            out.append([c for c in dict.fromkeys(cands) if c and c != doc.text])
        return out


def _detok(words: list[str]) -> str:
    text = " ".join(w for w in words if w)
    for p in (" ,", " .", " !", " ?", " ;", " :", " n't", " 's", " )", "( "):
        text = text.replace(p, p.strip() if not p.startswith("(") else "(")
    return text.strip()
