"""Loaders (schema, counts against shared/data/SOURCES.md, parsing details), the parquet cache,
the CEBaB delegation, the summary statistics and the command line."""
from __future__ import annotations

import shutil
import sys
import types

import numpy as np
import pandas as pd
import pytest

from xaibench import paths, tables
from xaibench.data import fetch, loaders, summary
from xaibench.data.__main__ import main as cli
from xaibench.data.fetch import DataError

REAL_MIRROR = paths.data_mirror()
HAVE_DATA = (REAL_MIRROR is not None and (REAL_MIRROR / "SHA256SUMS").exists()) or all(
    fetch.is_complete(n) for n in loaders.TEXT_DATASETS
)
needs_data = pytest.mark.skipif(not HAVE_DATA, reason="neither the data mirror nor a fetched data/raw is available")

# Numbers copied by hand from shared/data/SOURCES.md (independent of loaders.DATASETS).
SOURCES_SPLITS = {
    "imdb": {"train": 25000, "test": 25000},
    "20newsgroups": {"train": 11314, "test": 7532},
    "rt-polarity": {"all": 10662},
    "adult": {"train": 32561, "test": 16281},
    "amazon-polarity": {"test": 6459},
    "arxiv": {"train": 976, "dev": 419, "test": 155},
    "beer": {"train": 12008, "dev": 1372, "test": 1698},
    "sst2": {"train": 67349, "dev": 872},
}
SOURCES_LABELS = {  # (dataset, split) -> {label: count}
    ("imdb", "test"): {0: 12500, 1: 12500},
    ("imdb", "train"): {0: 12500, 1: 12500},
    ("rt-polarity", "all"): {0: 5331, 1: 5331},
    ("adult", "train"): {0: 24720, 1: 7841},
    ("adult", "test"): {0: 12435, 1: 3846},
    ("amazon-polarity", "test"): {0: 3137, 1: 3322},
    ("beer", "train"): {0: 5947, 1: 6061},
    ("beer", "dev"): {0: 687, 1: 685},
    ("beer", "test"): {0: 823, 1: 875},
    ("sst2", "train"): {0: 29780, 1: 37569},
    ("sst2", "dev"): {0: 428, 1: 444},
}
NEWS_TEST = {
    "alt.atheism": 319, "comp.graphics": 389, "comp.os.ms-windows.misc": 394, "comp.sys.ibm.pc.hardware": 392,
    "comp.sys.mac.hardware": 385, "comp.windows.x": 395, "misc.forsale": 390, "rec.autos": 396,
    "rec.motorcycles": 398, "rec.sport.baseball": 397, "rec.sport.hockey": 399, "sci.crypt": 396,
    "sci.electronics": 393, "sci.med": 396, "sci.space": 394, "soc.religion.christian": 398,
    "talk.politics.guns": 364, "talk.politics.mideast": 376, "talk.politics.misc": 310, "talk.religion.misc": 251,
}
ARXIV_CATS = {"physics": 540, "computer science": 405, "mathematics": 300, "quantitative biology": 100,
              "quantitative finance": 91, "statistics": 50, "electrical engineering and systems science": 35,
              "economics": 29}


class _Parsed(dict):
    """A text dataset parsed from the project's data/raw the first time a test asks for it, then kept (a pytest
    worker parses only the datasets of the tests it runs)."""

    def __missing__(self, name):
        self[name] = loaders.build(name)
        return self[name]


@pytest.fixture(scope="session")
def frames():
    """Every text dataset, each parsed once per test process from the project's data/raw (fetched from the mirror
    if needed)."""
    if not HAVE_DATA:
        pytest.skip("no data")
    return _Parsed()


def test_registry_matches_sources():
    assert set(loaders.TEXT_DATASETS) == set(SOURCES_SPLITS)
    for name, splits in SOURCES_SPLITS.items():
        assert loaders.DATASETS[name].splits == splits, name
    for (name, split), counts in SOURCES_LABELS.items():
        assert loaders.DATASETS[name].label_counts[split] == counts, (name, split)
    assert loaders.DATASETS["cebab"].splits == {
        "train_exclusive": 1755, "train_inclusive": 11728, "train_observational": 1755, "dev": 1673, "test": 1689}
    # every fetched dataset has a text loader, except the bird photographs (read by data/birds.py)
    assert set(loaders.DATASETS) == set(fetch.RAW_SPECS) - {"birds"}


@needs_data
@pytest.mark.parametrize("name", list(SOURCES_SPLITS))
def test_schema_and_counts(frames, name):
    df = frames[name]
    assert list(df.columns[:3]) == ["text", "label", "split"]
    assert pd.api.types.is_string_dtype(df["text"]) and pd.api.types.is_string_dtype(df["split"])
    assert df["label"].dtype == np.int64
    assert not df["text"].isna().any() and (df["text"].str.strip() != "").all()
    assert df["split"].value_counts().to_dict() == SOURCES_SPLITS[name]
    for (ds, split), counts in SOURCES_LABELS.items():
        if ds == name:
            got = df.loc[df["split"] == split, "label"].value_counts().to_dict()
            assert got == counts, split
    n_classes = len(loaders.label_names(name))
    assert set(df["label"].unique()) == set(range(n_classes))
    for col in loaders.DATASETS[name].extra_columns:
        assert col in df.columns


@needs_data
def test_imdb_ratings(frames):
    df = frames["imdb"]
    test = df[df.split == "test"]
    assert test[test.label == 1].rating.value_counts().to_dict() == {7: 2307, 8: 2850, 9: 2344, 10: 4999}
    assert test[test.label == 0].rating.value_counts().to_dict() == {1: 5022, 2: 2302, 3: 2541, 4: 2635}
    train_pos = df[(df.split == "train") & (df.label == 1)]
    assert train_pos.rating.value_counts().to_dict() == {7: 2496, 8: 3009, 9: 2263, 10: 4732}
    # each class holds the ids 0..12499 exactly once per split (SOURCES.md addendum)
    for (split, label), g in df.groupby(["split", "label"]):
        assert sorted(g.review_id) == list(range(12500)), (split, label)
    assert loaders.label_names("imdb")[1] == "positive"


@needs_data
def test_20newsgroups(frames):
    df = frames["20newsgroups"]
    assert df[df.split == "test"].group.value_counts().to_dict() == NEWS_TEST
    train = df[df.split == "train"].group.value_counts()
    assert train["alt.atheism"] == 480 and train["comp.graphics"] == 584 and train["talk.religion.misc"] == 377
    names = loaders.label_names("20newsgroups")
    assert (df.group == df.label.map(dict(enumerate(names)))).all()
    doc = df[(df.split == "test") & (df.group == "alt.atheism") & (df.doc_id == 53068)]
    assert doc.text.iloc[0].startswith("From: decay@cbnewsj.cb.att.com (dean.kaflowitz)")


@needs_data
def test_rt_polarity_latin1(frames):
    df = frames["rt-polarity"]
    assert df.text.iloc[0] == "simplistic , silly and tedious ."
    assert df[df.label == 1].line.tolist() == list(range(5331))
    # decoded as Latin-1: accented characters present, no UTF-8 mojibake
    assert df.text.str.contains("é").sum() > 0
    assert not df.text.str.contains("Ã").any()


@needs_data
def test_adult(frames):
    df = frames["adult"]
    first = df.iloc[0]
    assert first.text == (
        "age: 39, workclass: State-gov, fnlwgt: 77516, education: Bachelors, education_num: 13, "
        "marital_status: Never-married, occupation: Adm-clerical, relationship: Not-in-family, race: White, "
        "sex: Male, capital_gain: 2174, capital_loss: 0, hours_per_week: 40, native_country: United-States"
    )
    assert first.label == 0 and first.age == 39 and first.split == "train"
    assert set(df.income) == {"<=50K", ">50K"}  # the trailing '.' of adult.test is gone
    assert (df.label == (df.income == ">50K")).all()
    assert df.iloc[-1].split == "test" and df.iloc[-1].label == 1  # adult.test ends with a '>50K.' row
    for col in ("age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week"):
        assert df[col].dtype == np.int64
    assert loaders.label_names("adult") == ["<=50K", ">50K"]


@needs_data
def test_amazon(frames):
    df = frames["amazon-polarity"]
    assert df.iloc[0].title == "Great CD" and df.iloc[0].label == 1
    assert df.iloc[0].body.startswith("My lovely Pat has one of the GREAT voices")
    assert df.iloc[0].text == "Great CD: " + df.iloc[0].body


@needs_data
def test_arxiv(frames):
    df = frames["arxiv"]
    assert df.category.value_counts().to_dict() == ARXIV_CATS
    assert df.split_original.value_counts().to_dict() == {"train": 976, "val": 419, "test": 155}
    assert ((df.split == "dev") == (df.split_original == "val")).all()
    # the paper's three classes come first, so label < 3 selects them with contiguous labels
    main = df[df.label < 3]
    assert len(main) == 1245 and set(main.category) == {"computer science", "mathematics", "physics"}
    assert not df.text.str.contains("\n").any()


@needs_data
def test_beer_and_sst2(frames):
    beer = frames["beer"]
    assert beer.iloc[0].text.startswith("a : deep , deep copper color almost like a medium colored iced tea .")
    assert beer.iloc[0].label == 1
    sst = frames["sst2"]
    train = sst[sst.split == "train"]
    assert (train.iloc[0].text, train.iloc[0].label) == ("hide new secretions from the parental units", 0)
    assert train.iloc[-1].text == ("this new jangle of noise , mayhem and stupidity must be a serious "
                                   "contender for the title .")


def test_label_names_unknown():
    with pytest.raises(ValueError, match="unknown dataset"):
        loaders.label_names("mnist")


# --------------------------------------------------------------------------- cache (scratch home)
@pytest.fixture
def rt_home(tmp_path, monkeypatch):
    if REAL_MIRROR is None or not (REAL_MIRROR / "rt-polarity").exists():
        pytest.skip("needs the data mirror")
    mirror = tmp_path / "mirror" / "rt-polarity"
    mirror.mkdir(parents=True)
    for f in ("rt-polarity.pos", "rt-polarity.neg"):
        shutil.copyfile(REAL_MIRROR / "rt-polarity" / f, mirror / f)
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", str(tmp_path / "mirror"))
    return tmp_path / "home"


def test_cache_written_and_reused(rt_home, monkeypatch):
    df = loaders.load("rt-polarity")
    cache = rt_home / "data" / "processed" / "rt-polarity.parquet"
    assert cache.exists()
    assert not [p for p in cache.parent.iterdir() if p.name.startswith(".")]  # no temp files

    def boom(raw):
        raise AssertionError("parsed again although the cache is current")

    monkeypatch.setitem(loaders._PARSERS, "rt-polarity", boom)
    again = loaders.load("rt-polarity")
    pd.testing.assert_frame_equal(df, again)
    with pytest.raises(AssertionError, match="parsed again"):
        loaders.load("rt-polarity", refresh=True)


def test_stale_or_corrupt_cache_is_rebuilt(rt_home):
    df = loaders.load("rt-polarity")
    cache = loaders.processed_path("rt-polarity")
    old = df.copy()
    old.attrs = {"xaibench_loader_version": -1}
    old.iloc[:5].to_parquet(cache)
    assert len(loaders.load("rt-polarity")) == 10662
    cache.write_bytes(b"not parquet")
    assert len(loaders.load("rt-polarity")) == 10662


def test_count_mismatch_is_a_clear_error(rt_home):
    raw = fetch.ensure_raw("rt-polarity")
    (raw / "rt-polarity.pos").write_bytes(b"only one line\n")
    with pytest.raises(DataError, match=r"rt-polarity: rows per split .* differ .*fetch rt-polarity --force"):
        loaders.build("rt-polarity")


def test_cebab_is_delegated(monkeypatch):
    sentinel = pd.DataFrame({"text": ["x"], "label": [3], "split": ["dev"]})
    fake = types.ModuleType("xaibench.data.cebab")
    fake.load_cebab = lambda: sentinel
    monkeypatch.setitem(sys.modules, "xaibench.data.cebab", fake)
    import xaibench.data as pkg

    monkeypatch.setattr(pkg, "cebab", fake, raising=False)
    assert loaders.load("cebab") is sentinel


# --------------------------------------------------------------------------- summary
def test_summary_statistics_by_hand():
    # word_tokenize: "a b" -> 2, "Don't stop!" -> don't, stop, ! = 3, "x" -> 1, "Hi, you." -> 4
    df = pd.DataFrame({"text": ["a b", "Don't stop!", "x", "Hi, you."], "label": [0, 1, 1, 1],
                       "split": ["train", "train", "train", "test"]})
    s = summary.dataset_summary(["rt-polarity"], frames={"rt-polarity": df})
    assert list(s.split) == ["train", "test"]
    tr = s.iloc[0]
    assert tr.n == 3 and tr.n_classes == 2 and tr.label_counts == "0:1 1:2"
    assert tr.majority_share == pytest.approx(2 / 3) and tr.minority_share == pytest.approx(1 / 3)
    assert tr.tokens_mean == pytest.approx(2.0) and tr.tokens_median == 2.0 and tr.tokens_max == 3
    assert tr.tokens_std == pytest.approx(1.0)  # sample std of (2, 3, 1)
    assert tr.tokens_p90 == pytest.approx(2.8)  # linear interpolation between 2 and 3
    te = s.iloc[1]
    assert te.n == 1 and te.minority_share == 0.0 and te.majority_share == 1.0 and te.tokens_mean == 4

    tab = summary.dataset_summary_table(summary=s)
    tables.check_tidy(tab)
    assert list(tab.columns) == ["dataset", "split", "statistic", "ours", "ours_std", "paper"]
    assert len(tab) == 2 * len(summary.SUMMARY_STATISTICS)
    assert tab.ours_std.isna().all() and tab.paper.isna().all()
    assert tab.set_index(["split", "statistic"]).loc[("train", "tokens_p90"), "ours"] == pytest.approx(2.8)


def test_summary_token_statistics_of_a_sample_keep_the_full_counts():
    # token counts 1..6 in train; a sample of 2 texts gives the statistics of those two texts only
    texts = ["a", "a b", "a b c", "a b c d", "a b c d e", "a b c d e f"]
    df = pd.DataFrame({"text": texts, "label": [0, 0, 0, 1, 1, 1], "split": "train"})
    s = summary.dataset_summary(["rt-polarity"], frames={"rt-polarity": df}, token_sample=2, seed=3).iloc[0]
    picked = df["text"].sample(n=2, random_state=3).map(lambda t: len(t.split()))
    assert s.n == 6 and s.label_counts == "0:3 1:3" and s.majority_share == 0.5  # every row counted
    assert s.tokens_mean == pytest.approx(picked.mean()) and s.tokens_max == picked.max()
    assert s.tokens_mean != pytest.approx(3.5)  # not the full split's mean (1..6)
    full = summary.dataset_summary(["rt-polarity"], frames={"rt-polarity": df}, token_sample=6).iloc[0]
    assert full.tokens_mean == pytest.approx(3.5) and full.tokens_max == 6  # a cap >= the split takes all


def test_summary_rejects_cebab():
    with pytest.raises(ValueError, match="CEBaB"):
        summary.dataset_summary(["cebab"])


def test_plot_token_lengths():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = pd.DataFrame({"text": ["a b c", "d", "e f"] * 4, "label": [0, 1, 0] * 4, "split": ["train"] * 12})
    fig = summary.plot_token_lengths({"toy": df, "toy2": df.assign(split="dev")})
    assert isinstance(fig, matplotlib.figure.Figure)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["toy", "toy2"]
    plt.close(fig)
    with pytest.raises(ValueError):
        summary.plot_token_lengths({})


# --------------------------------------------------------------------------- command line
def test_cli_fetch_and_process(rt_home, capsys):
    assert cli(["fetch", "rt-polarity"]) == 0
    assert "rt-polarity" in capsys.readouterr().out
    assert cli(["fetch", "rt-polarity"]) == 0
    assert "already present" in capsys.readouterr().out
    assert cli(["process", "rt-polarity"]) == 0
    assert "10662 rows" in capsys.readouterr().out
    assert (rt_home / "data" / "processed" / "rt-polarity.parquet").exists()
    with pytest.raises(SystemExit):
        cli(["fetch", "nope"])


def test_cli_reports_data_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", "")

    def no_network(url, dest, timeout=None):
        raise OSError("network unreachable")

    monkeypatch.setattr(fetch, "_download", no_network)
    assert cli(["fetch", "beer"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: cannot get beer") and "XAIBENCH_DATA_MIRROR" in err


@pytest.mark.skipif(REAL_MIRROR is None or not (REAL_MIRROR / "cebab").exists(), reason="needs the data mirror")
def test_truncated_cebab_cache_is_rebuilt(tmp_path, monkeypatch):
    """A truncated data/processed/cebab.parquet used to crash with a raw pyarrow error."""
    mirror = tmp_path / "mirror" / "cebab"
    mirror.mkdir(parents=True)
    shutil.copyfile(REAL_MIRROR / "cebab" / "CEBaB-v1.1.zip", mirror / "CEBaB-v1.1.zip")
    monkeypatch.setenv("XAIBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", str(tmp_path / "mirror"))
    df = loaders.load("cebab")
    cache = paths.processed_dir() / "cebab.parquet"
    cache.write_bytes(cache.read_bytes()[: cache.stat().st_size // 2])
    with pytest.warns(RuntimeWarning, match="cebab.parquet is unreadable.*rebuilding"):
        again = loaders.load("cebab")
    pd.testing.assert_frame_equal(df, again)
    pd.read_parquet(cache)  # the cache was rewritten whole


ADULT_ROW = "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K\n"


@pytest.mark.parametrize("first,message", [
    ("\ufeffage,workclass,fnlwgt,education,education_num,marital_status,occupation,relationship,race,sex,"
     "capital_gain,capital_loss,hours_per_week,native_country,ltgt50k\n", r"adult.data:1 starts with a UTF-8 byte-order mark \(BOM\)"),
    ("\ufeff" + ADULT_ROW, r"adult.data:1 starts with a UTF-8 byte-order mark \(BOM\)"),
    ("Age, Workclass, fnlwgt, Education, Education-num, Marital-status, Occupation, Relationship, Race, Sex, "
     "Capital-gain, Capital-loss, Hours-per-week, Native-country, Income\n", r"adult.data:1 looks like a header row: its first field 'Age'"),
])
def test_the_adult_reader_names_a_bom_or_a_header(tmp_path, first, message):
    """A BOM made the mirror's header a data row: "unknown income label 'ltgt50k'" on line 1."""
    path = tmp_path / "adult.data"
    path.write_text(first + ADULT_ROW, encoding="utf-8")
    with pytest.raises(DataError, match=message):
        loaders._read_adult_file(path, "train")
    path.write_text("age,workclass\n" + ADULT_ROW, encoding="utf-8")  # the mirror's own header is read
    assert len(loaders._read_adult_file(path, "train")) == 1
