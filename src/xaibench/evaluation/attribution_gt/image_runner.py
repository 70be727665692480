"""Image experiments of Zhou et al. (2022, Sec. 5) with the learnable protocol.

One *run* = one species pair, one manipulation, one keep-probability ``r``:

1. labels are reassigned (``r``; 0.5 = random); images of the new positive class get the
   manipulation, the negative class stays unchanged (the authors' ``p_manip = 1``);
2. **learnable protocol** (our change, see DEVIATIONS.md): the model works on an ``S x S`` canvas;
   every epoch each training original is randomly cropped / flipped, resized to the canvas and
   only *then* manipulated (fresh noise / watermark text), so the ER stays fixed while the bird
   pixels vary.  Validation/test images: centre crop, manipulated once (fixed seed);
3. a small ResNet is trained with Adam; test accuracy and Attr% of every saliency method on the
   joint ER are recorded (per class: manipulated positives / unmanipulated negatives), optionally
   at every epoch (Fig. 6).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...checks import check_count, check_images_uint8
from .manipulations import Manipulation
from .metrics import attr_pct
from .reassign import reassign_labels_binary


@dataclass
class ImageConfig:
    canvas: int = 64
    widths: tuple[int, ...] = (16, 32, 64)
    epochs: int = 20
    batch_size: int = 32
    lr: float = 2e-3
    n_train: int = 40      # per class (of ~60)
    n_val: int = 10
    methods: tuple[str, ...] = ("gradient", "smoothgrad", "cam", "lime", "shap")
    smoothgrad_samples: int = 50
    lime_samples: int = 100
    lime_segments: int = 30
    shap_samples: int = 20
    n_explain: int = 10    # test images explained per run
    track_methods: tuple[str, ...] = ("gradient", "cam")  # Attr% at every epoch (Fig. 6)
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("canvas", "epochs", "batch_size", "n_train", "n_val", "n_explain", "smoothgrad_samples",
                     "lime_samples", "lime_segments", "shap_samples"):
            check_count(getattr(self, name), name, 1)
        if not self.widths:
            raise ValueError(f"widths must list at least one stage width; got {self.widths!r}")

    @classmethod
    def for_profile(cls, profile: str) -> "ImageConfig":
        if profile == "quick":
            return cls(canvas=32, widths=(8, 16), epochs=2, n_train=8, n_val=4, smoothgrad_samples=4,
                       lime_samples=20, lime_segments=8, shap_samples=4, n_explain=4)
        return cls()


def _resize(img: np.ndarray, size: int) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.fromarray(img).resize((size, size), Image.BILINEAR))


def view(img: np.ndarray, size: int, rng: np.random.Generator | None) -> np.ndarray:
    """Random crop (80-100% side) + horizontal flip when ``rng`` is given, else centre crop 90%."""
    img = check_images_uint8(img, "img", ndim=(3,))
    h = img.shape[0]
    if rng is None:
        c = int(0.9 * h)
        o = (h - c) // 2
        return _resize(img[o:o + c, o:o + c], size)
    c = int(rng.uniform(0.8, 1.0) * h)
    y, x = rng.integers(0, h - c + 1, 2)
    out = img[y:y + c, x:x + c]
    if rng.random() < 0.5:
        out = out[:, ::-1]
    return _resize(np.ascontiguousarray(out), size)


def split_pair(images: dict[str, list[np.ndarray]], pair: tuple[str, str], cfg: ImageConfig, seed: int):
    """Per class: shuffle, then train / val / test (the rest)."""
    rng = np.random.default_rng(seed)
    out = {"train": ([], []), "val": ([], []), "test": ([], [])}
    for y, cls in enumerate(pair):
        imgs = images[cls]
        order = rng.permutation(len(imgs))
        parts = {"train": order[: cfg.n_train], "val": order[cfg.n_train: cfg.n_train + cfg.n_val],
                 "test": order[cfg.n_train + cfg.n_val:]}
        for k, idx in parts.items():
            out[k][0].extend(imgs[i] for i in idx)
            out[k][1].extend([y] * len(idx))
    return {k: (v[0], np.array(v[1])) for k, v in out.items()}


def _apply(imgs, labels, manip: Manipulation, size: int, rng, train: bool) -> np.ndarray:
    out = []
    for img, y in zip(imgs, labels):
        v = view(img, size, rng if train else None)
        out.append(manip(v, rng) if y == 1 else v)
    return np.stack(out)


def _accuracy(model, x, y) -> float:
    import torch

    model.eval()
    with torch.no_grad():
        return float((model(x).argmax(1).cpu().numpy() == y).mean())


def explain_attr(model, images: np.ndarray, x, labels: np.ndarray, er: np.ndarray, methods, cfg: ImageConfig,
                 baselines) -> list[dict]:
    """Attr% of each method on each explained test image (target = predicted class)."""
    import torch

    from ...explainers.saliency import saliency

    model.eval()
    with torch.no_grad():
        pred = model(x).argmax(1).cpu().numpy()
    rows = []
    for method in methods:
        t0 = time.time()
        s = saliency(method, model, x, pred, images=images, n_samples={"smoothgrad": cfg.smoothgrad_samples,
                     "lime": cfg.lime_samples, "shap": cfg.shap_samples}.get(method, 0),
                     n_segments=cfg.lime_segments, baselines=baselines)
        dt = (time.time() - t0) / len(x)
        for i in range(len(x)):
            rows.append({"method": method, "image": i, "label": int(labels[i]), "pred": int(pred[i]),
                         "attr_pct": attr_pct(s[i], er), "seconds_per_image": dt})
    return rows


def run_one(images: dict, pair: tuple[str, str], manip: Manipulation, r: float, seed: int, cfg: ImageConfig,
            track: bool = False) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """Train one model; returns (summary, per-image Attr% at the end, per-epoch tracking)."""
    import torch

    from ...device import place, torch_device
    from ...models.resnet_small import SmallResNet, normalise
    from ...utils import set_seed

    for cls in pair:
        if cls not in images:
            raise ValueError(f"pair names class {cls!r} but images has classes {sorted(images)}")
        if not len(images[cls]):
            raise ValueError(f"images[{cls!r}] is empty; each class of the pair needs images")
        for j, img in enumerate(images[cls]):
            check_images_uint8(img, f"images[{cls!r}][{j}]", ndim=(3,))
    set_seed(seed)
    rng = np.random.default_rng(seed)
    sp = split_pair(images, pair, cfg, seed)
    new = {k: reassign_labels_binary(v[1], r, rng) for k, v in sp.items()}
    S = cfg.canvas
    er = manip.er(S)
    fixed = {k: _apply(sp[k][0], new[k], manip, S, np.random.default_rng(seed + 1), train=False) for k in ("val", "test")}
    dev = torch_device()
    xv, xt = normalise(fixed["val"]).to(dev), normalise(fixed["test"]).to(dev)
    model = place(SmallResNet(2, cfg.widths))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=1e-4)
    y_train = torch.as_tensor(new["train"], device=dev)
    n_exp = min(cfg.n_explain, len(xt))
    baselines = normalise(_apply(sp["train"][0][:8], np.zeros(8, int), manip, S, None, train=False)).to(dev)
    hist, track_rows = [], []
    t0 = time.time()
    for epoch in range(cfg.epochs):
        model.train()
        xtr = normalise(_apply(sp["train"][0], new["train"], manip, S, rng, train=True)).to(dev)
        perm = rng.permutation(len(xtr))
        for i in range(0, len(perm), cfg.batch_size):
            idx = perm[i:i + cfg.batch_size]
            loss = torch.nn.functional.cross_entropy(model(xtr[idx]), y_train[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        va, ta = _accuracy(model, xv, new["val"]), _accuracy(model, xt, new["test"])
        hist.append({"epoch": epoch + 1, "val_acc": va, "test_acc": ta})
        if track:
            rows = explain_attr(model, fixed["test"][:n_exp], xt[:n_exp], new["test"][:n_exp], er, cfg.track_methods,
                                cfg, baselines)
            for row in rows:
                track_rows.append({**row, "epoch": epoch + 1, "test_acc": ta})
    train_s = time.time() - t0
    final = pd.DataFrame(explain_attr(model, fixed["test"][:n_exp], xt[:n_exp], new["test"][:n_exp], er, cfg.methods,
                                      cfg, baselines))
    summary = {"pair": "/".join(pair), "manipulation": manip.kind, "manip": manip.name(), "r": r, "seed": seed,
               "er_size": float(er.mean()), "test_acc": hist[-1]["test_acc"], "val_acc": hist[-1]["val_acc"],
               "epochs": cfg.epochs, "train_seconds": train_s, "n_test": len(xt)}
    track_df = pd.DataFrame(track_rows)
    for df in (final, track_df):
        for k, v in summary.items():
            if len(df) and k not in ("test_acc",):
                df[k] = v
    final["test_acc"] = summary["test_acc"]
    return summary, final, track_df


@dataclass
class ImagePlan:
    er_runs_per_kind: int = 4                      # Figs. 5-6 (paper: 20 per manipulation)
    visibility_levels: tuple[int, ...] = (0, 1, 2, 3, 4)  # indices into VISIBILITY (Fig. 7; paper: 5 levels x 4 groups)
    r_values: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)  # Fig. 8 (paper: the same, 4 pairs)
    r_kinds: tuple[str, ...] = ("noise", "watermark")  # Fig. 8 (paper: all five)
    kinds: tuple[str, ...] = ("blur", "brightness", "hue", "noise", "watermark")

    @classmethod
    def for_profile(cls, profile: str) -> "ImagePlan":
        if profile == "quick":
            return cls(er_runs_per_kind=1, visibility_levels=(0,), r_values=(1.0,), r_kinds=("watermark",),
                       kinds=("watermark",))
        return cls()


#: result-format version of :func:`run_images` entries (bump when what a run stores changes)
IMAGES_VERSION = 2


def images_store():
    """The store of :func:`run_images` results (one entry per configuration, all three tables together)."""
    from ... import paths
    from ...store import ResultStore

    return ResultStore(paths.results_dir() / "attribution_gt", "images", version=IMAGES_VERSION)


def run_images(cfg: ImageConfig, plan: ImagePlan, seed: int = 0, force: bool = False) -> dict[str, pd.DataFrame]:
    """All runs of the plan; ``{"images_runs", "images_attr", "images_track"}``.

    The three tables are stored as one entry of :func:`images_store` keyed on the whole configuration
    (``cfg``, ``plan``, ``seed``), so a run killed part-way never pairs one run's models with another's
    attributions; a damaged entry is reported by name, removed and recomputed.
    """
    from dataclasses import asdict

    from ...data.birds import DISTINCT_PAIRS, SIMILAR_PAIRS, load_classes
    from ...progress import progress
    from . import manipulations as mp

    names = ("images_runs", "images_attr", "images_track")
    config = {"cfg": asdict(cfg), "plan": asdict(plan), "seed": seed}
    key = str((asdict(cfg), asdict(plan), seed))
    store = images_store()
    if not force:
        cached = store.load(config)
        if cached is not None:
            return {n: cached[n] for n in names}  # same configuration: reuse
    species = sorted({c for p in SIMILAR_PAIRS + DISTINCT_PAIRS for c in p})
    images = load_classes(species)
    rng = np.random.default_rng(seed)
    jobs = []
    for kind in plan.kinds:
        for j in range(plan.er_runs_per_kind):
            jobs.append(("er", SIMILAR_PAIRS[j % len(SIMILAR_PAIRS)], mp.random_manipulation(kind, rng), 0.5, True))
    for g, kind in enumerate(plan.kinds):
        seq = mp.visibility_sequence(kind, rng)
        for lv in plan.visibility_levels:
            jobs.append((f"visibility-{kind}-{g}-{lv}", SIMILAR_PAIRS[g % len(SIMILAR_PAIRS)], seq[lv], 0.5, False))
    for kind in plan.r_kinds:
        for ptype, pair in (("similar", SIMILAR_PAIRS[0]), ("distinct", DISTINCT_PAIRS[0])):
            for r in plan.r_values:
                jobs.append((f"r-{ptype}", pair, mp.R_SWEEP[kind], r, False))
    runs, attrs, tracks = [], [], []
    for k, (exp, pair, manip, r, track) in enumerate(progress(jobs, desc="image runs")):
        s, fin, tr = run_one(images, pair, manip, r, seed + k, cfg, track=track)
        runs.append({"experiment": exp, "run": k, **s})
        attrs.append(fin.assign(experiment=exp, run=k))
        if len(tr):
            tracks.append(tr.assign(experiment=exp, run=k))
    out = {"images_runs": pd.DataFrame(runs).assign(config=key), "images_attr": pd.concat(attrs, ignore_index=True),
           "images_track": pd.concat(tracks, ignore_index=True) if tracks else pd.DataFrame()}
    store.save(config, out)
    return out
