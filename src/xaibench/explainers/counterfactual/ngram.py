"""A label-conditioned bigram language model with interpolated unigram backoff.

Stage 1 of the MiCE-style editor: MiCE fine-tunes T5 to infill masked spans conditioned on the
(predicted) label; here ``P(w | prev, label) = (c_label(prev, w) + a * P_label(w)) / (c_label(prev) + a)``
is estimated on the train split labelled by the predictor, over spaCy tokens, lower-cased.  With
``label=None`` the label-pooled model is used (Polyjuice-style insertions and the cheap in-domain
fluency LM).  Sampling is restricted to the ``top_k`` successors of the previous word.

:class:`TwoSidedLM` is the two-sided alternative (MiCE's ``infiller="two-sided"``): the same smoothed
bigram estimate, but a masked span is sampled given the words on *both* sides of it (the exact
posterior of the bigram chain given its left and right neighbours), so the infill also fits the word after it.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Sequence

import numpy as np

BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"


class BigramLM:
    def __init__(self, alpha: float = 2.0, top_k: int = 40, min_count: int = 2):
        self.alpha, self.top_k, self.min_count = alpha, top_k, min_count

    def fit(self, token_lists: Sequence[Sequence[str]], labels: Sequence[int] | None = None) -> "BigramLM":
        labels = [None] * len(token_lists) if labels is None else list(labels)
        uni: dict = defaultdict(Counter)
        bi: dict = defaultdict(lambda: defaultdict(Counter))
        for toks, lab in zip(token_lists, labels):
            seq = [BOS] + [t.lower() for t in toks]
            for key in {lab, None}:
                uni[key].update(seq[1:])
                for a, b in zip(seq[:-1], seq[1:]):
                    bi[key][a][b] += 1
        self.labels = sorted(k for k in uni if k is not None)
        self.unigram, self.successors, self.prev_total = {}, {}, {}
        for key, cnt in uni.items():
            vocab = {w: c for w, c in cnt.items() if c >= self.min_count}
            total = sum(vocab.values())
            self.unigram[key] = {w: c / total for w, c in vocab.items()}
            succ, tot = {}, {}
            for a, nxt in bi[key].items():
                items = [(w, c) for w, c in nxt.items() if w in vocab]
                tot[a] = sum(c for _, c in items)
                items.sort(key=lambda x: -x[1])
                items = items[: self.top_k]
                if items:
                    succ[a] = (np.array([w for w, _ in items]), np.array([c for _, c in items], dtype=np.float64))
            self.successors[key], self.prev_total[key] = succ, tot
        self.n_tokens = sum(uni[None].values())
        return self

    def logprob(self, prev: str, word: str, label: int | None = None) -> float:
        key = label if label in self.unigram else None
        pu = self.unigram[key].get(word.lower(), 0.0)
        pu = pu if pu > 0 else 1.0 / (self.n_tokens + 1)
        words_counts = self.successors[key].get(prev.lower())
        c = 0.0
        if words_counts is not None:
            hit = np.flatnonzero(words_counts[0] == word.lower())
            c = float(words_counts[1][hit[0]]) if hit.size else 0.0
        tot = self.prev_total[key].get(prev.lower(), 0)
        return float(np.log((c + self.alpha * pu) / (tot + self.alpha)))

    def nll(self, tokens: Sequence[str], label: int | None = None) -> float:
        """Mean negative log-likelihood per token."""
        seq = [BOS] + list(tokens)
        if len(seq) < 2:
            return float("nan")
        return -float(np.mean([self.logprob(a, b, label) for a, b in zip(seq[:-1], seq[1:])]))

    def sample(self, prev: str, n: int, rng: np.random.Generator, label: int | None = None,
               avoid: Sequence[str] = ()) -> list[str]:
        """``n`` words continuing ``prev`` (top-k sampling from the label's bigram distribution)."""
        key = label if label in self.unigram else None
        out = []
        for _ in range(n):
            wc = self.successors[key].get(prev.lower()) or self.successors[key].get(BOS)
            words, counts = wc
            p = counts.copy()
            if avoid:
                p[np.isin(words, list(avoid))] = 0.0
            if p.sum() <= 0:
                p = counts.copy()
            w = str(rng.choice(words, p=p / p.sum()))
            out.append(w)
            prev = w
        return out


class TwoSidedLM:
    """Label-conditioned bigram LM that samples a masked span given its left *and* right neighbours.

    ``P(w | prev, label) = (c_label(prev, w) + a * P_label(w)) / (c_label(prev) + a)`` as in :class:`BigramLM`
    (full counts, no top-k truncation; the texts end with ``</s>``).  A span of ``n`` words between ``left`` and
    ``right`` is drawn from the chain's posterior given both ends: word ``k`` from
    ``q(w) ~ P(w | w_{k-1}, label) * beta_{n-k}(w)`` with ``beta_0(w) = P(right | w, label)`` and
    ``beta_m(w) = sum_v P(v | w, label) beta_{m-1}(v)`` over the candidate words ``v`` (backward messages, one
    sparse product each).  For a
    one-word span this is ``P(w | left) * P(right | w)``: the word that fits the word after it too.

    Sampling is restricted to the ``top_k`` most probable words of ``q`` among the candidates: words seen at
    least ``min_count`` times (pooled over labels), among the ``max_candidates`` most frequent such words (None:
    all), with a letter or digit when ``words_only`` (the masked words are such words), never the left neighbour,
    nor the right neighbour for the span's last word (no "the the").  ``temperature`` < 1 sharpens ``q``.

    The defaults (10,000 most frequent words, temperature 0.5) were chosen among three designs (all words at
    temperature 1; 10,000 words at temperature 1; 10,000 words at temperature 0.5) by SmolLM2's NLL of MiCE's
    edits on IMDb reviews 20-39 of the seeded sample, held out from the reviews :func:`infiller_fluency
    <xaibench.evaluation.cf_feedback.runner.infiller_fluency>` reports on (notebook 12).
    """

    def __init__(self, alpha: float = 2.0, top_k: int = 40, min_count: int = 2, words_only: bool = True,
                 temperature: float = 0.5, max_candidates: int | None = 10000):
        if temperature <= 0:
            raise ValueError(f"temperature={temperature!r}: use a positive number")
        if max_candidates is not None and max_candidates < 1:
            raise ValueError(f"max_candidates={max_candidates!r}: use a positive integer or None (all words)")
        self.alpha, self.top_k, self.min_count = alpha, top_k, min_count
        self.words_only, self.temperature, self.max_candidates = words_only, temperature, max_candidates
        self._cache: dict = {}

    def __getstate__(self):  # the candidate-space matrices and the cache are derived: rebuilt on load
        return {k: v for k, v in self.__dict__.items() if k not in ("_cache", "_sub", "cand_idx", "cand_pos", "candidate")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._set_candidates()

    def fit(self, token_lists: Sequence[Sequence[str]], labels: Sequence[int] | None = None) -> "TwoSidedLM":
        from scipy import sparse

        labels = [None] * len(token_lists) if labels is None else list(labels)
        seqs = [[t.lower() for t in toks] for toks in token_lists]
        pooled = Counter(w for s in seqs for w in s)
        words = [BOS, EOS, UNK] + sorted(w for w, c in pooled.items() if c >= self.min_count and w not in (BOS, EOS, UNK))
        self.vocab = np.array(words)
        self.index = {w: i for i, w in enumerate(words)}
        V, unk = len(words), self.index[UNK]
        self.labels = sorted({lab for lab in labels if lab is not None})
        ids = {key: ([], []) for key in [None, *self.labels]}
        for s, lab in zip(seqs, labels):
            seq = [0] + [self.index.get(w, unk) for w in s] + [1]
            for key in {lab, None}:
                ids[key][0].extend(seq[:-1])
                ids[key][1].extend(seq[1:])
        self.counts, self.counts_t, self.unigram, self.row_total = {}, {}, {}, {}
        for key, (a, b) in ids.items():
            a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
            c = sparse.coo_matrix((np.ones(len(a)), (a, b)), shape=(V, V)).tocsr()
            c.sum_duplicates()
            u = np.bincount(b, minlength=V).astype(np.float64)
            u[unk] = 0.0  # the unknown word gets the floor probability, as an unseen word in BigramLM
            pu = u / max(u.sum(), 1.0)
            pu[pu <= 0] = 1.0 / (len(b) + 1)
            self.counts[key], self.counts_t[key] = c, c.T.tocsr()
            self.unigram[key], self.row_total[key] = pu, np.asarray(c.sum(1)).ravel()
        self.word_count = np.array([pooled.get(w, 0) for w in words])
        self.n_tokens = int(sum(len(s) for s in seqs))
        self._set_candidates()
        return self

    def _set_candidates(self) -> None:
        words = self.vocab
        ok = np.array([any(ch.isalnum() for ch in w) for w in words]) if self.words_only else np.ones(len(words), bool)
        ok[[self.index[BOS], self.index[EOS], self.index[UNK]]] = False
        ok &= self.word_count >= self.min_count
        if self.max_candidates is not None and ok.sum() > self.max_candidates:
            order = np.argsort(-np.where(ok, self.word_count, -1), kind="stable")
            ok = np.zeros(len(words), bool)
            ok[order[: self.max_candidates]] = True
        self.candidate = ok
        self.cand_idx = np.flatnonzero(ok)
        self.cand_pos = np.full(len(words), -1)
        self.cand_pos[self.cand_idx] = np.arange(len(self.cand_idx))
        c = self.cand_idx  # per label: counts among the candidates, unigram and row totals of the candidates
        self._sub = {}
        for key, m in self.counts.items():
            to_cand = m[:, c].tocsr()  # every word's successor counts among the candidates
            self._sub[key] = (to_cand[c], self.unigram[key][c], self.row_total[key][c], to_cand)
        self._cache = {}

    def _key(self, label):
        return label if label in self.counts else None

    def _id(self, word: str) -> int:
        return self.index.get(word.lower(), self.index[UNK])

    def _row(self, key, prev: int, cand: np.ndarray | None = None) -> np.ndarray:
        """``P(. | prev, label)`` over the vocabulary (over the candidates :attr:`cand_idx` when ``cand`` is given)."""
        c = self.counts[key] if cand is None else self._sub[key][3]
        lo, hi = c.indptr[prev], c.indptr[prev + 1]
        out = self.alpha * (self.unigram[key] if cand is None else self._sub[key][1])
        out[c.indices[lo:hi]] += c.data[lo:hi]
        return out / (self.row_total[key][prev] + self.alpha)

    def _beta(self, key, right: int, m: int) -> np.ndarray:
        """Backward message ``beta_m`` over the candidates: probability of reaching ``right`` ``m + 1`` steps after
        each candidate through ``m`` candidate words (the words a span is made of)."""
        ck = ("beta", key, right, m)
        if ck in self._cache:
            return self._cache[ck]
        sub, puc, totc, _ = self._sub[key]
        a = self.alpha
        if m == 0:
            col = np.zeros(len(puc))
            ct = self.counts_t[key]
            lo, hi = ct.indptr[right], ct.indptr[right + 1]
            pos = self.cand_pos[ct.indices[lo:hi]]
            col[pos[pos >= 0]] = ct.data[lo:hi][pos >= 0]
            beta = (col + a * self.unigram[key][right]) / (totc + a)
        else:
            nxt = self._beta(key, right, m - 1)
            beta = (sub @ nxt + a * float(puc @ nxt)) / (totc + a)
        beta = beta / beta.max()  # scale-free: only ratios matter
        self._cache[ck] = beta
        return beta

    def distribution(self, prev: str, right: str, remaining: int, label: int | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
        """``(words, probabilities)`` of the next span word after ``prev`` when ``remaining`` words (this one
        included) stand before ``right``: the ``top_k`` candidates of ``P(w | prev) * beta_{remaining-1}(w)``."""
        key = self._key(label)
        p, r = self._id(prev), self._id(right)
        ck = (key, p, r, remaining)
        got = self._cache.get(ck)
        if got is not None:
            return got[:2]
        if len(self._cache) > 200_000:
            self._cache.clear()
        cand = self.cand_idx
        q = self._row(key, p, cand) * self._beta(key, r, remaining - 1)  # over the candidates only
        for banned in ((p, r) if remaining == 1 else (p,)):
            if self.cand_pos[banned] >= 0:
                q[self.cand_pos[banned]] = 0.0
        k = max(1, min(self.top_k, int((q > 0).sum())))
        top = np.argpartition(-q, k - 1)[:k] if k < len(q) else np.arange(len(q))
        top = top[np.argsort(-q[top], kind="stable")]
        w = q[top] ** (1.0 / self.temperature)
        w = w / w.sum() if w.sum() > 0 else np.full(len(w), 1.0 / len(w))
        got = (self.vocab[cand[top]], w, np.cumsum(w))
        self._cache[ck] = got
        return got[:2]

    def sample_span(self, prev: str, right: str, n: int, rng: np.random.Generator, label: int | None = None
                    ) -> list[str]:
        """``n`` words to stand between ``prev`` (``<s>`` at the start) and ``right`` (``</s>`` at the end)."""
        out, key, r = [], self._key(label), self._id(right)
        for k in range(n):
            self.distribution(prev, right, n - k, label)
            words, _, cdf = self._cache[(key, self._id(prev), r, n - k)]
            prev = str(words[min(int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right")), len(words) - 1)])
            out.append(prev)
        return out

    def logprob(self, prev: str, word: str, label: int | None = None) -> float:
        key = self._key(label)
        return float(np.log(self._row(key, self._id(prev))[self._id(word)]))


def train_ngram(dataset: str, predictor=None, max_texts: int | None = 20000, seed: int = 42,
                kind: str = "bigram") -> BigramLM | TwoSidedLM:
    """The label-conditioned bigram LM of ``dataset``'s train split (labels from ``predictor``;
    gold labels when None); ``kind="two-sided"``: a :class:`TwoSidedLM` on the same texts.
    Cached in memory per process by the caller."""
    from ...data.cf_data import load_cf_dataset
    from ...nlp import nlp

    df = load_cf_dataset(dataset)
    train = df[df["split"] == "train"]
    if max_texts is not None and len(train) > max_texts:
        train = train.sample(n=max_texts, random_state=seed)
    texts = train["text"].tolist()

    def tokens_and_labels() -> tuple[list, list[int]]:
        labels = train["label"].to_numpy() if predictor is None else predictor.predict(texts)
        toks = [[t.text for t in d if not t.is_space] for d in nlp().tokenizer.pipe(texts, batch_size=256)]
        return toks, [int(x) for x in labels]

    toks, labels = _shared_training_set(texts, predictor, kind, tokens_and_labels)
    return (TwoSidedLM() if kind == "two-sided" else BigramLM()).fit(toks, labels)


#: the spaCy tokens and labels of the last training set :func:`train_ngram` read, kept until every infiller kind
#: has been trained on it: the bigram and two-sided infillers of a dataset read the same texts with the same labels,
#: so the second one does not tokenise and label them again (the fitted models are the same either way)
_TRAINING_SET: dict = {}
_KINDS = ("bigram", "two-sided")


def _shared_training_set(texts: list[str], predictor, kind: str, compute) -> tuple[list, list[int]]:
    """``compute()`` once per training set: keyed on the texts (a digest) and the predictor that labels them
    (its fingerprint; gold labels: ``None``). A predictor without a fingerprint is never shared. One training set
    is held at a time, and only until each kind in ``_KINDS`` has read it."""
    import hashlib

    if predictor is not None and not hasattr(predictor, "fingerprint"):
        return compute()
    digest = hashlib.sha1("\x00".join(texts).encode()).hexdigest()
    key = (digest, len(texts), None if predictor is None else predictor.fingerprint())
    entry = _TRAINING_SET.get(key)
    if entry is None:
        _TRAINING_SET.clear()
        entry = _TRAINING_SET[key] = {"data": compute(), "read_by": set()}
    entry["read_by"].add(kind)
    if entry["read_by"] >= set(_KINDS):
        del _TRAINING_SET[key]
    return entry["data"]
