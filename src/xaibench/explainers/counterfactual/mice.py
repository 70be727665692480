"""MiCE-style editor (Ross et al., 2021), reimplemented offline.

Stage 1 (MiCE: T5 fine-tuned to infill spans given the predictor's label): a label-conditioned
bigram infiller (:class:`.ngram.BigramLM`) estimated on the train split labelled by the predictor.
It sees only the word left of a span (the default, ``infiller="bigram"``); ``infiller="two-sided"``
samples each span given the words on both sides of it (:class:`.ngram.TwoSidedLM`).
Stage 2, as in MiCE's ``EditFinder``:

* the tokens with the largest |gradient x input| of the predictor's *original* prediction are
  masked (MiCE's default ``grad_pred="original"``; exact for the TF-IDF model via
  ``input_gradient``; leave-one-out occlusion for models without one); contiguous masked tokens
  form one span;
* binary search over the masked fraction in [0, 0.55] starting at 0.275, 4 levels: a level where
  some infill reaches the target class moves the search to smaller fractions, otherwise larger;
* 15 sampled infills per level (span length: original length -1/0/+1), beam width 3, at most
  3 edit rounds (the beam keeps the 3 candidates with the highest target probability);
* target = the second most probable class (passed by the runner).

Returns the successful edits of the round that first reached the target, else every candidate
of the last round (the runner's selection rule picks among them).
"""
from __future__ import annotations

import pickle
from typing import Sequence

import numpy as np

from ..base import CounterfactualExplainer
from .common import join_tokens


class MiCE(CounterfactualExplainer):
    name = "mice"
    targeted = True

    def __init__(self, dataset: str | None = None, lm=None, max_frac: float = 0.55, levels: int = 4,
                 n_samples: int = 15, beam: int = 3, rounds: int = 3, seed: int = 42,
                 lm_max_texts: int | None = 20000, infiller: str = "bigram"):
        if infiller not in INFILLERS:
            raise ValueError(f"infiller={infiller!r}: use one of {INFILLERS}")
        self.dataset, self.lm, self.infiller = dataset, lm, infiller
        self.max_frac, self.levels, self.n_samples = max_frac, levels, n_samples
        self.beam, self.rounds, self.seed, self.lm_max_texts = beam, rounds, seed, lm_max_texts

    def fit(self, model, data=None):
        self.model = model
        if self.lm is None:
            self.lm = cached_infiller(self.dataset, model, self.lm_max_texts, self.seed, kind=self.infiller)
        elif self.infiller == "two-sided" and not hasattr(self.lm, "sample_span"):
            raise ValueError(f"infiller='two-sided' needs lm= with sample_span (a TwoSidedLM); got a {type(self.lm).__name__}")
        return self

    # ---- masking ---------------------------------------------------------------------------
    def _relevance(self, words: list[str], spaces: list[str], label: int) -> np.ndarray:
        text = join_tokens(words, spaces)
        if hasattr(self.model, "input_gradient"):
            rel = self.model.input_gradient([text], [label])[0]
            return np.array([abs(rel.get(w.lower(), 0.0)) for w in words])
        p0 = self.model.predict_proba([text])[0, label]
        occl = [join_tokens(words[:i] + words[i + 1:], spaces[:i] + spaces[i + 1:]) for i in range(len(words))]
        return np.abs(p0 - self.model.predict_proba(occl)[:, label])

    @staticmethod
    def mask(words: Sequence[str], rel: np.ndarray, frac: float) -> np.ndarray:
        """The words to infill at mask fraction ``frac`` (boolean, one per word): the ``round(frac * m)`` words (at
        least one) with the largest relevance ``rel`` among the ``m`` that hold a letter or a digit (ties: the
        earlier word)."""
        maskable = [i for i, w in enumerate(words) if any(ch.isalnum() for ch in w)]
        k = max(1, int(round(frac * len(maskable))))
        order = sorted(maskable, key=lambda i: -rel[i])[:k]
        masked = np.zeros(len(words), dtype=bool)
        masked[order] = True
        return masked

    def _infill(self, words, spaces, rel, frac, target, rng) -> list[str]:
        masked = self.mask(words, rel, frac)
        if hasattr(self.lm, "fill_batch"):  # an MLM infiller: the level's infills in one batch
            return self._infill_mlm(words, spaces, masked, target, rng)
        out = []
        for _ in range(self.n_samples):
            nw, ns, i = [], [], 0
            while i < len(words):
                if not masked[i]:
                    nw.append(words[i]); ns.append(spaces[i]); i += 1
                    continue
                j = i
                while j < len(words) and masked[j]:
                    j += 1
                length = max(1, (j - i) + int(rng.integers(-1, 2)))
                prev = nw[-1] if nw else "<s>"
                if hasattr(self.lm, "sample_span"):  # two-sided: the span also fits the word after it
                    fill = self.lm.sample_span(prev, words[j] if j < len(words) else "</s>", length, rng, label=target)
                else:
                    fill = self.lm.sample(prev, length, rng, label=target)
                nw.extend(fill); ns.extend([" "] * len(fill))
                ns[-1] = spaces[j - 1]
                i = j
            out.append(join_tokens(nw, ns))
        return out

    def _infill_mlm(self, words, spaces, masked, target, rng) -> list[str]:
        spans = masked_runs(masked)
        lengths = [[max(1, (j - i) + int(rng.integers(-1, 2))) for i, j in spans] for _ in range(self.n_samples)]
        templates = []
        for ls in lengths:
            t, prev = [], 0
            for (i, j), n in zip(spans, ls):
                t += words[prev:i] + [self.lm.MASK] * n
                prev = j
            templates.append(t + words[prev:])
        fills = self.lm.fill_batch(templates, target, rng)
        out = []
        for ls, pieces in zip(lengths, fills):
            nw, ns, prev, k = [], [], 0, 0
            for (i, j), n in zip(spans, ls):
                nw += words[prev:i]
                ns += spaces[prev:i]
                got = pieces[k:k + n]
                k += n
                new = words[i:j] if any(p is None for p in got) else self.lm.join_pieces(got)
                new = new or words[i:j]
                nw += new
                ns += [" "] * (len(new) - 1) + [spaces[j - 1]]
                prev = j
            out.append(join_tokens(nw + words[prev:], ns + spaces[prev:]))
        return out

    def _search(self, text: str, target: int, rng) -> tuple[list[str], list[str]]:
        from ...nlp import nlp

        doc = nlp().tokenizer(text)
        words = [t.text for t in doc]
        spaces = [t.whitespace_ for t in doc]
        if not words:
            return [], []
        orig = int(self.model.predict_proba([text])[0].argmax())
        rel = self._relevance(words, spaces, orig)
        lo, hi = 0.0, self.max_frac
        frac = (lo + hi) / 2
        cands, wins = [], []
        for _ in range(self.levels):
            c = self._infill(words, spaces, rel, frac, target, rng)
            p = self.model.predict_proba(c)
            ok = [t for t, q in zip(c, p) if q.argmax() == target]
            cands.extend(c)
            wins.extend(ok)
            if ok:
                hi = frac
            else:
                lo = frac
            frac = (lo + hi) / 2
        return cands, wins

    def explain(self, texts: Sequence[str], targets: Sequence[int] | None = None) -> list[list[str]]:
        texts, targets = self._check_inputs(texts, targets)
        if targets is None:
            targets = [int(np.argsort(-p)[1]) for p in self.model.predict_proba(texts)] if texts else []
        out = []
        for text, target in zip(texts, targets):
            rng = np.random.default_rng([self.seed, len(text), sum(map(ord, text[:200]))])
            beam, last = [text], []
            found: list[str] = []
            for _ in range(self.rounds):
                pool = []
                for b in beam:
                    c, w = self._search(b, int(target), rng)
                    pool.extend(c)
                    found.extend(w)
                last = list(dict.fromkeys(pool))
                if found or not last:
                    break
                p = self.model.predict_proba(last)[:, int(target)]
                beam = [last[j] for j in np.argsort(-p, kind="stable")[: self.beam]]
            out.append(list(dict.fromkeys(found)) if found else last)
        return out


def masked_runs(masked: Sequence[bool]) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of consecutive masked tokens (``end`` exclusive), in order."""
    spans, i = [], 0
    while i < len(masked):
        if masked[i]:
            j = i
            while j < len(masked) and masked[j]:
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


#: stage-1 infillers of the editor (``MiCE(infiller=...)``); the first is the default
INFILLERS = ("bigram", "two-sided")
_INFILLERS: dict = {}
#: version of the infiller cache (bump when :func:`~.ngram.train_ngram` or :class:`~.ngram.BigramLM` change)
INFILLER_VERSION = 1  # version 1 caches keep their original file names (``_v<N>`` is added from version 2 on)
#: version of the two-sided infiller cache (bump when :class:`~.ngram.TwoSidedLM` changes)
TWO_SIDED_VERSION = 4


def cached_infiller(dataset: str | None, model, max_texts: int | None, seed: int = 42, kind: str = "bigram"):
    """The dataset's label-conditioned infiller (``kind``: ``"bigram"``, a :class:`~.ngram.BigramLM`, or
    ``"two-sided"``, a :class:`~.ngram.TwoSidedLM`), trained once and cached on disk (keyed on the kind, the
    dataset, the predictor's fingerprint, ``max_texts``, ``seed`` and the kind's cache version)."""
    from ... import io, paths
    from .ngram import train_ngram

    if kind not in INFILLERS:
        raise ValueError(f"kind={kind!r}: use one of {INFILLERS}")
    if dataset is None:
        raise ValueError("MiCE needs dataset= (the train split its infiller is estimated on) or lm=")
    fp = model.fingerprint() if hasattr(model, "fingerprint") else "gold"
    version = INFILLER_VERSION if kind == "bigram" else TWO_SIDED_VERSION
    key = (kind, dataset, fp, max_texts, seed, version)
    if key in _INFILLERS:
        return _INFILLERS[key]
    if kind == "bigram":
        tag = "" if INFILLER_VERSION == 1 else f"_v{INFILLER_VERSION}"
        name = f"infiller_{dataset}_{fp}_{max_texts}_{seed}{tag}.pkl"
    else:
        name = f"twosided_infiller_{dataset}_{fp}_{max_texts}_{seed}_v{TWO_SIDED_VERSION}.pkl"
    path = paths.cache_dir() / "cf_feedback" / name

    def build():
        extra = {} if kind == "bigram" else {"kind": kind}
        lm = train_ngram(dataset, getattr(model, "model", model), max_texts=max_texts, seed=seed, **extra)
        io.write_bytes(path, pickle.dumps(lm))
        return lm

    lm = io.read_or_rebuild(path, _reader(kind), build, what="infiller cache")
    _INFILLERS[key] = lm
    return lm


def _reader(kind: str):
    def read(path):
        from .ngram import BigramLM, TwoSidedLM

        cls = BigramLM if kind == "bigram" else TwoSidedLM
        lm = pickle.loads(path.read_bytes())
        if not isinstance(lm, cls):
            raise TypeError(f"holds a {type(lm).__name__}, not a {cls.__name__}")
        return lm

    return read


_read_infiller = _reader("bigram")
