"""The word models' input encoding, made faster without changing a value: ``word_tokenize`` lower-cases an ASCII
text before matching (the pattern ignores case, and lower-casing ASCII keeps every character in place),
``Vocab.encode`` maps the vocabulary's ``get`` over the tokens, and ``CNNClassifier.encode`` fills one id array and
one mask per batch.  Each is checked against the path it replaces."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from xaibench.bench.cnn_encode import encode_row_by_row, tokenize_by_token
from xaibench.models.cnn import CNNClassifier
from xaibench.models.embeddings import Vocab
from xaibench.text import word_tokenize

TEXTS = ["Don't STOP: it's GREAT!!! 10/10, would watch again...", "", "   ", "a", "Ünïcödé ÉTÉ naïve café, İstanbul",
         "O'Neil's (1999) \u2014 a 'quoted' word; e-mail: ME@X.ORG", "tab\tnew\nline  spaces", "ſ K \u212a kelvin",
         "MIXED case Words and numbers 3.14 and 2nd", "x" * 300 + " end"]


def test_word_tokenize_lowercases_ascii_texts_before_matching_with_the_same_tokens():
    rng = np.random.default_rng(0)
    alphabet = list("abcXYZ019'!.,- \t\n") + ["\u00e9", "\u0130", "\u017f"]
    texts = TEXTS + ["".join(rng.choice(alphabet, int(rng.integers(0, 40)))) for _ in range(500)]
    for t in texts:
        assert word_tokenize(t) == tokenize_by_token(t), t
        assert word_tokenize(t, lower=False) == tokenize_by_token(t, lower=False), t
    assert word_tokenize("Don't STOP!") == ["don't", "stop", "!"]


def test_vocab_encode_gives_each_known_token_its_id_and_the_unknown_id_otherwise():
    v = Vocab(["the", "film", "great"])
    toks = ["the", "FILM", "film", "zzz", "great", "the"]
    assert v.encode(toks) == [v.stoi.get(t, 1) for t in toks] == [v.stoi["the"], 1, v.stoi["film"], 1,
                                                                  v.stoi["great"], v.stoi["the"]]
    assert v.encode([]) == [] and v.encode(iter(["film"])) == [v.stoi["film"]]


@pytest.mark.parametrize("batch", [TEXTS, TEXTS[1:3], ["great film"] * 3, [" ".join(["great"] * 40)]])
def test_cnn_encode_gives_the_ids_and_mask_of_the_row_by_row_path(batch):
    train = ["a great film , i loved it", "an awful film , i hated it", "great acting", "awful acting"]
    clf = CNNClassifier(2, cache=False, epochs=1, max_len=12, restrict_to_glove=False).fit(train, [1, 0, 1, 0])
    ids, mask = clf.encode(batch)
    ref_ids, ref_mask = encode_row_by_row(clf, batch)
    assert ids.dtype == ref_ids.dtype == mask.dtype == torch.long
    assert torch.equal(ids, ref_ids) and torch.equal(mask, ref_mask)
    assert ids.shape[1] >= max(clf.filter_widths)
