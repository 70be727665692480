"""Article-manipulated BeerAdvocate reviews (Zhou et al. 2022, Secs. 6-7, Fig. 9).

* ``article``: labels reassigned with ``r = 0.5`` (i.e. random); every article (a / an / the) of a
  positive review becomes "the", of a negative review "a".  Reviews without an article are
  dropped.  ER = the article positions.
* ``cn`` / ``nc``: each review is cut into two halves (by token count).  In the *correlated* half
  the articles follow the label as above; in the other half all articles are set by an
  independent fair coin (same rewrite rule, so the two halves look alike).  CN has the
  correlated half first, NC second.  Reviews whose correlated half has no article are dropped.

Texts are the processed appearance-only reviews (``data/raw/beer``, Lei et al. aspect 0,
cleaned version): tokenised with :func:`~xaibench.models.embeddings.word_tokenize` and re-joined
with spaces, so every model/explainer that splits on that tokenizer sees the same positions as
the ER masks.  The aspect header ("a :" / "appearance :") is removed: its "a" is an aspect tag,
not an article.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .reassign import reassign_labels_binary

ARTICLES = frozenset({"a", "an", "the"})
POS_ARTICLE, NEG_ARTICLE = "the", "a"
KINDS = ("article", "cn", "nc")
_HEADERS = (("a", ":"), ("appearance", ":"))


def clean_review(text: str, max_length: int = 256) -> list[str]:
    from ...models.embeddings import word_tokenize

    toks = word_tokenize(text)
    for h in _HEADERS:
        if tuple(toks[: len(h)]) == h:
            toks = toks[len(h):]
            break
    return toks[:max_length]


@dataclass
class ArticleSplit:
    texts: list[str]
    labels: np.ndarray
    corr: list[np.ndarray]      # bool mask per review: correlating articles (the ER)
    noncorr: list[np.ndarray]   # bool mask per review: non-correlating articles (empty for `article`)
    orig_tokens: list[list[str]] = field(repr=False, default_factory=list)
    orig_labels: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.texts)

    def tokens(self, i: int) -> list[str]:
        return self.texts[i].split(" ")


@dataclass
class ArticleDataset:
    kind: str
    seed: int
    train: ArticleSplit
    val: ArticleSplit
    test: ArticleSplit
    n_dropped: int
    n_pool: int


def manipulate(tokens: list[str], label: int, kind: str, rng: np.random.Generator
               ) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """Rewrite one review; returns ``(tokens, corr_mask, noncorr_mask)`` or ``None`` when the
    review has no article where one is needed (it is then dropped)."""
    if kind not in KINDS:
        raise ValueError(f"unknown article dataset kind {kind!r}; choose one of {KINDS}")
    is_art = np.array([t in ARTICLES for t in tokens], dtype=bool)
    n = len(tokens)
    if kind == "article":
        corr, noncorr = is_art, np.zeros(n, dtype=bool)
    else:
        first = np.arange(n) < (n + 1) // 2
        corr_half = first if kind == "cn" else ~first
        corr, noncorr = is_art & corr_half, is_art & ~corr_half
    if not corr.any():
        return None
    out = list(tokens)
    lab_art = POS_ARTICLE if label == 1 else NEG_ARTICLE
    rnd_art = POS_ARTICLE if rng.random() < 0.5 else NEG_ARTICLE
    for i in np.flatnonzero(corr):
        out[i] = lab_art
    for i in np.flatnonzero(noncorr):
        out[i] = rnd_art
    return out, corr, noncorr


def build_article_dataset(df: pd.DataFrame, kind: str = "article", seed: int = 0, n_train: int = 7000,
                          n_val: int = 1000, n_test: int = 1000, r: float = 0.5,
                          max_length: int = 256, concat: int = 1) -> ArticleDataset:
    """Pool all reviews of ``df`` (columns ``text``, ``label``), reassign labels with keep-probability
    ``r``, manipulate, drop reviews without a (correlated) article, shuffle with ``seed`` and cut
    train/val/test (the paper reshuffles for every experiment).

    ``concat > 1`` makes longer reviews: each review is followed by ``concat - 1`` other reviews with the
    same original label (drawn without replacement from a random stream of their own, so ``concat = 1``
    gives exactly the dataset it always gave), then cut to ``max_length`` tokens.  The pieces of one
    review may recur inside other reviews, in any split; the label still comes only from the articles."""
    from ...checks import check_columns, check_count, check_labels, check_texts

    if kind not in KINDS:
        raise ValueError(f"unknown article dataset kind {kind!r}; choose one of {KINDS}")
    for name, v in (("n_train", n_train), ("n_val", n_val), ("n_test", n_test), ("max_length", max_length),
                    ("concat", concat)):
        check_count(v, name, 1)
    check_columns(df, ("text", "label"), "df", "the reviews: one row per review with its binary label")
    texts = check_texts(df["text"].tolist(), "df['text']")
    orig = check_labels(df["label"].tolist(), n_classes=2, what="df['label']")
    rng = np.random.default_rng(seed)
    toks = [clean_review(t, max_length) for t in texts]
    if concat > 1:
        toks = _concatenate(toks, np.asarray(orig), concat, max_length, np.random.default_rng([seed, concat]))
    new = reassign_labels_binary(orig, r, rng)
    rows = []
    for t, y, y0 in zip(toks, new, orig):
        res = manipulate(t, int(y), kind, rng)
        if res is not None:
            rows.append((res, int(y), t, int(y0)))
    n_dropped = len(toks) - len(rows)
    need = n_train + n_val + n_test
    if len(rows) < need:
        raise ValueError(f"only {len(rows)} reviews keep an article but {need} were requested; "
                         "lower n_train/n_val/n_test")
    order = rng.permutation(len(rows))[:need]

    def split(idx: np.ndarray) -> ArticleSplit:
        sel = [rows[i] for i in idx]
        return ArticleSplit(texts=[" ".join(s[0][0]) for s in sel], labels=np.array([s[1] for s in sel]),
                            corr=[s[0][1] for s in sel], noncorr=[s[0][2] for s in sel],
                            orig_tokens=[s[2] for s in sel], orig_labels=np.array([s[3] for s in sel]))

    return ArticleDataset(kind, seed, split(order[:n_train]), split(order[n_train:n_train + n_val]),
                          split(order[n_train + n_val:]), n_dropped=n_dropped, n_pool=len(toks))


def _concatenate(toks: list[list[str]], labels: np.ndarray, k: int, max_length: int,
                 rng: np.random.Generator) -> list[list[str]]:
    """Each review followed by ``k - 1`` distinct other reviews of its label, cut to ``max_length`` tokens."""
    out = []
    pools = {y: np.flatnonzero(labels == y) for y in np.unique(labels)}
    for i, y in enumerate(labels):
        pool = pools[y]
        if len(pool) < k:
            raise ValueError(f"concat={k} needs at least {k} reviews of label {y}, found {len(pool)}")
        picks = [j for j in rng.choice(pool, size=k, replace=False) if j != i][: k - 1]
        out.append([t for j in [i, *picks] for t in toks[j]][:max_length])
    return out


def article_share(split: ArticleSplit) -> dict[str, float]:
    """Mean per-review share of correlating / non-correlating articles among all tokens."""
    c = np.array([m.mean() for m in split.corr])
    nc = np.array([m.mean() for m in split.noncorr])
    return {"corr": float(c.mean()), "noncorr": float(nc.mean()), "other": float(1 - c.mean() - nc.mean())}
