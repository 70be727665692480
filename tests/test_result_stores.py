"""Every computed cache is read through one reader: a truncated or half-written entry is reported by
name (a ``RuntimeWarning``), removed and recomputed, never returned and never a crash; a run killed
between the parts of a result never pairs one run's parts with another's; leftovers of a killed write
are removed on the next run.  The expensive computations are replaced by tiny deterministic fakes."""
from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from xaibench import io, paths


class Killed(BaseException):
    """Stands for the process being killed in the middle of a write."""


@pytest.fixture()
def dirs(tmp_path, monkeypatch):
    out = {k: tmp_path / k for k in ("results", "cache", "models")}
    monkeypatch.setattr(paths, "results_dir", lambda: out["results"])
    monkeypatch.setattr(paths, "cache_dir", lambda: out["cache"])
    monkeypatch.setattr(paths, "models_dir", lambda: out["models"])
    return out


def _truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: max(1, len(data) // 3)])


def _stale(*paths):
    """Date leftovers of a killed write back past :data:`io.STALE_TMP_AGE_S` (a younger one may be a
    live write of another process and is left alone)."""
    import os
    import time

    old = time.time() - 2 * io.STALE_TMP_AGE_S
    for p in paths:
        os.utime(p, (old, old))


def _only(folder, pattern):
    hits = [p for p in folder.rglob(pattern) if not p.name.startswith(".")]
    assert len(hits) == 1, f"expected one {pattern} under {folder}, found {hits}"
    return hits[0]


def _kill_on_write(monkeypatch, n: int):
    """Make the ``n``-th parquet write from now on raise :class:`Killed` (the writes before it succeed)."""
    real = pd.DataFrame.to_parquet
    calls = {"n": 0}

    def to_parquet(self, *a, **kw):
        calls["n"] += 1
        if calls["n"] == n:
            raise Killed()
        return real(self, *a, **kw)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", to_parquet)
    return lambda: monkeypatch.setattr(pd.DataFrame, "to_parquet", real)


# ---------------------------------------------------------------------------------------------
# the shared reader
# ---------------------------------------------------------------------------------------------
def test_read_or_rebuild_names_removes_and_rebuilds_a_damaged_file(tmp_path):
    path = tmp_path / "c.npy"
    built = []

    def build():
        built.append(1)
        with io.atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.save(fh, np.arange(5))
        return np.arange(5)

    def read(p):
        return np.load(p, allow_pickle=False)

    np.testing.assert_array_equal(io.read_or_rebuild(path, read, build), np.arange(5))
    np.testing.assert_array_equal(io.read_or_rebuild(path, read, build), np.arange(5))
    assert len(built) == 1
    _truncate(path)
    with pytest.warns(RuntimeWarning, match=str(path)):
        np.testing.assert_array_equal(io.read_or_rebuild(path, read, build), np.arange(5))
    assert len(built) == 2
    np.testing.assert_array_equal(read(path), np.arange(5))  # the rebuilt file is whole


def test_read_or_rebuild_removes_leftovers_of_a_killed_write(tmp_path):
    path = tmp_path / "c.bin"
    leftover, old = tmp_path / ".c.bin.k3j2.tmp", tmp_path / ".c.bin.old"
    other = tmp_path / ".other.bin.x1.tmp"  # another cache's write, maybe still running: left alone
    for p in (leftover, old, other):
        p.write_bytes(b"half")
    _stale(leftover, old, other)
    assert io.read_or_rebuild(path, lambda p: p.read_bytes(), lambda: io.write_bytes(path, b"x").read_bytes()) == b"x"
    assert not leftover.exists() and not old.exists() and other.exists()


def test_read_or_rebuild_leaves_a_concurrent_write_alone(tmp_path):
    """Two processes building the same cache: the second's reader must not delete the first's
    temporary file while it is being written (it would fail in ``os.replace``)."""
    path = tmp_path / "c.bin"
    with io.atomic_path(path) as tmp:  # process A is writing ...
        tmp.write_bytes(b"from A")
        # ... when process B reads the same cache, finds nothing and builds it itself
        assert io.read_parquet_cache(path) is None
        assert io.read_or_rebuild(path, lambda p: p.read_bytes(),
                                  lambda: io.write_bytes(path, b"from B").read_bytes()) == b"from B"
        assert tmp.exists()
    assert path.read_bytes() == b"from A"  # A's rename succeeded; the last writer wins, whole
    assert [p.name for p in tmp_path.iterdir()] == ["c.bin"]


# ---------------------------------------------------------------------------------------------
# Zhou et al.: image runs (three tables, one unit)
# ---------------------------------------------------------------------------------------------
@pytest.fixture()
def images(dirs, monkeypatch):
    from xaibench.data import birds
    from xaibench.evaluation.attribution_gt import image_runner as ir

    monkeypatch.setattr(birds, "load_classes", lambda species: {})
    calls = []

    def run_one(imgs, pair, manip, r, seed, cfg, track=False):
        calls.append(seed)
        summary = {"pair": "/".join(map(str, pair)), "manipulation": manip.kind, "manip": manip.name(), "r": r,
                   "seed": seed, "epochs": cfg.epochs, "test_acc": 0.5 + cfg.epochs / 100}
        final = pd.DataFrame({"method": ["gradient"], "attr_pct": [float(cfg.epochs)], "seed": [seed]})
        tr = pd.DataFrame({"epoch": [1], "attr_pct": [float(cfg.epochs)]}) if track else pd.DataFrame()
        return summary, final, tr

    monkeypatch.setattr(ir, "run_one", run_one)
    plan = ir.ImagePlan(er_runs_per_kind=1, visibility_levels=(0,), r_values=(1.0,), r_kinds=("watermark",),
                        kinds=("watermark",))
    return ir, plan, calls


def test_image_runs_reuse_and_a_truncated_table_is_recomputed(images, dirs):
    ir, plan, calls = images
    cfg = ir.ImageConfig(epochs=3)
    first = ir.run_images(cfg, plan)
    n = len(calls)
    again = ir.run_images(cfg, plan)
    assert len(calls) == n  # reused
    pd.testing.assert_frame_equal(again["images_attr"], first["images_attr"])
    attr = _only(dirs["results"], "images_attr*.parquet")
    _truncate(attr)
    with pytest.warns(RuntimeWarning, match=attr.parent.name):
        got = ir.run_images(cfg, plan)
    assert len(calls) == n  # rebuilt from the runs kept as they finished (job_parts_store): none trained again
    for k in ("images_runs", "images_attr", "images_track"):
        pd.testing.assert_frame_equal(got[k], first[k])


def test_image_runs_killed_between_tables_never_mix_runs(images, dirs, monkeypatch):
    ir, plan, calls = images
    ir.run_images(ir.ImageConfig(epochs=3), plan)
    restore = _kill_on_write(monkeypatch, 2)  # the new configuration's second table is never written
    with pytest.raises(Killed):
        ir.run_images(ir.ImageConfig(epochs=7), plan)
    restore()
    got = ir.run_images(ir.ImageConfig(epochs=7), plan)
    assert (got["images_attr"]["attr_pct"] == 7.0).all()  # this configuration's attributions ...
    assert (got["images_runs"]["epochs"] == 7).all()      # ... with this configuration's models
    assert set(got["images_attr"]["seed"]) == set(got["images_runs"]["seed"])
    old = ir.run_images(ir.ImageConfig(epochs=3), plan)   # the first configuration is still whole
    assert (old["images_attr"]["attr_pct"] == 3.0).all()


def test_interrupted_group_runs_resume_with_the_runs_not_finished(images, dirs, monkeypatch):
    """A computation killed after three of its six runs finished trains only the other three when run again, and
    gives the tables a computation from scratch (force) gives; a damaged kept run is trained again."""
    ir, _, calls = images
    _twelve_species(monkeypatch)
    kinds = ("blur", "noise", "watermark")
    real, count = ir.run_one, {"n": 0}

    def dies_at_the_fourth(imgs, pair, manip, r, seed, cfg, track=False):
        count["n"] += 1
        if count["n"] == 4:
            raise Killed()
        return real(imgs, pair, manip, r, seed, cfg, track)

    monkeypatch.setattr(ir, "run_one", dies_at_the_fourth)
    cfg = ir.ImageConfig(epochs=5, group_size=2)
    with pytest.raises(Killed):
        ir.run_groups(cfg, kinds, runs_per_kind=2)
    monkeypatch.setattr(ir, "run_one", real)
    assert len(calls) == 3
    got = ir.run_groups(cfg, kinds, runs_per_kind=2)
    assert len(calls) == 6  # the three runs not finished
    fresh = ir.run_groups(cfg, kinds, runs_per_kind=2, force=True)
    assert len(calls) == 12  # force trains every run again
    for k in ir.GROUP_TABLES:
        pd.testing.assert_frame_equal(got[k], fresh[k])
    # a damaged kept run: reported, removed and trained again; the others are read back
    part = sorted((dirs["results"] / "attribution_gt" / "image_job_parts").glob("*/final.parquet"))[0]
    _truncate(part)
    entry = next((dirs["results"] / "attribution_gt" / "images").glob("*/manifest.json")).parent
    import shutil
    shutil.rmtree(entry)  # the assembled entry gone: rebuilt from the kept runs
    with pytest.warns(RuntimeWarning, match=part.parent.name):
        again = ir.run_groups(cfg, kinds, runs_per_kind=2)
    assert len(calls) == 13
    for k in ir.GROUP_TABLES:
        pd.testing.assert_frame_equal(again[k], fresh[k])


def test_image_store_leftovers_are_removed_on_the_next_run(images, dirs):
    ir, plan, calls = images
    ir.run_images(ir.ImageConfig(epochs=3), plan)
    folder = ir.images_store().folder
    leftover = folder / ".0123456789abcdef.x8y.tmp"
    leftover.mkdir()
    (leftover / "images_runs.parquet").write_bytes(b"PAR1")
    _stale(leftover)
    ir.run_images(ir.ImageConfig(epochs=3), plan)
    assert not leftover.exists()


def _twelve_species(monkeypatch):
    """Group runs over twelve stand-in species with no images (the fixture's run_one ignores them)."""
    from xaibench.data import birds

    monkeypatch.setattr(birds, "all_classes", lambda: [f"s{i}" for i in range(12)])
    monkeypatch.setattr(birds, "load_classes", lambda species, size=None: {})


def _record_runs(ir, monkeypatch, describe) -> list:
    """Each run_one call's ``describe(pair, manip, seed, cfg)``, in order, before the fixture's run_one runs it."""
    seen = []
    fake = ir.run_one

    def run_one(imgs, pair, manip, r, seed, cfg, track=False):
        seen.append(describe(pair, manip, seed, cfg))
        return fake(imgs, pair, manip, r, seed, cfg, track)

    monkeypatch.setattr(ir, "run_one", run_one)
    return seen


def test_watermark_glyph_runs_repeat_the_group_runs_watermark_jobs(images, dirs, monkeypatch):
    """The paired glyph-size experiment trains exactly the watermark jobs of run_groups (same species groups,
    rectangle and seed), with only the glyph size changed, and is stored."""
    ir, _, calls = images
    _twelve_species(monkeypatch)
    seen = _record_runs(ir, monkeypatch, lambda pair, manip, seed, cfg: (
        pair, ir.sized_manipulation(manip, cfg).name(), seed, cfg.watermark_font_px))
    cfg = ir.ImageConfig(epochs=3, group_size=2, watermark_font_px=13)
    kinds = ("blur", "watermark")
    ir.run_groups(cfg, kinds, runs_per_kind=2)
    groups = [s for s in seen if "watermark" in s[1]]
    seen.clear()
    runs = ir.watermark_glyph_runs(cfg, kinds, runs_per_kind=2, glyph_px=0)
    assert [(p, s) for p, _, s, _ in seen] == [(p, s) for p, _, s, _ in groups] and len(seen) == 2
    assert all(font == 0 for *_, font in seen) and all("font_px=13" in name for _, name, _, _ in groups)
    assert [n.replace(", font_px=13", "") for _, n, _, _ in groups] == [n for _, n, _, _ in seen]
    assert list(runs["run"]) == [2, 3]
    ir.watermark_glyph_runs(cfg, kinds, runs_per_kind=2, glyph_px=0)
    assert len(seen) == 2                                                        # stored
    with pytest.raises(ValueError, match="no watermark runs"):
        ir.watermark_glyph_runs(cfg, ("blur",), runs_per_kind=1)


def test_group_sweeps_jobs_and_store(images, dirs, monkeypatch):
    """Figs. 7-8 under the species-group protocol: one pair of disjoint species groups per manipulation (all its
    visibility levels) and per r-sweep manipulation (all its r values), the run's experiment names read back as the
    sweep's group and level; the Fig. 5 group runs are not changed by drawing them; the runs are stored."""
    from xaibench.data import birds
    from xaibench.evaluation.attribution_gt import manipulations as mp
    from xaibench.evaluation.attribution_gt.tables import experiment_group, visibility_level

    ir, _, calls = images
    species = [f"s{i}" for i in range(12)]
    plan = ir.ImagePlan(kinds=("blur", "watermark"), visibility_levels=(0, 2, 4), r_kinds=("noise",),
                        r_values=(0.5, 1.0))
    before = ir.group_jobs(species, plan.kinds, 2, 3, seed=0)
    jobs = ir.group_sweep_jobs(species, plan, 3, seed=0)
    assert ir.group_jobs(species, plan.kinds, 2, 3, seed=0) == before
    assert len(jobs) == 2 * 3 + 1 * 2
    exps = pd.Series([j[0] for j in jobs])
    assert list(experiment_group(exps).unique()) == ["visibility-groups-blur", "visibility-groups-watermark", "r-groups"]
    assert visibility_level(exps).tolist()[:6] == [0, 2, 4, 0, 2, 4] and visibility_level(exps).isna().sum() == 2
    for k, kind in enumerate(plan.kinds):
        mine = jobs[3 * k: 3 * k + 3]
        assert len({j[1] for j in mine}) == 1 and all(j[2].kind == kind and j[3] == 0.5 for j in mine)
        a, b = mine[0][1]
        assert len(a) == len(b) == 3 and not set(a) & set(b)
    assert [j[3] for j in jobs[6:]] == [0.5, 1.0] and all(j[2] == mp.R_SWEEP["noise"] for j in jobs[6:])

    monkeypatch.setattr(birds, "all_classes", lambda: species)
    monkeypatch.setattr(birds, "load_classes", lambda species, size=None: {})
    cfg = ir.ImageConfig(epochs=3, group_size=3)
    out = ir.run_group_sweeps(cfg, plan)
    assert set(out) == set(ir.SWEEP_TABLES) and len(out["images_sweeps_runs"]) == len(calls) == 8
    ir.run_group_sweeps(cfg, plan)
    assert len(calls) == 8                                                       # stored
    ir.run_group_sweeps(cfg, ir.ImagePlan(kinds=("blur",), visibility_levels=(0,), r_kinds=(), r_values=()))
    assert len(calls) == 9                                                       # another plan: its own entry
    with pytest.raises(ValueError, match="group_size"):
        ir.run_group_sweeps(ir.ImageConfig(), plan)


def test_group_sweeps_switch(monkeypatch):
    from xaibench.evaluation.attribution_gt import image_runner as ir

    assert ir.sweeps_wanted("on") and ir.sweeps_wanted(" ON ") and not ir.sweeps_wanted("off")
    monkeypatch.setenv("XAIBENCH_DEVICE", "cpu")
    assert not ir.sweeps_wanted("auto")                                          # no GPU: not by default
    with pytest.raises(ValueError, match="group_sweeps='maybe'"):
        ir.sweeps_wanted("maybe")


# ---------------------------------------------------------------------------------------------
# Zhou et al.: text attention and rationale runs
# ---------------------------------------------------------------------------------------------
@pytest.fixture()
def text(dirs, monkeypatch):
    from xaibench.evaluation.attribution_gt import text_runner as tr

    from tests.helpers.toy_text import sentiment_logreg

    calls = []

    def run_attention(df, cfg):
        calls.append("attention")
        for kind in cfg.kinds:  # the first run's model of each dataset is saved beside the table
            sentiment_logreg().save(tr.attention_model_dir(kind, cfg.seeds[0], cfg))
        return pd.DataFrame({"dataset": list(cfg.kinds), "method": "attention", "corr": float(cfg.hidden)}), {}

    def run_rationales(df, cfg):
        calls.append("rationales")
        return pd.DataFrame({"dataset": ["article"], "model": ["rl"], "rate": [float(cfg.rationale_epochs)]})

    monkeypatch.setattr(tr, "run_attention", run_attention)
    monkeypatch.setattr(tr, "run_rationales", run_rationales)
    return tr, calls


@pytest.mark.parametrize("table", ["attention", "rationales"])
def test_text_runs_truncated_table_is_named_and_recomputed(text, dirs, table):
    tr, calls = text
    cfg = tr.TextConfig.for_profile("quick")
    first = tr.run_text(None, cfg)
    tr.run_text(None, cfg)
    assert calls == ["attention", "rationales"]  # reused
    hits = [p for p in dirs["results"].rglob("*.parquet") if f"text_{table}" in str(p)]
    assert len(hits) == 1
    f = hits[0]
    _truncate(f)
    with pytest.warns(RuntimeWarning, match=f.parent.name if f.parent.name != "attribution_gt" else f.name):
        got = tr.run_text(None, cfg)
    assert calls.count(table) == 2
    pd.testing.assert_frame_equal(got[table], first[table])


def test_text_runs_damaged_saved_model_is_named_and_retrained_with_its_table(text):
    tr, calls = text
    cfg = tr.TextConfig.for_profile("quick")
    tr.run_text(None, cfg)
    folder = tr.attention_model_dir("article", 0, cfg)
    _truncate(folder / "model.pkl")
    with pytest.warns(RuntimeWarning, match=str(folder)):
        tr.run_text(None, cfg)
    assert calls.count("attention") == 2 and calls.count("rationales") == 1
    from xaibench.models.registry import load_model

    assert load_model(folder, cache=False).predict(["a great film"]).tolist() == [1]  # whole again


def test_text_runs_of_another_configuration_are_never_returned(text):
    tr, calls = text
    quick = tr.TextConfig.for_profile("quick")
    other = tr.TextConfig.for_profile("quick")
    other.hidden = 32
    assert tr.run_text(None, quick)["attention"]["corr"].eq(16.0).all()
    assert tr.run_text(None, other)["attention"]["corr"].eq(32.0).all()
    assert tr.run_text(None, quick)["attention"]["corr"].eq(16.0).all()  # both kept, each its own
    assert calls.count("attention") == 2
    # each configuration's saved models have their own folder
    assert tr.attention_model_dir("article", 0, quick) != tr.attention_model_dir("article", 0, other)


# ---------------------------------------------------------------------------------------------
# Filandrianos et al.: editor chains + their statistics, fluency scores, infillers, vectors, predictors
# ---------------------------------------------------------------------------------------------
class _Model:
    n_classes = 2
    kind = "fake"

    def predict_proba(self, texts):
        return np.tile([0.3, 0.7], (len(texts), 1))


@pytest.fixture()
def chains(dirs, monkeypatch):
    from xaibench.data import cf_data
    from xaibench.evaluation.cf_feedback import metrics as cfm
    from xaibench.evaluation.cf_feedback import runner as R
    from xaibench.explainers import counterfactual
    from xaibench.models import cf_predictors

    calls = []
    monkeypatch.setattr(cf_predictors, "get_predictor", lambda *a, **k: _Model())
    monkeypatch.setattr(counterfactual, "build_editor", lambda *a, **k: object())
    monkeypatch.setattr(cf_data, "sample_test", lambda d, n, seed=42, max_words=None: pd.DataFrame(
        {"text": [f"text {i}" for i in range(n)], "label": [i % 2 for i in range(n)]}))

    def run_chains(editor, pred, texts, n_steps=2, progress=False):
        calls.append(n_steps)
        return pd.DataFrame([{"text_id": i, "step": s, "text": f"{t} edit {s}", "proba": [0.3, 0.7],
                              "flipped": s % 2 == 1, "minimality": float(s), "carried": False}
                             for i, t in enumerate(texts) for s in range(n_steps + 1)])

    monkeypatch.setattr(cfm, "run_chains", run_chains)
    return R, calls


@pytest.mark.parametrize("part", ["chains", "stats"])
def test_editor_chains_damaged_part_is_named_and_recomputed(chains, dirs, part):
    R, calls = chains
    first, stats = R.run_experiment("imdb", "mice", 3, n_steps=2, progress=False)
    R.run_experiment("imdb", "mice", 3, n_steps=2, progress=False)
    assert len(calls) == 1
    hits = [p for p in dirs["results"].rglob("*.parquet" if part == "chains" else "*.json")
            if p.name != "manifest.json"]
    assert len(hits) == 1
    f = hits[0]
    _truncate(f)
    with pytest.warns(RuntimeWarning, match=f.parent.name if f.parent.name != "cf_feedback" else f.name):
        got, got_stats = R.run_experiment("imdb", "mice", 3, n_steps=2, progress=False)
    assert len(calls) == 2
    pd.testing.assert_frame_equal(got, first)
    assert got_stats["n_edit_steps"] == stats["n_edit_steps"] == 6


def test_editor_chains_of_another_setting_are_never_returned(chains):
    R, calls = chains
    a, _ = R.run_experiment("imdb", "mice", 3, n_steps=2, progress=False)
    b, _ = R.run_experiment("imdb", "mice", 3, n_steps=2, max_train=100, progress=False)
    assert len(calls) == 2 and a["step"].max() == 2


@pytest.fixture()
def tradeoff(chains, monkeypatch):
    """:func:`infiller_tradeoff` on the fake chains, with a fake MiCE and MLM head; returns ``(runner, chain
    calls, the MLM heads' training-text caps)``."""
    from types import SimpleNamespace

    from xaibench.explainers.counterfactual import mice, mlm

    R, calls = chains

    class FakeMiCE:
        def __init__(self, dataset=None, lm=None, seed=42, lm_max_texts=None):
            pass

        def fit(self, pred):
            return self

    monkeypatch.setattr(mice, "MiCE", FakeMiCE)
    trained = []
    monkeypatch.setattr(mlm, "train_mlm_infiller", lambda d, model, max_texts=1000, seed=42, **kw:
                        trained.append(max_texts) or SimpleNamespace(train_loss=1.5))
    return R, calls, trained


def test_infiller_tradeoff_truncated_is_named_and_recomputed(tradeoff, dirs):
    R, calls, _ = tradeoff
    first = R.infiller_tradeoff({"imdb": 3}, n_texts=2, mlm_train_texts=5)
    R.infiller_tradeoff({"imdb": 3}, n_texts=2, mlm_train_texts=5)
    assert len(calls) == 2  # two infillers, once
    f = _only(dirs["results"], "*.parquet")
    _truncate(f)
    with pytest.warns(RuntimeWarning, match=f.parent.name if f.parent.name != "cf_feedback" else f.name):
        got = R.infiller_tradeoff({"imdb": 3}, n_texts=2, mlm_train_texts=5)
    assert len(calls) == 4
    cols = ["dataset", "infiller", "metric", "n_texts"]
    pd.testing.assert_frame_equal(got[cols], first[cols])
    assert got.loc[got.metric == "flip_rate@1", "ours"].tolist() == [1.0, 1.0]


def test_infiller_tradeoff_edits_what_its_caller_asks_in_every_profile(tradeoff, monkeypatch):
    """The sizes are the caller's (notebook 22 passes smaller ones in its quick branch): in either profile the
    trade-off edits as many texts, of as many words, with an MLM head trained on as many texts as it is asked for.
    The test's result folder is one for both profiles, so each call passes ``refresh``."""
    R, calls, trained = tradeoff
    sampled = []
    monkeypatch.setattr(R, "predictor_and_first_texts", lambda d, n_sample, n_texts, seed, predictor, max_words,
                        max_train: sampled.append(max_words) or (_Model(), [f"text {i}" for i in range(n_texts)]))
    for profile in ("full", "quick"):
        monkeypatch.setenv("XAIBENCH_PROFILE", profile)
        got = R.infiller_tradeoff({"imdb": 3, "newsgroups": 3}, n_texts=2, max_words=400, mlm_train_texts=50,
                                  refresh=True)
        assert sorted(got.dataset.unique()) == ["imdb", "newsgroups"] and set(got.n_texts) == {2}
    assert len(calls) == 2 * 4  # both datasets' two infillers, in each profile
    assert trained == [50] * 4 and sampled == [400] * 4


def test_fluency_store_truncated_is_named_and_rescored(dirs, monkeypatch):
    from xaibench.evaluation.cf_feedback import runner as R
    from xaibench.models import lm

    scored = []

    def sequence_nll(texts, model, tok):
        scored.extend(texts)
        return [float(len(t)) for t in texts], None

    monkeypatch.setattr(lm, "load_causal_lm", lambda name, dtype="float32": (None, lambda t, **k: {"input_ids": t.split()}))
    monkeypatch.setattr(lm, "sequence_nll", sequence_nll)
    texts = ["a b", "ccc dd e"]
    assert R.cached_nll(texts, "smollm2", "float32", "imdb") == ({"a b": 3.0, "ccc dd e": 8.0}, 0)
    assert R.cached_nll(texts, "smollm2", "float32", "imdb")[0] == {"a b": 3.0, "ccc dd e": 8.0}
    assert len(scored) == 2  # the second call scored nothing
    f = _only(dirs["results"], "fluency_imdb_*.parquet")
    _truncate(f)
    (f.parent / f".{f.name}.zz91.parquet.tmp").write_bytes(b"PAR1")  # a killed write's leftover
    _stale(f.parent / f".{f.name}.zz91.parquet.tmp")
    with pytest.warns(RuntimeWarning, match=f.name):
        assert R.cached_nll(texts, "smollm2", "float32", "imdb") == ({"a b": 3.0, "ccc dd e": 8.0}, 0)
    assert len(scored) == 4
    assert [p.name for p in f.parent.iterdir()] == [f.name]  # leftover removed
    assert set(pd.read_parquet(f)["sha"]) and len(pd.read_parquet(f)) == 2


def test_infiller_cache_damaged_is_named_and_retrained(dirs, monkeypatch):
    from xaibench.explainers.counterfactual import mice, ngram

    from tests.helpers.toy_text import NEG, POS

    trained = []

    def train_ngram(dataset, predictor=None, max_texts=None, seed=42):
        trained.append(dataset)
        return ngram.BigramLM(min_count=1).fit([t.split() for t in POS + NEG], [1] * 3 + [0] * 3)

    monkeypatch.setattr(ngram, "train_ngram", train_ngram)
    monkeypatch.setattr(mice, "_INFILLERS", {})
    lm = mice.cached_infiller("imdb", None, 10, seed=1)
    f = _only(dirs["cache"], "infiller_imdb_*.pkl")
    _truncate(f)
    monkeypatch.setattr(mice, "_INFILLERS", {})  # a new process
    with pytest.warns(RuntimeWarning, match=f.name):
        again = mice.cached_infiller("imdb", None, 10, seed=1)
    assert len(trained) == 2
    assert again.nll("a great film".split(), 1) == pytest.approx(lm.nll("a great film".split(), 1))
    assert isinstance(pickle.loads(f.read_bytes()), ngram.BigramLM)  # rewritten whole


def test_infiller_cache_is_keyed_on_the_infiller_kind(dirs, monkeypatch):
    from xaibench.explainers.counterfactual import mice, ngram

    from tests.helpers.toy_text import NEG, POS

    trained = []

    def train_ngram(dataset, predictor=None, max_texts=None, seed=42, kind="bigram"):
        trained.append(kind)
        cls = ngram.BigramLM if kind == "bigram" else ngram.TwoSidedLM
        return cls(min_count=1).fit([t.split() for t in POS + NEG], [1] * 3 + [0] * 3)

    monkeypatch.setattr(ngram, "train_ngram", train_ngram)
    monkeypatch.setattr(mice, "_INFILLERS", {})
    assert isinstance(mice.cached_infiller("imdb", None, 10, seed=1), ngram.BigramLM)
    assert isinstance(mice.cached_infiller("imdb", None, 10, seed=1, kind="two-sided"), ngram.TwoSidedLM)
    _only(dirs["cache"], "infiller_imdb_*_10_1.pkl")  # the bigram cache keeps its file name
    f = _only(dirs["cache"], "twosided_infiller_imdb_*.pkl")
    monkeypatch.setattr(mice, "_INFILLERS", {})  # a new process: both read from disk
    mice.cached_infiller("imdb", None, 10, seed=1, kind="two-sided")
    mice.cached_infiller("imdb", None, 10, seed=1)
    assert trained == ["bigram", "two-sided"]
    f.write_bytes(pickle.dumps(ngram.BigramLM(min_count=1).fit([["a", "b"]])))  # the wrong kind in the file
    monkeypatch.setattr(mice, "_INFILLERS", {})
    with pytest.warns(RuntimeWarning, match=f.name):
        assert isinstance(mice.cached_infiller("imdb", None, 10, seed=1, kind="two-sided"), ngram.TwoSidedLM)
    with pytest.raises(ValueError, match="kind='trigram'"):
        mice.cached_infiller("imdb", None, 10, kind="trigram")


def test_editor_chains_of_another_infiller_are_never_returned(chains):
    R, calls = chains
    R.run_experiment("imdb", "mice", 3, n_steps=2, progress=False)
    R.run_experiment("imdb", "mice", 3, n_steps=2, progress=False, infiller="bigram")  # the default: stored
    assert len(calls) == 1
    R.run_experiment("imdb", "mice", 3, n_steps=2, progress=False, infiller="two-sided")
    assert len(calls) == 2
    with pytest.raises(ValueError, match="editor='textfooler'"):
        R.run_experiment("imdb", "textfooler", 3, n_steps=2, progress=False, infiller="two-sided")


def test_infiller_fluency_is_stored_per_setting(chains, dirs, monkeypatch):
    from xaibench.explainers.counterfactual import mice

    R, calls = chains
    built = []

    class FakeMiCE:
        def __init__(self, dataset=None, lm=None, seed=42, lm_max_texts=None, infiller="bigram"):
            built.append(infiller)

        def fit(self, pred):
            return self

    monkeypatch.setattr(mice, "MiCE", FakeMiCE)
    # base-LM NLL = characters of the text: "text 0 edit 1" vs its original "text 0 edit 0" differ by 0
    nll = {"text 10 edit 1": 15.0}
    monkeypatch.setattr(R, "cached_nll", lambda texts, lm, dtype, d: ({t: nll.get(t, float(len(t))) for t in texts}, 0))
    t = R.infiller_fluency({"imdb": 12}, n_texts=11, lm_dtype="float32")
    assert built == ["bigram", "two-sided"] and len(calls) == 2
    assert set(t["metric"]) == {"nll_delta_mean", "nll_delta_std", "flip_rate", "seconds_per_edit", "minimality"}
    got = t.set_index(["infiller", "metric"])["ours"]
    assert got["two-sided", "nll_delta_mean"] == pytest.approx(1.0 / 11)  # one text of 11 is 1 nat worse
    assert got["two-sided", "flip_rate"] == 1.0 and got["bigram", "minimality"] == 1.0
    assert t["paper"].isna().all() and (t["n_texts"] == 11).all()
    R.infiller_fluency({"imdb": 12}, n_texts=11, lm_dtype="float32")
    assert len(calls) == 2  # stored
    R.infiller_fluency({"imdb": 12}, n_texts=11, lm_dtype="float32", infillers=("two-sided",))
    assert len(calls) == 3  # another setting: computed
    with pytest.raises(ValueError, match="infillers=\\('t5',\\)"):
        R.infiller_fluency({"imdb": 12}, infillers=("t5",))


def test_counterfitted_vectors_damaged_are_named_and_rebuilt(dirs, monkeypatch):
    from xaibench import glove
    from xaibench.explainers.counterfactual import counterfit, wordnet

    from tests.helpers.toy_text import toy_vectors, toy_wordnet

    v = toy_vectors()
    monkeypatch.setattr(glove, "glove_index", lambda: {w: i for i, w in enumerate(v.words)})
    monkeypatch.setattr(glove, "glove_matrix", lambda: v.vectors)
    monkeypatch.setattr(wordnet, "load_wordnet", lambda folder=None: toy_wordnet())
    first = counterfit.counterfitted_glove(n_words=10, epochs=2)
    f = _only(dirs["cache"], "counterfit_glove50_*.npz")
    _truncate(f)
    leftover = f.parent / f".{f.name}.q1w2.tmp"
    leftover.write_bytes(b"PK")
    _stale(leftover)
    with pytest.warns(RuntimeWarning, match=f.name):
        again = counterfit.counterfitted_glove(n_words=10, epochs=2)
    assert again.words == first.words
    np.testing.assert_allclose(again.vectors, first.vectors, atol=1e-6)
    assert not leftover.exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert counterfit.counterfitted_glove(n_words=10, epochs=2).words == first.words  # whole again


@pytest.fixture()
def tiny_cf_data(dirs, monkeypatch):
    from xaibench.data import cf_data

    from tests.helpers.toy_text import NEG, POS

    df = pd.DataFrame({"text": POS + NEG + POS + NEG, "label": [1] * 3 + [0] * 3 + [1] * 3 + [0] * 3,
                       "split": ["train"] * 6 + ["test"] * 6})
    monkeypatch.setattr(cf_data, "load_cf_dataset", lambda d: df)
    monkeypatch.setattr(cf_data, "cf_label_names", lambda d: ["neg", "pos"])


def test_saved_predictor_damaged_is_named_and_retrained(tiny_cf_data, dirs):
    from xaibench.models.cf_predictors import get_predictor

    clf = get_predictor("imdb", "logreg", seed=1)
    files = [p for p in _only(dirs["models"], "config.json").parent.iterdir() if p.name != "config.json"]
    assert files
    for p in files:
        _truncate(p)
    with pytest.warns(RuntimeWarning, match="seed1"):
        again = get_predictor("imdb", "logreg", seed=1)
    np.testing.assert_allclose(again.predict_proba(["a great film"]), clf.predict_proba(["a great film"]))


def test_saved_predictor_is_keyed_on_its_training_cap(tiny_cf_data, dirs):
    from xaibench.models.cf_predictors import get_predictor

    full = get_predictor("imdb", "logreg", seed=1)
    capped = get_predictor("imdb", "logreg", seed=1, max_train=4)
    assert full.fingerprint() != capped.fingerprint()  # the capped model is not the full one reused
    assert get_predictor("imdb", "logreg", seed=1).fingerprint() == full.fingerprint()


# ---------------------------------------------------------------------------------------------
# Abraham et al. (CEBaB): per-explainer result files
# ---------------------------------------------------------------------------------------------
def test_cebab_result_file_truncated_is_named_and_recomputed(dirs, monkeypatch):
    from types import SimpleNamespace

    from xaibench.evaluation.cebab import runner
    from xaibench.models import cebab_training

    evaluated = []

    def evaluate_one(model, name, train, pairs, seed, *a, **k):
        evaluated.append(name)
        return pd.DataFrame({"pair": [0, 1], "icace": [[0.1, 0.2], [0.3, 0.4]], "estimate": [[0.0, 0.5], [1.0, 0.0]]})

    monkeypatch.setattr(cebab_training, "train_cebab", lambda *a, **k: SimpleNamespace(model=None))
    monkeypatch.setattr(runner, "fit_data", lambda prof, seed, task="5-way": (None, None))
    monkeypatch.setattr(runner, "evaluate_one", evaluate_one)
    first = runner.run_one("logreg", "5-way", 0, ["slearner"], profile="quick", absa_model=None)
    assert evaluated == ["slearner"] and len(first) == 2
    f = runner.result_path("logreg", "5-way", 0, "slearner")
    _truncate(f)
    leftover = f.parent / f".{f.name}.a1b2.parquet.tmp"
    leftover.write_bytes(b"PAR1")
    _stale(leftover)
    with pytest.warns(RuntimeWarning, match=f.name):
        got = runner.run_one("logreg", "5-way", 0, ["slearner"], profile="quick", absa_model=None)
    assert evaluated == ["slearner"] * 2 and not leftover.exists()
    np.testing.assert_allclose(np.stack(got["icace"]), np.stack(first["icace"]))
    _truncate(f)
    with pytest.warns(RuntimeWarning, match=f.name):  # reading the tables alone: named, dropped, no crash
        assert runner.load_results(["logreg"], ["5-way"], [0], ["slearner"]).empty
    assert not f.exists()


# ---------------------------------------------------------------------------------------------
# saved models trained on first use (CEBaB classifiers, human-grounded CNNs)
# ---------------------------------------------------------------------------------------------
def _toy_frame(n_rep: int = 2) -> pd.DataFrame:
    from tests.helpers.toy_text import NEG, POS

    return pd.DataFrame({"text": (POS + NEG) * n_rep, "label": ([1] * 3 + [0] * 3) * n_rep,
                         "example_id": [f"e{i}" for i in range(6 * n_rep)]})


def test_cebab_classifier_damaged_is_named_and_retrained(dirs, monkeypatch):
    from xaibench.models import cebab_training as ct

    trained = []
    real_build = ct.build

    def build(*a, **k):
        trained.append(k)
        return real_build(*a, **k)

    monkeypatch.setattr(ct, "build", build)
    monkeypatch.setattr(ct, "task_frames", lambda task, split, prof: (_toy_frame(), _toy_frame(1), _toy_frame(1)))
    first = ct.train_cebab("logreg", "binary", seed=3, profile="quick")
    assert ct.train_cebab("logreg", "binary", seed=3, profile="quick").model.fingerprint() == first.model.fingerprint()
    assert len(trained) == 1
    _truncate(first.folder / "model.pkl")
    with pytest.warns(RuntimeWarning, match=str(first.folder)):
        again = ct.train_cebab("logreg", "binary", seed=3, profile="quick")
    assert len(trained) == 2
    np.testing.assert_allclose(again.model.predict_proba(["a great film"]), first.model.predict_proba(["a great film"]))
    # settings passed on top of the recipe are part of what is reused
    other = ct.train_cebab("logreg", "binary", seed=3, profile="quick", C=0.01)
    assert len(trained) == 3 and other.model.C == 0.01


def test_human_grounded_model_damaged_is_named_and_retrained(dirs, monkeypatch):
    from xaibench.evaluation.human_grounded import training as hg
    from xaibench.models import cnn
    from xaibench.models.logreg import LogRegClassifier

    trained = []

    def fake_cnn(n_classes, seed, lr, epochs, patience):  # a fast stand-in, saved and loaded like any model
        trained.append(epochs)
        return LogRegClassifier(n_classes, seed=seed, cache=False)

    monkeypatch.setattr(cnn, "CNNClassifier", fake_cnn)
    splits = {"train": _toy_frame(), "dev": _toy_frame(1)}
    first = hg.get_models("amazon", splits, seed=5, max_epochs=1)
    hg.get_models("amazon", splits, seed=5, max_epochs=1)
    assert len(trained) == 2  # one per condition, then reused
    folder = hg.model_folder("amazon", "well", 5)
    _truncate(folder / "hg_recipe.json")
    with pytest.warns(RuntimeWarning, match=str(folder)):
        again = hg.get_models("amazon", splits, seed=5, max_epochs=1)
    assert len(trained) == 3
    np.testing.assert_allclose(again["well"].predict_proba(["a great film"]), first["well"].predict_proba(["a great film"]))


def test_cebab_damaged_metrics_are_named_not_a_crash(dirs):
    from xaibench.evaluation.cebab.runner import is_trained
    from xaibench.models.cebab_training import collect_metrics
    from xaibench.models.zoo import model_dir

    f = model_dir("cebab", "logreg", "5-way", "exclusive", 1) / "metrics.json"
    f.parent.mkdir(parents=True)
    f.write_text('{"model": "logreg", "pro')  # cut short
    assert is_trained("logreg", "5-way", 1, profile="quick") is False
    with pytest.warns(RuntimeWarning, match=str(f)):
        assert collect_metrics(profile="quick").empty
    assert not f.exists()


def test_converted_fluency_lm_damaged_is_named_and_converted_again(dirs, monkeypatch):
    from xaibench.models import lm

    from tests.test_lm import _tiny_lm

    converted = []

    def convert(dest):
        converted.append(dest)
        with io.atomic_dir(dest) as tmp:
            _tiny_lm(tmp)
        return dest

    monkeypatch.setattr(lm, "convert_smollm2", convert)
    lm.load_causal_lm.cache_clear()
    try:
        lm.load_causal_lm("smollm2")
        lm.load_causal_lm.cache_clear()
        lm.load_causal_lm("smollm2")
        assert len(converted) == 1
        weights = _only(lm.smollm2_cache_dir(), "*.safetensors")
        _truncate(weights)
        lm.load_causal_lm.cache_clear()
        with pytest.warns(RuntimeWarning, match=str(lm.smollm2_cache_dir())):
            model, tok = lm.load_causal_lm("smollm2")
        assert len(converted) == 2
        nll, _ = lm.sequence_nll(["the film was good"], model, tok)
        assert nll[0] == pytest.approx(np.log(9), abs=1e-5)  # the tiny LM is uniform over its 9 words
    finally:
        lm.load_causal_lm.cache_clear()


def test_attention_gap_variants_stored_per_configuration_and_rebuilt_when_damaged(dirs, monkeypatch):
    from xaibench.evaluation.attribution_gt import attention_gap as ag
    from xaibench.evaluation.attribution_gt.text_runner import TextConfig

    calls = []

    def fake_variant(df, cfg, seed, name, **changes):
        calls.append(name)
        return {"variant": name, "seed": seed, "hidden": changes.get("hidden", cfg.hidden), "attr_articles": 0.5}

    monkeypatch.setattr(ag, "run_variant", fake_variant)
    cfg = TextConfig.for_profile("quick")
    first = ag.run_variants(None, cfg, {"h200": {"hidden": 200}})
    again = ag.run_variants(None, cfg, {"h200": {"hidden": 200}})
    assert calls == ["h200"]
    pd.testing.assert_frame_equal(first, again)
    only = ag.run_variants(None, cfg, {"h200": {"hidden": 200}, "h300": {"hidden": 300}}, stored_only=True)
    assert calls == ["h200"] and list(only.variant) == ["h200"]  # the stored cell alone, nothing trained
    ag.run_variants(None, cfg, {"h100": {"hidden": 100}})  # another variant list: another entry
    assert calls == ["h200", "h100"]
    entries = sorted((dirs["results"] / "attribution_gt" / "attention_gap").iterdir())
    assert len(entries) == 2
    for e in entries:  # damage both entries: the next call names the entry and recomputes
        _truncate(e / "rows.parquet")
    with pytest.warns(RuntimeWarning, match="attention_gap"):
        got = ag.run_variants(None, cfg, {"h200": {"hidden": 200}})
    assert calls == ["h200", "h100", "h200"]
    pd.testing.assert_frame_equal(got, first)


def test_attention_gap_tables_of_some_seeds_keep_the_other_stored_seeds(dirs, monkeypatch):
    """Running seed 1 alone after seed 0 writes tables of both seeds (they used to hold seed 1 only)."""
    from xaibench import tables
    from xaibench.data import loaders
    from xaibench.evaluation.attribution_gt import attention_gap as ag

    def fake_variant(df, cfg, seed, name, **changes):
        return {"variant": name, "seed": seed, "hidden": 64, "n_train": 7000, "tokens_per_review": 30.0,
                "attr_articles": 0.5 + 0.1 * seed, "article_share": 0.09, "epochs": 2, "val_acc": 0.98,
                "test_acc": 0.99, "epoch_history": '[{"dev_acc": 0.98, "val_attn_corr": 0.4}]'}

    saved = {}
    monkeypatch.setenv("XAIBENCH_PROFILE", "full")  # save_gap_tables activates the profile: restored after the test
    monkeypatch.setattr(ag, "run_variant", fake_variant)
    monkeypatch.setattr(loaders, "load", lambda name: None)
    monkeypatch.setattr(tables, "save_table", lambda df, name, title=None: saved.__setitem__(name, df))
    ag.save_gap_tables("full", seeds=[0], variants={"ours": {}})
    summary, runs = ag.save_gap_tables("full", seeds=[1], variants={"ours": {}})
    assert sorted(runs["seed"]) == [0, 1] and summary["n_seeds"].tolist() == [2]
    assert summary["ours"].iloc[0] == pytest.approx(0.55)
    assert saved["attribution_gt_attention_gap"] is summary


def test_stored_gap_summary_is_none_until_a_run_is_stored_and_trains_nothing(dirs, monkeypatch):
    """Notebook 24 shows the gap table of the stored runs: nothing stored -> None (no training, no table);
    one stored seed -> its one-row summary."""
    from xaibench import tables
    from xaibench.data import loaders
    from xaibench.evaluation.attribution_gt import attention_gap as ag

    calls, saved = [], {}

    def fake_variant(df, cfg, seed, name, **changes):
        calls.append((name, seed))
        return {"variant": name, "seed": seed, "hidden": 64, "n_train": 7000, "tokens_per_review": 30.0,
                "attr_articles": 0.4, "article_share": 0.09, "epochs": 2, "val_acc": 0.98,
                "test_acc": 0.99, "epoch_history": '[{"dev_acc": 0.98, "val_attn_corr": 0.4}]'}

    monkeypatch.setenv("XAIBENCH_PROFILE", "full")
    monkeypatch.setattr(ag, "run_variant", fake_variant)
    monkeypatch.setattr(ag, "VARIANTS", {"ours": {}})
    monkeypatch.setattr(loaders, "load", lambda name: None)
    monkeypatch.setattr(tables, "save_table", lambda df, name, title=None: saved.__setitem__(name, df))
    assert ag.stored_gap_summary("full") is None
    assert calls == [] and saved == {}
    with pytest.raises(ag.NoStoredGapRuns, match="make attention-gap PROFILE=full"):
        ag.save_gap_tables("full", stored_only=True)
    ag.save_gap_tables("full", seeds=[2])
    assert calls == [("ours", 2)]
    got = ag.stored_gap_summary("full")
    assert calls == [("ours", 2)]  # read, not retrained
    assert got["n_seeds"].tolist() == [1] and got["ours"].iloc[0] == pytest.approx(0.4)


def test_attention_gap_step_records_its_time_only_when_it_trained(dirs, monkeypatch, tmp_path):
    """``make attention-gap`` (the module's main) writes reports/full/steps/attention-gap.json with the number of
    runs it trained; a rerun that reads every run from the store leaves that record alone."""
    import json

    from xaibench import steps, tables
    from xaibench.data import loaders
    from xaibench.evaluation.attribution_gt import attention_gap as ag

    def fake_variant(df, cfg, seed, name, **changes):
        return {"variant": name, "seed": seed, "hidden": 64, "n_train": 7000, "tokens_per_review": 30.0,
                "attr_articles": 0.4, "article_share": 0.09, "epochs": 2, "val_acc": 0.98,
                "test_acc": 0.99, "epoch_history": '[{"dev_acc": 0.98, "val_attn_corr": 0.4}]'}

    monkeypatch.setenv("XAIBENCH_PROFILE", "full")
    monkeypatch.setenv("XAIBENCH_MAKE_RUN", "run-1")
    monkeypatch.setenv("XAIBENCH_MAKE_COLD", "yes")
    monkeypatch.setattr(ag, "run_variant", fake_variant)
    monkeypatch.setattr(ag, "VARIANTS", {"ours": {}, "h200": {"hidden": 200}})
    monkeypatch.setattr(loaders, "load", lambda name: None)
    monkeypatch.setattr(tables, "save_table", lambda df, name, title=None: None)
    monkeypatch.setattr(steps, "steps_dir", lambda: tmp_path / "steps")
    ag.main(["--profile", "full", "--seeds", "0", "1"])
    rec = json.loads((tmp_path / "steps" / "attention-gap.json").read_text())
    assert rec["computed"] == 4 and rec["make_run"] == "run-1" and rec["cold_start"] is True
    assert rec["parameters"] == {"seeds": [0, 1]} and rec["wall_seconds"] >= 0
    monkeypatch.setenv("XAIBENCH_MAKE_RUN", "run-2")
    ag.main(["--profile", "full", "--seeds", "0", "1"])  # every run stored: the record stays
    assert json.loads((tmp_path / "steps" / "attention-gap.json").read_text())["make_run"] == "run-1"
    ag.main(["--profile", "full", "--seeds", "2"])  # one new seed: trained, recorded
    rec = json.loads((tmp_path / "steps" / "attention-gap.json").read_text())
    assert rec["computed"] == 2 and rec["make_run"] == "run-2"


def test_pair_runs_do_not_depend_on_the_group_plan_and_older_entries_are_found(images, dirs):
    """The species-pair runs read no group field of the plan: changing the group runs reuses them, also
    from an entry stored when the key still held the group fields."""
    import dataclasses
    import shutil

    from xaibench.store import ResultStore

    ir, plan, calls = images
    cfg = ir.ImageConfig(epochs=3)
    first = ir.run_images(cfg, plan)
    n = len(calls)
    other = dataclasses.replace(plan, group_runs_per_kind=5, group_kinds=("blur",))
    pd.testing.assert_frame_equal(ir.run_images(cfg, other)["images_attr"], first["images_attr"])
    assert len(calls) == n
    # an entry written under the older key (the whole plan) is found and not recomputed
    store: ResultStore = ir.images_store()
    for c in store.configs():
        store.save({**c, "plan": {**c["plan"], "group_runs_per_kind": 1, "group_kinds": ["noise"]}},
                   store.load(c))
        shutil.rmtree(store.path(c))
    assert [set(c["plan"]) >= {"group_kinds"} for c in store.configs()] == [True]
    got = ir.run_images(cfg, other)
    assert len(calls) == n
    pd.testing.assert_frame_equal(got["images_attr"], first["images_attr"])
    ir.run_images(dataclasses.replace(cfg, epochs=4), other)  # another pair setting is not mistaken for it
    assert len(calls) > n


def test_group_variant_runs_are_read_from_a_stored_run_groups_entry_of_the_variant(images, dirs, monkeypatch):
    """When run_groups already stored all runs under the variant's configuration, group_variant_runs takes the named
    manipulations' runs from that entry (nothing trained), and they equal the runs it trains itself."""
    ir, _, calls = images
    _twelve_species(monkeypatch)
    cfg = ir.ImageConfig(epochs=3, group_size=2)
    kinds = ("blur", "watermark", "hue")
    ir.run_groups(ir.ImageConfig(epochs=3, group_size=2, widths=(8, 16)), kinds, runs_per_kind=2)
    assert calls == list(range(6))
    got = ir.group_variant_runs(cfg, kinds, runs_per_kind=2, only=("watermark", "hue"), widths=(8, 16))
    assert len(calls) == 6 and list(got["run"]) == [2, 3, 4, 5]                # read, not trained
    fresh = ir.group_variant_runs(cfg, kinds, runs_per_kind=2, only=("watermark", "hue"), widths=(8, 16), force=True)
    assert calls[6:] == [2, 3, 4, 5]
    pd.testing.assert_frame_equal(got, fresh[got.columns])


def test_group_variant_runs_train_the_same_jobs_with_the_changed_fields(images, dirs, monkeypatch):
    """A paired variant trains exactly run_groups' jobs of the named manipulations (same species groups,
    manipulation and seed) with only the named ImageConfig fields changed, keeps their run indices, and is stored."""
    ir, _, calls = images
    _twelve_species(monkeypatch)
    seen = _record_runs(ir, monkeypatch, lambda pair, manip, seed, cfg: (pair, manip.name(), seed, cfg.widths,
                                                                          cfg.epochs))
    cfg = ir.ImageConfig(epochs=3, group_size=2)
    kinds = ("blur", "brightness", "hue")
    ir.run_groups(cfg, kinds, runs_per_kind=2)
    base = [s for s in seen if s[1].startswith("brightness")]
    seen.clear()
    runs = ir.group_variant_runs(cfg, kinds, runs_per_kind=2, only=("brightness",), widths=(8, 16))
    assert [s[:3] for s in seen] == [s[:3] for s in base] and len(seen) == 2
    assert all(s[3] == (8, 16) and s[4] == 3 for s in seen) and all(s[3] == cfg.widths for s in base)
    assert list(runs["run"]) == [2, 3]
    ir.group_variant_runs(cfg, kinds, runs_per_kind=2, only=("brightness",), widths=(8, 16))
    assert len(seen) == 2                                                        # stored
    ir.group_variant_runs(cfg, kinds, runs_per_kind=2, only=("brightness",), widths=(8, 32))
    assert len(seen) == 4                                                        # another variant: trained
    with pytest.raises(ValueError, match="at least one ImageConfig field"):
        ir.group_variant_runs(cfg, kinds, runs_per_kind=2)
    with pytest.raises(ValueError, match="no noise runs"):
        ir.group_variant_runs(cfg, kinds, runs_per_kind=2, only=("noise",), widths=(8,))
    with pytest.raises(ValueError, match="cannot change group_size"):
        ir.group_variant_runs(cfg, kinds, runs_per_kind=2, group_size=3)
