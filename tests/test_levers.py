"""Result-changing speed levers (xaibench.levers): off by default and then without effect on any bit; on, they
change what they name, write below reports/levers-<names>/, and make levers compares their numbers and verdicts
with the float32 run's (xaibench.evaluation.levers), with known values."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from xaibench import levers, paths
from xaibench.evaluation import levers as L
from xaibench.models.training import TrainConfig, train_loop

from .test_training_optimizer import LABELS, TEXTS, Tiny, _encode, _identical

ROOT = Path(__file__).resolve().parents[1]


def test_lever_names_are_checked_sorted_and_deduplicated(monkeypatch):
    assert levers.check_levers("") == () and levers.check_levers(None) == ()
    assert levers.check_levers("fused_adam, bf16 bf16") == ("bf16", "fused_adam")
    with pytest.raises(ValueError, match=r"XAIBENCH_LEVERS='bf17'.*'bf17' is not a lever.*bf16, channels_last"):
        levers.check_levers("bf17")
    monkeypatch.setenv("XAIBENCH_LEVERS", "channels_last bf16")
    assert levers.active() == ("bf16", "channels_last") and levers.tag() == "levers-bf16+channels_last"
    monkeypatch.delenv("XAIBENCH_LEVERS")
    assert levers.tag() == ""


def test_off_the_levers_change_nothing(monkeypatch):
    monkeypatch.delenv("XAIBENCH_LEVERS", raising=False)
    x = torch.randn(2, 3, 4, 4)
    m = torch.nn.Conv2d(3, 2, 3)
    assert levers.memory_format(x) is x and levers.memory_format(m) is m
    assert levers.optimizer_kwargs() == {"foreach": True}
    with levers.autocast("cpu"):
        assert torch.nn.Linear(3, 2)(torch.randn(1, 3)).dtype == torch.float32


def test_on_each_lever_changes_what_it_names(monkeypatch):
    monkeypatch.setenv("XAIBENCH_LEVERS", "bf16 channels_last fused_adam")
    with levers.autocast("cpu"):
        assert torch.nn.Linear(3, 2)(torch.randn(1, 3)).dtype == torch.bfloat16
    x = levers.memory_format(torch.randn(2, 3, 4, 4))
    assert x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous()
    assert levers.memory_format(torch.randn(2, 3)).is_contiguous()  # not an image batch: unchanged
    assert levers.optimizer_kwargs() == {"fused": True}


# torch's CPU backward of a channels-last 1x1 stride-2 convolution (a residual shortcut), repeated
_SHORTCUT_BACKWARD = """
import sys, torch
torch.set_num_threads(int(sys.argv[1]))
torch.manual_seed(0)
x = torch.rand(4, 4, 8, 8).contiguous(memory_format=torch.channels_last).requires_grad_()
conv = torch.nn.Conv2d(4, 8, 1, stride=2, bias=False).to(memory_format=torch.channels_last)
for _ in range(20):
    conv(x).sum().backward()
print("done")
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_channels_last_shortcut_backward_corrupts_the_heap_on_one_thread_only(threads):
    """What levers.cpu_channels_last_safe guards against (torch 2.13 on an AVX2 EPYC): on one thread the process
    dies (glibc's heap check aborts it, or it segfaults); on two it finishes.  Where one thread finishes (another
    CPU's kernels) the test says so and skips: the guard stays, since the bug is in torch's CPU kernels."""
    import sys

    out = subprocess.run([sys.executable, "-c", _SHORTCUT_BACKWARD, str(threads)], capture_output=True, text=True,
                         timeout=120)
    if threads == 1 and out.returncode == 0:
        pytest.skip("the channels-last shortcut backward does not corrupt the heap with this CPU's kernels")
    assert levers.cpu_channels_last_safe(threads) == (out.returncode == 0), (threads, out.returncode, out.stderr[-500:])
    assert (out.stdout.strip() == "done") == (threads >= 2)


def test_the_channels_last_lever_refuses_a_cpu_model_on_one_thread(monkeypatch):
    monkeypatch.setenv("XAIBENCH_LEVERS", "channels_last")
    assert not levers.cpu_channels_last_safe(1) and levers.cpu_channels_last_safe(2) and levers.cpu_channels_last_safe(8)
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        with pytest.raises(RuntimeError, match="cannot train on one CPU thread.*XAIBENCH_THREADS=2"):
            levers.memory_format(torch.nn.Conv2d(3, 2, 1, stride=2))
        x = levers.memory_format(torch.randn(2, 3, 4, 4))  # a batch alone is only re-laid out
        assert x.is_contiguous(memory_format=torch.channels_last)
        torch.set_num_threads(2)
        m = levers.memory_format(torch.nn.Conv2d(3, 2, 1, stride=2))
        assert m.weight.is_contiguous(memory_format=torch.channels_last)
    finally:
        torch.set_num_threads(old)


def _train() -> Tiny:
    module = Tiny()
    train_loop(module, _encode, TEXTS, LABELS, TrainConfig(lr=5e-2, epochs=2, batch_size=5, weight_decay=0.01))
    return module


def test_training_with_levers_off_is_bitwise_the_default_and_bf16_moves_weights(monkeypatch):
    monkeypatch.delenv("XAIBENCH_LEVERS", raising=False)
    default = _train()
    monkeypatch.setenv("XAIBENCH_LEVERS", "")
    assert _identical(default, _train()) == []
    monkeypatch.setenv("XAIBENCH_LEVERS", "bf16")
    moved = _train()
    assert _identical(default, moved), "bf16 autocast left every weight bit for bit unchanged"
    assert all(torch.isfinite(p).all() for p in moved.parameters())
    assert all(p.dtype == torch.float32 for p in moved.parameters())  # autocast: the weights stay float32


@pytest.mark.parametrize("raw, profile, where", [("", "full", ""), ("", "quick", "quick"),
                                                  ("bf16", "full", "levers-bf16"),
                                                  ("fused_adam,bf16", "quick", "quick/levers-bf16+fused_adam")])
def test_a_lever_run_writes_below_its_own_folder_in_python_and_make_alike(monkeypatch, raw, profile, where):
    monkeypatch.setenv("XAIBENCH_LEVERS", raw)
    monkeypatch.setenv("XAIBENCH_PROFILE", profile)
    assert paths.run_dir() == where
    table = paths.tables_dir()
    assert table == (paths.project_root() / "figures" / "tables" if not where
                     else paths.project_root() / "reports" / where / "figures" / "tables")
    if shutil.which("make") is None:
        pytest.skip("needs GNU make")
    out = subprocess.run(["make", "--no-print-directory", "--eval", "print-%: ; @echo $($*)", "print-REPORTS",
                          f"XAIBENCH_LEVERS={raw}", f"PROFILE={profile}"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"reports/{where or 'full'}"


# ---- the comparison (known values) ----------------------------------------------------------------------------
def test_a_number_is_within_its_stated_spread_or_not():
    base = pd.DataFrame({"method": ["a", "b"], "ours": [0.50, 0.70], "ours_std": [0.10, 0.01], "paper": [0.5, 0.6]})
    lever = base.assign(ours=[0.55, 0.75])  # moved by 0.05 each: inside a's 0.10, outside b's 0.01
    got = L.compare_table(base, lever)
    assert got["row"].tolist() == ["method=a", "method=b"]
    assert np.allclose(got["abs_diff"], [0.05, 0.05])
    assert got["within_spread"].tolist() == [True, False]
    assert set(got["spread_from"]) == {"ours_std"}


def test_without_ours_std_the_spread_is_the_std_over_seeds_and_changed_rows_are_refused():
    base = pd.DataFrame({"method": ["a"] * 3 + ["b"] * 3, "seed": [1, 2, 3] * 2,
                         "ours": [1.0, 2.0, 3.0, 5.0, 5.0, 5.0]})
    lever = base.assign(ours=base["ours"] + [0.5, 0.5, 0.5, 0.0, 0.0, 0.5])
    got = L.compare_table(base, lever)
    assert np.allclose(got["spread"], [1.0, 1.0, 1.0, 0.0, 0.0, 0.0])  # std of 1, 2, 3 is 1; of 5, 5, 5 is 0
    # spread 0: an unchanged number passes, a moved one does not
    assert got["within_spread"].tolist() == [True, True, True, True, True, False]
    assert set(got["spread_from"]) == {"std over seed"}
    assert L.compare_table(base, lever.iloc[:5]) == "6 rows in the float32 run, 5 with the lever"


def test_a_lever_is_admitted_only_when_every_number_is_within_spread_and_no_verdict_changes():
    numbers = pd.DataFrame({"lever": "bf16", "paper": ["p", "p", "q"], "table": ["p_t", "p_t", "q_t"],
                            "row": ["a", "b", "a"], "ours": [0.5, 0.7, 0.1], "ours_lever": [0.55, 0.7, 0.3],
                            "abs_diff": [0.05, 0.0, 0.2], "spread": [0.1, 0.1, 0.1],
                            "spread_from": "ours_std", "within_spread": [True, True, False]})
    verdicts = pd.DataFrame({"paper": ["p", "q"], "claim": ["c1", "c2"], "kind": "lever bf16",
                             "verdict_all": ["reproduced"] * 2, "verdict": ["reproduced", "inconclusive"],
                             "changed": [False, True]})
    s = L.summary(numbers, verdicts, {}).set_index("paper")
    assert bool(s.loc["p", "admitted"]) and s.loc["p", "within_spread"] == 2
    assert not bool(s.loc["q", "admitted"])
    assert s.loc["q", "reason"] == "1 of 1 numbers move by at least their seed spread; 1 of 1 verdicts change (c2)"
    assert s.loc["q", "max_diff_over_spread"] == pytest.approx(2.0)


def test_a_lever_run_identical_to_the_float32_tables_is_admitted_with_every_verdict_unchanged(tmp_path):
    """The comparison end to end on the committed Ge et al. tables: a lever run that reproduced them bit for bit
    moves nothing and changes no verdict."""
    src = ROOT / "figures" / "tables"
    base, run = tmp_path / "base", tmp_path / "reports" / "levers-bf16" / "figures" / "tables"
    base.mkdir()
    run.mkdir(parents=True)
    for p in src.glob("cf_faithfulness_*.csv"):
        shutil.copy2(p, base / p.name)
        shutil.copy2(p, run / p.name)
    out = tmp_path / "out"
    out.mkdir()
    s = L.run(base_dir=base, root=tmp_path, out_dir=out)
    assert s[["lever", "paper"]].values.tolist() == [["bf16", "cf_faithfulness"]]
    assert bool(s["admitted"].iloc[0]) and s["verdicts_compared"].iloc[0] > 5 and s["max_abs_diff"].iloc[0] == 0
    assert (out / "levers.md").is_file() and len(pd.read_csv(out / "levers_numbers.csv")) == s["numbers"].iloc[0]


@pytest.mark.parametrize("supported", [True, False])
def test_bf16_refuses_recurrent_layers_with_a_message_where_the_cpu_has_no_bfloat16_for_them(monkeypatch, supported):
    monkeypatch.setenv("XAIBENCH_LEVERS", "bf16")
    monkeypatch.setattr(levers, "cpu_bf16_recurrent_supported", lambda: supported)
    lstm, linear = torch.nn.LSTM(4, 4), torch.nn.Linear(4, 2)
    with levers.autocast("cpu", linear):  # no recurrent layer: autocast either way
        assert torch.is_autocast_cpu_enabled()
    if supported:
        with levers.autocast("cpu", lstm):
            assert torch.is_autocast_cpu_enabled()
    else:
        with pytest.raises(RuntimeError, match="recurrent layers, and this CPU has no bfloat16"):
            levers.autocast("cpu", lstm)
    monkeypatch.setenv("XAIBENCH_LEVERS", "")
    with levers.autocast("cpu", lstm):  # without the lever: nothing to refuse
        assert not torch.is_autocast_cpu_enabled()
