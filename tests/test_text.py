"""xaibench.text: the word tokenizer below every layer (known values)."""
import pytest

from xaibench.text import TOKEN_RE, cut_to_words, word_tokenize


def test_word_tokenize_known_values():
    assert word_tokenize("Don't stop!") == ["don't", "stop", "!"]
    assert word_tokenize("Hi, you.", lower=False) == ["Hi", ",", "you", "."]
    assert word_tokenize("R2-D2 costs $5") == ["r2", "-", "d2", "costs", "$", "5"]
    assert word_tokenize("   ") == []
    assert TOKEN_RE.findall("a b") == ["a", "b"]


def test_cut_to_words_keeps_formatting():
    assert cut_to_words("One, two  three.", 3) == "One, two"
    assert cut_to_words("One, two  three.", 99) == "One, two  three."
    with pytest.raises(ValueError, match="max_words"):
        cut_to_words("x", 0)


def test_models_and_data_use_the_same_tokenizer():
    from xaibench.data import summary
    from xaibench.models import cnn, lstm

    assert summary.word_tokenize is word_tokenize and cnn.word_tokenize is word_tokenize
    assert lstm.word_tokenize is word_tokenize
