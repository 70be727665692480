"""``python -m xaibench.bench augmentation_overlap``: would notebook 25's species-group runs finish sooner if each
epoch's training images were prepared in a thread while the previous epoch trains?  ->
``figures/tables/bench_augmentation_overlap.csv``.

A run draws its training images again at every epoch (crop, flip, the manipulation of the positive class,
normalisation: :func:`~xaibench.evaluation.attribution_gt.image_runner.run_one`), then trains on them; the
preparation is about a fifth of an epoch (``bench_augmentation``).  Drawn ahead in a thread, the next epoch's
images come from the same generator in the same order (the epoch's shuffle is drawn before the thread starts), so
the weights are the same, bit for bit.  The time saved depends on whether a core is idle while torch trains.

Both ways run here in the bench's own copy of the run's training loop (the same split, labels, model, Adam step and
draws as :func:`run_one`; no validation or explanations), each cell in a fresh process with the project's 2 torch
threads: one cell alone, as ``XAIBENCH_SCHEDULER=serial`` runs them, and two side by side with
``OMP_WAIT_POLICY=PASSIVE``, as ``make all``'s process pool runs them on 2 cores.  Per row: the seconds of an epoch
after the first (the first has nothing prepared ahead), the seconds the loop waited for its images, the throughput
against preparing in the loop (cells per second, the slowest concurrent cell deciding; the mean, smallest and largest
ratio over ``repeats`` alternating pairs) and whether the trained weights equal those of preparing in the loop."""
from __future__ import annotations

import hashlib
import json
import os
import time

import numpy as np
import pandas as pd

from .cores import run_children

#: the ways to prepare an epoch's images: in the loop (the runs' way) or ahead in a thread
WAYS = {"in the loop (now)": False, "next epoch ahead in a thread": True}
#: cells at once -> the manipulation kind of each cell (one species-group run per kind)
CELLS = {1: ("blur",), 2: ("blur", "hue")}


def train_cell(kind: str, ahead: bool, n_epochs: int, seed: int = 0, profile: str = "full") -> dict:
    """One species-group run of ``kind`` trained ``n_epochs`` epochs (``profile``'s data and model, the run's draws);
    each epoch's images prepared in the loop or, with ``ahead``, the next epoch's in a thread while this one trains.
    Returns the seconds of each epoch, the seconds of each epoch the loop waited for its images and a digest of the
    trained weights."""
    from concurrent.futures import ThreadPoolExecutor

    import torch

    from .. import levers
    from ..data.birds import all_classes, load_classes
    from ..evaluation.attribution_gt import image_runner as ir
    from ..models.resnet_small import SmallResNet, normalise
    from ..utils import set_seed
    from .common import train_epoch

    cfg = ir.ImageConfig.groups(profile)
    _, pair, manip, r, _ = ir.group_jobs(all_classes(), [kind], 1, cfg.group_size, seed)[0]
    images = load_classes(sorted({c for g in pair for c in g}), size=cfg.preresize or None)
    manip = ir.sized_manipulation(manip, cfg)
    set_seed(seed)
    rng = np.random.default_rng(seed)
    sp = ir.split_pair(images, pair, cfg, seed)
    labels = {k: ir.reassign_labels_binary(v[1], r, rng) for k, v in sp.items()}["train"]  # run_one's draws
    model = SmallResNet(2, cfg.widths)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=1e-4, **levers.optimizer_kwargs())
    y = torch.as_tensor(labels)

    def prepare(buf):
        return normalise(ir._apply(sp["train"][0], labels, manip, cfg.canvas, rng, train=True), out=buf)

    bufs, pending, epochs, waited = [None, None], None, [], []
    with ThreadPoolExecutor(max_workers=1) as pool:
        for epoch in range(n_epochs):
            t0 = time.perf_counter()
            x = prepare(bufs[epoch % 2]) if pending is None else pending.result()
            waited.append(time.perf_counter() - t0)
            bufs[epoch % 2] = x
            perm = rng.permutation(len(x))  # drawn before the next epoch's images, in either way
            # the next epoch's images go into the other buffer: this epoch still reads its own
            pending = pool.submit(prepare, bufs[(epoch + 1) % 2]) if ahead and epoch + 1 < n_epochs else None
            model.train()
            train_epoch(model, opt, x, y, perm, cfg.batch_size)
            epochs.append(time.perf_counter() - t0)
    h = hashlib.sha256()
    for p in model.state_dict().values():
        h.update(p.detach().contiguous().numpy().tobytes())
    return {"epoch_seconds": epochs, "wait_seconds": waited, "digest": h.hexdigest()[:16],
            "torch_threads": torch.get_num_threads()}


def run_cell(kind: str, ahead: str, n_epochs: str, out: str) -> None:
    """Child process: :func:`train_cell` of ``kind``, its result written to ``out`` as JSON."""
    from ..config import use_profile

    use_profile("full")
    res = train_cell(kind, ahead == "1", int(n_epochs))
    with open(out, "w") as fh:
        json.dump(res, fh)


def _run_cells(kinds: tuple[str, ...], ahead: bool, n_epochs: int) -> list[dict]:
    """One child process per kind, started together (PASSIVE waiting when more than one, as make all's pool)."""
    env = dict(os.environ, XAIBENCH_QUIET="1", XAIBENCH_SCHEDULER="serial")
    env.pop("OMP_WAIT_POLICY", None)
    if len(kinds) > 1:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    return run_children([["_overlap_one", kind, str(int(ahead)), str(n_epochs)] for kind in kinds], env,
                        f"augmentation_overlap cells {kinds} (ahead={ahead})")


def bench_augmentation_overlap(n_epochs: int = 4, repeats: int = 3) -> pd.DataFrame:
    """Both ways (:data:`WAYS`) for one cell and for two side by side (:data:`CELLS`), alternating, ``repeats``
    times each; see the module docstring.  A way's throughput is compared with the in-loop run of the same repeat
    (the two ran one after the other): the mean of those ratios and their smallest and largest."""
    from ..device import load_average, machine_info

    if n_epochs < 2:
        raise ValueError(f"n_epochs must be at least 2 (the first epoch has nothing prepared ahead), got {n_epochs}")
    info = machine_info()
    rows = []
    for n_cells, kinds in CELLS.items():
        runs: dict[str, list[list[dict]]] = {way: [] for way in WAYS}
        for _ in range(max(1, int(repeats))):
            for way, ahead in WAYS.items():
                runs[way].append(_run_cells(kinds, ahead, n_epochs))
        rates = {way: [throughput(res) for res in reps] for way, reps in runs.items()}
        ref = "in the loop (now)"
        for way, reps in runs.items():
            ratios = [a / b for a, b in zip(rates[way], rates[ref])]
            rows.append({"cells_at_once": n_cells, "way": way, "kinds": " ".join(kinds), "epochs": n_epochs,
                         "repeats": len(reps),
                         "seconds_per_later_epoch": round(float(np.mean(
                             [s for res in reps for r in res for s in r["epoch_seconds"][1:]])), 2),
                         "waited_seconds_per_later_epoch": round(float(np.mean(
                             [s for res in reps for r in res for s in r["wait_seconds"][1:]])), 2),
                         "throughput_vs_in_loop": round(float(np.mean(ratios)), 3),
                         "throughput_min": round(min(ratios), 3), "throughput_max": round(max(ratios), 3),
                         "faster_in_every_repeat": bool(way != ref and min(ratios) > 1.0),
                         "identical_weights": all(r["digest"] == q["digest"] for res, base in zip(reps, runs[ref])
                                                  for r, q in zip(res, base)),
                         "torch_threads": reps[0][0]["torch_threads"],
                         "omp_wait_policy": "PASSIVE" if n_cells > 1 else "unset (spin)",
                         "cpus": info["cpus"], "cpu_model": info["cpu_model"], "load_avg_1min": load_average()})
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def throughput(res: list[dict]) -> float:
    """Cells per second of the later epochs of cells run side by side: their number over the slowest one's
    seconds."""
    return len(res) / max(sum(r["epoch_seconds"][1:]) for r in res)
