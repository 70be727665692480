"""Editor quality: how each editor's first edit reads to the base LM, and whether it reverses polarity words.

For each (dataset, editor), the first edit of the first ``n_texts`` texts of the dataset's seeded sample (the
texts notebook 22's chains start from), made by the editor that notebook 22 runs (built through
:func:`xaibench.explainers.counterfactual.build_editor`, MiCE with notebook 22's infiller):

* ``nll_delta_text`` -- the base LM's (SmolLM2) mean token NLL of the whole edit minus that of its original, per
  text (the measure of ``cf_feedback_infiller_fluency``; scored through the fluency store of
  :func:`.runner.add_fluency`);
* ``nll_delta_edited_token`` -- the mean NLL of the edit's *edited* LM tokens minus the mean NLL of the original's
  tokens they replaced, per text.  Edit and original are aligned by a word-level diff (``difflib`` opcodes over
  spaCy tokens, the tokens of minimality): the edited words are those of the edit's ``replace``/``insert``
  spans, the replaced words those of the original's ``replace``/``delete`` spans; an LM token belongs to the word
  holding its last character.  Each side is scored in its own text (left context included), by
  :func:`token_nlls`.  A text whose edit only inserts or only deletes words has no value;
* ``polarity_reversal_share`` -- the share of edits holding a swap of a positive word for a negative one or
  vice versa: a ``replace`` span whose original words include one of one sign and whose new words include one of
  the other, by the VADER lexicon (package ``vaderSentiment``, independent of every editor here).  A negation
  inserted before a word ("good" -> "not good") is no swap;
* for the originals (editor ``original``): ``nll_token_mean`` and ``nll_token_sd``, the mean and the standard
  deviation of the base LM's NLL over all tokens of the sampled original texts (how much the LM's surprise varies
  from one token of natural text to the next).

Edits that leave the text unchanged (carried steps) are left out; ``n_texts`` counts the texts behind each value.
``ours_std`` is the standard deviation over texts (NaN for shares); ``paper`` is NaN (the paper prints none of
these).  :func:`editor_quality` also returns every (original, edit) pair; :func:`sample_pairs` draws the seeded
examples the notebook prints.
"""
from __future__ import annotations

import difflib
import functools
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from . import metrics as cf

QUALITY_VERSION = 1
#: the per-editor metrics of :func:`quality_table`, and the originals' (editor ``original``)
METRICS = ("nll_delta_text", "nll_delta_edited_token", "polarity_reversal_share")
ORIGINAL_METRICS = ("nll_token_mean", "nll_token_sd")
COLUMNS = ["dataset", "editor", "metric", "ours", "ours_std", "paper", "n_texts"]

#: ``scorer(text) -> (ends, nll)``: each LM token's end offset (characters) and its NLL
Scorer = Callable[[str], tuple[np.ndarray, np.ndarray]]


@functools.lru_cache(maxsize=1)
def vader_lexicon() -> dict[str, float]:
    """VADER's sentiment lexicon (word -> valence, positive or negative), lower-case words."""
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return dict(SentimentIntensityAnalyzer().lexicon)


def words(text: str) -> list[tuple[str, int, int]]:
    """spaCy tokens of ``text`` (whitespace dropped) as ``(word, start, end)`` character spans."""
    from ...nlp import nlp

    return [(t.text, t.idx, t.idx + len(t.text)) for t in nlp().tokenizer(text) if not t.is_space]


def word_opcodes(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, int, int, int, int]]:
    """``difflib`` opcodes aligning word list ``a`` (the original) with ``b`` (the edit)."""
    return difflib.SequenceMatcher(a=list(a), b=list(b), autojunk=False).get_opcodes()


def changed_words(opcodes) -> tuple[list[int], list[int]]:
    """Indices of the original's replaced/deleted words and of the edit's new (replacing/inserted) words."""
    old = [i for op, i1, i2, _, _ in opcodes if op in ("replace", "delete") for i in range(i1, i2)]
    new = [j for op, _, _, j1, j2 in opcodes if op in ("replace", "insert") for j in range(j1, j2)]
    return old, new


def token_nlls(text: str, model, tok, max_tokens: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """Each LM token's end offset in ``text`` and its NLL under a causal LM, as :func:`~xaibench.models.lm.
    sequence_nll` scores the text (BOS first, the first ``max_tokens`` tokens): their mean is its value."""
    import torch

    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    bos = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    ids = ([bos] + list(enc["input_ids"]))[:max_tokens]
    ends = np.array([e for _, e in enc["offset_mapping"]][:len(ids) - 1], dtype=int)
    if len(ids) < 2:
        return ends, np.array([], dtype=float)
    dev = next(model.parameters()).device
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([ids], device=dev)).logits.float()[0, :-1]
    nll = -torch.log_softmax(logits, -1).gather(-1, torch.tensor(ids[1:], device=dev)[:, None])[:, 0]
    return ends, nll.cpu().numpy().astype(float)


def _word_token_nll(spans: Sequence[tuple[str, int, int]], ends: np.ndarray, nll: np.ndarray,
                    keep: Sequence[int]) -> np.ndarray:
    """NLLs of the LM tokens whose last character lies in the words ``keep`` of ``spans``."""
    if not len(keep) or not len(nll):
        return np.array([], dtype=float)
    starts = np.array([spans[i][1] for i in keep])
    stops = np.array([spans[i][2] for i in keep])
    last = ends - 1
    inside = ((last[:, None] >= starts[None, :]) & (last[:, None] < stops[None, :])).any(1)
    return nll[inside]


def edit_measures(original: str, edit: str, scorer: Scorer, lexicon: dict[str, float]) -> dict:
    """``nll_delta_edited_token`` (NaN without tokens on both sides), ``polarity_reversal`` and the numbers of
    edited / replaced LM tokens of one (original, edit) pair."""
    a, b = words(original), words(edit)
    ops = word_opcodes([w for w, _, _ in a], [w for w, _, _ in b])
    old, new = changed_words(ops)
    old_nll = _word_token_nll(a, *scorer(original), old)
    new_nll = _word_token_nll(b, *scorer(edit), new)
    delta = float(new_nll.mean() - old_nll.mean()) if len(old_nll) and len(new_nll) else np.nan
    return {"nll_delta_edited_token": delta, "polarity_reversal": polarity_reversal(a, b, ops, lexicon),
            "n_edited_tokens": len(new_nll), "n_replaced_tokens": len(old_nll)}


def polarity_reversal(a, b, opcodes, lexicon: dict[str, float]) -> bool:
    """Whether a ``replace`` span swaps a word of one sentiment sign (``lexicon``) for one of the other."""
    def signs(spans) -> set[int]:
        return {int(np.sign(lexicon[w[0].lower()])) for w in spans if lexicon.get(w[0].lower(), 0) != 0}

    for op, i1, i2, j1, j2 in opcodes:
        if op == "replace":
            s_old, s_new = signs(a[i1:i2]), signs(b[j1:j2])
            if (1 in s_old and -1 in s_new) or (-1 in s_old and 1 in s_new):
                return True
    return False


def quality_table(pairs: pd.DataFrame, originals: pd.DataFrame) -> pd.DataFrame:
    """The tidy table (:data:`COLUMNS`) from the per-edit values ``pairs`` (``dataset, editor,
    nll_delta_text, nll_delta_edited_token, polarity_reversal``) and the originals' token NLLs ``originals``
    (``dataset, text_id, nll``: one row per LM token)."""
    rows = []
    for (d, e), g in pairs.groupby(["dataset", "editor"], sort=False):
        for m in METRICS:
            v = g["polarity_reversal"].astype(float) if m == "polarity_reversal_share" else g[m].dropna()
            share = m == "polarity_reversal_share"
            rows.append({"dataset": d, "editor": e, "metric": m, "ours": float(v.mean()) if len(v) else np.nan,
                         "ours_std": np.nan if share or len(v) < 2 else float(v.std(ddof=1)), "paper": np.nan,
                         "n_texts": len(v)})
    for d, g in originals.groupby("dataset", sort=False):
        n = g["text_id"].nunique()
        rows += [{"dataset": d, "editor": "original", "metric": "nll_token_mean", "ours": float(g["nll"].mean()),
                  "ours_std": np.nan, "paper": np.nan, "n_texts": n},
                 {"dataset": d, "editor": "original", "metric": "nll_token_sd", "ours": float(g["nll"].std(ddof=1)),
                  "ours_std": np.nan, "paper": np.nan, "n_texts": n}]
    return pd.DataFrame(rows, columns=COLUMNS)


def editor_quality(samples: dict[str, int], n_texts: int = 25, editors: Sequence[str] = ("mice", "polyjuice",
                   "textfooler"), seed: int = 42, predictor: str = "logreg", max_words: int | None = 400,
                   mice_infiller: str = "two-sided", base_lm: str = "smollm2", lm_dtype: str = "auto",
                   max_train: int | None = None, lm_max_texts: int | None = 20000,
                   refresh: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(table, pairs)``: :func:`quality_table` of each editor's first edit of the first ``n_texts`` texts of each
    dataset's seeded sample of ``samples[dataset]`` texts, and the per-edit values with each (original, edit).
    Stored as one result-store entry keyed on every setting under ``data/results/cf_feedback/``."""
    from ... import paths
    from ...config import positive_int
    from ...explainers.counterfactual import build_editor
    from ...models.lm import load_causal_lm, resolve_lm_dtype
    from ...store import ResultStore
    from .runner import cached_nll, predictor_and_first_texts

    n_texts = positive_int(n_texts, "n_texts")
    dtype = resolve_lm_dtype(lm_dtype)
    config = {"samples": dict(samples), "n_texts": n_texts, "editors": list(editors), "seed": seed,
              "predictor": predictor, "max_words": max_words, "mice_infiller": mice_infiller, "base_lm": base_lm,
              "lm_dtype": dtype, "max_train": max_train, "lm_max_texts": lm_max_texts}
    store = ResultStore(paths.results_dir() / "cf_feedback", "editor_quality", version=QUALITY_VERSION)
    cached = None if refresh else store.load(config)
    if cached is not None:
        return cached["table"], cached["pairs"]
    model_lm, tok = load_causal_lm(base_lm, dtype=dtype)
    scorer = functools.lru_cache(maxsize=None)(lambda text: token_nlls(text, model_lm, tok))
    lexicon = vader_lexicon()
    pairs, originals = [], []
    for d, n_sample in samples.items():
        model, texts = predictor_and_first_texts(d, n_sample, n_texts, seed, predictor, max_words, max_train)
        originals += [pd.DataFrame({"dataset": d, "text_id": i, "nll": scorer(t)[1]}) for i, t in enumerate(texts)]
        for e in editors:
            pred = cf.CountingPredictor(model)
            kw = {"infiller": mice_infiller} if e == "mice" else {}
            ed = build_editor(e, pred, d, seed=seed, lm_max_texts=lm_max_texts, **kw)
            ch = cf.run_chains(ed, pred, texts, n_steps=1)
            first = ch[(ch["step"] == 1) & ~ch["carried"].astype(bool)]
            first = first[[t != texts[i] for i, t in zip(first["text_id"], first["text"])]]
            by_text, _ = cached_nll(list(dict.fromkeys(texts + first["text"].tolist())), base_lm, dtype, d)
            for i, edit in zip(first["text_id"], first["text"]):
                pairs.append({"dataset": d, "editor": e, "text_id": int(i), "original": texts[i], "edit": edit,
                              "nll_delta_text": by_text[edit] - by_text[texts[i]],
                              **edit_measures(texts[i], edit, scorer, lexicon)})
    pairs_df = pd.DataFrame(pairs)
    table = quality_table(pairs_df, pd.concat(originals, ignore_index=True))
    store.save(config, {"table": table, "pairs": pairs_df})
    return table, pairs_df


#: texts per dataset whose first edit notebooks 12 and 22 measure (the smoke run: 2)
QUALITY_TEXTS = 20


def sample_markdown(pairs: pd.DataFrame, n: int = 5, seed: int = 42, paper_editors: Sequence[str] = ()) -> list[str]:
    """One Markdown block per (dataset, editor): a seeded sample of ``n`` of its edits (:func:`sample_pairs`), each
    with its per-edited-token NLL change, whether it reverses a word's polarity and its word diff (an editor not
    among ``paper_editors`` is marked "(added)")."""
    from ..base import mark_added

    out = []
    for (d, e), g in sample_pairs(pairs, n, seed=seed).groupby(["dataset", "editor"], sort=False):
        items = []
        for r in g.itertuples():
            size = ("no replaced word: only insertions or deletions" if np.isnan(r.nll_delta_edited_token)
                    else f"{r.nll_delta_edited_token:+.2f} nats per edited token")
            flag = ", polarity reversed" if r.polarity_reversal else ""
            items.append(f"* text {r.text_id} ({size}{flag}): {diff_excerpt(r.original, r.edit)}")
        out.append(f"**{d}, {mark_added(e, tuple(paper_editors))}**\n\n" + "\n".join(items))
    return out


def sample_pairs(pairs: pd.DataFrame, n: int = 5, seed: int = 42) -> pd.DataFrame:
    """A seeded sample of ``n`` (original, edit) pairs per (dataset, editor), in text order."""
    return pd.concat([g.sample(n=min(n, len(g)), random_state=seed).sort_values("text_id")
                      for _, g in pairs.groupby(["dataset", "editor"], sort=False)])


def diff_excerpt(original: str, edit: str, context: int = 5, max_span: int = 30) -> str:
    """The edit as a Markdown word diff (~~removed~~ **inserted**) with ``context`` unchanged words around each
    change (longer unchanged stretches elided as ``…``) and spans over ``max_span`` words cut short."""
    a, b = [w for w, _, _ in words(original)], [w for w, _, _ in words(edit)]

    def span(ws: list[str], mark: str) -> str:
        ws = [w.replace("~", "\\~").replace("*", "\\*") for w in ws]
        cut = f" [… {len(ws) - max_span} more words]" if len(ws) > max_span else ""
        return f"{mark}{' '.join(ws[:max_span])}{cut}{mark}"

    out = []
    ops = word_opcodes(a, b)
    for k, (op, i1, i2, j1, j2) in enumerate(ops):
        if op == "equal":
            ws = a[i1:i2]
            head = ws[:context] if k > 0 else []
            tail = ws[-context:] if k < len(ops) - 1 else []
            out += ws if len(ws) <= len(head) + len(tail) else head + ["…"] + tail
            continue
        if op in ("replace", "delete"):
            out.append(span(a[i1:i2], "~~"))
        if op in ("replace", "insert"):
            out.append(span(b[j1:j2], "**"))
    return " ".join(out)
