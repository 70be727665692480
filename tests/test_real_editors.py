"""The papers' own editors and perplexity LM from a local copy (``polyjuice_hf``, ``mice_t5``, ``base_lm="gpt2"``),
end to end on tiny randomly initialised models of the same architectures (GPT-2, T5) built and saved here: no
download.  Known values: Polyjuice's and T5's generation formats read back exactly, MiCE's mask is the words with
the largest gradient attribution, and a model that is not there is refused with a message saying where it looked."""
import difflib

import numpy as np
import pytest

from tests.helpers.toy_text import NEG, POS, sentiment_logreg

TEXTS = ["the film was great and the acting was wonderful", "i hated this awful terrible movie"]
CODES = ["negation", "quantifier", "lexical", "resemantic", "insert", "delete", "shuffle", "restructure"]
N_SENTINELS = 10


def _word_tokenizer(words, specials, **named):
    """A word-level tokenizer (split on whitespace) holding ``specials`` then ``words``."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(dict.fromkeys([*specials, *words]))}
    t = Tokenizer(models.WordLevel(vocab, unk_token=named["unk_token"]))
    t.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=t, **named), len(vocab)


def _words():
    return sorted({w for t in POS + NEG + TEXTS for w in t.split()} | {"not", "bad"})


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    """A 1-layer GPT-2 with Polyjuice's markers and control codes in its vocabulary."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from xaibench.explainers.counterfactual.hf_editors import MARKERS

    tok, V = _word_tokenizer(_words(), ["<|endoftext|>", "<unk>", *MARKERS, *[f"[{c}]" for c in CODES]],
                             unk_token="<unk>", eos_token="<|endoftext|>", bos_token="<|endoftext|>",
                             pad_token="<|endoftext|>")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=V, n_positions=64, n_embd=16, n_layer=1, n_head=2,
                                       bos_token_id=0, eos_token_id=0, pad_token_id=0))
    folder = tmp_path_factory.mktemp("gpt2")
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder, tok


@pytest.fixture(scope="module")
def tiny_t5(tmp_path_factory):
    """A 1-layer T5 whose tokenizer has the sentinels <extra_id_0..9> and MiCE's prompt words."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    sentinels = [f"<extra_id_{i}>" for i in range(N_SENTINELS)]
    tok, V = _word_tokenizer(["label:", "input:", "0.", "1.", *_words()], ["<pad>", "</s>", "<unk>", *sentinels],
                             unk_token="<unk>", eos_token="</s>", pad_token="<pad>",
                             additional_special_tokens=sentinels)
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(T5Config(vocab_size=V, d_model=16, d_kv=8, d_ff=32, num_layers=1,
                                                num_decoder_layers=1, num_heads=2, pad_token_id=0, eos_token_id=1,
                                                decoder_start_token_id=0))
    folder = tmp_path_factory.mktemp("t5")
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder, tok


@pytest.fixture(scope="module")
def clf():
    return sentiment_logreg()


def _ids(tok, *tokens):
    return [tok.convert_tokens_to_ids(t) for t in tokens]


# ---- Polyjuice ---------------------------------------------------------------------------------
def test_polyjuice_prompt_and_parser_known_values():
    from xaibench.explainers.counterfactual.hf_editors import parse_polyjuice, polyjuice_prompt

    assert polyjuice_prompt("It is great for kids.", "negation", "It is [BLANK] for kids.") == \
        "It is great for kids. <|perturb|> [negation] It is [BLANK] for kids."
    assert polyjuice_prompt("a b", "delete", "a [BLANK]", complete_blank=True) == \
        "a b <|perturb|> [delete] a [BLANK] [SEP]"
    gen = "It is great for kids. <|perturb|> [negation] It is [BLANK] for kids. [SEP] not great [ANSWER]<|endoftext|>xx"
    assert parse_polyjuice(gen, "<|endoftext|>") == ("negation", "It is not great for kids.")
    # [EMPTY] removes the blank and the space before it; two blanks filled in order
    assert parse_polyjuice("x <|perturb|> [delete] It is [BLANK] great. [SEP] [EMPTY] [ANSWER]") == \
        ("delete", "It is great.")
    assert parse_polyjuice("x <|perturb|> [lexical] [BLANK] is [BLANK] . [SEP] It [ANSWER] bad [ANSWER] junk") == \
        ("lexical", "It is bad .")
    assert parse_polyjuice("x <|perturb|> [lexical] It is [BLANK] . not [ANSWER]") is None      # no [SEP]
    assert parse_polyjuice("x <|perturb|> [lexical] [BLANK] is [BLANK] . [SEP] It [ANSWER]") is None  # a blank left


def _one_run_replaced(orig: list[str], cand: list[str], by: str) -> bool:
    """``cand`` is ``orig`` with one run of words (possibly none: an insertion) replaced by the word ``by``."""
    return any(cand == orig[:s] + [by] + orig[e:] for s in range(len(orig) + 1) for e in range(s, len(orig) + 1))


def test_polyjuice_hf_end_to_end_on_a_tiny_gpt2(tiny_gpt2, monkeypatch):
    from xaibench.explainers.counterfactual import build_editor
    from xaibench.explainers.counterfactual.hf_editors import ANSWER, SEP, PolyjuiceHF

    folder, tok = tiny_gpt2
    monkeypatch.setenv("XAIBENCH_POLYJUICE_MODEL", str(folder))
    # random weights: whatever it writes, the editor returns lists of strings (no marker left in them)
    ed = build_editor("polyjuice_hf", None, "imdb", seed=1, max_new_tokens=6, n_samples=2)
    assert isinstance(ed, PolyjuiceHF) and ed.uses_predictor is False and ed.model is None
    out = ed.explain(TEXTS)
    assert len(out) == 2 and all(isinstance(c, str) and "[" not in c for cands in out for c in cands)
    assert ed.explain(TEXTS) == out  # seeded per text
    # steered to write "[SEP] not [ANSWER] <eos>": every edit is the text with one blank filled by "not" (a blank
    # over the whole text: the edit is "not"), read back from Polyjuice's format and spliced in
    sep, no, ans, eos = _ids(tok, SEP, "not", ANSWER, "<|endoftext|>")
    bias = {(sep,): 20.0, (sep, no): 40.0, (no, ans): 60.0, (ans, eos): 80.0}
    ed = PolyjuiceHF(model=str(folder), seed=1, n_samples=1, max_new_tokens=6,
                     generate_kwargs={"sequence_bias": bias}).fit()
    for text, cands in zip(TEXTS, ed.explain(TEXTS)):
        assert "not" in cands and len(cands) >= 3, cands
        assert all(_one_run_replaced(text.split(), c.split(), "not") for c in cands), cands


def test_polyjuice_hf_long_text_prompts_the_sentence_holding_the_blank(tiny_gpt2):
    from xaibench.explainers.counterfactual.hf_editors import PolyjuiceHF
    from xaibench.nlp import parse

    folder, _ = tiny_gpt2
    ed = PolyjuiceHF(model=str(folder), seed=3, max_new_tokens=6).fit()
    text = "the film was great . " * 6 + "the acting was wonderful ."
    assert not ed._fits(f"{text} <|perturb|> [negation] {text}")  # 64 positions: the whole text does not fit
    doc = parse([text])[0]
    jobs = ed._jobs(doc, np.random.default_rng(0))
    for original, blanked, splice in jobs[:-1]:
        assert original in [s.text for s in doc.sents] and blanked.count("[BLANK]") == 1
        edited = splice(original.replace("great", "bad").replace("wonderful", "bad"))
        assert len(edited.split()) == len(text.split())  # spliced back in place of its sentence
        assert sum(a != b for a, b in zip(edited.split(), text.split())) == 1
    original, blanked, splice = jobs[-1]
    assert blanked == "[BLANK]" and text.startswith(original) and splice("x") == "x"  # the whole-text blank


# ---- MiCE with T5 ------------------------------------------------------------------------------
def test_t5_infill_parser_and_splice_known_values():
    from xaibench.explainers.counterfactual.hf_editors import fill_spans, parse_t5_infill

    assert parse_t5_infill("<pad> <extra_id_0> terrible<extra_id_1> dull and slow<extra_id_2></s>", 2) == \
        ["terrible", "dull and slow"]
    assert parse_t5_infill("<pad><extra_id_0> good<extra_id_1> fun", 2) == ["good", None]  # span 1 not closed
    assert parse_t5_infill("<pad><extra_id_0> a<extra_id_2> b<extra_id_1>", 2) == [None, None]  # out of order
    assert parse_t5_infill("<extra_id_0><extra_id_1> x</s><extra_id_2>", 2) == ["", None]  # after </s>: nothing
    words, spaces = ["the", "plot", "was", "dull", "."], [" ", " ", " ", "", ""]
    assert fill_spans(words, spaces, [(1, 2), (3, 4)], ["acting", "great fun"]) == "the acting was great fun."
    assert fill_spans(words, spaces, [(1, 2), (3, 4)], [None, ""]) == "the plot was ."


class _Hand:
    """Two classes; |gradient x input| of the words fixed by hand (any other word: 0)."""
    n_classes = 2
    REL = {"wonderful": 5.0, "dull": -4.0, "acting": 1.0, "plot": 0.5}

    def predict_proba(self, texts):
        p = np.array([0.8 if "wonderful" in t else 0.3 for t in texts])
        return np.stack([1 - p, p], axis=1)

    def input_gradient(self, texts, labels):
        return [dict(self.REL) for _ in texts]


def test_mice_t5_masks_the_words_with_the_largest_attribution(tiny_t5, monkeypatch):
    from xaibench.explainers.counterfactual.hf_editors import MiceT5

    folder, _ = tiny_t5
    text = "the acting was wonderful and the plot was dull"
    words = text.split()
    rel = np.array([abs(_Hand.REL.get(w, 0.0)) for w in words])
    # fraction 0.25 of 9 words: the 2 largest |attribution|; 0.5: round(4.5) = 4
    assert [w for w, m in zip(words, MiceT5.mask(words, rel, 0.25)) if m] == ["wonderful", "dull"]
    assert [w for w, m in zip(words, MiceT5.mask(words, rel, 0.5)) if m] == ["acting", "wonderful", "plot", "dull"]
    # through the editor: one level at half of max_frac = 0.25, the predictor's gradient, MiCE's prompt
    ed = MiceT5(dataset="imdb", model=str(folder), max_frac=0.5, levels=1, rounds=1, n_samples=2,
                max_new_tokens=4).fit(_Hand())
    seen = []

    def spy(*a, **k):
        got = MiceT5.masked_input(ed, *a, **k)
        seen.append(got)
        return got

    monkeypatch.setattr(ed, "masked_input", spy)
    ed.explain([text], [0])
    assert seen[0] == ("label: 0. input: the acting was <extra_id_0> and the plot was <extra_id_1>", [(3, 4), (8, 9)])
    spaced = "a b c d e f g h i j k l m n o p q r s t u".split()
    prompt, spans = ed.masked_input(spaced, [" "] * len(spaced), np.arange(len(spaced)) % 2 == 1, 1)
    assert len(spans) == ed.max_spans == N_SENTINELS - 1 and prompt.startswith("label: 1. input: a <extra_id_0> c")
    assert "<extra_id_9>" not in prompt and prompt.endswith("s t u")  # later runs stay unmasked


def test_mice_t5_end_to_end_on_a_tiny_t5(tiny_t5, clf, monkeypatch):
    from xaibench.explainers.counterfactual import build_editor
    from xaibench.explainers.counterfactual.hf_editors import MiceT5

    folder, tok = tiny_t5
    monkeypatch.setenv("XAIBENCH_MICE_T5_MODEL", str(folder))
    monkeypatch.delenv("XAIBENCH_MICE_T5_WEIGHTS", raising=False)
    ed = build_editor("mice_t5", clf, "imdb", seed=1, levels=2, rounds=1, n_samples=3, max_new_tokens=6)
    assert isinstance(ed, MiceT5) and ed.targeted and ed.labels == ["0", "1"]
    out = ed.explain(TEXTS, [0, 1])
    assert len(out) == 2 and all(isinstance(c, str) and c != t for t, cands in zip(TEXTS, out) for c in cands)
    assert ed.explain(TEXTS, [0, 1]) == out
    # steered to write "<extra_id_0> bad <extra_id_1> bad ... <extra_id_n>": each masked run becomes "bad"
    pad, bad = _ids(tok, "<pad>", "bad")
    x = _ids(tok, *[f"<extra_id_{i}>" for i in range(N_SENTINELS)])
    bias = {(pad, x[0]): 50.0, **{(x[k], bad): 50.0 for k in range(N_SENTINELS)},
            **{(x[k], bad, x[k + 1]): 50.0 for k in range(N_SENTINELS - 1)}}
    ed = MiceT5(dataset="imdb", model=str(folder), seed=1, levels=2, rounds=1, n_samples=2, max_new_tokens=12,
                generate_kwargs={"sequence_bias": bias}).fit(clf)
    for text, cands in zip(TEXTS, ed.explain(TEXTS, [0, 1])):
        assert cands
        for c in cands:
            ops = difflib.SequenceMatcher(a=text.split(), b=c.split(), autojunk=False).get_opcodes()
            assert any(op == "replace" for op, *_ in ops)
            assert all(op == "equal" or (op == "replace" and c.split()[j1:j2] == ["bad"])
                       for op, _, _, j1, j2 in ops), (text, c)


def test_the_runner_builds_a_named_original_editor_and_keys_its_chains_on_the_model(tiny_gpt2, tmp_path,
                                                                                      monkeypatch, clf):
    import pandas as pd

    from xaibench import paths
    from xaibench.data import cf_data
    from xaibench.evaluation.cf_feedback import runner as R
    from xaibench.models import cf_predictors

    folder, _ = tiny_gpt2
    monkeypatch.setattr(paths, "results_dir", lambda: tmp_path / "results")
    monkeypatch.setattr(paths, "cache_dir", lambda: tmp_path / "cache")
    monkeypatch.setattr(cf_predictors, "get_predictor", lambda *a, **k: clf)
    monkeypatch.setattr(cf_data, "sample_test", lambda d, n, seed=42, max_words=None: pd.DataFrame(
        {"text": TEXTS[:n], "label": [1, 0][:n]}))
    monkeypatch.setenv("XAIBENCH_POLYJUICE_MODEL", str(folder))
    # what is tested is the runner's wiring, not generation: one short sample per prompt (the editor builds itself
    # from its name as before; test_polyjuice_hf_end_to_end_on_a_tiny_gpt2 generates at other sizes)
    from xaibench.explainers import counterfactual as editors

    build = editors.build_editor
    monkeypatch.setattr(editors, "build_editor", lambda name, *a, **kw: build(name, *a, max_new_tokens=4,
                                                                              n_samples=1, **kw))
    chains, stats = R.run_experiment("imdb", "polyjuice_hf", 2, n_steps=2, progress=False)
    assert sorted(chains["step"].unique()) == [0, 1, 2] and chains["text_id"].nunique() == 2
    assert stats["editor"] == "polyjuice_hf"
    [config] = R.chains_store().configs()
    assert config["editor"] == "polyjuice_hf" and config["editor_model"] == str(folder)
    monkeypatch.setenv("XAIBENCH_POLYJUICE_MODEL", "uw-hai/polyjuice")  # another model: not these chains
    assert R.chains_store().load(R.chain_config("imdb", "polyjuice_hf", 2, n_steps=2)) is None


# ---- refusals, GPT-2 as the perplexity LM, selection --------------------------------------------
def test_a_missing_model_is_refused_with_what_was_looked_for(tmp_path, monkeypatch, clf):
    from xaibench.explainers.counterfactual import build_editor
    from xaibench.models.hf_local import ModelNotAvailable

    missing = tmp_path / "no_such_folder"
    monkeypatch.setenv("XAIBENCH_POLYJUICE_MODEL", str(missing))
    with pytest.raises(ModelNotAvailable, match="XAIBENCH_POLYJUICE_MODEL") as err:
        build_editor("polyjuice_hf", None, "imdb")
    assert str(missing) in str(err.value) and "huggingface-cli download uw-hai/polyjuice" in str(err.value)
    assert "'polyjuice'" in str(err.value)  # names the offline stand-in
    monkeypatch.setenv("XAIBENCH_MICE_T5_MODEL", "xaibench-test/no-such-t5")  # a hub id, not in the local cache
    with pytest.raises(ModelNotAvailable, match="not in the local Hugging Face cache") as err:
        build_editor("mice_t5", clf, "imdb")
    assert "'xaibench-test/no-such-t5'" in str(err.value) and "XAIBENCH_MICE_T5_MODEL" in str(err.value)


def test_mice_t5_weights_missing_file_is_refused(tiny_t5, tmp_path, monkeypatch, clf):
    from xaibench.explainers.counterfactual.hf_editors import MiceT5
    from xaibench.models.hf_local import ModelNotAvailable

    import torch

    folder, _ = tiny_t5
    monkeypatch.delenv("XAIBENCH_MICE_T5_WEIGHTS", raising=False)
    ref = MiceT5(dataset="imdb", model=str(folder)).fit(clf)
    monkeypatch.setenv("XAIBENCH_MICE_T5_WEIGHTS", str(tmp_path / "{dataset}_editor.pth"))
    with pytest.raises(ModelNotAvailable, match="imdb_editor.pth"):
        MiceT5(dataset="imdb", model=str(folder)).fit(clf)
    # MiCE's editor: a state dict of the base model's parameters, loaded over it
    state = {k: torch.full_like(v, 0.01) for k, v in ref.t5.state_dict().items()}
    torch.save(state, tmp_path / "imdb_editor.pth")
    ed = MiceT5(dataset="imdb", model=str(folder)).fit(clf)
    assert all(torch.all(v == 0.01) for v in ed.t5.state_dict().values())
    assert "imdb_editor.pth" in MiceT5.describe("imdb")


def test_gpt2_as_the_base_lm_from_a_local_copy(tiny_gpt2, tmp_path, monkeypatch):
    from xaibench.models.hf_local import ModelNotAvailable
    from xaibench.models.lm import load_causal_lm, lm_source, sequence_nll

    folder, _ = tiny_gpt2
    load_causal_lm.cache_clear()
    try:
        monkeypatch.setenv("XAIBENCH_GPT2_MODEL", str(tmp_path / "absent"))
        with pytest.raises(ModelNotAvailable, match="XAIBENCH_GPT2_MODEL"):
            load_causal_lm("gpt2")
        monkeypatch.setenv("XAIBENCH_GPT2_MODEL", str(folder))
        model, tok = load_causal_lm("gpt2")
        assert type(model).__name__ == "GPT2LMHeadModel"
        nll, _ = sequence_nll(["the film was great", "i hated it"], model, tok)
        assert np.all(np.isfinite(nll)) and np.all(nll > 0)
        assert str(folder) in lm_source("gpt2") and "stand-in" in lm_source("smollm2")
    finally:
        load_causal_lm.cache_clear()


def test_original_editors_run_only_when_named_and_say_what_they_are(monkeypatch):
    from xaibench.evaluation.cf_feedback import runner
    from xaibench.evaluation.cf_feedback.protocol import PROTOCOL

    assert not {"polyjuice_hf", "mice_t5"} & set(PROTOCOL.run_list("all"))
    assert PROTOCOL.run_list("polyjuice_hf mice_t5") == ["mice", "polyjuice", "textfooler", "polyjuice_hf", "mice_t5"]
    monkeypatch.setenv("XAIBENCH_MICE_T5_MODEL", "/models/t5")
    monkeypatch.setenv("XAIBENCH_MICE_T5_WEIGHTS", "/w/{dataset}_editor.pth")
    monkeypatch.delenv("XAIBENCH_POLYJUICE_MODEL", raising=False)
    t = runner.editor_sources(["mice", "polyjuice_hf", "mice_t5"], ["imdb"]).set_index("editor")
    assert t.loc["mice", "kind"] == "offline stand-in" and t.loc["mice", "model"] == ""
    assert t.loc["polyjuice_hf", "kind"] == "original model" and t.loc["polyjuice_hf", "model"] == "uw-hai/polyjuice"
    assert t.loc["mice_t5", "model"] == "/models/t5 + /w/imdb_editor.pth"
    # the chains are keyed on the model that ran
    assert runner.chain_config("imdb", "mice_t5", 2)["editor_model"] == "/models/t5 + /w/imdb_editor.pth"
    assert "editor_model" not in runner.chain_config("imdb", "mice", 2)
    assert runner.chain_config("newsgroups", "mice_t5", 2)["editor_model"] == "/models/t5 + /w/newsgroups_editor.pth"
