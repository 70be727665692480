"""``python -m xaibench.bench augmentation``: an epoch's training images of a species-group run (notebook 25:
2,000 images drawn again at every epoch -- crop, flip and the manipulation of the positive class -- then
normalised) as prepared now and as prepared before -> ``figures/tables/bench_augmentation.csv``.

Before, each manipulated image computed its manipulation's effective region and HSV shift again, and the
normalisation ran its arithmetic on every pixel into new arrays.  Now those maps are computed once per
manipulation and canvas (:meth:`~xaibench.evaluation.attribution_gt.manipulations.Manipulation._fixed`) and each
pixel is looked up in a table of its 256 levels, written into one buffer the run reuses every epoch
(:func:`~xaibench.models.resnet_small.normalise`).  Both paths draw the same random numbers; ``identical`` says
whether they give the same tensor, bit for bit, at every timed epoch.  ``train_epoch_seconds``: one epoch of
training on those images (forward, backward, Adam) for scale.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd


def _epochs(manip, images, labels, size: int, seed: int, n_epochs: int, before: bool) -> tuple[list, list[float]]:
    """The normalised training tensors of ``n_epochs`` epochs and the seconds each took to prepare."""
    from ..evaluation.attribution_gt import image_runner as ir
    from ..evaluation.attribution_gt import manipulations as mp
    from ..models.resnet_small import normalise, normalise_arithmetic

    rng = np.random.default_rng(seed)
    out, secs, buf = [], [], None
    for _ in range(n_epochs):
        t0 = time.perf_counter()
        if before:
            with mp.maps_per_image():
                x = normalise_arithmetic(ir._apply(images, labels, manip, size, rng, train=True))
        else:
            buf = normalise(ir._apply(images, labels, manip, size, rng, train=True), out=buf)
            x = buf
        secs.append(time.perf_counter() - t0)
        out.append(x.clone())
    return out, secs


def bench_augmentation(n_epochs: int = 3, seed: int = 0) -> pd.DataFrame:
    import torch

    from ..data.birds import all_classes, load_classes
    from ..evaluation.attribution_gt import image_runner as ir
    from ..evaluation.attribution_gt import manipulations as mp
    from ..models.resnet_small import SmallResNet
    from .common import machine_context, train_epoch

    cfg = ir.ImageConfig.groups("full")
    rows = []
    for kind in mp.KINDS:
        _, pair, manip, r, _ = ir.group_jobs(all_classes(), [kind], 1, cfg.group_size, seed)[0]
        images = load_classes(sorted({c for g in pair for c in g}), size=cfg.preresize or None)
        manip = ir.sized_manipulation(manip, cfg)
        sp = ir.split_pair(images, pair, cfg, seed)
        labels = ir.reassign_labels_binary(sp["train"][1], r, np.random.default_rng(seed))
        mp._FIXED.clear()  # the first epoch computes the maps, as in a run
        new, t_new = _epochs(manip, sp["train"][0], labels, cfg.canvas, seed, n_epochs, before=False)
        old, t_old = _epochs(manip, sp["train"][0], labels, cfg.canvas, seed, n_epochs, before=True)
        same = all(torch.equal(a, b) for a, b in zip(new, old))
        torch.manual_seed(seed)
        model = SmallResNet(2, cfg.widths)
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=1e-4)
        x, y = new[0], torch.as_tensor(labels)
        perm = np.random.default_rng(seed).permutation(len(x))
        t0 = time.perf_counter()
        train_epoch(model, opt, x, y, perm, cfg.batch_size)
        train_s = time.perf_counter() - t0
        for path, secs in (("before: maps per image, arithmetic per pixel", t_old),
                           ("now: maps once, table look-up into one buffer", t_new)):
            rows.append({"manipulation": kind, "path": path, "n_images": len(x), "canvas": cfg.canvas,
                         "epochs": n_epochs, "seconds_per_epoch": float(np.mean(secs)),
                         "train_epoch_seconds": train_s, "identical": same})
        rows[-1]["speedup_vs_before"] = rows[-2]["seconds_per_epoch"] / rows[-1]["seconds_per_epoch"]
        rows[-2]["speedup_vs_before"] = 1.0
    df = pd.DataFrame(rows)
    df["share_of_epoch"] = df["seconds_per_epoch"] / (df["seconds_per_epoch"] + df["train_epoch_seconds"])
    for k, v in machine_context().items():
        df[k] = v
    return df.round({"seconds_per_epoch": 3, "train_epoch_seconds": 2, "speedup_vs_before": 2, "share_of_epoch": 3})
