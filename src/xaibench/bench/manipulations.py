"""``python -m xaibench.bench manipulations``: seconds per image of each of Zhou et al.'s (2022) image
manipulations at the canvas of the species-group runs -> ``figures/tables/bench_manipulations.csv``.

The manipulated training images are drawn again at every epoch (random crop, flip and the manipulation of
the positive class), so a manipulation's cost is paid once per positive training image and epoch (about
1,000 per epoch in a species-group run).  The HSV manipulations (``brightness``, ``hue``) are timed twice:
as the project computes them (its own HSV conversions, only at the effective region's pixels) and as they
were computed before (matplotlib's conversions over the whole image, then composited with the effective
region); ``identical`` says whether the two give the same bytes on every timed image.
"""
from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np
import pandas as pd


@contextmanager
def matplotlib_conversions():
    """The HSV manipulations as computed before: matplotlib's conversions over every pixel of the image (the
    manipulation then composites the result with its effective region)."""
    from unittest import mock

    from matplotlib import colors

    from ..evaluation.attribution_gt import manipulations as mp

    every_pixel = mp.hsv_shift

    def apply(img, channel, delta, wrap, where):
        return every_pixel(img, channel, delta, wrap, np.ones_like(where))

    with mock.patch.object(mp, "rgb_to_hsv", colors.rgb_to_hsv), mock.patch.object(mp, "hsv_to_rgb", colors.hsv_to_rgb), \
            mock.patch.object(mp, "hsv_shift", apply):
        yield


def _images(n: int, size: int, seed: int = 0) -> list[np.ndarray]:
    """``n`` views (112-px crops of the 140-px originals, as the group runs draw them) of real bird images."""
    from ..data.birds import all_classes, load_classes
    from ..evaluation.attribution_gt.image_runner import view

    rng = np.random.default_rng(seed)
    classes = all_classes()[:4]
    pool = [img for imgs in load_classes(classes, size=140).values() for img in imgs]
    return [view(pool[i % len(pool)], size, rng) for i in range(n)]


def bench_manipulations(n_images: int = 300, size: int = 112, seed: int = 0) -> pd.DataFrame:
    from ..evaluation.attribution_gt import image_runner as ir
    from ..evaluation.attribution_gt import manipulations as mp
    from .common import machine_context

    imgs = _images(n_images, size, seed)
    cfg = ir.ImageConfig.groups("full")
    rows = []
    for kind in mp.KINDS:
        manip = ir.sized_manipulation(mp.random_manipulation(kind, np.random.default_rng(seed)), cfg)
        t0 = time.perf_counter()
        ours = [manip(img, np.random.default_rng(j)) for j, img in enumerate(imgs)]
        rows.append({"manipulation": kind, "implementation": "project", "n_images": n_images, "canvas": size,
                     "seconds_per_image": (time.perf_counter() - t0) / n_images, "identical": None})
        if kind in ("brightness", "hue"):
            with matplotlib_conversions():
                t0 = time.perf_counter()
                ref = [manip(img, np.random.default_rng(j)) for j, img in enumerate(imgs)]
                per = (time.perf_counter() - t0) / n_images
            same = all(np.array_equal(a, b) for a, b in zip(ours, ref))
            rows.append({"manipulation": kind, "implementation": "matplotlib (before)", "n_images": n_images,
                         "canvas": size, "seconds_per_image": per, "identical": same})
            rows[-2]["identical"] = same
    df = pd.DataFrame(rows)
    df["identical"] = df["identical"].astype("boolean")  # empty where there is no reference
    for k, v in machine_context().items():
        df[k] = v
    return df.round({"seconds_per_image": 6})
