"""A minimal reader of the WordNet 3.0 database files (Debian package ``wordnet-base``).

Reads ``data.{noun,verb,adj,adv}`` from ``XAIBENCH_WORDNET_DIR`` (default
``/usr/share/wordnet``) and returns single-word synonym pairs (words sharing a synset that is the most frequent sense
of both), antonym
pairs (lexical ``!`` pointers) and each word's parts of speech.  No network, no NLTK data.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path

_POS_FILES = {"noun": "NOUN", "verb": "VERB", "adj": "ADJ", "adv": "ADV"}
#: WordNet's ``morphy`` detachment rules per part of speech: the base must be a lemma of that part of speech
_DETACH = {"NOUN": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
                    ("men", "man"), ("ies", "y")),
           "VERB": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"),
                    ("ing", "")),
           "ADJ": (("er", ""), ("est", ""), ("er", "e"), ("est", "e"))}


@dataclass
class WordNet:
    synonyms: set[tuple[str, str]] = field(default_factory=set)
    antonyms: set[tuple[str, str]] = field(default_factory=set)
    pos: dict[str, set[str]] = field(default_factory=dict)
    exceptions: dict[str, set[str]] = field(default_factory=dict)  # irregular inflection -> lemmas (*.exc)

    def antonyms_of(self, word: str) -> list[str]:
        index = self.__dict__.get("_antonym_index")
        if index is None or index[0] != len(self.antonyms):  # built once (rebuilt if pairs were added)
            by_word: dict[str, set[str]] = {}
            for a, b in self.antonyms:
                by_word.setdefault(a, set()).add(b)
            index = self.__dict__["_antonym_index"] = (len(self.antonyms), {a: sorted(bs) for a, bs in by_word.items()})
        return list(index[1].get(word, []))

    def base_forms(self, word: str) -> set[str]:
        """``word`` and the WordNet lemmas it may inflect (``morphy``'s detachment rules and the
        ``*.exc`` exception lists: "disappointed" -> "disappoint", "worse" -> "bad")."""
        w = word.lower()
        out = {w} | set(self.exceptions.get(w, ()))
        for pos, rules in _DETACH.items():
            if pos == "ADJ" and w in self.pos:  # a lemma itself ("offer") is no comparative of "off"
                continue
            for suffix, repl in rules:
                if w.endswith(suffix) and len(w) > len(suffix) + 1:
                    b = w[: len(w) - len(suffix)] + repl
                    if pos in self.pos.get(b, ()):
                        out.add(b)
        return out

    def is_antonym(self, a: str, b: str) -> bool:
        """Whether ``b`` (or a lemma it inflects) is a WordNet antonym of ``a`` (or of a lemma ``a`` inflects);
        inflections keep the contrast ("loved" vs "hated", "better" vs "worse")."""
        fb = self.base_forms(b)
        return any(x in fb for a_ in self.base_forms(a) for x in self.antonyms_of(a_))


def wordnet_dir() -> Path:
    return Path(os.environ.get("XAIBENCH_WORDNET_DIR", "/usr/share/wordnet"))


def _clean(word: str) -> str:
    w = word.split("(")[0].lower()  # adjective markers such as "(a)"
    return w


@functools.lru_cache(maxsize=2)
def load_wordnet(folder: str | None = None) -> WordNet:
    root = Path(folder) if folder else wordnet_dir()
    if not (root / "data.noun").exists():
        raise FileNotFoundError(f"WordNet data not found in {root}: install Debian's `wordnet-base` "
                                "(apt-get install wordnet-base) or set XAIBENCH_WORDNET_DIR")
    wn = WordNet()
    lines: dict[tuple[str, str], list[str]] = {}
    first_sense: dict[tuple[str, str], str] = {}  # (file, lemma) -> offset of its most frequent sense
    for fname in _POS_FILES:
        for line in (root / f"index.{fname}").read_text(encoding="latin-1").splitlines():
            if line.startswith(" "):
                continue
            parts = line.split()
            n_syn = int(parts[2])
            first_sense[(fname, parts[0])] = parts[len(parts) - n_syn]
    for fname, upos in _POS_FILES.items():
        for line in (root / f"data.{fname}").read_text(encoding="latin-1").splitlines():
            if line.startswith(" ") or "|" not in line:
                continue
            parts = line.split("|")[0].split()
            offset, n_words = parts[0], int(parts[3], 16)
            words = [_clean(parts[4 + 2 * i]) for i in range(n_words)]
            lines[(fname[0] if fname != "adj" else "a", offset)] = words
            single = [w for w in words if w.isalpha()]
            for w in single:
                wn.pos.setdefault(w, set()).add(upos)
            # synonyms: words whose *most frequent* sense is this synset (WordNet's synonym sets of
            # rare senses tie e.g. "good" to "full" and would pull unrelated words together)
            primary = [w for w in single if first_sense.get((fname, w)) == offset]
            for a in primary:
                for b in primary:
                    if a != b:
                        wn.synonyms.add((a, b))
            k = 4 + 2 * n_words
            n_ptr = int(parts[k])
            for j in range(n_ptr):
                sym, off, pos, st = parts[k + 1 + 4 * j: k + 5 + 4 * j]
                if sym == "!":
                    src, tgt = int(st[:2], 16), int(st[2:], 16)
                    pos = "a" if pos in ("a", "s") else pos
                    wn.antonyms.add((words[src - 1], (pos, off, tgt)))  # resolved below
    resolved = set()
    for a, (pos, off, tgt) in wn.antonyms:
        words = lines.get((pos, off))
        if words is None and pos == "a":
            words = lines.get(("s", off))
        if words and 0 < tgt <= len(words) and a.isalpha() and words[tgt - 1].isalpha():
            resolved.add((a, words[tgt - 1]))
            resolved.add((words[tgt - 1], a))
    wn.antonyms = resolved
    for fname in _POS_FILES:
        exc = root / f"{fname}.exc"
        if exc.exists():
            for line in exc.read_text(encoding="latin-1").splitlines():
                parts = line.split()
                if len(parts) > 1 and parts[0].isalpha():
                    wn.exceptions.setdefault(parts[0], set()).update(b for b in parts[1:] if b.isalpha())
    return wn
