"""Dataset loaders with one core schema: ``text`` (str), ``label`` (int), ``split`` (str).

``load(name)`` returns a :class:`pandas.DataFrame` with those three columns first, then
dataset-specific ones (see :data:`DATASETS`).  The first call reads ``data/raw/<name>/``
(fetched on demand by :func:`xaibench.data.fetch.ensure_raw`), checks the row and label counts
against ``shared/data/SOURCES.md`` and caches the frame as ``data/processed/<name>.parquet``;
later calls read the cache.  ``load("cebab")`` is delegated to
:func:`xaibench.data.cebab.load_cebab` (the CEBaB domain model lives there).

Split names are ``train`` / ``dev`` / ``test`` (arXiv's ``val`` becomes ``dev``; the original
value stays in ``split_original``); rt-polarity has no official split and uses ``all``.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .. import io, paths
from .fetch import DataError, ensure_raw

__all__ = [
    "DatasetInfo",
    "DATASETS",
    "TEXT_DATASETS",
    "ADULT_COLUMNS",
    "ARXIV_CATEGORIES",
    "LOADER_VERSION",
    "load",
    "build",
    "label_names",
    "dataset_info",
    "processed_path",
]

#: bump when a parser's output changes; older parquet caches are then rebuilt automatically.
LOADER_VERSION = 1
_VERSION_ATTR = "xaibench_loader_version"

NEWSGROUPS = (
    "alt.atheism", "comp.graphics", "comp.os.ms-windows.misc", "comp.sys.ibm.pc.hardware",
    "comp.sys.mac.hardware", "comp.windows.x", "misc.forsale", "rec.autos", "rec.motorcycles",
    "rec.sport.baseball", "rec.sport.hockey", "sci.crypt", "sci.electronics", "sci.med",
    "sci.space", "soc.religion.christian", "talk.politics.guns", "talk.politics.mideast",
    "talk.politics.misc", "talk.religion.misc",
)
# SOURCES.md: per-group counts equal scikit-learn's bydate splits
_NEWS_TRAIN_COUNTS = (480, 584, 591, 590, 578, 593, 585, 594, 598, 597, 600, 595, 591, 594, 593,
                      599, 546, 564, 465, 377)
_NEWS_TEST_COUNTS = (319, 389, 394, 392, 385, 395, 390, 396, 398, 397, 399, 396, 393, 396, 394,
                     398, 364, 376, 310, 251)

#: label order: the three classes of Lertvittayakumjorn & Toni (2019) first, so that
#: ``df[df.label < 3]`` is the paper's CS / Math / Physics task with contiguous labels.
ARXIV_CATEGORIES = (
    "computer science", "mathematics", "physics", "economics",
    "electrical engineering and systems science", "quantitative biology", "quantitative finance",
    "statistics",
)
_ARXIV_COUNTS = (405, 300, 540, 29, 35, 100, 91, 50)

ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
    "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country",
)
_ADULT_NUMERIC = ("age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week")


@dataclass(frozen=True)
class DatasetInfo:
    """What a dataset is and what :func:`load` must return for it (counts from SOURCES.md)."""

    name: str
    folder: str  # folder in the data mirror (shared/data/<folder>)
    description: str
    splits: dict[str, int]  # expected rows per split
    label_names: tuple[str, ...]
    #: expected label counts per split where SOURCES.md gives them ("*" = all splits together)
    label_counts: dict[str, dict[int, int]] = field(default_factory=dict)
    extra_columns: tuple[str, ...] = ()
    citation: str = ""

    @property
    def n(self) -> int:
        return sum(self.splits.values())


_BIN_SENT = ("negative", "positive")

DATASETS: dict[str, DatasetInfo] = {
    "cebab": DatasetInfo(
        "cebab", "cebab",
        "CEBaB v1.1 restaurant reviews with concept-level edits (records per file; loaded by xaibench.data.cebab)",
        {"train_exclusive": 1755, "train_inclusive": 11728, "train_observational": 1755, "dev": 1673, "test": 1689},
        ("1", "2", "3", "4", "5"),
        citation="Abraham et al., CEBaB, NeurIPS 2022",
    ),
    "imdb": DatasetInfo(
        "imdb", "imdb", "IMDb movie reviews (aclImdb v1.0), binary sentiment",
        {"train": 25000, "test": 25000}, _BIN_SENT,
        {"train": {0: 12500, 1: 12500}, "test": {0: 12500, 1: 12500}},
        ("rating", "review_id"), "Maas et al., ACL 2011",
    ),
    "20newsgroups": DatasetInfo(
        "20newsgroups", "20newsgroups-bydate", "20 Newsgroups 'bydate' posts (headers kept), 20 topics",
        {"train": 11314, "test": 7532}, NEWSGROUPS,
        {"train": dict(enumerate(_NEWS_TRAIN_COUNTS)), "test": dict(enumerate(_NEWS_TEST_COUNTS))},
        ("group", "doc_id"), "Lang, ICML 1995; bydate split by J. Rennie",
    ),
    "rt-polarity": DatasetInfo(
        "rt-polarity", "rt-polarity", "Rotten Tomatoes sentence polarity v1.0 (MR), no official split",
        {"all": 10662}, _BIN_SENT, {"all": {0: 5331, 1: 5331}},
        ("line",), "Pang & Lee, ACL 2005",
    ),
    "adult": DatasetInfo(
        "adult", "adult", "UCI Adult census income (>50K), tabular with a text rendering",
        {"train": 32561, "test": 16281}, ("<=50K", ">50K"),
        {"train": {0: 24720, 1: 7841}, "test": {0: 12435, 1: 3846}},
        ADULT_COLUMNS + ("income",), "Kohavi, KDD 1996",
    ),
    "amazon-polarity": DatasetInfo(
        "amazon-polarity", "amazon-polarity",
        "Amazon review polarity, first 6,459 reviews of the TEST split (fastText format)",
        {"test": 6459}, _BIN_SENT, {"test": {0: 3137, 1: 3322}},
        ("title", "body"), "Zhang, Zhao & LeCun, NeurIPS 2015",
    ),
    "arxiv": DatasetInfo(
        "arxiv", "arxiv", "arXiv abstracts with top-level category (1,550-abstract sample)",
        {"train": 976, "dev": 419, "test": 155}, ARXIV_CATEGORIES, {"*": dict(enumerate(_ARXIV_COUNTS))},
        ("category", "title", "split_original", "authors", "comment"),
        "arXiv metadata (CC0); sample by AmirYunus/IS6751_project_arxiv_classifier",
    ),
    "beer": DatasetInfo(
        "beer", "beer", "BeerAdvocate appearance aspect, binary (score > 0.6), Lei et al. files",
        {"train": 12008, "dev": 1372, "test": 1698}, _BIN_SENT,
        {"train": {0: 5947, 1: 6061}, "dev": {0: 687, 1: 685}, "test": {0: 823, 1: 875}},
        (), "McAuley et al., ICDM 2012; Lei et al., EMNLP 2016",
    ),
    "sst2": DatasetInfo(
        "sst2", "sst2", "SST-2 (GLUE) sentences, binary sentiment",
        {"train": 67349, "dev": 872}, _BIN_SENT,
        {"train": {0: 29780, 1: 37569}, "dev": {0: 428, 1: 444}},
        (), "Socher et al., EMNLP 2013; GLUE",
    ),
}

#: the eight plain text-classification datasets (everything but CEBaB)
TEXT_DATASETS: tuple[str, ...] = tuple(n for n in DATASETS if n != "cebab")


def dataset_info(name: str) -> DatasetInfo:
    """The :class:`DatasetInfo` of ``name``; a ``ValueError`` lists the known names."""
    try:
        return DATASETS[name]
    except KeyError:
        raise ValueError(f"unknown dataset {name!r}; choose one of {sorted(DATASETS)}") from None


def label_names(name: str) -> list[str]:
    """Class names indexed by the integer ``label`` of :func:`load` (``label_names(n)[label]``).

    For CEBaB the 5-way review rating is returned unless :mod:`xaibench.data.cebab` defines
    ``label_names()`` / ``LABEL_NAMES`` itself.
    """
    info = dataset_info(name)
    if name == "cebab":
        try:
            from . import cebab as _cebab
        except ImportError:
            return list(info.label_names)
        fn = getattr(_cebab, "label_names", None)
        if callable(fn):
            return list(fn())
        return list(getattr(_cebab, "LABEL_NAMES", info.label_names))
    return list(info.label_names)


def processed_path(name: str) -> Path:
    return paths.processed_dir() / f"{name}.parquet"


# --------------------------------------------------------------------------------------------
# parsers: raw folder -> frame (core columns + extras), in a deterministic row order
# --------------------------------------------------------------------------------------------
def _id_key(p: Path) -> tuple[int, str]:
    stem = p.stem.split("_")[0]
    return (int(stem), p.name) if stem.isdigit() else (1 << 62, p.name)


def _read_imdb(raw: Path) -> pd.DataFrame:
    rows = []
    for split in ("train", "test"):
        for label, cls in ((0, "neg"), (1, "pos")):
            folder = raw / "aclImdb" / split / cls
            for p in sorted(folder.glob("*.txt"), key=_id_key):
                rid, rating = p.stem.split("_")
                text = p.read_bytes().decode("utf-8", errors="replace")
                rows.append((text, label, split, int(rating), int(rid)))
    return pd.DataFrame(rows, columns=["text", "label", "split", "rating", "review_id"])


def _read_20newsgroups(raw: Path) -> pd.DataFrame:
    rows = []
    for split in ("train", "test"):
        root = raw / f"20news-bydate-{split}"
        found = sorted(p.name for p in root.iterdir() if p.is_dir())
        if tuple(found) != NEWSGROUPS:
            raise DataError(
                f"{root} holds newsgroup folders {found}, expected the 20 of the bydate version. "
                "Fix: run `python -m xaibench.data fetch 20newsgroups --force`."
            )
        for label, group in enumerate(NEWSGROUPS):
            for p in sorted((root / group).iterdir(), key=_id_key):
                # latin-1 like scikit-learn's fetch_20newsgroups: every byte maps to one character
                text = p.read_bytes().decode("latin-1")
                rows.append((text, label, split, group, int(p.name) if p.name.isdigit() else -1))
    return pd.DataFrame(rows, columns=["text", "label", "split", "group", "doc_id"])


def _read_rt_polarity(raw: Path) -> pd.DataFrame:
    rows = []
    for label, fname in ((0, "rt-polarity.neg"), (1, "rt-polarity.pos")):
        data = (raw / fname).read_bytes().decode("latin-1")
        for i, line in enumerate(data.split("\n")[:-1] if data.endswith("\n") else data.split("\n")):
            rows.append((line.strip(), label, "all", i))
    return pd.DataFrame(rows, columns=["text", "label", "split", "line"])


def _read_adult_file(path: Path, split: str) -> list[tuple]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if lineno == 1 and line.startswith("\ufeff"):
                raise DataError(
                    f"{path}:1 starts with a UTF-8 byte-order mark (BOM), which the UCI files do not have (an "
                    "editor or spreadsheet saved it). Fix: save it as plain UTF-8 without BOM, or fetch the "
                    "original again (`python -m xaibench.data fetch adult --force`).")
            line = line.strip()
            # blank lines; UCI's "|1x3 Cross validator" first line of adult.test; the mirror's header
            if not line or line.startswith("|") or line.startswith("age,"):
                continue
            fields = [f.strip() for f in line.split(",")]
            if not fields[0].isdigit():
                what = "a header row" if len(fields) == 15 else "not a data row"
                raise DataError(
                    f"{path}:{lineno} looks like {what}: its first field {fields[0][:40]!r} is not an age (a data "
                    "row starts with the age, e.g. '39, State-gov, ...'; the only header read is one starting "
                    "'age,'). Fix: remove the line, or fetch the original again "
                    "(`python -m xaibench.data fetch adult --force`).")
            if len(fields) != 15:
                raise DataError(
                    f"{path}:{lineno} has {len(fields)} comma-separated fields, expected 15. "
                    "Fix: replace the file with the UCI original (`python -m xaibench.data fetch adult --force`)."
                )
            income = fields[14].rstrip(".")
            if income not in ("<=50K", ">50K"):
                raise DataError(f"{path}:{lineno}: unknown income label {fields[14]!r} (expected <=50K or >50K).")
            rows.append((*fields[:14], income, split))
    return rows


def _read_adult(raw: Path) -> pd.DataFrame:
    rows = _read_adult_file(raw / "adult.data", "train") + _read_adult_file(raw / "adult.test", "test")
    df = pd.DataFrame(rows, columns=[*ADULT_COLUMNS, "income", "split"])
    for col in _ADULT_NUMERIC:
        df[col] = df[col].astype(np.int64)
    df["label"] = (df["income"] == ">50K").astype(np.int64)
    feats = df[list(ADULT_COLUMNS)].astype(str)
    df["text"] = [", ".join(f"{c}: {v}" for c, v in zip(ADULT_COLUMNS, vals))
                  for vals in feats.itertuples(index=False, name=None)]
    return df[["text", "label", "split", *ADULT_COLUMNS, "income"]]


def _read_amazon(raw: Path) -> pd.DataFrame:
    rows = []
    path = raw / "train.ft.txt"
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            tag, _, content = line.partition(" ")
            if tag not in ("__label__1", "__label__2"):
                raise DataError(f"{path}:{lineno} does not start with __label__1/__label__2 (got {tag[:20]!r}).")
            # "title: body"; the first ": " is taken as the separator (titles rarely contain one)
            title, sep, body = content.partition(": ")
            if not sep:
                title, body = "", content
            rows.append((content, 0 if tag == "__label__1" else 1, "test", title, body))
    return pd.DataFrame(rows, columns=["text", "label", "split", "title", "body"])


def _read_arxiv(raw: Path) -> pd.DataFrame:
    path = raw / "arxiv_lite.csv"
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    unknown = sorted(set(df["category"]) - set(ARXIV_CATEGORIES))
    if unknown:
        raise DataError(f"{path}: unknown arXiv categories {unknown}; expected {list(ARXIV_CATEGORIES)}.")
    out = pd.DataFrame({
        # arXiv API abstracts carry hard line breaks: collapse all whitespace runs to one space
        "text": [" ".join(s.split()) for s in df["summary"]],
        "label": df["category"].map({c: i for i, c in enumerate(ARXIV_CATEGORIES)}).astype(np.int64),
        "split": df["split"].replace({"val": "dev"}),
        "category": df["category"],
        "title": [" ".join(s.split()) for s in df["title"]],
        "split_original": df["split"],
        "authors": df["authors"],
        "comment": df["comment"],
    })
    return out


def _read_tsv(path: Path, text_col: str, label_col: str, split: str) -> list[tuple]:
    rows = []
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader)
        if text_col not in header or label_col not in header:
            raise DataError(f"{path}: header {header} lacks {text_col!r}/{label_col!r}.")
        ti, li = header.index(text_col), header.index(label_col)
        for lineno, rec in enumerate(reader, 2):
            if not rec:
                continue
            try:
                rows.append((rec[ti].strip(), int(rec[li]), split))
            except (IndexError, ValueError) as e:
                raise DataError(f"{path}:{lineno}: cannot read text/label ({e}); the file is corrupt.") from e
    return rows


def _read_beer(raw: Path) -> pd.DataFrame:
    rows = []
    for split in ("train", "dev", "test"):
        rows += _read_tsv(raw / f"{split}.tsv", "comment", "label", split)
    return pd.DataFrame(rows, columns=["text", "label", "split"])


def _read_sst2(raw: Path) -> pd.DataFrame:
    rows = []
    for split in ("train", "dev"):
        rows += _read_tsv(raw / f"{split}.tsv", "sentence", "label", split)
    return pd.DataFrame(rows, columns=["text", "label", "split"])


_PARSERS: dict[str, Callable[[Path], pd.DataFrame]] = {
    "imdb": _read_imdb,
    "20newsgroups": _read_20newsgroups,
    "rt-polarity": _read_rt_polarity,
    "adult": _read_adult,
    "amazon-polarity": _read_amazon,
    "arxiv": _read_arxiv,
    "beer": _read_beer,
    "sst2": _read_sst2,
}


def _validate(df: pd.DataFrame, info: DatasetInfo) -> None:
    """Row and label counts must match SOURCES.md (via :data:`DATASETS`)."""
    got = df["split"].value_counts().to_dict()
    if got != info.splits:
        raise DataError(
            f"{info.name}: rows per split {got} differ from the expected {info.splits} (SOURCES.md). "
            f"Fix: re-fetch the raw data (`python -m xaibench.data fetch {info.name} --force`)."
        )
    for split, counts in info.label_counts.items():
        part = df if split == "*" else df.loc[df["split"] == split]
        got_l = part["label"].value_counts().to_dict()
        if {int(k): int(v) for k, v in got_l.items()} != counts:
            raise DataError(
                f"{info.name}: label counts of split {split!r} are {got_l}, expected {counts} (SOURCES.md). "
                f"Fix: re-fetch the raw data (`python -m xaibench.data fetch {info.name} --force`)."
            )
    n_classes = len(info.label_names)
    if df["label"].min() < 0 or df["label"].max() >= n_classes:
        raise DataError(f"{info.name}: labels outside 0..{n_classes - 1}.")


def build(name: str) -> pd.DataFrame:
    """Parse ``data/raw/<name>/`` (fetching it if needed) into the loader frame, without caching."""
    info = dataset_info(name)
    if name == "cebab":
        raise ValueError("CEBaB is built by xaibench.data.cebab.load_cebab(); use load('cebab')")
    raw = ensure_raw(name)
    df = _PARSERS[name](raw)
    df["text"] = df["text"].astype(str)
    df["label"] = df["label"].astype(np.int64)
    df["split"] = df["split"].astype(str)
    df = df.reset_index(drop=True)
    _validate(df, info)
    df.attrs = {_VERSION_ATTR: LOADER_VERSION, "dataset": name}
    return df


def load(name: str, refresh: bool = False) -> pd.DataFrame:
    """The dataset ``name`` as a frame with columns ``text``, ``label``, ``split`` + extras.

    Reads ``data/processed/<name>.parquet`` when present and current; otherwise builds it from
    the raw files (see :func:`build`) and writes the cache atomically.  ``refresh=True`` rebuilds.
    ``load("cebab")`` returns :func:`xaibench.data.cebab.load_cebab()` unchanged.
    """
    if name == "cebab":
        from .cebab import load_cebab  # owned by the CEBaB module; imported lazily

        return load_cebab()
    dataset_info(name)  # validates the name
    cache = processed_path(name)
    if not refresh:
        df = io.read_parquet_cache(cache)  # None when missing or unreadable: rebuilt below
        if df is not None and df.attrs.get(_VERSION_ATTR) == LOADER_VERSION and {"text", "label", "split"} <= set(df.columns):
            return df
    df = build(name)
    io.write_parquet(cache, df)
    return df
