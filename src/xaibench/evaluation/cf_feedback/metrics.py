"""Counterfactuals of counterfactuals (Filandrianos et al., ACL Findings 2023): the feedback loop.

An editor ``f`` is applied to its own output: ``f_0(x) = x``, ``f_i(x) = f(f_{i-1}(x))``, one
original plus ``n_steps`` (= 9) edits.  At each step the editor returns candidate edits and the
runner keeps **the lowest-minimality candidate that changes the prediction, else the
lowest-minimality candidate** (paper Appendix B; ties: the editor's order).  When an editor returns
no candidate (or only the unchanged text) **the chain keeps its last text**, as in the authors'
released arrays (every text has a value at every step): the step repeats the input with minimality
0, not flipped, ``carried=True``.  The editors are deterministic functions of their input text
(their random draws are seeded by it), so a text that got nothing is not submitted again.

Metrics (each declares ``lower_is_better``):

* minimality ``d(a, b)``: unnormalised word-level Levenshtein distance over spaCy tokens.
* ``inc`` at step k (k = 1..8): ``relu(d(f_{k+1}, f_k) - d(f_k, f_{k-1}))`` (Eq. 1), defined for
  chains that reach step k+1 (with the chain-end rule above: every chain).
* ``inc@n``: the mean of the per-(text, step) inconsistency values pooled over steps
  1..min(n, 8) -- with 9 edits only 8 steps exist, so the paper's inc@9 is the mean over steps 1-8
  (authors' ``inconsistency.py``, which averages the array of all texts' steps at once).  For the
  t-tests of Tables 4-5 a per-text ``inc@n`` is used: the mean of that chain's steps 1..n.
* flip rate@n: the fraction of *all* texts whose prediction at step n differs from step n-1
  (``n_flipped / n_all``; a missing or carried step counts as not flipped).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
from rapidfuzz.distance import Levenshtein

from ...checks import check_columns, check_count, check_texts
from ..base import Metric

N_STEPS = 9
#: the columns every summary of a chain table reads (one row per text and step, as run_chains returns)
CHAIN_COLUMNS = ("text_id", "step", "minimality", "flipped")
_CHAIN_HINT = "pass the chain table of run_chains / run_experiment: one row per (text_id, step)"


def check_chains(chains: pd.DataFrame, cols=("text_id", "step"), what: str = "chains") -> pd.DataFrame:
    """``chains`` must be a chain table with the columns ``cols`` (a clear error, not ``KeyError 'text_id'``)."""
    check_columns(chains, cols, what, _CHAIN_HINT)
    return chains


METRICS: dict[str, Metric] = {
    "minimality": Metric("minimality", True, "word-level Levenshtein distance over spaCy tokens"),
    "inc": Metric("inc", True, "inconsistency inc@n of minimality (Eq. 1-2)"),
    "flip_rate": Metric("flip_rate", False, "fraction of texts whose predicted class changes"),
    "nll": Metric("nll", True, "mean token negative log-likelihood under a language model"),
    "ppl": Metric("ppl", True, "perplexity exp(mean NLL) under a language model"),
}


# ----------------------------------------------------------------------------------------------
# distances
# ----------------------------------------------------------------------------------------------
def levenshtein(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Edit distance (insert/delete/substitute, cost 1 each) between two sequences of hashable tokens
    (:func:`rapidfuzz.distance.Levenshtein.distance`, exact)."""
    return int(Levenshtein.distance(list(a), list(b)))


def minimality(original: str, edited: str, tokenize: Callable[[str], list[str]] | None = None) -> int:
    """Unnormalised word-level Levenshtein distance over spaCy tokens (MiCE's minimality)."""
    if tokenize is None:
        from ...nlp import tokens as tokenize
    return levenshtein(tokenize(original), tokenize(edited))


# ----------------------------------------------------------------------------------------------
# inconsistency and flip rate
# ----------------------------------------------------------------------------------------------
def inc_steps(distances: Sequence[float]) -> np.ndarray:
    """Per-step inconsistency of one chain: ``relu(d_{k+1} - d_k)`` for k = 1..len-1.

    ``distances[k-1] = d(f_k, f_{k-1})``; a chain with m edits has m-1 inconsistency steps.
    """
    d = np.asarray(distances, dtype=np.float64)
    if d.size < 2:
        return np.zeros(0)
    return np.maximum(d[1:] - d[:-1], 0.0)


def inc_at_n_chain(distances: Sequence[float], n: int) -> float:
    """Per-text inc@n: mean of the chain's existing inconsistency steps 1..n (NaN if none)."""
    s = inc_steps(distances)[:n]
    return float(s.mean()) if s.size else float("nan")


def inc_table(chains: Sequence[Sequence[float]], n_steps: int = N_STEPS) -> pd.DataFrame:
    """Per-step inconsistency over many chains: columns ``step``, ``mean``, ``std``, ``n``."""
    rows = []
    for k in range(1, n_steps):
        vals = [inc_steps(c)[k - 1] for c in chains if len(c) > k]
        rows.append({"step": k, "mean": float(np.mean(vals)) if vals else np.nan,
                     "std": float(np.std(vals, ddof=1)) if len(vals) > 1 else np.nan, "n": len(vals)})
    return pd.DataFrame(rows)


def inc_at_n(chains: Sequence[Sequence[float]], n: int, n_steps: int = N_STEPS) -> float:
    """Table 1's inc@n: mean of all per-(text, step) inconsistency values of steps 1..min(n, n_steps-1),
    pooled (the authors' ``inconsistency.py`` averages its (texts x steps) array in one go).  Equal to the
    mean of the per-step means when every chain has every step; a short chain weighs by its steps."""
    k = min(n, n_steps - 1)
    vals = np.concatenate([inc_steps(c)[:k] for c in chains] + [np.zeros(0)])
    return float(vals.mean()) if vals.size else float("nan")


def flip_rate(flipped: Sequence[bool | float], n_all: int | None = None) -> float:
    """``n_flipped / n_all``; missing entries (ended chains) count as not flipped."""
    f = np.asarray([bool(x) if x is not None and not (isinstance(x, float) and np.isnan(x)) else False
                    for x in flipped])
    n_all = len(f) if n_all is None else n_all
    return float(f.sum() / n_all) if n_all else float("nan")


# ----------------------------------------------------------------------------------------------
# selection and the chain runner
# ----------------------------------------------------------------------------------------------
def select_candidate(current_pred: int, cand_preds: Sequence[int], cand_dists: Sequence[float]) -> int:
    """Index of the lowest-minimality candidate that changes the prediction, else of the
    lowest-minimality candidate (first one on ties)."""
    if len(cand_preds) == 0:
        raise ValueError("no candidates to select from")
    if len(cand_preds) != len(cand_dists):
        raise ValueError(f"cand_preds has {len(cand_preds)} entries but cand_dists {len(cand_dists)}; "
                         "pass one prediction and one distance per candidate")
    d = np.asarray(cand_dists, dtype=np.float64)
    flips = np.asarray(cand_preds) != current_pred
    pool = np.flatnonzero(flips) if flips.any() else np.arange(len(d))
    return int(pool[np.argmin(d[pool])])


def second_class(proba: np.ndarray) -> int:
    """The second most probable class (MiCE's contrast target)."""
    return int(np.argsort(-np.asarray(proba), kind="stable")[1])


class CountingPredictor:
    """Batched, memoised ``predict_proba`` that counts calls and texts (for ``bench_editors``)."""

    def __init__(self, model):
        self.model = model
        self.n_classes = model.n_classes
        self.memo: dict[str, np.ndarray] = {}
        self.n_calls = 0
        self.n_texts = 0
        self.n_incremental = 0  # of n_texts: scored incrementally (predict_proba_swaps)

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return self._through_memo(list(texts), self.model.predict_proba)

    def _through_memo(self, texts: list[str], score) -> np.ndarray:
        """The memoised probabilities of ``texts``; those not memoised yet (each once) scored by ``score`` in one
        counted call."""
        todo = list(dict.fromkeys(t for t in texts if t not in self.memo))
        if todo:
            self.n_calls += 1
            self.n_texts += len(todo)
            for t, p in zip(todo, score(todo)):
                self.memo[t] = np.asarray(p, dtype=np.float64)
        if not texts:
            return np.zeros((0, self.n_classes))
        return np.stack([self.memo[t] for t in texts])

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        return self.predict_proba(texts).argmax(1)

    def predict_proba_swaps(self, text: str, swaps) -> np.ndarray | None:
        """The model's incremental single-word-swap scoring (None when it has none); counted."""
        fn = getattr(self.model, "predict_proba_swaps", None)
        out = fn(text, swaps) if fn is not None else None
        if out is not None and len(out):
            self.n_calls += 1
            self.n_texts += len(out)
            self.n_incremental += len(out)
        return out

    def predict_proba_splices(self, text: str, splices, texts: Sequence[str]) -> np.ndarray:
        """``predict_proba(texts)``, where ``texts[r]`` has the tokens of ``text[:start] + new + text[end:]`` for
        ``splices[r]``: the texts not memoised yet are scored by the model's ``predict_proba_splices`` where it has one
        (the probabilities of its ``predict_proba``, bit for bit), else by its ``predict_proba``; memoised and counted
        as :meth:`predict_proba` does."""
        texts, splices = list(texts), list(splices)
        if len(texts) != len(splices):
            raise ValueError(f"{len(splices)} splices for {len(texts)} texts; give one splice per text")
        fn = getattr(self.model, "predict_proba_splices", None)
        if fn is None:
            return self.predict_proba(texts)
        splice_of = {t: sp for t, sp in reversed(list(zip(texts, splices)))}  # each text's first splice

        def score(todo: list[str]) -> np.ndarray:
            out = fn(text, [splice_of[t] for t in todo])
            return out if out is not None else self.model.predict_proba(todo)

        return self._through_memo(texts, score)

    def __getattr__(self, name):  # gradients etc. are delegated to the wrapped model
        return getattr(self.model, name)


def run_chains(editor, predictor, texts: Sequence[str], n_steps: int = N_STEPS,
               tokenize: Callable[[str], list[str]] | None = None, progress: bool = False) -> pd.DataFrame:
    """Feed ``editor`` its own output ``n_steps`` times for every text (batched across texts).

    Returns one row per (text_id, step) with step 0 the original: ``text``, ``pred``, ``proba``,
    ``target`` (the class the editor was asked for: the second most probable class of the input),
    ``p_target``, ``minimality`` (to the previous step), ``flipped``, ``n_candidates``,
    ``n_tokens``, ``seconds``, ``carried``.  A chain whose editor returns nothing new keeps its last
    text (a ``carried`` row: minimality 0, not flipped, no candidates), so every text has every step.
    """
    texts = check_texts(texts)
    n_steps = check_count(n_steps, "n_steps", 1)
    if tokenize is None:
        from ...nlp import tokens as tokenize
    if not texts:
        raise ValueError("texts is empty; pass at least one text to edit")
    cur = list(texts)
    P = predictor.predict_proba(cur)
    rows = [{"text_id": i, "step": 0, "text": t, "pred": int(p.argmax()), "proba": p.tolist(),
             "target": np.nan, "p_target": np.nan, "minimality": np.nan, "flipped": np.nan,
             "n_candidates": np.nan, "n_tokens": len(tokenize(t)), "seconds": 0.0, "carried": False}
            for i, (t, p) in enumerate(zip(cur, P))]
    alive = list(range(len(texts)))
    stuck: set[int] = set()  # chains whose current text got no candidate (carried on, not re-submitted)
    probs = {i: P[i] for i in alive}
    cur_tok: dict[int, list[str]] = {}  # tokens of each chain's current text (tokenised once)
    steps = range(1, n_steps + 1)
    if progress:
        from ...progress import progress as _progress

        steps = _progress(steps, desc=f"{getattr(editor, 'name', 'editor')} steps")
    for step in steps:
        ask = [i for i in alive if i not in stuck]
        targets_of = {i: second_class(probs[i]) for i in alive}
        t0 = time.perf_counter()
        cands = editor.explain([cur[i] for i in ask], [targets_of[i] for i in ask]) if ask else []
        secs = (time.perf_counter() - t0) / max(len(ask), 1)
        flat = [(i, c) for i, cs in zip(ask, cands) for c in dict.fromkeys(cs) if c != cur[i] and c.strip()]
        Pc = predictor.predict_proba([c for _, c in flat]) if flat else np.zeros((0, predictor.n_classes))
        by_text: dict[int, list[tuple[str, np.ndarray]]] = {}
        for (i, c), p in zip(flat, Pc):
            by_text.setdefault(i, []).append((c, p))
        for i in alive:
            tgt = targets_of[i]
            options = by_text.get(i, [])
            if not options:  # the editor returned nothing: the chain keeps its last text
                stuck.add(i)
                p = probs[i]
                rows.append({"text_id": i, "step": step, "text": cur[i], "pred": int(p.argmax()),
                             "proba": p.tolist(), "target": tgt, "p_target": float(p[tgt]), "minimality": 0,
                             "flipped": False, "n_candidates": 0,
                             "n_tokens": len(cur_tok.get(i) or tokenize(cur[i])),
                             "seconds": secs if i in ask else 0.0, "carried": True})
                continue
            base_tok = cur_tok.get(i) or tokenize(cur[i])
            cand_tok = [tokenize(c) for c, _ in options]
            dists = [levenshtein(base_tok, t) for t in cand_tok]
            cur_pred = int(probs[i].argmax())
            k = select_candidate(cur_pred, [int(p.argmax()) for _, p in options], dists)
            text, p = options[k]
            rows.append({"text_id": i, "step": step, "text": text, "pred": int(p.argmax()), "proba": p.tolist(),
                         "target": tgt, "p_target": float(p[tgt]), "minimality": dists[k],
                         "flipped": bool(int(p.argmax()) != cur_pred), "n_candidates": len(options),
                         "n_tokens": len(cand_tok[k]), "seconds": secs, "carried": False})
            cur[i], probs[i], cur_tok[i] = text, p, cand_tok[k]
    return pd.DataFrame(rows).sort_values(["text_id", "step"]).reset_index(drop=True)


# ----------------------------------------------------------------------------------------------
# summaries of chain tables (Tables 1, 2, 4-5)
# ----------------------------------------------------------------------------------------------
def chain_distances(chains: pd.DataFrame) -> list[list[float]]:
    """Minimality sequences d_1..d_m per text, in text_id order (empty if the chain never moved)."""
    check_chains(chains, ("text_id", "step", "minimality"))
    edits = chains[chains["step"] > 0].sort_values(["text_id", "step"])
    grouped = edits.groupby("text_id")["minimality"].apply(list)
    return [[float(x) for x in grouped.get(tid, [])] for tid in sorted(chains["text_id"].unique())]


def flip_rate_at(chains: pd.DataFrame, n: int) -> float:
    check_chains(chains, ("text_id", "step", "flipped"))
    n_all = chains["text_id"].nunique()
    return flip_rate(chains.loc[chains["step"] == n, "flipped"].tolist(), n_all=n_all)


def ttests(per_text_inc: dict[str, np.ndarray], sample_sizes: Sequence[int], steps: Sequence[int]) -> pd.DataFrame:
    """Two-sided two-sample t-tests (scipy ``ttest_ind``) on per-text inc@n between every pair of
    editors, on the first ``n`` texts of the seeded sample (Tables 4-5).

    ``per_text_inc[editor]`` has shape ``(n_texts, n_steps)``, NaN where a chain is too short.
    """
    from itertools import permutations

    from scipy.stats import ttest_ind

    rows = []
    for a, b in permutations(sorted(per_text_inc), 2):
        for n in sample_sizes:
            for k in steps:
                xa = per_text_inc[a][:n, k - 1]
                xb = per_text_inc[b][:n, k - 1]
                xa, xb = xa[~np.isnan(xa)], xb[~np.isnan(xb)]
                p = float(ttest_ind(xa, xb).pvalue) if len(xa) > 1 and len(xb) > 1 else np.nan
                rows.append({"editor": a, "comparison_editor": b, "sample_size": n, "step": k,
                             "p_value": p, "n_a": len(xa), "n_b": len(xb)})
    return pd.DataFrame(rows)


def per_text_inc_matrix(chains: pd.DataFrame, n_steps: int = N_STEPS) -> np.ndarray:
    """``(n_texts, n_steps-1)``: per-text inc@n for n = 1..n_steps-1 (NaN where undefined)."""
    d = chain_distances(chains)
    out = np.full((len(d), n_steps - 1), np.nan)
    for i, dist in enumerate(d):
        s = inc_steps(dist)
        for n in range(1, min(len(s), n_steps - 1) + 1):
            out[i, n - 1] = s[:n].mean()
    return out
