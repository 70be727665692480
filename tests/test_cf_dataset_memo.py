"""load_cf_dataset is memoised per process, returns independent copies, and rereads a rebuilt file;
LogRegClassifier's fingerprint depends on its parameters' values only."""
import os

import numpy as np
import pandas as pd

from xaibench.data import cf_data


def test_load_cf_dataset_memoised_copies_and_reread_after_rebuild(tmp_path, monkeypatch):
    processed = tmp_path / "imdb.parquet"
    processed.write_bytes(b"v1")
    calls = []

    def fake_build(name):
        calls.append(name)
        return pd.DataFrame({"text": ["a", "b"], "label": [0, 1], "split": ["test", "test"]})

    monkeypatch.setattr(cf_data, "_build_cf_dataset", fake_build)
    monkeypatch.setattr(cf_data, "processed_path", lambda raw: tmp_path / f"{raw}.parquet")
    monkeypatch.setattr(cf_data, "_MEMO", {})
    first = cf_data.load_cf_dataset("imdb")
    first.loc[0, "text"] = "edited by the caller"
    second = cf_data.load_cf_dataset("imdb")
    assert calls == ["imdb"]                      # built once
    assert second.loc[0, "text"] == "a"           # a caller's edit never reaches the next caller
    processed.write_bytes(b"version 2, rebuilt")  # another size: the processed file was rebuilt
    os.utime(processed, ns=(1, 1))
    cf_data.load_cf_dataset("imdb")
    assert calls == ["imdb", "imdb"]
    try:
        cf_data.load_cf_dataset("sst2")
    except ValueError as err:
        assert "unknown dataset 'sst2'" in str(err)
    else:
        raise AssertionError("an unknown dataset name must be refused")


def test_logreg_fingerprint_depends_on_parameter_values_not_pickled_bytes():
    from xaibench.models.logreg import LogRegClassifier

    texts = ["good movie great", "bad film awful", "great fun good", "awful bad boring"] * 5
    m = LogRegClassifier(2, cache=False).fit(texts, [1, 0, 1, 0] * 5)
    fp = m.fingerprint()
    # the same vocabulary in another insertion order and with plain ints (as after a reload) and the
    # same coefficients in another memory layout: the same model, the same fingerprint
    m._fingerprint = None
    vocab = m.vectorizer.vocabulary_
    m.vectorizer.vocabulary_ = {k: int(vocab[k]) for k in sorted(vocab, reverse=True)}
    m.clf.coef_ = np.asfortranarray(m.clf.coef_.astype(np.float64))
    assert m.fingerprint() == fp
    # another coefficient value: another model
    m._fingerprint = None
    m.clf.coef_ = m.clf.coef_.copy()
    m.clf.coef_[0, 0] += 1e-3
    assert m.fingerprint() != fp
