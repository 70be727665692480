"""Result stores keyed on the full configuration, written as one unit, rebuilt when damaged."""
from __future__ import annotations

import os
import time

import numpy as np
import pandas as pd
import pytest

from xaibench import io
from xaibench.store import ResultStore, canonical, config_key

CFG = {"explainers": ["lime", "shap"], "ks": [1, 2], "lime": {"samples": 500}, "seed": 42}


def _parts():
    return {"scores": pd.DataFrame({"explainer": ["lime", "shap"], "value": [0.5, 0.25]}),
            "weights": np.arange(6, dtype=np.float32).reshape(2, 3), "meta": {"n_rows": 2}}


def test_round_trip(tmp_path):
    s = ResultStore(tmp_path, "ge", version=1)
    assert s.load(CFG) is None
    s.save(CFG, _parts())
    got = s.load(CFG)
    pd.testing.assert_frame_equal(got["scores"], _parts()["scores"])
    np.testing.assert_array_equal(got["weights"], _parts()["weights"])
    assert got["meta"] == {"n_rows": 2}


def test_every_setting_and_the_version_change_the_key(tmp_path):
    base = config_key(CFG, 1)
    assert config_key(dict(reversed(list(CFG.items()))), 1) == base  # order of keys does not matter
    for changed in ({**CFG, "explainers": ["lime"]}, {**CFG, "ks": [1, 2, 3]}, {**CFG, "lime": {"samples": 1000}}):
        assert config_key(changed, 1) != base
    assert config_key(CFG, 2) != base
    s = ResultStore(tmp_path, "ge", version=1)
    s.save(CFG, _parts())
    assert s.load({**CFG, "explainers": ["lime", "shap", "mine"]}) is None  # never the old result
    assert ResultStore(tmp_path, "ge", version=2).load(CFG) is None


def test_unkeyable_values_are_rejected():
    with pytest.raises(TypeError, match="cannot key"):
        canonical({"model": object()})
    assert canonical({"b": (1, np.int64(2)), "a": {3.0}}) == {"a": [3.0], "b": [1, 2]}


@pytest.mark.parametrize("damage", ["truncate_part", "drop_manifest", "drop_part", "alter_manifest"])
def test_a_damaged_entry_is_named_removed_and_recomputed(tmp_path, damage):
    s = ResultStore(tmp_path, "runs", version=1)
    dest = s.save(CFG, _parts())
    if damage == "truncate_part":
        f = dest / "scores.parquet"
        f.write_bytes(f.read_bytes()[:20])
    elif damage == "drop_manifest":
        (dest / "manifest.json").unlink()
    elif damage == "drop_part":
        (dest / "weights.npy").unlink()
    else:
        (dest / "manifest.json").write_text("{not json")
    with pytest.warns(RuntimeWarning, match=str(dest.name)):
        assert s.load(CFG) is None
    assert not dest.exists()
    s.save(CFG, _parts())
    assert s.load(CFG)["meta"] == {"n_rows": 2}


def test_leftovers_of_a_killed_write_are_cleaned(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / ".abc.xyz.tmp").mkdir()
    (folder / ".abc.old").mkdir()
    old = time.time() - 2 * io.STALE_TMP_AGE_S
    for p in folder.iterdir():
        os.utime(p, (old, old))
    (folder / ".def.uvw.tmp").mkdir()  # another process's entry being written right now: kept
    ResultStore(tmp_path, "runs", version=1)
    assert [p.name for p in folder.iterdir()] == [".def.uvw.tmp"]


def test_bad_names(tmp_path):
    with pytest.raises(ValueError, match="one folder name"):
        ResultStore(tmp_path, "a/b", 1)
    s = ResultStore(tmp_path, "x", 1)
    with pytest.raises(ValueError, match="part names"):
        s.save(CFG, {"bad name": {"a": 1}})
    with pytest.raises(ValueError, match="at least one part"):
        s.save(CFG, {})


def test_configs_lists_finished_entries_oldest_first(tmp_path):
    s = ResultStore(tmp_path, "runs", version=1)
    assert s.configs() == []
    s.save({"seed": 2, "a": [1]}, _parts())
    first = s.path({"seed": 2, "a": [1]})
    old = time.time() - 100
    os.utime(first / "manifest.json", (old, old))
    s.save({"seed": 1}, _parts())
    (tmp_path / "runs" / ".half.xyz.tmp").mkdir()          # a write in flight: no manifest, not listed
    (tmp_path / "runs" / "0000000000000000").mkdir()       # a killed write's folder without a manifest
    assert s.configs() == [{"a": [1], "seed": 2}, {"seed": 1}]
    assert ResultStore(tmp_path, "runs", version=2).configs() == []  # another version's entries are not its own


_WRITER = """
import json, sys, warnings
import numpy as np
from xaibench.store import ResultStore

root, me, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = ResultStore(root, "runs", version=1)
out = {"warnings": [], "errors": [], "mixed": 0}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for i in range(n):
        try:
            s.save({"seed": 1}, {"a": np.full(2000, me), "b": {"writer": me}})
            got = s.load({"seed": 1})
            if got is not None and int(got["a"][0]) != got["b"]["writer"]:
                out["mixed"] += 1
        except Exception as err:
            out["errors"].append(f"{type(err).__name__}: {err}")
out["warnings"] = [str(w.message) for w in caught]
print(json.dumps(out))
"""


def test_two_processes_writing_one_entry_serialise_without_false_damage(tmp_path):
    """Two writers of one entry raised false "damaged" warnings, deleted the entry mid-write and crashed writes."""
    import json
    import subprocess
    import sys

    script = tmp_path / "writer.py"
    script.write_text(_WRITER)
    procs = [subprocess.Popen([sys.executable, str(script), str(tmp_path / "store"), str(me), "150"],
                              stdout=subprocess.PIPE, text=True) for me in (1, 2)]
    results = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    for r in results:
        assert r["errors"] == [] and r["warnings"] == [] and r["mixed"] == 0, r
    got = ResultStore(tmp_path / "store", "runs", version=1).load({"seed": 1})
    assert int(got["a"][0]) == got["b"]["writer"] in (1, 2)
