"""The papers' own editors, run from a local copy of their models (never downloaded).

Where a user has the original models in the local Hugging Face cache or in a ``save_pretrained`` folder, two
registered editors run them through transformers (``local_files_only=True``, :mod:`xaibench.models.hf_local`)
in place of the offline stand-ins ``polyjuice`` and ``mice``.  They are registered ``opt_in``: they run only
when named (``editors`` of notebooks 12 and 22, Make's ``EXPLAINERS``), never for ``"all"``.

``polyjuice_hf`` -- Polyjuice (Wu et al., 2021): its GPT-2 generator (default ``uw-hai/polyjuice``; a folder or
another id through ``model=`` or ``XAIBENCH_POLYJUICE_MODEL``).  Blanks as the stand-in draws them (dependency
parse: a token, a subtree, an insertion point, ``n_blanks`` of them, plus a blank over the whole text); for each
blank and control code (the stand-in's eight; Polyjuice's ``perturb`` without a code uses five) the prompt of
Polyjuice's ``get_prompts``::

    <original> <|perturb|> [<code>] <text with [BLANK]>             (`` [SEP]`` appended when complete_blank)

``n_samples`` sampled continuations each (``top_p``, ``temperature``), read back as Polyjuice's ``remove_blanks``
and ``split_ctrl_code`` do (:func:`parse_polyjuice`: the fillers after ``[SEP]``, each closed by ``[ANSWER]``,
``[EMPTY]`` an empty filler, replace the blanks in order).  A generation that leaves a blank or a marker in the
text is dropped, as are copies of the original.  Never calls the predictor; Polyjuice's own perplexity and
control-code filters are not applied (the stand-in has none either).  GPT-2 reads 1,024 tokens: a prompt that
does not fit with ``max_new_tokens`` is built on the sentence holding the blank (the edit is spliced back into
the text); the whole-text blank then reads the text's first tokens that fit; a prompt that still does not fit
generates fewer tokens, or none.

``mice_t5`` -- MiCE (Ross et al., 2021) with its T5 editor (default ``t5-base``; a folder or another id through
``model=`` or ``XAIBENCH_MICE_T5_MODEL``).  MiCE released its fine-tuned editors as state dicts of T5-base
(``<task>_editor.pth``): ``weights=`` or ``XAIBENCH_MICE_T5_WEIGHTS`` (``{dataset}`` in the path is replaced by
the dataset's name) loads one over the base model; without it T5's own span infilling runs, and the source says
so.  Stage 2 is the stand-in's (:class:`.mice.MiCE`): the words with the largest |gradient x input| of the
predictor's original prediction are masked (:meth:`.mice.MiCE.mask`), binary search over the mask fraction, beam
and rounds.  Each run of masked words becomes one sentinel (``<extra_id_0>``, ``<extra_id_1>``, ...) of the
prompt ``label: <target label>. input: <masked text>`` (MiCE's ``get_editor_input``; labels as MiCE's dataset
readers name them: IMDb ``0``/``1``, Newsgroups the top-level group); ``n_samples`` infills are sampled as
MiCE's ``Editor`` does (top-k 30, top-p 0.92, no repeated bigram, generation ends at the sentinel after the last
span, later sentinels and ``</s>`` banned) and read back by :func:`parse_t5_infill` (a span whose sentinel pair
was not generated in order keeps its original words).  T5 has 100 sentinels: spans beyond the 99th stay unmasked.

Both accept ``generate_kwargs`` (passed to ``generate`` last, e.g. ``num_beams``).
"""
from __future__ import annotations

import math
import re
from typing import Any, Sequence

import numpy as np

from .common import join_tokens
from .mice import MiCE, masked_runs
from .polyjuice import CONTROL_CODES, Polyjuice

PERTURB, BLANK, SEP, EMPTY, ANSWER = "<|perturb|>", "[BLANK]", "[SEP]", "[EMPTY]", "[ANSWER]"
#: Polyjuice's markers: none may remain in an edit
MARKERS = (PERTURB, BLANK, SEP, EMPTY, ANSWER)
POLYJUICE_ID, POLYJUICE_ENV = "uw-hai/polyjuice", "XAIBENCH_POLYJUICE_MODEL"
MICE_T5_ID, MICE_T5_ENV, MICE_T5_WEIGHTS_ENV = "t5-base", "XAIBENCH_MICE_T5_MODEL", "XAIBENCH_MICE_T5_WEIGHTS"
_SENTINEL = re.compile(r"<extra_id_(\d+)>")


def mice_labels(dataset: str | None) -> list[str] | None:
    """The label strings MiCE's dataset readers give the classes (its editor was fine-tuned on them)."""
    if dataset == "imdb":
        return ["0", "1"]
    if dataset == "newsgroups":
        from ...data.cf_data import NEWSGROUPS7

        return list(NEWSGROUPS7)
    return None


# ---- Polyjuice ------------------------------------------------------------------------------------
def polyjuice_prompt(original: str, code: str, blanked: str, complete_blank: bool = False) -> str:
    """Polyjuice's prompt (``get_prompts``): ``original <|perturb|> [code] blanked`` (+ `` [SEP]``)."""
    return f"{original.strip()} {PERTURB} [{code}] {blanked.strip()} {SEP if complete_blank else ''}".strip()


def parse_polyjuice(generated: str, eos: str | None = None) -> tuple[str, str] | None:
    """``(control code, edited text)`` of one Polyjuice generation (prompt and continuation), else None.

    As Polyjuice's ``generate_on_prompts``: the part after the last ``<|perturb|>`` (cut at ``eos``); its
    ``remove_blanks``: split at the one ``[SEP]``, the fillers are the pieces closed by ``[ANSWER]``
    (``[EMPTY]``: an empty filler, which removes the blank and the space before it), each replaces the next
    ``[BLANK]``; its ``split_ctrl_code``: ``[code] text``.  None when the text keeps a marker or is empty."""
    text = generated.split(PERTURB)[-1]
    if eos and eos in text:
        text = text[:text.index(eos)]
    if text.count(SEP) != 1:
        return None
    before, after = text.split(SEP)
    for a in [x.strip() for x in after.split(ANSWER)][:-1]:
        if a in ("", EMPTY):
            before = before.replace(" " + BLANK, "", 1) if " " + BLANK in before else before.replace(BLANK, "", 1)
        else:
            before = before.replace(BLANK, a, 1)
    m = re.search(r"\[(?P<code>[a-z]+)\](?P<text>.+)", before, re.S)
    code, out = (m.group("code").strip(), m.group("text").strip()) if m else ("", before.strip())
    if not out or any(t in out for t in MARKERS):
        return None
    return code, out


class PolyjuiceHF(Polyjuice):
    """Polyjuice's own GPT-2 generator (uw-hai/polyjuice) from a local copy; runs only when named."""

    name = "polyjuice_hf"
    uses_predictor = False

    def __init__(self, model: str | None = None, n_blanks: int = 3, codes: Sequence[str] = CONTROL_CODES,
                 n_samples: int = 3, max_new_tokens: int = 64, top_p: float = 0.9, temperature: float = 1.0,
                 complete_blank: bool = False, seed: int = 42, generate_kwargs: dict | None = None):
        from ...checks import check_count

        super().__init__(n_blanks=n_blanks, seed=seed)
        bad = [c for c in codes if c not in CONTROL_CODES]
        if bad or not codes:
            raise ValueError(f"codes={list(codes)!r}: use a non-empty subset of {CONTROL_CODES}")
        self.source, self.codes = model, tuple(codes)
        self.n_samples = check_count(n_samples, "n_samples", 1)
        self.max_new_tokens = check_count(max_new_tokens, "max_new_tokens", 1)
        self.top_p, self.temperature, self.complete_blank = top_p, temperature, complete_blank
        self.generate_kwargs = dict(generate_kwargs or {})

    @staticmethod
    def describe(model: str | None = None) -> str:
        """What runs under this name (loads nothing)."""
        from ...models.hf_local import model_source

        return f"Polyjuice's GPT-2 generator {model_source(model, POLYJUICE_ENV, POLYJUICE_ID)!r} (local copy)"

    def fit(self, model=None, data=None):
        from ...models.hf_local import load_local, model_source

        self.model = None  # the predictor is not used
        src = model_source(self.source, POLYJUICE_ENV, POLYJUICE_ID)
        self.generator, self.tok = load_local("causal", src, "Polyjuice's generator (editor polyjuice_hf)",
                                              POLYJUICE_ENV, POLYJUICE_ID,
                                              extra="(or run the offline stand-in, editor 'polyjuice')")
        cfg = self.generator.config
        self.n_ctx = int(getattr(cfg, "n_positions", None) or getattr(cfg, "max_position_embeddings", 1024))
        return self

    # ---- prompts -------------------------------------------------------------------------------
    def _n_tokens(self, text: str) -> int:
        return len(self.tok(text, add_special_tokens=False)["input_ids"])

    def _fits(self, prompt: str) -> bool:
        return self._n_tokens(prompt) + self.max_new_tokens <= self.n_ctx

    def _jobs(self, doc, rng) -> list[tuple[str, str, Any]]:
        """``(original, blanked, splice)`` per blank: ``splice(edited part) -> edited text``."""
        words, spaces = [t.text for t in doc], [t.whitespace_ for t in doc]
        text = doc.text
        jobs = []
        for s, e in self._blanks(doc, rng):
            blanked = join_tokens(words[:s] + [BLANK] + words[e:],
                                  spaces[:s] + [spaces[e - 1] if e > s else " "] + spaces[e:])
            if self._fits(polyjuice_prompt(text, "restructure", blanked, self.complete_blank)):
                jobs.append((text, blanked, lambda out: out))
                continue
            sent = doc[min(s, len(doc) - 1)].sent  # too long: the sentence holding the blank
            a, b = sent.start, sent.end
            e = max(min(e, b), s)
            local = join_tokens(words[a:s] + [BLANK] + words[e:b],
                                spaces[a:s] + [spaces[e - 1] if e > s else " "] + spaces[e:b])
            head, tail = text[:sent.start_char], text[sent.end_char:]
            jobs.append((sent.text, local, lambda out, h=head, t=tail: (h + out + (" " if t and not t[:1].isspace()
                                                                                   else "") + t).strip()))
        original = text
        room = self.n_ctx - self.max_new_tokens - self._n_tokens(polyjuice_prompt("", "restructure", BLANK,
                                                                                  self.complete_blank)) - 2
        ids = self.tok(text, add_special_tokens=False)["input_ids"]
        if len(ids) > room:  # the whole-text blank reads the first tokens that fit
            original = self.tok.decode(ids[:max(room, 1)], skip_special_tokens=True)
        jobs.append((original, BLANK, lambda out: out))
        return jobs

    def _generate(self, prompt: str) -> list[str]:
        import torch

        enc = self.tok(prompt, return_tensors="pt", add_special_tokens=False)
        room = min(self.max_new_tokens, self.n_ctx - enc["input_ids"].shape[1])  # never past the model's positions
        if room < 1:
            return []
        dev = next(self.generator.parameters()).device
        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else self.tok.eos_token_id
        kw = {"do_sample": True, "top_p": self.top_p, "temperature": self.temperature,
              "num_return_sequences": self.n_samples, "max_new_tokens": room, "pad_token_id": pad,
              **self.generate_kwargs}
        with torch.inference_mode():
            seqs = self.generator.generate(input_ids=enc["input_ids"].to(dev),
                                           attention_mask=enc["attention_mask"].to(dev), **kw)
        return [self.tok.decode(s, skip_special_tokens=False) for s in seqs.cpu()]

    def explain(self, texts: Sequence[str], targets: Sequence[int] | None = None) -> list[list[str]]:
        import torch

        from ...nlp import parse

        texts, _ = self._check_inputs(texts, targets)
        out = []
        for doc in parse(texts):
            rng = np.random.default_rng([self.seed, len(doc.text), sum(map(ord, doc.text[:200]))])
            cands: list[str] = []
            if len(doc):
                jobs = self._jobs(doc, rng)
                with torch.random.fork_rng():
                    torch.manual_seed(int(rng.integers(2 ** 31 - 1)))
                    for original, blanked, splice in jobs:
                        for code in self.codes:
                            for gen in self._generate(polyjuice_prompt(original, code, blanked, self.complete_blank)):
                                got = parse_polyjuice(gen, self.tok.eos_token)
                                if got is not None:
                                    cands.append(splice(got[1]))
            out.append([c for c in dict.fromkeys(cands) if c.strip() and c.lower() != doc.text.lower()])
        return out


# ---- MiCE with T5 ---------------------------------------------------------------------------------
def parse_t5_infill(generated: str, n_spans: int, eos: str | None = "</s>") -> list[str | None]:
    """The fill of each of ``n_spans`` masked spans in one T5 generation (``<extra_id_k> fill ...``).

    The fill of span ``k`` is the text between ``<extra_id_k>`` and ``<extra_id_{k+1}>`` (``""``: the span is
    deleted), accepted while the sentinels come in order from ``<extra_id_0>`` (as MiCE's ``_process_gen``); the
    spans from the first one out of order or without its closing sentinel get None (they keep their words)."""
    if eos and eos in generated:
        generated = generated[:generated.index(eos)]
    pieces = re.split(r"(<extra_id_\d+>)", generated)
    marks = [(j, int(m.group(1))) for j, p in enumerate(pieces) if (m := _SENTINEL.fullmatch(p))]
    fills: list[str | None] = [None] * n_spans
    expected = 0
    for (j, k), (j2, k2) in zip(marks, marks[1:]):
        if k != expected or k2 != k + 1 or k >= n_spans:
            break
        fills[k] = "".join(pieces[j + 1:j2]).strip()
        expected += 1
    return fills


def fill_spans(words: Sequence[str], spaces: Sequence[str], spans: Sequence[tuple[int, int]],
               fills: Sequence[str | None]) -> str:
    """The text with span ``(i, j)`` (words ``i..j-1``) replaced by its fill (None: kept; ``""``: deleted)."""
    nw, ns, prev = [], [], 0
    for (i, j), f in zip(spans, fills):
        nw += words[prev:i]
        ns += spaces[prev:i]
        if f is None:
            nw += words[i:j]
            ns += spaces[i:j]
        elif f.split():
            new = f.split()
            nw += new
            ns += [" "] * (len(new) - 1) + [spaces[j - 1]]
        prev = j
    return join_tokens(list(nw) + list(words[prev:]), list(ns) + list(spaces[prev:]))


class MiceT5(MiCE):
    """MiCE's T5 editor (t5-base, plus MiCE's fine-tuned weights when given) from a local copy; runs only when named."""

    name = "mice_t5"
    targeted = True

    def __init__(self, dataset: str | None = None, model: str | None = None, weights: str | None = None,
                 labels: Sequence[str] | None = None, max_frac: float = 0.55, levels: int = 4, n_samples: int = 15,
                 beam: int = 3, rounds: int = 3, seed: int = 42, top_k: int = 30, top_p: float = 0.92,
                 no_repeat_ngram_size: int = 2, max_new_tokens: int | None = None,
                 generate_kwargs: dict | None = None):
        from ...checks import check_count

        super().__init__(dataset=dataset, lm=None, max_frac=max_frac, levels=levels, n_samples=n_samples, beam=beam,
                         rounds=rounds, seed=seed, lm_max_texts=None)
        self.source, self.weights, self.labels = model, weights, None if labels is None else [str(x) for x in labels]
        self.top_k, self.top_p, self.no_repeat_ngram_size = top_k, top_p, no_repeat_ngram_size
        self.max_new_tokens = None if max_new_tokens is None else check_count(max_new_tokens, "max_new_tokens", 1)
        self.generate_kwargs = dict(generate_kwargs or {})

    @staticmethod
    def weights_path(dataset: str | None, weights: str | None = None) -> str | None:
        """MiCE's editor weights to load (``weights`` or ``$XAIBENCH_MICE_T5_WEIGHTS``, ``{dataset}`` filled in)."""
        import os

        w = weights if weights else os.environ.get(MICE_T5_WEIGHTS_ENV, "").strip()
        return w.replace("{dataset}", str(dataset)) if w else None

    @classmethod
    def describe(cls, dataset: str | None = None, model: str | None = None, weights: str | None = None) -> str:
        """What runs under this name (loads nothing)."""
        from ...models.hf_local import model_source

        src = model_source(model, MICE_T5_ENV, MICE_T5_ID)
        w = cls.weights_path(dataset, weights)
        return (f"MiCE's T5 editor {src!r} (local copy) " + (f"with MiCE's fine-tuned weights {w!r}" if w else
                "without MiCE's fine-tuned weights (T5's own span infilling)"))

    def fit(self, model, data=None):
        import torch

        from ...models.hf_local import ModelNotAvailable, load_local, model_source

        self.model = model
        src = model_source(self.source, MICE_T5_ENV, MICE_T5_ID)
        self.t5, self.tok = load_local("seq2seq", src, "MiCE's T5 editor (editor mice_t5)", MICE_T5_ENV, MICE_T5_ID,
                                       extra="(or run the offline stand-in, editor 'mice')")
        w = self.weights_path(self.dataset, self.weights)
        if w:
            from pathlib import Path

            path = Path(w).expanduser()
            if not path.is_file():
                raise ModelNotAvailable(f"MiCE's editor weights (editor mice_t5): no file {str(path)!r}; set "
                                        f"{MICE_T5_WEIGHTS_ENV} (or weights=) to MiCE's <task>_editor.pth "
                                        "({dataset} is replaced by the dataset), or leave it unset for T5's own "
                                        "infilling")
            state = torch.load(path, map_location="cpu", weights_only=True)
            state = state.get("state_dict", state) if isinstance(state, dict) else state
            self.t5.load_state_dict({k.removeprefix("module."): v for k, v in state.items()})
        vocab = self.tok.get_vocab()
        self._sentinels = {int(m.group(1)): i for t, i in vocab.items() if (m := _SENTINEL.fullmatch(t))}
        if 0 not in self._sentinels or 1 not in self._sentinels:
            raise ValueError(f"the tokenizer of {src!r} has no T5 sentinel tokens <extra_id_0>, <extra_id_1>, ...")
        n = 0
        while n in self._sentinels:
            n += 1
        self.max_spans = n - 1  # one sentinel closes the last span
        if self.labels is None:
            self.labels = mice_labels(self.dataset)
        n_classes = getattr(model, "n_classes", None)
        if self.labels is not None and n_classes is not None and len(self.labels) != n_classes:
            raise ValueError(f"labels={self.labels!r}: the predictor has {n_classes} classes")
        return self

    def label(self, target: int) -> str:
        return self.labels[target] if self.labels is not None else str(target)

    def masked_input(self, words: Sequence[str], spaces: Sequence[str], masked: np.ndarray,
                     target: int) -> tuple[str, list[tuple[int, int]]]:
        """MiCE's editor input ``label: <target>. input: <text, each run of masked words one sentinel>`` and the
        runs ``(start, end)`` (at most :attr:`max_spans`; later runs stay unmasked)."""
        spans = masked_runs(masked)[:self.max_spans]
        nw, ns, prev = [], [], 0
        for k, (i, j) in enumerate(spans):
            nw += list(words[prev:i]) + [f"<extra_id_{k}>"]
            ns += list(spaces[prev:i]) + [spaces[j - 1]]
            prev = j
        text = join_tokens(nw + list(words[prev:]), ns + list(spaces[prev:]))
        return f"label: {self.label(int(target))}. input: {text}", spans

    def _generate(self, prompt: str, n_spans: int, frac: float, rng) -> list[str]:
        import torch

        enc = self.tok(prompt, return_tensors="pt")
        n_tok = enc["input_ids"].shape[1]
        end = self._sentinels[n_spans]
        banned = [[self._sentinels[k]] for k in sorted(self._sentinels) if k > n_spans]
        if self.tok.eos_token_id is not None:
            banned.append([self.tok.eos_token_id])
        max_new = self.max_new_tokens or max(int(4 / 3 * math.ceil((frac + 0.2) * n_tok)), 200)  # MiCE's
        kw = {"do_sample": True, "top_k": self.top_k, "top_p": self.top_p, "num_return_sequences": self.n_samples,
              "no_repeat_ngram_size": self.no_repeat_ngram_size, "eos_token_id": end, "bad_words_ids": banned,
              "max_new_tokens": max_new, **self.generate_kwargs}
        dev = next(self.t5.parameters()).device
        with torch.random.fork_rng(), torch.inference_mode():
            torch.manual_seed(int(rng.integers(2 ** 31 - 1)))
            seqs = self.t5.generate(input_ids=enc["input_ids"].to(dev), attention_mask=enc["attention_mask"].to(dev),
                                    **kw)
        return [self.tok.decode(s, skip_special_tokens=False) for s in seqs.cpu()]

    def _infill(self, words, spaces, rel, frac, target, rng) -> list[str]:
        masked = self.mask(words, rel, frac)
        prompt, spans = self.masked_input(words, spaces, masked, target)
        if not spans:  # nothing maskable: the text itself (dropped from the editor's output)
            return [join_tokens(words, spaces)]
        return [fill_spans(words, spaces, spans, parse_t5_infill(g, len(spans), self.tok.eos_token))
                for g in self._generate(prompt, len(spans), frac, rng)]

    def explain(self, texts: Sequence[str], targets: Sequence[int] | None = None) -> list[list[str]]:
        out = super().explain(texts, targets)
        return [[c for c in cands if c != t] for t, cands in zip(texts, out)]


__all__ = ["PolyjuiceHF", "MiceT5", "parse_polyjuice", "polyjuice_prompt", "parse_t5_infill", "fill_spans",
           "mice_labels", "POLYJUICE_ID", "POLYJUICE_ENV", "MICE_T5_ID", "MICE_T5_ENV", "MICE_T5_WEIGHTS_ENV"]
