"""Raw-data fetching: mirror copy, checksums, archives, download fallback, atomicity, idempotence.

Every test runs in a scratch project (``XAIBENCH_HOME=tmp_path/home``) with a scratch mirror
(``XAIBENCH_DATA_MIRROR=tmp_path/mirror``) holding copies of the real mirror's small files, so the
real ``data/raw`` is never touched.  The network is never used: ``fetch._download`` is replaced.
"""
from __future__ import annotations

import gzip
import hashlib
import io as _io
import json
import os
import shutil
import tarfile
import time
import urllib.error
import zipfile
from pathlib import Path

import pytest

from xaibench import paths
from xaibench.data import fetch
from xaibench.data.fetch import DataError, ensure_raw, is_complete

REAL_MIRROR = paths.data_mirror()
needs_mirror = pytest.mark.skipif(
    REAL_MIRROR is None or not (REAL_MIRROR / "rt-polarity").exists(),
    reason="the data mirror (../shared/data or $XAIBENCH_DATA_MIRROR) is not available",
)


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A scratch project root and an (initially empty) scratch mirror."""
    home, mirror = tmp_path / "home", tmp_path / "mirror"
    home.mkdir()
    mirror.mkdir()
    monkeypatch.setenv("XAIBENCH_HOME", str(home))
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", str(mirror))
    return home, mirror


def copy_to_mirror(mirror: Path, *relpaths: str) -> None:
    for rel in relpaths:
        (mirror / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REAL_MIRROR / rel, mirror / rel)


def raw_entries() -> list[str]:
    raw = paths.raw_dir()
    return sorted(p.name for p in raw.iterdir()) if raw.exists() else []


def assert_nothing_left(name: str) -> None:
    """No dataset folder and no temporary leftovers in data/raw after a failure."""
    left = raw_entries()
    assert name not in left
    assert not [e for e in left if e.startswith(".")], left


def no_network(url, dest, timeout=None):
    raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")


def rt_tarball(pos: bytes, neg: bytes) -> bytes:
    """A tarball in the layout of Cornell's rt-polaritydata.tar.gz."""
    buf = _io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in (
            ("rt-polaritydata.README.1.0.txt", b"readme\n"),
            ("rt-polaritydata/rt-polarity.neg", neg),
            ("rt-polaritydata/rt-polarity.pos", pos),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, _io.BytesIO(data))
    return buf.getvalue()


# ------------------------------------------------------------------------------------------
@needs_mirror
def test_mirror_copy_verifies_and_marks_complete(env):
    _, mirror = env
    copy_to_mirror(mirror, "rt-polarity/rt-polarity.pos", "rt-polarity/rt-polarity.neg")
    dest = ensure_raw("rt-polarity")
    assert dest == paths.raw_dir() / "rt-polarity"
    for f in ("rt-polarity.pos", "rt-polarity.neg"):
        assert (dest / f).read_bytes() == (REAL_MIRROR / "rt-polarity" / f).read_bytes()
    marker = json.loads((dest / fetch.MARKER).read_text())
    assert marker["source"].startswith("mirror")
    manifest = (dest / fetch.MANIFEST).read_text().splitlines()
    assert f'{fetch.mirror_checksums()["rt-polarity/rt-polarity.pos"]}  rt-polarity.pos' in manifest
    assert marker["n_files"] == 2 == len(manifest)
    assert raw_entries() == ["rt-polarity"]  # no temp folders left
    assert is_complete("rt-polarity") and is_complete("rt-polarity", verify=True)


@needs_mirror
def test_second_call_is_fast_and_does_not_copy(env, monkeypatch):
    _, mirror = env
    copy_to_mirror(mirror, "rt-polarity/rt-polarity.pos", "rt-polarity/rt-polarity.neg")
    dest = ensure_raw("rt-polarity")
    mtime = (dest / fetch.MARKER).stat().st_mtime_ns

    def boom(*a, **k):
        raise AssertionError("a complete folder must not be fetched again")

    monkeypatch.setattr(fetch, "_from_mirror", boom)
    monkeypatch.setattr(fetch, "_from_upstream", boom)
    t0 = time.perf_counter()
    assert ensure_raw("rt-polarity") == dest
    assert time.perf_counter() - t0 < 0.5
    assert (dest / fetch.MARKER).stat().st_mtime_ns == mtime


@needs_mirror
def test_incomplete_folder_is_fetched_again(env):
    _, mirror = env
    copy_to_mirror(mirror, "rt-polarity/rt-polarity.pos", "rt-polarity/rt-polarity.neg")
    dest = ensure_raw("rt-polarity")
    (dest / "rt-polarity.pos").unlink()
    assert not is_complete("rt-polarity")
    ensure_raw("rt-polarity")
    assert (dest / "rt-polarity.pos").read_bytes() == (REAL_MIRROR / "rt-polarity/rt-polarity.pos").read_bytes()


@needs_mirror
def test_verify_detects_edited_file(env):
    _, mirror = env
    copy_to_mirror(mirror, "rt-polarity/rt-polarity.pos", "rt-polarity/rt-polarity.neg")
    dest = ensure_raw("rt-polarity")
    data = bytearray((dest / "rt-polarity.neg").read_bytes())
    data[10] ^= 0x01  # same length and line count, different bytes
    (dest / "rt-polarity.neg").write_bytes(bytes(data))
    assert is_complete("rt-polarity")  # the fast check only looks at the marker and the paths
    assert not is_complete("rt-polarity", verify=True)
    ensure_raw("rt-polarity", verify=True)  # repairs it
    assert is_complete("rt-polarity", verify=True)


@needs_mirror
def test_checksum_mismatch_in_mirror(env):
    _, mirror = env
    copy_to_mirror(mirror, "rt-polarity/rt-polarity.pos", "rt-polarity/rt-polarity.neg")
    bad = mirror / "rt-polarity/rt-polarity.pos"
    data = bytearray(bad.read_bytes())
    data[100] ^= 0xFF
    bad.write_bytes(bytes(data))
    with pytest.raises(DataError) as ei:
        ensure_raw("rt-polarity")
    msg = str(ei.value)
    assert "checksum mismatch" in msg and str(bad) in msg
    assert fetch.mirror_checksums()["rt-polarity/rt-polarity.pos"] in msg  # says what it should be
    assert "Fix:" in msg
    # the fix must not point back at the same mirror ("unset" falls back to ../shared/data)
    assert "unset XAIBENCH_DATA_MIRROR to download" not in msg
    assert "`XAIBENCH_DATA_MIRROR= python -m xaibench.data fetch rt-polarity --force`" in msg
    assert_nothing_left("rt-polarity")


@needs_mirror
def test_failed_refetch_keeps_the_previous_good_folder(env):
    _, mirror = env
    copy_to_mirror(mirror, "rt-polarity/rt-polarity.pos", "rt-polarity/rt-polarity.neg")
    dest = ensure_raw("rt-polarity")
    before = (dest / "rt-polarity.pos").read_bytes()
    (mirror / "rt-polarity/rt-polarity.pos").write_bytes(before[:-50])
    with pytest.raises(DataError, match="checksum mismatch"):
        ensure_raw("rt-polarity", force=True)
    assert (dest / "rt-polarity.pos").read_bytes() == before
    assert raw_entries() == ["rt-polarity"]


@needs_mirror
def test_truncated_archive_in_mirror(env):
    _, mirror = env
    copy_to_mirror(mirror, "cebab/CEBaB-v1.1.zip")
    z = mirror / "cebab/CEBaB-v1.1.zip"
    z.write_bytes(z.read_bytes()[: z.stat().st_size // 2])
    with pytest.raises(DataError) as ei:
        ensure_raw("cebab")
    msg = str(ei.value)
    assert str(z) in msg and "truncated" in msg and "checksum mismatch" in msg
    assert_nothing_left("cebab")


@needs_mirror
def test_cebab_zip_layout(env):
    _, mirror = env
    copy_to_mirror(mirror, "cebab/CEBaB-v1.1.zip")
    dest = ensure_raw("cebab")
    files = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert files == [fetch.MARKER, fetch.MANIFEST] + [
        f"CEBaB-v1.1/{s}.json" for s in ("dev", "test", "train_exclusive", "train_inclusive", "train_observational")
    ]  # no __MACOSX, no .DS_Store


def test_truncated_archive_download(env, monkeypatch):
    """A truncated tarball without a published digest is caught when unpacking."""
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", "")  # no mirror at all
    blob = rt_tarball(b"good .\n" * 5331, b"bad .\n" * 5331)

    def truncated(url, dest, timeout=None):
        Path(dest).write_bytes(blob[: len(blob) // 2])

    monkeypatch.setattr(fetch, "_download", truncated)
    with pytest.raises(DataError) as ei:
        ensure_raw("rt-polarity")
    msg = str(ei.value)
    assert "corrupt or truncated" in msg and "rt-polaritydata.tar.gz" in msg and "Fix:" in msg
    assert_nothing_left("rt-polarity")


def test_no_mirror_and_no_network(env, monkeypatch):
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", "")
    monkeypatch.setattr(fetch, "_download", no_network)
    with pytest.raises(DataError) as ei:
        ensure_raw("sst2")
    msg = str(ei.value)
    assert "no data mirror is configured" in msg
    assert "https://raw.githubusercontent.com/brunnurs/binary-classification-bert/" in msg
    assert "XAIBENCH_DATA_MIRROR" in msg and "sst2/train.tsv" in msg
    assert "URLError" in msg
    assert_nothing_left("sst2")


def test_mirror_without_the_dataset_tries_download(env, monkeypatch):
    _, mirror = env
    monkeypatch.setattr(fetch, "_download", no_network)
    with pytest.raises(DataError) as ei:
        ensure_raw("imdb")
    msg = str(ei.value)
    assert f"the data mirror {mirror} lacks imdb/aclImdb_train.tar.gz" in msg
    assert "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz" in msg
    assert_nothing_left("imdb")


def test_download_checksum_mismatch(env, monkeypatch):
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", "")

    def wrong(url, dest, timeout=None):
        Path(dest).write_bytes(b"sentence\tlabel\nnot the real file\t1\n")

    monkeypatch.setattr(fetch, "_download", wrong)
    with pytest.raises(DataError) as ei:
        ensure_raw("sst2")
    msg = str(ei.value)
    assert "checksum mismatch for train.tsv downloaded from https://raw.githubusercontent.com/" in msg
    assert "5c47819a1d04cfabc7afcc79a919c97b0b367101ad42d3ff148d67bf501384c2" in msg
    assert_nothing_left("sst2")


@needs_mirror
def test_download_path_unpacks_cornell_tarball(env, monkeypatch):
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", "")
    pos = (REAL_MIRROR / "rt-polarity/rt-polarity.pos").read_bytes()
    neg = (REAL_MIRROR / "rt-polarity/rt-polarity.neg").read_bytes()
    calls = []

    def serve(url, dest, timeout=None):
        calls.append(url)
        Path(dest).write_bytes(rt_tarball(pos, neg))

    monkeypatch.setattr(fetch, "_download", serve)
    dest = ensure_raw("rt-polarity")
    assert calls == ["http://www.cs.cornell.edu/people/pabo/movie-review-data/rt-polaritydata.tar.gz"]
    assert sorted(os.listdir(dest)) == [fetch.MARKER, fetch.MANIFEST, "rt-polarity.neg", "rt-polarity.pos"]
    assert (dest / "rt-polarity.pos").read_bytes() == pos
    assert json.loads((dest / fetch.MARKER).read_text())["source"].startswith("upstream")


def test_download_with_wrong_line_count_is_rejected(env, monkeypatch):
    """Without a published digest, the unpacked layout (5331 lines per file) is still checked."""
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", "")
    monkeypatch.setattr(fetch, "_download",
                        lambda url, dest, timeout=None: Path(dest).write_bytes(
                            rt_tarball(b"a .\n" * 5331, b"b .\n" * 5000)))
    with pytest.raises(DataError, match=r"rt-polarity.neg has 5000 lines, expected 5331"):
        ensure_raw("rt-polarity")
    assert_nothing_left("rt-polarity")


@needs_mirror
def test_adult_from_uci_matches_mirror(env, monkeypatch):
    """The UCI originals (no header; adult.test starts with '|1x3 Cross validator') pass their md5
    and load to the same frame as the mirror copy (SOURCES.md's caveat)."""
    from xaibench.data import loaders

    _, mirror = env
    copy_to_mirror(mirror, "adult/adult.data", "adult/adult.test", "adult/adult.names")
    from_mirror = loaders.build("adult")

    data = (REAL_MIRROR / "adult/adult.data").read_bytes().split(b"\n", 1)[1]
    test = b"|1x3 Cross validator\n" + (REAL_MIRROR / "adult/adult.test").read_bytes().split(b"\n", 1)[1]
    assert hashlib.md5(data).hexdigest() == "5d7c39d7b8804f071cdd1f2a7c460872"
    uci = {"adult.data": data, "adult.test": test,
           "adult.names": (REAL_MIRROR / "adult/adult.names").read_bytes()}
    monkeypatch.setattr(fetch, "_download",
                        lambda url, dest, timeout=None: Path(dest).write_bytes(uci[url.rsplit("/", 1)[1]]))
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", "")
    ensure_raw("adult", force=True)
    assert (paths.raw_dir() / "adult/adult.data").read_bytes() == data
    from_uci = loaders.build("adult")
    import pandas as pd

    pd.testing.assert_frame_equal(from_mirror, from_uci)


def test_unpack_skips_macos_metadata_and_unsafe_paths(tmp_path):
    z = tmp_path / "a.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("D/", "")
        zf.writestr("D/a.json", "{}")
        zf.writestr("D/.DS_Store", "x")
        zf.writestr("__MACOSX/D/._a.json", "x")
        zf.writestr("../evil.txt", "x")
    out = tmp_path / "out"
    out.mkdir()
    assert fetch._unpack(z, out) == {"D/a.json": hashlib.sha256(b"{}").hexdigest()}
    assert [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file() and p != z] == ["out/D/a.json"]


def test_unpack_corrupt_gzip(tmp_path):
    bad = tmp_path / "x.tar.gz"
    bad.write_bytes(gzip.compress(b"0" * 4096)[:-20])
    with pytest.raises(DataError, match="x.tar.gz is corrupt or truncated"):
        fetch._unpack(bad, tmp_path)


def test_unknown_dataset_name(env):
    with pytest.raises(ValueError, match="unknown dataset 'imbd'.*'imdb'"):
        ensure_raw("imbd")


def test_checksum_list_covers_every_mirror_file():
    sums = fetch.mirror_checksums()
    for spec in fetch.RAW_SPECS.values():
        for mf in spec.mirror:
            assert len(sums[mf.relpath]) == 64, mf.relpath
    shared = None if REAL_MIRROR is None else REAL_MIRROR / "SHA256SUMS"
    if shared is not None and shared.exists():
        listed = dict(reversed(line.split(maxsplit=1)) for line in shared.read_text().splitlines() if line)
        for rel, digest in sums.items():
            assert listed.get(rel) == digest, rel


def test_every_dataset_has_a_real_upstream_url():
    for name, spec in fetch.RAW_SPECS.items():
        assert spec.upstream, name
        for d in spec.upstream:
            assert d.url.startswith(("https://", "http://")), d.url
            if "raw.githubusercontent.com" in d.url:
                # pinned to a commit, so the bytes (and the sha256) cannot drift
                assert len(d.url.split("/")[5]) == 40 and d.sha256, d.url


@needs_mirror
@pytest.mark.slow
def test_fresh_fetch_of_split_archives(env):
    """IMDb and 20 Newsgroups from the mirror's per-split archives (~10 s on 2 shared cores)."""
    _, mirror = env
    copy_to_mirror(mirror, "imdb/aclImdb_train.tar.gz", "imdb/aclImdb_test.tar.gz",
                   "20newsgroups-bydate/20news-bydate-train.tar.gz",
                   "20newsgroups-bydate/20news-bydate-test.tar.gz")
    for name in ("imdb", "20newsgroups"):
        ensure_raw(name)
        assert is_complete(name, verify=True)
    assert raw_entries() == ["20newsgroups", "imdb"]


# ------------------------------------------------------------------------------------------
# verify extracted files, say what was repaired, clean leftovers
# ------------------------------------------------------------------------------------------
@needs_mirror
def test_verify_detects_an_edited_file_extracted_from_an_archive_and_repairs_it(env, capsys):
    from xaibench.data.__main__ import main as cli

    _, mirror = env
    copy_to_mirror(mirror, "cebab/CEBaB-v1.1.zip")
    dest = ensure_raw("cebab")
    dev = dest / "CEBaB-v1.1/dev.json"
    original = dev.read_bytes()
    edited = bytearray(original)
    edited[200] ^= 0x01  # same size, different content
    dev.write_bytes(bytes(edited))
    (dest / "CEBaB-v1.1/notes.txt").write_text("added by hand")
    assert is_complete("cebab") and not is_complete("cebab", verify=True)
    problems = fetch.verify_raw("cebab")
    assert problems == ["CEBaB-v1.1/dev.json differs from the fetched file (sha256 mismatch)",
                        "CEBaB-v1.1/notes.txt was not fetched (unexpected file)"]
    assert cli(["fetch", "cebab", "--verify"]) == 0
    out = capsys.readouterr().out
    assert "repaired" in out and "verified" not in out and "CEBaB-v1.1/dev.json differs" in out
    assert dev.read_bytes() == original and not (dest / "CEBaB-v1.1/notes.txt").exists()
    assert cli(["fetch", "cebab", "--verify"]) == 0
    assert "verified" in capsys.readouterr().out


@needs_mirror
def test_verify_repairs_a_folder_fetched_without_manifest(env):
    _, mirror = env
    copy_to_mirror(mirror, "rt-polarity/rt-polarity.pos", "rt-polarity/rt-polarity.neg")
    dest = ensure_raw("rt-polarity")
    (dest / fetch.MANIFEST).unlink()  # as written by older versions
    assert is_complete("rt-polarity")
    rep = fetch.fetch_raw("rt-polarity", verify=True)
    assert rep.action == "repaired" and "no .manifest.sha256" in rep.problems[0]
    assert is_complete("rt-polarity", verify=True)


@needs_mirror
def test_leftovers_of_killed_fetches_are_removed(env, capsys):
    from xaibench.data.__main__ import main as cli

    _, mirror = env
    copy_to_mirror(mirror, "rt-polarity/rt-polarity.pos", "rt-polarity/rt-polarity.neg")
    ensure_raw("rt-polarity")
    raw = paths.raw_dir()
    junk = raw / ".imdb.k2j3h4.tmp" / "aclImdb" / "train"
    junk.mkdir(parents=True)
    (junk / "1_1.txt").write_text("half an archive")
    (raw / ".cebab.old").mkdir()
    assert cli(["fetch", "rt-polarity"]) == 0  # complete already: only the cleaning happens
    out = capsys.readouterr().out
    assert ".imdb.k2j3h4.tmp, left over by an interrupted fetch" in out and "already present" in out
    assert raw_entries() == ["rt-polarity"]
    (raw / ".sst2.x.tmp").mkdir()
    (raw / "rt-polarity" / fetch.MARKER).unlink()
    rep = fetch.fetch_raw("rt-polarity")
    assert rep.action == "fetched" and [p.name for p in rep.cleaned] == [".sst2.x.tmp"]


# ------------------------------------------------------------------------------------------
# birds (CUB subset, SOURCES.md section 10): one tarball, extracted without its "birds/" folder
# ------------------------------------------------------------------------------------------
needs_birds = pytest.mark.skipif(
    REAL_MIRROR is None or not (REAL_MIRROR / "birds" / "birds.tar.gz").exists(),
    reason="the data mirror holds no birds/birds.tar.gz",
)


@needs_birds
def test_birds_tarball_is_verified_and_extracted_per_class(env):
    """The mirror tarball lands as data/raw/birds/<Class>/*.jpg (5,902 JPEGs in 100 folders) with a
    manifest, and the image loader reads the classes from there."""
    from xaibench.data.birds import load_classes

    _, mirror = env
    copy_to_mirror(mirror, "birds/birds.tar.gz")
    dest = ensure_raw("birds")
    assert dest == paths.raw_dir() / "birds"
    classes = sorted(p.name for p in dest.iterdir() if p.is_dir())
    assert len(classes) == 100 and "Cedar_Waxwing" in classes and "birds" not in classes
    manifest = (dest / fetch.MANIFEST).read_text().splitlines()
    assert len(manifest) == 5902 and all(line.endswith(".jpg") for line in manifest)
    assert json.loads((dest / fetch.MARKER).read_text())["source"].startswith("mirror")
    assert is_complete("birds", verify=True)
    imgs = load_classes(["Le_Conte_Sparrow"])["Le_Conte_Sparrow"]
    assert len(imgs) == 59 and imgs[0].shape == (227, 227, 3)


def test_birds_download_strips_githubs_archive_folders(env, monkeypatch):
    """Without a mirror the pinned GitHub archive is unpacked from its bird_dataset/images/ folder."""
    monkeypatch.setenv("XAIBENCH_DATA_MIRROR", "")
    spec = fetch.raw_spec("birds")
    (dl,) = spec.upstream
    counts = {ex.path: ex.files for ex in spec.expect}
    buf = _io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        members = [("README.md", b"exercises")]
        members += [(f"{dl.strip}{c}/{i:04d}.jpg", b"jpeg%d" % i) for c, n in counts.items() for i in range(n)]
        members += [(f"{dl.strip}Blue_Jay/0000.jpg", b"another class")]
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, _io.BytesIO(data))
    monkeypatch.setattr(fetch, "_download", lambda url, dest, timeout=None: Path(dest).write_bytes(buf.getvalue()))
    dest = ensure_raw("birds")
    assert "README.md" not in os.listdir(dest)
    assert (dest / "Blue_Jay" / "0000.jpg").read_bytes() == b"another class"
    assert len(list((dest / "Le_Conte_Sparrow").glob("*.jpg"))) == 59
    # an archive that lacks images of a class the experiments use is rejected
    (dest / fetch.MARKER).unlink()
    short = _io.BytesIO()
    with tarfile.open(fileobj=short, mode="w:gz") as tf:
        for name, data in members[:-10]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, _io.BytesIO(data))
    monkeypatch.setattr(fetch, "_download", lambda url, dest, timeout=None: Path(dest).write_bytes(short.getvalue()))
    with pytest.raises(DataError, match="holds 49 files, expected 58"):
        fetch.fetch_raw("birds", force=True)


@needs_mirror
def test_make_data_rehashes_present_files_and_names_a_changed_one(env, capsys):
    """`make data` said "already present" for a raw file whose checksum no longer matched."""
    import shlex
    import subprocess

    from xaibench.data.__main__ import main as cli

    dry = subprocess.run(["make", "--no-print-directory", "-n", "data"], cwd=Path(__file__).resolve().parents[1],
                         capture_output=True, text=True, timeout=120).stdout
    # the data target's own fetch (the last one: a stale environment stamp lists the first fetch before it)
    fetch_args = [shlex.split(li) for li in dry.splitlines() if "-m xaibench.data fetch" in li][-1][3:]
    _, mirror = env
    copy_to_mirror(mirror, "rt-polarity/rt-polarity.pos", "rt-polarity/rt-polarity.neg")
    dest = ensure_raw("rt-polarity")
    pos = dest / "rt-polarity.pos"
    original = pos.read_bytes()
    pos.write_bytes(original[:-2] + bytes([original[-2] ^ 1]) + original[-1:])  # same size and lines
    args = [a if a != "--all" else "rt-polarity" for a in fetch_args]
    assert cli(args) == 0
    out = capsys.readouterr().out
    assert "rt-polarity.pos differs from the fetched file (sha256 mismatch)" in out and "already present" not in out
    assert pos.read_bytes() == original
