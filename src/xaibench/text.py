"""The word tokenizer shared by the data statistics, the word-level models and the explainers.

Words (letters and digits, with an optional ``'s``-style suffix) and single punctuation marks.
It sits below every other layer (data, models, explainers, evaluation import it; it imports
nothing of the project).
"""
from __future__ import annotations

import re

#: one token: a word (``don't`` stays one word) or one punctuation mark
TOKEN_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[^\sa-z0-9]", re.IGNORECASE)


def word_tokenize(text: str, lower: bool = True) -> list[str]:
    """Words and punctuation marks, lower-cased by default (GloVe 6B is uncased).

    >>> word_tokenize("Don't stop!")
    ["don't", 'stop', '!']
    """
    if lower and text.isascii():  # ASCII: lower-casing keeps every character in place, and the pattern ignores case
        return TOKEN_RE.findall(text.lower())
    toks = TOKEN_RE.findall(text)
    return [t.lower() for t in toks] if lower else toks


def cut_to_words(text: str, max_words: int) -> str:
    """``text`` up to the end of its ``max_words``-th token, formatting (spaces, case) kept.

    >>> cut_to_words("One, two  three.", 3)
    'One, two'
    """
    if max_words < 1:
        raise ValueError(f"max_words must be >= 1, got {max_words}")
    for i, m in enumerate(TOKEN_RE.finditer(text)):
        if i == max_words - 1:
            return text[: m.end()]
    return text


__all__ = ["TOKEN_RE", "word_tokenize", "cut_to_words"]
