"""Get the raw datasets into ``data/raw/<name>/``, verified, atomically and only once.

:func:`ensure_raw` is the single entry point.  For each dataset it

1. returns at once when ``data/raw/<name>/.complete`` exists and the expected files are there
   (a second call costs a few ``stat`` calls);
2. otherwise copies the files from the local data mirror (``xaibench.paths.data_mirror()``:
   ``$XAIBENCH_DATA_MIRROR``, default ``../shared/data``), checking each against
   ``xaibench/resources/checksums.sha256``, and unpacks the archives;
3. or, when the mirror does not hold the dataset, downloads it from its original public location
   (the URLs below) and checks the digest where one is published.

Everything is assembled in a temporary folder next to ``data/raw/<name>`` and renamed into place
only when every check passed (:func:`xaibench.io.atomic_dir`), so a failure -- no mirror and no
network, a checksum mismatch, a truncated archive -- leaves nothing behind; the temporary folders
of a fetch that was killed outright are removed by the next fetch.  Every failure is one
:class:`DataError` whose message names the file and the fix.

Every file placed in ``data/raw/<name>/`` -- copied or extracted from an archive -- is listed with
its sha256 in ``data/raw/<name>/.manifest.sha256`` (``sha256sum`` format, written at extraction),
so ``fetch --verify`` notices an edited, deleted or added file anywhere in the folder and
re-extracts the dataset (:func:`fetch_raw` reports it as ``repaired``).

Caveat: the mirror and the original distributions are not always byte-identical.  The mirror's
Adult files carry an extra CSV header line (see ``shared/data/SOURCES.md``); the mirror stores
IMDb and 20 Newsgroups as one archive per split where the originals ship one archive for both,
and rt-polarity as the two bare files where Cornell ships a tarball.  Mirror files are therefore
verified against the mirror checksum list, downloads against the digests the original publishers
(or the pinned GitHub commits) imply: sha256 for the IMDb and 20 Newsgroups tarballs and for
the GitHub raw files, the UCI md5 for ``adult.data``/``adult.test``.  The Cornell tarball and
``adult.names`` have no published digest; for them only the unpacked layout (file and line
counts) is checked.  The loaders accept both forms (e.g. Adult with or without the header).
"""
from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import shutil
import tarfile
import time
import urllib.request
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterator

from .. import io, paths
from ..progress import progress
from ..utils import sha256_file

__all__ = [
    "DataError",
    "MirrorFile",
    "Download",
    "Expect",
    "RawSpec",
    "RAW_SPECS",
    "raw_spec",
    "ensure_raw",
    "fetch_raw",
    "FetchReport",
    "remove_leftovers",
    "verify_raw",
    "is_complete",
    "mirror_checksums",
    "MARKER",
]

MARKER = ".complete"
MANIFEST = ".manifest.sha256"
#: bump when the layout produced in ``data/raw/<name>`` changes: older folders are rebuilt.
RAW_LAYOUT_VERSION = 1
_DOWNLOAD_TIMEOUT_S = 60
_SKIP_NAMES = {".DS_Store", "Thumbs.db"}


class DataError(RuntimeError):
    """A dataset could not be obtained or read; the message says which file and how to fix it."""


# --------------------------------------------------------------------------------------------
# dataset descriptions
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MirrorFile:
    """A file of the local mirror, ``<mirror>/<relpath>`` (``relpath`` as in checksums.sha256)."""

    relpath: str
    unpack: bool = False  # archive to extract into data/raw/<name>/; else copied under its basename
    strip: str = ""  # leading folder of archive members to drop ("birds/")


@dataclass(frozen=True)
class Download:
    """A file at its original public location."""

    url: str
    sha256: str | None = None  # published / pinned digest of the downloaded bytes
    md5: str | None = None  # used where only an md5 is known (UCI Adult)
    unpack: bool = False
    strip: str = ""  # leading folder of archive members to drop ("rt-polaritydata/")
    keep: tuple[str, ...] = ()  # member-name prefixes (after ``strip``) to extract; () = all

    @property
    def filename(self) -> str:
        return self.url.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Expect:
    """Something that must exist in ``data/raw/<name>/`` after fetching."""

    path: str
    files: int | None = None  # number of regular files below ``path`` (a folder)
    lines: int | None = None  # number of newline characters in ``path`` (a file)


@dataclass(frozen=True)
class RawSpec:
    name: str
    mirror_folder: str
    mirror: tuple[MirrorFile, ...]
    upstream: tuple[Download, ...]
    expect: tuple[Expect, ...]
    note: str = ""


def _gh(repo: str, commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


_SST2 = ("brunnurs/binary-classification-bert", "35e1628db50472679176dd31b992534a3866a86e")
_BEER = ("printfoo/factcheck-acl2021", "d941c012f9c5d36630df6394b1a221f6aa2aeeff")
_UCI_ADULT = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult"
_BIRDS = ("serizba/vision", "16a8a47ea88abb31d9b61b81dbbe09347bf72385")
#: the eight CUB species the attribution ground-truth experiments use, with their image counts
_BIRD_CLASSES = {"Bohemian_Waxwing": 60, "Cedar_Waxwing": 60, "Eared_Grebe": 60, "Horned_Grebe": 60,
                 "Henslow_Sparrow": 60, "Le_Conte_Sparrow": 59, "Indigo_Bunting": 60, "Lazuli_Bunting": 58}

RAW_SPECS: dict[str, RawSpec] = {
    "cebab": RawSpec(
        name="cebab",
        mirror_folder="cebab",
        mirror=(MirrorFile("cebab/CEBaB-v1.1.zip", unpack=True),),
        upstream=(
            Download(
                _gh("CEBaBing/CEBaB", "2a5d2896bd18a5cc30b95e89a45095241954577d", "CEBaB-v1.1.zip"),
                sha256="afe8ebcb5d18f33297512cd5c7e05f1590b82fb0683367042454c3eda7d5c6ae",
                unpack=True,
            ),
        ),
        expect=tuple(
            Expect(f"CEBaB-v1.1/{s}.json")
            for s in ("train_exclusive", "train_inclusive", "train_observational", "dev", "test")
        ),
        note="CEBaB v1.1 (Abraham et al. 2022), the authors' zip; __MACOSX/.DS_Store entries are skipped.",
    ),
    "imdb": RawSpec(
        name="imdb",
        mirror_folder="imdb",
        mirror=(
            MirrorFile("imdb/aclImdb_train.tar.gz", unpack=True),
            MirrorFile("imdb/aclImdb_test.tar.gz", unpack=True),
        ),
        upstream=(
            Download(
                "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz",
                sha256="c40f74a18d3b61f90feba1e17730e0d38e8b97c05fde7008942e91923d1658fe",
                unpack=True,
                keep=(
                    "aclImdb/README",
                    "aclImdb/train/pos/",
                    "aclImdb/train/neg/",
                    "aclImdb/test/pos/",
                    "aclImdb/test/neg/",
                    "aclImdb/test/urls_pos.txt",
                    "aclImdb/test/urls_neg.txt",
                ),
            ),
        ),
        expect=tuple(
            Expect(f"aclImdb/{s}/{c}", files=12500) for s in ("train", "test") for c in ("pos", "neg")
        ),
        note="aclImdb v1.0 (Maas et al. 2011), labelled train and test splits.",
    ),
    "20newsgroups": RawSpec(
        name="20newsgroups",
        mirror_folder="20newsgroups-bydate",
        mirror=(
            MirrorFile("20newsgroups-bydate/20news-bydate-train.tar.gz", unpack=True),
            MirrorFile("20newsgroups-bydate/20news-bydate-test.tar.gz", unpack=True),
        ),
        upstream=(
            Download(
                "http://qwone.com/~jason/20Newsgroups/20news-bydate.tar.gz",
                sha256="8f1b2514ca22a5ade8fbb9cfa5727df95fa587f4c87b786e15c759fa66d95610",
                unpack=True,
            ),
        ),
        expect=(Expect("20news-bydate-train", files=11314), Expect("20news-bydate-test", files=7532)),
        note="20 Newsgroups, Rennie's 'bydate' split (the archive scikit-learn downloads).",
    ),
    "rt-polarity": RawSpec(
        name="rt-polarity",
        mirror_folder="rt-polarity",
        mirror=(MirrorFile("rt-polarity/rt-polarity.pos"), MirrorFile("rt-polarity/rt-polarity.neg")),
        upstream=(
            Download(
                "http://www.cs.cornell.edu/people/pabo/movie-review-data/rt-polaritydata.tar.gz",
                unpack=True,
                strip="rt-polaritydata/",
                keep=("rt-polarity.pos", "rt-polarity.neg"),
            ),
        ),
        expect=(Expect("rt-polarity.pos", lines=5331), Expect("rt-polarity.neg", lines=5331)),
        note="Sentence polarity dataset v1.0 (Pang & Lee 2005), Latin-1 encoded.",
    ),
    "adult": RawSpec(
        name="adult",
        mirror_folder="adult",
        mirror=(
            MirrorFile("adult/adult.data"),
            MirrorFile("adult/adult.test"),
            MirrorFile("adult/adult.names"),
        ),
        upstream=(
            Download(f"{_UCI_ADULT}/adult.data", md5="5d7c39d7b8804f071cdd1f2a7c460872"),
            Download(f"{_UCI_ADULT}/adult.test", md5="35238206dfdf7f1fe215bbb874adecdc"),
            Download(f"{_UCI_ADULT}/adult.names"),
        ),
        expect=(Expect("adult.data"), Expect("adult.test"), Expect("adult.names")),
        note="UCI Adult / Census Income. The mirror copy has an added CSV header line; UCI's has none.",
    ),
    "amazon-polarity": RawSpec(
        name="amazon-polarity",
        mirror_folder="amazon-polarity",
        mirror=(MirrorFile("amazon-polarity/train.ft.txt"),),
        upstream=(
            Download(
                _gh("MarkTaylorTsai/machine_learning", "44f862634469cb5a2bf21dd3e2a6846a20562f76", "train.ft.txt"),
                sha256="26a281574ab1d8ce382af5f1cedd5cbf32743d07401121f0e61c9c7befa49dcb",
            ),
        ),
        expect=(Expect("train.ft.txt", lines=6459),),
        note="First 6,459 reviews of the Amazon polarity TEST split (fastText format), despite the file name.",
    ),
    "arxiv": RawSpec(
        name="arxiv",
        mirror_folder="arxiv",
        mirror=(MirrorFile("arxiv/arxiv_lite.csv"),),
        upstream=(
            Download(
                _gh(
                    "AmirYunus/IS6751_project_arxiv_classifier",
                    "29bdc2efe2a9d948ad8b4b3293e5315e4825de33",
                    "data/arxiv_lite.csv",
                ),
                sha256="5ff82062b51602db9123dcee36303fdb57453152589efe22e626363ccd15baef",
            ),
        ),
        expect=(Expect("arxiv_lite.csv"),),
        note="1,550 real arXiv abstracts with top-level category and the repo author's train/val/test split.",
    ),
    "beer": RawSpec(
        name="beer",
        mirror_folder="beer",
        mirror=tuple(MirrorFile(f"beer/{s}.tsv") for s in ("train", "dev", "test")),
        upstream=(
            Download(_gh(*_BEER, "data/beer_reviews/train.tsv"),
                     sha256="4690831d4933146e7ebd2a627739f202e65556a53c4c2584b94b9d99b2550e8b"),
            Download(_gh(*_BEER, "data/beer_reviews/dev.tsv"),
                     sha256="c27b0a2c5c82d29f70f0709d7e5281e5c5eb6ee26b3fc2b444d8db7b6aaef577"),
            Download(_gh(*_BEER, "data/beer_reviews/test.tsv"),
                     sha256="05bfda6a78d3687e03b5d5f88539ad6069c646a9226ddae4108eb6a534f03129"),
        ),
        expect=(Expect("train.tsv", lines=12009), Expect("dev.tsv", lines=1373), Expect("test.tsv", lines=1699)),
        note="BeerAdvocate appearance aspect (Lei et al. 2016 files, cleaned single-aspect version).",
    ),
    "birds": RawSpec(
        name="birds",
        mirror_folder="birds",
        mirror=(MirrorFile("birds/birds.tar.gz", unpack=True, strip="birds/"),),
        upstream=(
            # GitHub's archive of the pinned commit (not byte-stable, so no digest; the layout is checked)
            Download(f"https://codeload.github.com/{_BIRDS[0]}/tar.gz/{_BIRDS[1]}", unpack=True,
                     strip=f"vision-{_BIRDS[1]}/ex03/task2/bird_dataset/images/"),
        ),
        expect=tuple(Expect(c, files=n) for c, n in _BIRD_CLASSES.items()),
        note="CUB-200-2011 photographs, 100-species subset at 227x227 (SOURCES.md section 10), one folder per class.",
    ),
    "sst2": RawSpec(
        name="sst2",
        mirror_folder="sst2",
        mirror=(MirrorFile("sst2/train.tsv"), MirrorFile("sst2/dev.tsv")),
        upstream=(
            Download(_gh(*_SST2, "data/SST2/train.tsv"),
                     sha256="5c47819a1d04cfabc7afcc79a919c97b0b367101ad42d3ff148d67bf501384c2"),
            Download(_gh(*_SST2, "data/SST2/dev.tsv"),
                     sha256="54a9c12c77e402fc14d6a66a506f24d999f596b0176eb777c972cccc2f9cc4b0"),
        ),
        expect=(Expect("train.tsv", lines=67350), Expect("dev.tsv", lines=873)),
        note="SST-2, GLUE version (train and dev; the GLUE test split has no labels).",
    ),
}


def raw_spec(name: str) -> RawSpec:
    """The :class:`RawSpec` of dataset ``name``; a ``ValueError`` lists the known names."""
    try:
        return RAW_SPECS[name]
    except KeyError:
        raise ValueError(f"unknown dataset {name!r}; choose one of {sorted(RAW_SPECS)}") from None


_CHECKSUMS: dict[str, str] | None = None


def mirror_checksums() -> dict[str, str]:
    """``{relpath: sha256}`` from ``xaibench/resources/checksums.sha256`` (mirror-relative paths)."""
    global _CHECKSUMS
    if _CHECKSUMS is None:
        path = paths.resources_dir() / "checksums.sha256"
        out: dict[str, str] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            digest, rel = line.split(maxsplit=1)
            out[rel.lstrip("*")] = digest.lower()
        _CHECKSUMS = out
    return _CHECKSUMS


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def _digest(path: Path, algo: str) -> str:
    if algo == "sha256":
        return sha256_file(path)
    h = hashlib.new(algo)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _count_lines(path: Path) -> int:
    n = 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            n += block.count(b"\n")
    return n


def _count_files(folder: Path) -> int:
    return sum(1 for p in folder.rglob("*") if p.is_file())


def _check_expect(spec: RawSpec, root: Path, source: str, counts: bool = True) -> None:
    """Raise :class:`DataError` unless every :class:`Expect` of ``spec`` holds under ``root``."""
    for ex in spec.expect:
        p = root / ex.path
        if not p.exists():
            raise DataError(
                f"{spec.name}: {ex.path} is missing after fetching from {source}. "
                f"Fix: check that the source holds the complete dataset, then run "
                f"`python -m xaibench.data fetch {spec.name} --force`."
            )
        if not counts:
            continue
        if ex.files is not None:
            n = _count_files(p)
            if n != ex.files:
                raise DataError(
                    f"{spec.name}: {ex.path} holds {n} files, expected {ex.files} (from {source}); "
                    "the archive is incomplete. Fix: replace it with a complete copy and run "
                    f"`python -m xaibench.data fetch {spec.name} --force`."
                )
        if ex.lines is not None:
            n = _count_lines(p)
            if n != ex.lines:
                raise DataError(
                    f"{spec.name}: {ex.path} has {n} lines, expected {ex.lines} (from {source}); "
                    "the file is truncated or not the expected version. Fix: replace it with the "
                    f"original and run `python -m xaibench.data fetch {spec.name} --force`."
                )


def _fingerprint(spec: RawSpec) -> str:
    return hashlib.sha256(f"{RAW_LAYOUT_VERSION}|{spec.name}|{spec.expect!r}".encode()).hexdigest()[:16]


def _read_manifest(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            digest, rel = line.split("  ", 1)
            out[rel] = digest
    return out


def _write_manifest(path: Path, files: dict[str, str]) -> None:
    path.write_text("".join(f"{files[rel]}  {rel}\n" for rel in sorted(files)), encoding="utf-8")


def verify_raw(name: str, verify: bool = True) -> list[str]:
    """What is wrong with ``data/raw/<name>/`` (``[]`` when it is a finished fetch).

    The fast check (``verify=False``) looks at the marker and the expected paths.  ``verify=True``
    also recounts files/lines and compares every file against the manifest written at fetch time
    (edited, missing and unexpected files are all reported).
    """
    spec = raw_spec(name)
    dest = paths.raw_dir() / name
    try:
        info = json.loads((dest / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [f"{dest} has no valid {MARKER} marker (never fetched, or interrupted)"]
    if info.get("fingerprint") != _fingerprint(spec):
        return [f"{dest} was fetched for an older layout"]
    try:
        _check_expect(spec, dest, "data/raw", counts=verify)
    except DataError as e:
        return [str(e).split(" Fix:")[0]]
    if not verify:
        return []
    manifest_path = dest / MANIFEST
    if not manifest_path.is_file():
        return [f"{dest} has no {MANIFEST} (fetched by an older xaibench): its files cannot be checked"]
    expected = _read_manifest(manifest_path)
    problems = []
    for rel, digest in expected.items():
        p = dest / rel
        if not p.is_file():
            problems.append(f"{rel} is missing")
        elif sha256_file(p) != digest:
            problems.append(f"{rel} differs from the fetched file (sha256 mismatch)")
    extra = sorted(str(p.relative_to(dest)) for p in dest.rglob("*")
                   if p.is_file() and p.name not in (MARKER, MANIFEST)
                   and str(p.relative_to(dest)) not in expected)
    problems += [f"{rel} was not fetched (unexpected file)" for rel in extra]
    return problems


def is_complete(name: str, verify: bool = False) -> bool:
    """Whether ``data/raw/<name>/`` is a finished fetch of the current layout.

    Fast by default (marker + existence of the expected paths).  ``verify=True`` also recounts
    files/lines and re-hashes every file against the manifest (:func:`verify_raw`).
    """
    return not verify_raw(name, verify=verify)


@contextlib.contextmanager
def _raw_lock() -> Iterator[None]:
    """Serialise fetches between processes (flock on the ``data/raw`` folder itself)."""
    raw = paths.raw_dir()
    raw.mkdir(parents=True, exist_ok=True)
    with io.file_lock(raw):
        yield


def _safe_member(name: str, strip: str, keep: tuple[str, ...]) -> str | None:
    """Map an archive member name to its relative output path, or ``None`` to skip it."""
    name = name.replace("\\", "/")
    while name.startswith("./"):
        name = name[2:]
    if strip:
        if not name.startswith(strip):
            return None
        name = name[len(strip):]
    parts = PurePosixPath(name).parts
    if not parts or name.startswith("/") or ".." in parts:
        return None
    if parts[0] == "__MACOSX" or parts[-1] in _SKIP_NAMES or parts[-1].startswith("._"):
        return None
    if keep and not any(name == k or name.startswith(k) for k in keep):
        return None
    return name


_ARCHIVE_ERRORS = (tarfile.TarError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error,
                   gzip.BadGzipFile)


def _unpack(archive: Path, dest: Path, strip: str = "", keep: tuple[str, ...] = (),
            label: str | None = None, fix: str = "") -> dict[str, str]:
    """Extract regular files of a ``.tar(.gz)`` or ``.zip`` into ``dest``; returns
    ``{relpath: sha256}`` of the extracted files (hashed while writing, for the manifest).

    Skips ``__MACOSX``/``.DS_Store``/AppleDouble entries, links and unsafe paths.  A truncated
    or corrupt archive raises :class:`DataError`.
    """
    label = label or str(archive)
    digests: dict[str, str] = {}

    def _write(rel: str, src) -> None:
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        h = hashlib.sha256()
        with open(out, "wb") as fh:
            for block in iter(lambda: src.read(1 << 20), b""):
                h.update(block)
                fh.write(block)
        digests[rel] = h.hexdigest()

    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    if info.is_dir():
                        continue
                    rel = _safe_member(info.filename, strip, keep)
                    if rel is None:
                        continue
                    with zf.open(info) as src:
                        _write(rel, src)
        else:
            with tarfile.open(archive, mode="r:*") as tf:
                for member in tf:
                    if not member.isfile():
                        continue
                    rel = _safe_member(member.name, strip, keep)
                    if rel is None:
                        continue
                    src = tf.extractfile(member)
                    if src is None:  # pragma: no cover - isfile() members always have data
                        continue
                    with src:
                        _write(rel, src)
    except _ARCHIVE_ERRORS as e:
        raise DataError(
            f"archive {label} is corrupt or truncated ({type(e).__name__}: {e}). "
            f"Fix: {fix or 'replace it with a complete copy'}, then fetch again."
        ) from e
    if not digests:
        raise DataError(
            f"archive {label} holds none of the expected files"
            f"{' (members under ' + strip + ')' if strip else ''}. "
            f"Fix: {fix or 'check that it is the right archive'}."
        )
    return digests


def _download(url: str, dest: Path, timeout: float = _DOWNLOAD_TIMEOUT_S) -> None:
    """Stream ``url`` to ``dest`` (tests monkeypatch this function to simulate the network)."""
    req = urllib.request.Request(url, headers={"User-Agent": "xaibench-data-fetch/0.1"})
    with urllib.request.urlopen(req, timeout=timeout) as resp, open(dest, "wb") as fh:
        total = resp.headers.get("Content-Length")
        bar = progress(total=int(total) if total else None, unit="B", unit_scale=True,
                       desc=url.rsplit("/", 1)[-1])
        try:
            for block in iter(lambda: resp.read(1 << 20), b""):
                fh.write(block)
                bar.update(len(block))
        finally:
            bar.close()


# --------------------------------------------------------------------------------------------
# the two sources
# --------------------------------------------------------------------------------------------
def _mirror_missing(spec: RawSpec, mirror: Path | None) -> list[str]:
    if mirror is None:
        return [m.relpath for m in spec.mirror]
    return [m.relpath for m in spec.mirror if not (mirror / m.relpath).is_file()]


def _from_mirror(spec: RawSpec, mirror: Path, tmp: Path) -> dict[str, str]:
    """Copy/unpack the mirror files into ``tmp``; returns ``{relpath: sha256}`` of every file placed."""
    sums = mirror_checksums()
    copied: dict[str, str] = {}
    for mf in spec.mirror:
        src = mirror / mf.relpath
        expected = sums.get(mf.relpath)
        if expected is None:  # a spec entry without a checksum is a programming error
            raise DataError(
                f"no checksum for {mf.relpath} in xaibench/resources/checksums.sha256. "
                f"Fix: add its line from the mirror's SHA256SUMS."
            )
        fix_mirror = (
            f"replace {src} with an intact copy (its sha256 must be {expected}; compare with the "
            f"mirror's SHA256SUMS), or skip the mirror and download the original: "
            f"`XAIBENCH_DATA_MIRROR= python -m xaibench.data fetch {spec.name} --force` (an empty value "
            f"disables the mirror; unsetting the variable falls back to the default ../shared/data)"
        )
        if mf.unpack:
            actual = sha256_file(src)
            if actual != expected:
                raise DataError(
                    f"checksum mismatch for {src}: sha256 {actual}, expected {expected} -- the archive "
                    f"is truncated, corrupt or a different version. Fix: {fix_mirror}."
                )
            copied.update(_unpack(src, tmp, strip=mf.strip, label=str(src), fix=fix_mirror))
        else:
            out = tmp / PurePosixPath(mf.relpath).name
            shutil.copyfile(src, out)
            actual = sha256_file(out)
            if actual != expected:
                raise DataError(
                    f"checksum mismatch for {src}: sha256 {actual}, expected {expected} -- the file "
                    f"is truncated, corrupt or a different version. Fix: {fix_mirror}."
                )
            copied[out.name] = actual
    return copied


def _from_upstream(spec: RawSpec, tmp: Path, mirror: Path | None, missing: list[str]) -> dict[str, str]:
    """Download the original files into ``tmp``; returns ``{relpath: sha256}`` of every file placed."""
    dl_dir = tmp / ".downloads"
    dl_dir.mkdir()
    if mirror is None:
        why_not_mirror = "no data mirror is configured (XAIBENCH_DATA_MIRROR unset and ../shared/data absent)"
    else:
        why_not_mirror = f"the data mirror {mirror} lacks {', '.join(missing)}"
    fix_net = (
        f"point XAIBENCH_DATA_MIRROR at a folder holding {', '.join(m.relpath for m in spec.mirror)} "
        f"(the project's shared/data), or run where the network is reachable"
    )
    copied: dict[str, str] = {}
    for d in spec.upstream:
        target = dl_dir / d.filename
        try:
            _download(d.url, target)
        except Exception as e:  # noqa: BLE001 - any network/OS failure ends up as one clear message
            raise DataError(
                f"cannot get {spec.name}: {why_not_mirror}, and downloading {d.url} failed "
                f"({type(e).__name__}: {e}). Fix: {fix_net}."
            ) from e
        for algo, expected in (("sha256", d.sha256), ("md5", d.md5)):
            if expected is None:
                continue
            actual = _digest(target, algo)
            if actual != expected:
                raise DataError(
                    f"checksum mismatch for {d.filename} downloaded from {d.url}: {algo} {actual}, "
                    f"expected {expected} -- the download is truncated or the file changed upstream. "
                    f"Fix: retry, or {fix_net}."
                )
        if d.unpack:
            copied.update(_unpack(target, tmp, strip=d.strip, keep=d.keep, label=f"{d.filename} (from {d.url})",
                                  fix=f"retry the download, or {fix_net}"))
        else:
            out = tmp / d.filename
            os.replace(target, out)
            copied[d.filename] = sha256_file(out)
    shutil.rmtree(dl_dir)
    return copied


# --------------------------------------------------------------------------------------------
# public entry point
# --------------------------------------------------------------------------------------------
def remove_leftovers() -> list[Path]:
    """Remove the temporary folders (``data/raw/.<name>.*.tmp``, ``.<name>.old``) of fetches that
    were killed before they could clean up; safe while other processes fetch (it takes the lock)."""
    with _raw_lock():
        return io.remove_stale_tmp(paths.raw_dir())


@dataclass
class FetchReport:
    """What :func:`fetch_raw` did: ``action`` is ``present`` (complete, not checked), ``verified``
    (complete and every file matches its manifest), ``fetched`` (it was missing or incomplete),
    ``repaired`` (it was complete but ``--verify`` found ``problems``, so it was fetched again) or
    ``refetched`` (``force``).  ``cleaned`` lists leftovers of interrupted fetches that were removed."""

    name: str
    path: Path
    action: str
    problems: list[str]
    cleaned: list[Path]


def ensure_raw(name: str, force: bool = False, verify: bool = False) -> Path:
    """Make ``data/raw/<name>/`` hold the verified raw files of dataset ``name``; return that path.

    ``force`` re-fetches even when the folder is complete; ``verify`` re-checks counts and
    checksums of a complete folder (and re-fetches when they no longer match).  Raises
    :class:`DataError` (message naming the file and the fix) when the data cannot be obtained;
    ``data/raw`` is then left as it was.  :func:`fetch_raw` also says what it did.
    """
    return fetch_raw(name, force=force, verify=verify).path


def fetch_raw(name: str, force: bool = False, verify: bool = False) -> FetchReport:
    """:func:`ensure_raw`, returning a :class:`FetchReport`."""
    spec = raw_spec(name)
    dest = paths.raw_dir() / name
    if not force and not verify_raw(name, verify=verify):
        return FetchReport(name, dest, "verified" if verify else "present", [], [])
    with _raw_lock():
        # fetches are serialised by the lock, so any temporary folder left in data/raw now is the
        # remains of a killed fetch (atomic_dir cleans up after exceptions, not after SIGKILL)
        cleaned = io.remove_stale_tmp(paths.raw_dir())
        problems = [] if force else verify_raw(name, verify=verify)
        if not force and not problems:  # another process finished it meanwhile
            return FetchReport(name, dest, "verified" if verify else "present", [], cleaned)
        was_fetched = not force and (dest / MARKER).is_file()
        mirror = paths.data_mirror()
        missing = _mirror_missing(spec, mirror)
        t0 = time.perf_counter()
        with io.atomic_dir(dest) as tmp:
            os.chmod(tmp, 0o755)  # mkdtemp makes it 0700; the data is meant to be shared
            if not missing:
                assert mirror is not None
                source = f"mirror {mirror / spec.mirror_folder}"
                files = _from_mirror(spec, mirror, tmp)
            else:
                source = "upstream " + ", ".join(d.url for d in spec.upstream)
                files = _from_upstream(spec, tmp, mirror, missing)
            _check_expect(spec, tmp, source)
            _write_manifest(tmp / MANIFEST, files)
            marker = {
                "name": name,
                "fingerprint": _fingerprint(spec),
                "source": source,
                "n_files": len(files),
                "manifest": MANIFEST,
                "manifest_sha256": sha256_file(tmp / MANIFEST),
                "seconds": round(time.perf_counter() - t0, 2),
                "fetched_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            (tmp / MARKER).write_text(json.dumps(marker, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    action = "refetched" if force else ("repaired" if was_fetched else "fetched")
    return FetchReport(name, dest, action, problems, cleaned)
