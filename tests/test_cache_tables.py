"""Output cache, atomic IO, tidy tables and seed parsing."""
import numpy as np
import pandas as pd
import pytest

from xaibench import io, tables
from xaibench.cache import OutputCache
from xaibench.config import parse_seeds


def test_cache_computes_each_text_once(tmp_path):
    cache = OutputCache(tmp_path / "c.sqlite")
    calls = []

    def compute(texts):
        calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts])

    out = cache.cached_call("ns", ["a", "bb", "a"], compute)
    np.testing.assert_array_equal(out, [[1, 1], [2, 1], [1, 1]])
    assert calls == [["a", "bb"]]  # duplicates computed once
    out2 = cache.cached_call("ns", ["bb", "ccc"], compute)
    assert calls[-1] == ["ccc"]
    np.testing.assert_array_equal(out2, [[2, 1], [3, 1]])
    cache.cached_call("other", ["a"], compute)  # namespaces are separate
    assert calls[-1] == ["a"]
    cache.close()
    # persisted across processes/instances
    again = OutputCache(tmp_path / "c.sqlite")
    assert set(again.get_many("ns", ["a", "bb", "ccc"])) and len(again.get_many("ns", ["a", "bb", "ccc"])) == 3


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    dest = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with io.atomic_path(dest) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("interrupted")
    assert not dest.exists()
    assert list(tmp_path.iterdir()) == []
    io.write_text(dest, "ok")
    assert dest.read_text() == "ok"


def test_aggregate_seeds_and_markdown(tmp_path):
    df = pd.DataFrame({"task": ["a", "a", "b"], "seed": [1, 2, 1], "value": [1.0, 3.0, 5.0]})
    agg = tables.aggregate_seeds(df, ["task"])
    a = agg.set_index("task")
    assert a.loc["a", "ours"] == 2.0 and a.loc["a", "ours_std"] == pytest.approx(np.sqrt(2))
    assert np.isnan(a.loc["b", "ours_std"]) and a.loc["b", "n_seeds"] == 1
    agg["paper"] = [2.5, np.nan]
    path = tables.save_table(agg, "t", out_dir=tmp_path)
    md = (tmp_path / "t.md").read_text()
    assert "2.000 ± 1.414" in md and "2.500" in md
    assert pd.read_csv(path).shape == (2, 5)
    with pytest.raises(ValueError, match="ours_std"):
        tables.save_table(pd.DataFrame({"ours": [1]}), "bad", out_dir=tmp_path)


def test_paper_values_ship_with_the_package():
    t8 = tables.paper_values("cebab", paper_table="Table 8", model="lstm", task="binary",
                             condition="exclusive", split="dev")
    assert t8["value"].tolist() == [0.94]
    with pytest.raises(KeyError, match="columns"):
        tables.paper_values("cebab", nonsense="x")


@pytest.mark.parametrize("given,expected", [("42 43", [42, 43]), ("42,43", [42, 43]), (42, [42]), ([1, 2], [1, 2])])
def test_parse_seeds(given, expected):
    assert parse_seeds(given) == expected


def test_parse_seeds_rejects_garbage():
    with pytest.raises(ValueError, match="SEEDS="):
        parse_seeds("forty-two")


@pytest.mark.parametrize("damage", ["not a database", "truncated"])
def test_a_damaged_output_cache_is_named_removed_and_rebuilt(tmp_path, damage):
    """A damaged outputs.sqlite broke every model with caching on ("file is not a database", the file not
    named), and every later run too."""
    path = tmp_path / "outputs.sqlite"
    if damage == "truncated":
        full = OutputCache(path)
        full.put_many("ns", [f"t{i}" for i in range(2000)], np.ones((2000, 64)))
        full.close()
        path.write_bytes(path.read_bytes()[:50])  # a header cut short, as by a full disk
    else:
        path.write_bytes(b"these bytes are not an SQLite file\n" * 200)
    with pytest.warns(RuntimeWarning, match=f"output cache {path} is damaged or unreadable.*removed"):
        cache = OutputCache(path)
    out = cache.cached_call("ns", ["a", "bb"], lambda texts: np.array([[len(t)] for t in texts]))
    np.testing.assert_array_equal(out, [[1], [2]])
    cache.close()
    assert len(OutputCache(path).get_many("ns", ["a", "bb"])) == 2  # rebuilt: the next run reads it


def test_damage_that_shows_only_in_a_later_read_is_repaired_there(tmp_path):
    path = tmp_path / "outputs.sqlite"
    full = OutputCache(path)
    full.put_many("ns", [f"t{i}" for i in range(3000)], np.ones((3000, 64)))
    full.close()
    cache = OutputCache(path)  # opens: the first page is intact
    data = bytearray(path.read_bytes())
    data[8192:len(data) - 4096] = b"\xff" * (len(data) - 4096 - 8192)
    path.write_bytes(bytes(data))
    with pytest.warns(RuntimeWarning, match=f"output cache {path} is damaged"):
        out = cache.cached_call("ns", ["t1", "t2999"], lambda texts: np.zeros((len(texts), 64)))
    assert out.shape == (2, 64)
    assert len(cache.get_many("ns", ["t1", "t2999"])) == 2
