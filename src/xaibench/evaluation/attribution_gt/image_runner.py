"""Image experiments of Zhou et al. (2022, Sec. 5) with the learnable protocol.

One *run* = one species pair, one manipulation, one keep-probability ``r``:

1. labels are reassigned (``r``; 0.5 = random); images of the new positive class get the
   manipulation, the negative class stays unchanged (the authors' ``p_manip = 1``);
2. **learnable protocol** (our change, see DEVIATIONS.md): the model works on an ``S x S`` canvas;
   every epoch each training original is randomly cropped / flipped, resized to the canvas and
   only *then* manipulated (fresh noise / watermark text), so the ER stays fixed while the bird
   pixels vary.  Validation/test images: centre crop, manipulated once (fixed seed);
3. a small ResNet is trained with Adam (optionally stopped at the first epoch whose validation
   accuracy reaches ``stop_val_acc`` and read at its best validation checkpoint); test accuracy and
   Attr% of every saliency method on the joint ER are recorded for a class-balanced, shuffled
   (seeded) subset of the test images (per class: manipulated positives / unmanipulated negatives),
   optionally at every epoch (Fig. 6).

Saliency follows the authors' code by default: CAM zeroes negative values (``cam_negatives="relu"``),
LIME hides superpixels with black (``lime_hide="black"``, their ``hide_color=0``), SHAP's background
is a set of test images (``shap_background="test"``).

**Species groups** (``group_size > 0``, :func:`run_groups`): each class of a run is a random group
of ``group_size`` species (disjoint, :func:`species_groups`) instead of one species, so that a run has
about 1,000 training images per class as the paper's.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ...checks import check_count, check_images_uint8
from .manipulations import Manipulation
from .metrics import attr_pct
from .reassign import reassign_labels_binary


#: the watermark's glyph size of the authors' scripts on their 224-px images (fontsize 13)
PAPER_GLYPH_PX = 13


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
    cam_negatives: str = "relu"      # the authors' saliency_gradcam; "abs": |CAM|
    lime_hide: str = "black"         # the authors' hide_color=0; "mean": the ImageNet-mean grey
    shap_background: str = "test"    # the authors' test images; "train": unmanipulated training images
    n_background: int = 8            # SHAP background images
    stop_val_acc: float = 0.0        # stop at the first epoch with val acc >= this (0: train every epoch)
    best_checkpoint: bool = False    # read the model at its best validation epoch
    group_size: int = 0              # species per class (0: one species per class, the pair runs)
    n_test: int = 0                  # test images per class (0: all the rest)
    preresize: int = 0               # resize the originals to this side once on loading (0: keep 227 px)
    # watermark glyph size in canvas pixels (0: the paper's fontsize, in 224-px units, scaled with the canvas)
    watermark_font_px: int = 0
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("canvas", "epochs", "batch_size", "n_train", "n_val", "n_explain", "smoothgrad_samples",
                     "lime_samples", "lime_segments", "shap_samples"):
            check_count(getattr(self, name), name, 1)
        if not self.widths:
            raise ValueError(f"widths must list at least one stage width; got {self.widths!r}")
        allowed = {"cam_negatives": ("relu", "abs"), "lime_hide": ("black", "mean"),
                   "shap_background": ("test", "train")}
        for name, ok in allowed.items():
            if getattr(self, name) not in ok:
                raise ValueError(f"ImageConfig.{name}={getattr(self, name)!r} is not allowed; choose one of {ok}")
        if not 0 <= self.stop_val_acc <= 1:
            raise ValueError(f"ImageConfig.stop_val_acc={self.stop_val_acc!r} must lie in [0, 1] (0: no early stop)")
        for name in ("group_size", "n_test", "preresize", "watermark_font_px"):
            if getattr(self, name) < 0:
                raise ValueError(f"ImageConfig.{name}={getattr(self, name)!r} must be >= 0 (0: off)")

    @classmethod
    def for_profile(cls, profile: str) -> "ImageConfig":
        if profile == "quick":
            return cls(canvas=32, widths=(8, 16), epochs=2, n_train=8, n_val=4, smoothgrad_samples=4,
                       lime_samples=20, lime_segments=8, shap_samples=4, n_explain=4)
        return cls()

    @classmethod
    def groups(cls, profile: str, **overrides) -> "ImageConfig":
        """The species-group protocol: 24 species per class (about 1,000 training / 100 validation /
        300 test images per class), 112-px canvas, stop at the first epoch with validation accuracy
        >= 0.97 (at most 40 epochs) and read the best validation checkpoint, watermark glyphs of the paper's 13 px (not scaled
        down with the canvas: :func:`watermark_glyph_runs`); ``quick``: a tiny smoke version."""
        if profile == "quick":
            base = dict(canvas=32, widths=(8, 16), epochs=2, group_size=3, n_train=60, n_val=10, n_test=20,
                        smoothgrad_samples=4, lime_samples=20, lime_segments=8, shap_samples=4, n_explain=4,
                        stop_val_acc=0.97, best_checkpoint=True, preresize=40, watermark_font_px=PAPER_GLYPH_PX)
        else:
            base = dict(canvas=112, widths=(16, 32, 64, 128), epochs=40, group_size=24, n_train=1000, n_val=100, n_test=300,
                        n_explain=50, stop_val_acc=0.97, best_checkpoint=True, preresize=140, watermark_font_px=PAPER_GLYPH_PX)
        return cls(**{**base, **overrides})


def config_key(cfg: ImageConfig) -> dict:
    """``cfg`` as a store key: its fields, without ``watermark_font_px`` when that is 0 (its default), so
    entries stored before the field existed are still found."""
    from dataclasses import asdict

    d = asdict(cfg)
    if not d.get("watermark_font_px"):
        d.pop("watermark_font_px", None)
    return d


def sized_manipulation(manip: Manipulation, cfg: ImageConfig) -> Manipulation:
    """``manip`` with the watermark's glyph size set to ``cfg.watermark_font_px`` canvas pixels (when
    non-zero); any other manipulation unchanged.  At 112 px the paper's 13-px glyphs scaled with the
    canvas are 6 px high and illegible."""
    if manip.kind != "watermark" or not cfg.watermark_font_px:
        return manip
    return Manipulation("watermark", {**manip.params, "font_px": float(cfg.watermark_font_px)})


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


def species_groups(species, group_size: int, rng: np.random.Generator) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Two disjoint random groups of ``group_size`` species each (sorted), drawn from ``species``."""
    species = sorted(set(species))
    if group_size < 1 or 2 * group_size > len(species):
        raise ValueError(f"group_size={group_size} needs 1 <= group_size <= {len(species) // 2} "
                         f"(two disjoint groups from {len(species)} species)")
    pick = rng.permutation(len(species))[: 2 * group_size]
    return (tuple(sorted(species[i] for i in pick[:group_size])),
            tuple(sorted(species[i] for i in pick[group_size:])))


def balanced_subset(labels: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``n`` items (all when fewer), half from each of the classes 0 and 1 where they have
    enough (the other class fills up), drawn at random and returned in shuffled order."""
    labels = np.asarray(labels)
    n = min(int(n), len(labels))
    by = [rng.permutation(np.flatnonzero(labels == c)) for c in (0, 1)]
    k0 = n // 2 + (n % 2 if rng.random() < 0.5 else 0)
    k0 = min(max(k0, n - len(by[1])), len(by[0]))
    idx = np.concatenate([by[0][:k0], by[1][: n - k0]])
    return rng.permutation(idx).astype(int)


def _pool(images: dict[str, list[np.ndarray]], cls) -> list[np.ndarray]:
    """The images of one class: a species name, or a tuple of species names (pooled)."""
    if isinstance(cls, str):
        return images[cls]
    return [img for c in cls for img in images[c]]


def split_pair(images: dict[str, list[np.ndarray]], pair: tuple, cfg: ImageConfig, seed: int):
    """Per class (a species or a tuple of species): shuffle, then train / val / test (the rest, at most
    ``cfg.n_test`` when that is set)."""
    rng = np.random.default_rng(seed)
    out = {"train": ([], []), "val": ([], []), "test": ([], [])}
    for y, cls in enumerate(pair):
        imgs = _pool(images, cls)
        order = rng.permutation(len(imgs))
        end = len(imgs) if not cfg.n_test else cfg.n_train + cfg.n_val + cfg.n_test
        parts = {"train": order[: cfg.n_train], "val": order[cfg.n_train: cfg.n_train + cfg.n_val],
                 "test": order[cfg.n_train + cfg.n_val: end]}
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
                 baselines, hide=None) -> list[dict]:
    """Attr% of each method on each explained test image (target = predicted class).  A method of
    :data:`~xaibench.explainers.saliency.METHODS` runs with ``cfg``'s settings; any other name is an image
    explainer of the registry (family ``image``: :class:`~xaibench.explainers.base.ImageExplainer`), fitted
    to ``model`` and given the same images, targets, SHAP background (``baselines``) and LIME ``hide``."""
    import torch

    from ... import registry
    from ...explainers.saliency import FUNCS, saliency

    model.eval()
    with torch.no_grad():
        pred = model(x).argmax(1).cpu().numpy()
    rows = []
    for method in methods:
        t0 = time.time()
        if method in FUNCS:
            s = saliency(method, model, x, pred, images=images, n_samples={"smoothgrad": cfg.smoothgrad_samples,
                         "lime": cfg.lime_samples, "shap": cfg.shap_samples}.get(method, 0),
                         n_segments=cfg.lime_segments, baselines=baselines, hide=hide,
                         negatives=cfg.cam_negatives)
        else:
            exp = registry.explainer_spec(method, family="image").make().fit(model)
            s = exp.explain(x, torch.as_tensor(pred, device=x.device), images=images, baselines=baselines, hide=hide)
            s = np.asarray(s.detach().cpu() if hasattr(s, "detach") else s, dtype=np.float64)
            if s.shape != (len(x), *er.shape):
                raise ValueError(f"image explainer {method!r} returned shape {s.shape}; it must return one "
                                 f"({er.shape[0]}, {er.shape[1]}) map per image: ({len(x)}, {er.shape[0]}, {er.shape[1]})")
        dt = (time.time() - t0) / len(x)
        for i in range(len(x)):
            rows.append({"method": method, "image": i, "label": int(labels[i]), "pred": int(pred[i]),
                         "attr_pct": attr_pct(s[i], er), "seconds_per_image": dt})
    return rows


def _backgrounds(cfg: ImageConfig, sp, fixed, manip: Manipulation, explained: np.ndarray, rng):
    """SHAP's background: ``n_background`` test images not explained (all test images when too few are
    left), or -- ``shap_background="train"`` -- the first unmanipulated training originals."""
    from ...models.resnet_small import normalise

    if cfg.shap_background == "train":
        k = min(cfg.n_background, len(sp["train"][0]))
        return normalise(_apply(sp["train"][0][:k], np.zeros(k, int), manip, cfg.canvas, None, train=False))
    rest = np.setdiff1d(np.arange(len(fixed["test"])), explained)
    pool = rest if len(rest) else np.arange(len(fixed["test"]))
    pick = rng.permutation(pool)[: cfg.n_background]
    return normalise(fixed["test"][np.sort(pick)])


def _hide(cfg: ImageConfig):
    """LIME's value of a hidden superpixel in the model's input space: black (the authors'
    ``hide_color=0``) or ``None`` (0 after normalisation = the ImageNet-mean grey)."""
    from ...models.resnet_small import normalise

    if cfg.lime_hide == "mean":
        return None
    return normalise(np.zeros((1, cfg.canvas, cfg.canvas, 3), np.uint8))


def run_one(images: dict, pair: tuple, manip: Manipulation, r: float, seed: int, cfg: ImageConfig,
            track: bool = False) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """Train one model; returns (summary, per-image Attr% at the end, per-epoch tracking).  ``pair``: two
    species, or two tuples of species (:func:`species_groups`)."""
    import copy

    import torch

    from ... import levers
    from ...device import place, torch_device
    from ...models.resnet_small import SmallResNet, normalise
    from ...utils import set_seed

    species = [c for side in pair for c in ((side,) if isinstance(side, str) else side)]
    for cls in species:  # a side of the pair is one species or a group of species
        if cls not in images:
            raise ValueError(f"pair names class {cls!r} but images has classes {sorted(images)}")
        if not len(images[cls]):
            raise ValueError(f"images[{cls!r}] is empty; each class of the pair needs images")
        for j, img in enumerate(images[cls]):
            check_images_uint8(img, f"images[{cls!r}][{j}]", ndim=(3,))
    manip = sized_manipulation(manip, cfg)
    set_seed(seed)
    rng = np.random.default_rng(seed)
    sp = split_pair(images, pair, cfg, seed)
    new = {k: reassign_labels_binary(v[1], r, rng) for k, v in sp.items()}
    S = cfg.canvas
    er = manip.er(S)
    fixed = {k: _apply(sp[k][0], new[k], manip, S, np.random.default_rng(seed + 1), train=False) for k in ("val", "test")}
    dev = torch_device()
    xv, xt = normalise(fixed["val"]).to(dev), normalise(fixed["test"]).to(dev)
    model = levers.memory_format(place(SmallResNet(2, cfg.widths)))  # channels-last only with that lever
    # the multi-tensor step (the per-parameter loop's weights to the bit) unless the fused_adam lever is on
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=1e-4, **levers.optimizer_kwargs())
    y_train = torch.as_tensor(new["train"], device=dev)
    # the explained test images: class-balanced, shuffled, own seed (the training draws stay unchanged)
    pick_rng = np.random.default_rng(seed + 2)
    idx = balanced_subset(new["test"], cfg.n_explain, pick_rng)
    baselines = _backgrounds(cfg, sp, fixed, manip, idx, pick_rng).to(dev)
    hide = _hide(cfg)
    hide = hide.to(dev) if hide is not None else None
    ex_imgs, ex_x, ex_y = fixed["test"][idx], xt[torch.as_tensor(idx, device=dev)], new["test"][idx]
    hist, track_rows = [], []
    best, best_state, stopped = None, None, False
    t0 = time.time()
    xbuf = None  # the normalised training images, rewritten in place every epoch
    for epoch in range(cfg.epochs):
        model.train()
        xbuf = normalise(_apply(sp["train"][0], new["train"], manip, S, rng, train=True), out=xbuf)
        xtr = xbuf.to(dev)
        perm = rng.permutation(len(xtr))
        for i in range(0, len(perm), cfg.batch_size):
            b = perm[i:i + cfg.batch_size]
            with levers.autocast(dev):  # bfloat16 only with the bf16 lever
                loss = torch.nn.functional.cross_entropy(model(levers.memory_format(xtr[b])), y_train[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
        # the test accuracy of every epoch only where the tracking table shows it; otherwise only the read
        # epoch's, after the loop (an evaluation forward pass changes neither the weights nor the draws)
        va = _accuracy(model, xv, new["val"])
        ta = _accuracy(model, xt, new["test"]) if track else None
        hist.append({"epoch": epoch + 1, "val_acc": va, "test_acc": ta})
        if best is None or va > best["val_acc"]:
            best = hist[-1]
            if cfg.best_checkpoint:
                best_state = copy.deepcopy(model.state_dict())
        if track:
            rows = explain_attr(model, ex_imgs, ex_x, ex_y, er, cfg.track_methods, cfg, baselines, hide)
            for row in rows:
                track_rows.append({**row, "epoch": epoch + 1, "test_acc": ta})
        if cfg.stop_val_acc and va >= cfg.stop_val_acc:
            stopped = True
            break
    train_s = time.time() - t0
    read = hist[-1]
    if cfg.best_checkpoint and best_state is not None:
        model.load_state_dict(best_state)
        read = best
    if read["test_acc"] is None:  # the model now holds the read epoch's weights
        read = {**read, "test_acc": _accuracy(model, xt, new["test"])}
    final = pd.DataFrame(explain_attr(model, ex_imgs, ex_x, ex_y, er, cfg.methods, cfg, baselines, hide))
    summary = {"pair": " / ".join(c if isinstance(c, str) else f"{len(c)} species" for c in pair),
               "manipulation": manip.kind, "manip": manip.name(), "r": r, "seed": seed,
               "er_size": float(er.mean()), "test_acc": read["test_acc"], "val_acc": read["val_acc"],
               "epoch_read": read["epoch"], "epochs": len(hist), "stopped": stopped, "train_seconds": train_s,
               "n_train": len(sp["train"][1]), "n_test": len(xt), "n_explained": len(idx),
               "n_explained_positive": int(ex_y.sum())}
    if manip.kind == "watermark":
        summary["glyph_px"] = manip.glyph_px(S)  # the watermark's glyph height drawn on the canvas
    if not isinstance(pair[0], str):
        summary["classes"] = " / ".join("+".join(c) for c in pair)
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
    group_runs_per_kind: int = 4                   # Figs. 5-6 with species groups (run_groups; 0: none) ...
    group_kinds: tuple[str, ...] = ("blur", "brightness", "hue", "noise", "watermark")  # ... for these manipulations
    # the group runs of these manipulations trained again with one stage less (the depth experiment)
    stage_kinds: tuple[str, ...] = ("blur", "brightness")
    # ... and the group runs of these trained with that shallower model's widths doubled (the deep model's parameters)
    width_kinds: tuple[str, ...] = ("brightness",)
    # the paired model and glyph experiments train again the first this many group runs of each kind
    variant_runs_per_kind: int = 2

    @classmethod
    def for_profile(cls, profile: str) -> "ImagePlan":
        if profile == "quick":
            return cls(er_runs_per_kind=1, visibility_levels=(0,), r_values=(1.0,), r_kinds=("watermark",),
                       kinds=("watermark",), group_runs_per_kind=1, group_kinds=("watermark",), stage_kinds=("watermark",),
                       width_kinds=("watermark",), variant_runs_per_kind=1)
        return cls()


#: result-format version of :func:`run_images` entries (bump when what a run stores changes)
IMAGES_VERSION = 2


def images_store():
    """The store of :func:`run_images` results (one entry per configuration, all three tables together)."""
    from ... import paths
    from ...store import ResultStore

    return ResultStore(paths.results_dir() / "attribution_gt", "images", version=IMAGES_VERSION)


def job_parts_store():
    """Each finished run of an entry being computed, kept apart until the entry is complete (one entry per job,
    keyed on the entry's configuration, the job's index and the job itself), so an interrupted computation
    resumes with the runs it has not finished rather than from the start."""
    from ... import paths
    from ...store import ResultStore

    return ResultStore(paths.results_dir() / "attribution_gt", "image_job_parts", version=IMAGES_VERSION)


def _part_key(config: dict, k: int, cell: tuple, cfg: ImageConfig) -> dict:
    """The :func:`job_parts_store` key of job ``k`` (``cell``: its ``(pair, manipulation, r, seed, track)``) of the
    entry ``config`` trained with ``cfg``."""
    pair, manip, r, seed, track = cell
    sides = [side if isinstance(side, str) else list(side) for side in pair]
    return {"entry": config, "job": int(k), "pair": sides, "manip": [manip.kind, manip.params], "r": float(r),
            "seed": int(seed), "track": bool(track), "cfg": config_key(cfg)}


def run_parts(cells: list[tuple], cfg: ImageConfig, images: dict, config: dict | None, desc: str,
              reuse: bool = True) -> list[tuple[dict, pd.DataFrame, pd.DataFrame]]:
    """:func:`run_one` of every cell (:mod:`xaibench.executor`, ``XAIBENCH_SCHEDULER``), each stored in
    :func:`job_parts_store` as it finishes when ``config`` (the key of the entry they make up) is given; stored
    ones are read back instead of trained again (``reuse=False``: all trained again, e.g. ``force``)."""
    from ...executor import run_cells

    parts = job_parts_store() if config is not None else None
    keys = [_part_key(config, k, c, cfg) for k, c in enumerate(cells)] if parts is not None else []
    done: list = [None] * len(cells)
    for k, key in enumerate(keys if reuse else []):
        hit = parts.load(key)
        if hit is not None:
            done[k] = (hit["summary"].iloc[0].to_dict(), hit["final"], hit.get("track", pd.DataFrame()))
    todo = [k for k in range(len(cells)) if done[k] is None]

    def keep(j: int, result: tuple) -> None:  # in the driver, as each run finishes
        k = todo[j]
        done[k] = result
        if parts is not None:
            summary, final, track = result
            parts.save(keys[k], {"summary": pd.DataFrame([summary]), "final": final,
                                 **({"track": track} if len(track) else {})})

    run_cells(functools.partial(_job_cell, images=images, cfg=cfg), [cells[k] for k in todo], desc=desc,
              on_result=keep)
    return done


def _run_jobs(images: dict, jobs: list[tuple], cfg: ImageConfig, seed: int, key: str, desc: str,
              config: dict | None = None, reuse: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """:func:`run_one` for every ``(experiment, pair, manipulation, r, track)`` job (run ``k`` seeded
    ``seed + k``); the runs (tagged with ``key``), per-image Attr% and per-epoch tracking tables.
    The jobs are independent cells (:func:`run_parts`: each kept as it finishes when ``config``, the entry's
    key, is given)."""
    cells = [(pair, manip, r, seed + k, track) for k, (_, pair, manip, r, track) in enumerate(jobs)]
    done = run_parts(cells, cfg, images, config, desc, reuse)
    runs, attrs, tracks = [], [], []
    for k, ((exp, *_), (s, fin, tr)) in enumerate(zip(jobs, done)):
        runs.append({"experiment": exp, "run": k, **s})
        attrs.append(fin.assign(experiment=exp, run=k))
        if len(tr):
            tracks.append(tr.assign(experiment=exp, run=k))
    return (pd.DataFrame(runs).assign(config=key), pd.concat(attrs, ignore_index=True),
            pd.concat(tracks, ignore_index=True) if tracks else pd.DataFrame())


def _job_cell(cell: tuple, images: dict, cfg: ImageConfig) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """:func:`run_one` of one ``(pair, manipulation, r, seed, track)`` job (a unit of the executor)."""
    pair, manip, r, seed, track = cell
    return run_one(images, pair, manip, r, seed, cfg, track=track)


#: the :class:`ImagePlan` fields of the species-group runs (:func:`run_groups`); the species-pair runs
#: (:func:`run_images`) do not read them, so they are not part of a pair entry's key
GROUP_PLAN_FIELDS = ("group_runs_per_kind", "group_kinds", "stage_kinds", "width_kinds", "variant_runs_per_kind")


def pair_plan(plan: ImagePlan) -> dict:
    """The fields of ``plan`` the species-pair runs depend on (the store key of :func:`run_images`)."""
    from dataclasses import asdict

    return {k: v for k, v in asdict(plan).items() if k not in GROUP_PLAN_FIELDS}


def _entry_with_other_group_plan(store, config: dict) -> dict | None:
    """A stored pair entry of ``config`` written under a key that also held the group fields of the plan
    (entries stored before :data:`GROUP_PLAN_FIELDS` left the key): the same species-pair runs."""
    from ...store import canonical

    want = canonical(config)
    for c in store.configs():
        if set(c) != {"cfg", "plan", "seed"} or not isinstance(c.get("plan"), dict):
            continue
        same = {"cfg": c["cfg"], "plan": {k: v for k, v in c["plan"].items() if k not in GROUP_PLAN_FIELDS},
                "seed": c["seed"]}
        if canonical(same) == want:
            return store.load(c)
    return None


def run_images(cfg: ImageConfig, plan: ImagePlan, seed: int = 0, force: bool = False) -> dict[str, pd.DataFrame]:
    """All runs of the plan; ``{"images_runs", "images_attr", "images_track"}``.

    The three tables are stored as one entry of :func:`images_store` keyed on the whole configuration
    (``cfg``, the plan's species-pair fields :func:`pair_plan`, ``seed``), so a run killed part-way never pairs one run's models with another's
    attributions; a damaged entry is reported by name, removed and recomputed.
    """
    from ...data.birds import DISTINCT_PAIRS, SIMILAR_PAIRS, load_classes
    from . import manipulations as mp

    names = ("images_runs", "images_attr", "images_track")
    config = {"cfg": config_key(cfg), "plan": pair_plan(plan), "seed": seed}
    key = str((config_key(cfg), pair_plan(plan), seed))
    store = images_store()
    if not force:
        cached = store.load(config)
        if cached is None:
            cached = _entry_with_other_group_plan(store, config)
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
    out = dict(zip(names, _run_jobs(images, jobs, cfg, seed, key, "image runs", config, not force)))
    store.save(config, out)
    return out


def group_jobs(species, kinds, runs_per_kind: int, group_size: int, seed: int = 0) -> list[tuple]:
    """The Fig. 5 runs of the species-group protocol: per manipulation kind, ``runs_per_kind`` runs, each
    with two fresh disjoint species groups (:func:`species_groups`) and a random manipulation (r = 0.5)."""
    from . import manipulations as mp

    rng = np.random.default_rng(seed)
    return [("er-groups", species_groups(species, group_size, rng), mp.random_manipulation(kind, rng), 0.5, True)
            for kind in group_jobs_kinds(kinds, runs_per_kind)]


def group_jobs_kinds(kinds, runs_per_kind: int) -> list[str]:
    """The manipulation kind of each job of :func:`group_jobs`, in its order (kind by kind, ``runs_per_kind`` each)."""
    return [kind for kind in kinds for _ in range(runs_per_kind)]


#: the three tables of a :func:`run_groups` entry
GROUP_TABLES = ("images_groups_runs", "images_groups_attr", "images_groups_track")


def groups_config(cfg: ImageConfig, kinds, runs_per_kind: int, seed: int) -> dict:
    """The store key of a :func:`run_groups` entry."""
    return {"cfg": config_key(cfg), "kinds": list(kinds), "runs_per_kind": runs_per_kind, "seed": seed,
            "protocol": "species-groups"}


def run_groups(cfg: ImageConfig, kinds=("blur", "brightness", "hue", "noise", "watermark"), runs_per_kind: int = 1,
               seed: int = 0, force: bool = False) -> dict[str, pd.DataFrame]:
    """Fig. 5/6 runs with species groups (``cfg.group_size`` species per class, :meth:`ImageConfig.groups`);
    stored like :func:`run_images`: the three tables ``images_groups_runs`` / ``_attr`` / ``_track`` as one
    entry of :func:`images_store` keyed on the whole configuration."""
    from ...data.birds import all_classes, load_classes

    if cfg.group_size < 1:
        raise ValueError(f"run_groups needs cfg.group_size >= 1 species per class, got {cfg.group_size}")
    if runs_per_kind < 1:
        raise ValueError(f"runs_per_kind={runs_per_kind!r} must be >= 1")
    names = GROUP_TABLES
    config = groups_config(cfg, kinds, runs_per_kind, seed)
    key = str((config_key(cfg), tuple(kinds), runs_per_kind, seed))
    store = images_store()
    if not force:
        cached = store.load(config)
        if cached is not None:
            return {n: cached[n] for n in names}  # same configuration: reuse
    species = all_classes()
    jobs = group_jobs(species, kinds, runs_per_kind, cfg.group_size, seed)
    images = load_classes(sorted({c for _, pair, *_ in jobs for g in pair for c in g}), size=cfg.preresize or None)
    out = dict(zip(names, _run_jobs(images, jobs, cfg, seed, key, "species-group runs", config, not force)))
    store.save(config, out)  # the three tables as one unit
    return out


def watermark_glyph_runs(cfg: ImageConfig, kinds, runs_per_kind: int, seed: int = 0, glyph_px: int = 0,
                         force: bool = False, first: int | None = None) -> pd.DataFrame:
    """The watermark runs of :func:`run_groups` (the same jobs: species groups, rectangle, training seed) trained
    again with the glyph size ``glyph_px`` (``ImageConfig.watermark_font_px``; 0: the paper's fontsize scaled with
    the canvas): the paired experiment behind ``cfg.watermark_font_px``.  Only the runs table is kept (one row per
    run: ``run`` is the job's index in :func:`run_groups`, ``glyph_px`` the glyph height drawn); stored in
    :func:`images_store`, keyed on the configuration.  ``first``: only the first this many runs of each kind (all: None)."""
    other = replace(cfg, watermark_font_px=int(glyph_px))
    config = {**groups_config(other, kinds, runs_per_kind, seed), "protocol": "species-groups-watermark-glyphs",
              **({"first": int(first)} if first is not None else {})}
    return _variant_runs(cfg, other, kinds, runs_per_kind, seed, ("watermark",), config, "watermark glyph runs", force,
                         first)


def group_variant_runs(cfg: ImageConfig, kinds, runs_per_kind: int, seed: int = 0, only=("brightness",),
                       force: bool = False, first: int | None = None, **overrides) -> pd.DataFrame:
    """The runs of :func:`run_groups` whose manipulation is one of ``only`` (the same jobs: species groups,
    manipulation, training seed) trained again with the :class:`ImageConfig` fields ``overrides`` changed (e.g.
    ``widths``): a paired experiment.  Only the runs table is kept (``run``: the job's index in :func:`run_groups`);
    stored in :func:`images_store`, keyed on the configuration.  ``first``: only the first this many runs of each
    kind (all: None)."""
    if not overrides:
        raise ValueError("group_variant_runs needs at least one ImageConfig field to change, e.g. widths=(32, 64, 128)")
    if "group_size" in overrides:
        raise ValueError("group_variant_runs cannot change group_size: the species groups of the runs would change, "
                         "so the runs would no longer be paired; call run_groups with that configuration instead")
    other = replace(cfg, **overrides)
    config = {**groups_config(other, kinds, runs_per_kind, seed), "protocol": "species-groups-variant",
              "only": sorted(only), **({"first": int(first)} if first is not None else {})}
    return _variant_runs(cfg, other, kinds, runs_per_kind, seed, tuple(only), config, "species-group variant runs",
                         force, first)


def _variant_runs(cfg: ImageConfig, other: ImageConfig, kinds, runs_per_kind: int, seed: int, only: tuple,
                  config: dict, desc: str, force: bool, first: int | None = None) -> pd.DataFrame:
    """The jobs of :func:`run_groups` (drawn with ``cfg``) whose manipulation is in ``only`` (the first ``first`` of
    each kind; all: None), trained with ``other``; their runs table, stored under ``config``, or read from a stored
    :func:`run_groups` entry of ``other``."""
    if first is not None and first < 1:
        raise ValueError(f"first={first!r} must be >= 1 (or None: every run of each kind)")
    wanted = [k for k, job in enumerate(group_jobs_kinds(kinds, runs_per_kind))
              if job in only and (first is None or k % runs_per_kind < first)]
    from ...data.birds import all_classes, load_classes

    store = images_store()
    if not force:
        cached = store.load(config)
        if cached is not None:
            return cached["runs"]
        # all runs of run_groups trained with ``other`` (the same jobs, each seeded alike): these runs are among them
        whole = store.load(groups_config(other, kinds, runs_per_kind, seed))
        if whole is not None:
            runs = whole["images_groups_runs"]
            return runs[runs["run"].isin(wanted)].drop(columns="config", errors="ignore").reset_index(drop=True)
    jobs = [(k, job) for k, job in enumerate(group_jobs(all_classes(), kinds, runs_per_kind, cfg.group_size, seed))
            if k in wanted]
    if not jobs:
        raise ValueError(f"kinds={tuple(kinds)!r} has no {' or '.join(only)} runs to train again")
    images = load_classes(sorted({c for _, (_, pair, *_) in jobs for g in pair for c in g}), size=other.preresize or None)
    cells = [(pair, manip, r, seed + k, False) for k, (_, pair, manip, r, _) in jobs]
    # only the runs table is kept, so no saliency map is computed (training does not depend on the explanations)
    bare = replace(other, methods=(), track_methods=())
    done = run_parts(cells, bare, images, config, desc, not force)
    runs = pd.DataFrame([{"experiment": "er-groups", "run": k, **summary} for (k, _), (summary, _, _) in zip(jobs, done)])
    store.save(config, {"runs": runs})
    return runs


def group_sweep_jobs(species, plan: ImagePlan, group_size: int, seed: int = 0) -> list[tuple]:
    """The Fig. 7 and Fig. 8 sweeps under the species-group protocol: per manipulation kind of ``plan.kinds`` one
    pair of fresh disjoint species groups and one visibility sequence, a run per level of
    ``plan.visibility_levels`` (r = 0.5; experiment ``visibility-groups-<kind>-<k>-<level>``); per kind of
    ``plan.r_kinds`` one pair of species groups and a run per r of ``plan.r_values`` with the manipulation of the
    paper's r sweep (experiment ``r-groups``).  Drawn from a generator of its own (``seed + 1``), so the Fig. 5
    group runs (:func:`group_jobs`) are not changed by it."""
    from . import manipulations as mp

    rng = np.random.default_rng(seed + 1)
    jobs = []
    for k, kind in enumerate(plan.kinds):
        groups = species_groups(species, group_size, rng)
        seq = mp.visibility_sequence(kind, rng)
        jobs += [(f"visibility-groups-{kind}-{k}-{lv}", groups, seq[lv], 0.5, False) for lv in plan.visibility_levels]
    for kind in plan.r_kinds:
        groups = species_groups(species, group_size, rng)
        jobs += [("r-groups", groups, mp.R_SWEEP[kind], float(r), False) for r in plan.r_values]
    return jobs


#: the three tables of a :func:`run_group_sweeps` entry
SWEEP_TABLES = ("images_sweeps_runs", "images_sweeps_attr", "images_sweeps_track")


def run_group_sweeps(cfg: ImageConfig, plan: ImagePlan, seed: int = 0, force: bool = False) -> dict[str, pd.DataFrame]:
    """Figs. 7-8 (visibility and r sweeps) under the species-group protocol (:func:`group_sweep_jobs`,
    ``cfg`` from :meth:`ImageConfig.groups`): about 37 runs of 3-5 min each on 2 CPU cores in the full profile, so
    notebook 25 runs them only when asked (``group_sweeps``; by default when a GPU is present).  Stored like
    :func:`run_groups`: one entry of :func:`images_store` keyed on the configuration and the plan's sweep fields."""
    from ...data.birds import all_classes, load_classes

    if cfg.group_size < 1:
        raise ValueError(f"run_group_sweeps needs cfg.group_size >= 1 species per class, got {cfg.group_size}")
    config = {"cfg": config_key(cfg), "kinds": list(plan.kinds), "visibility_levels": list(plan.visibility_levels),
              "r_kinds": list(plan.r_kinds), "r_values": [float(r) for r in plan.r_values], "seed": seed,
              "protocol": "species-groups-sweeps"}
    store = images_store()
    if not force:
        cached = store.load(config)
        if cached is not None:
            return {n: cached[n] for n in SWEEP_TABLES}
    jobs = group_sweep_jobs(all_classes(), plan, cfg.group_size, seed)
    if not jobs:
        raise ValueError("the plan has no sweep runs: it needs kinds x visibility_levels or r_kinds x r_values")
    images = load_classes(sorted({c for _, pair, *_ in jobs for g in pair for c in g}), size=cfg.preresize or None)
    out = dict(zip(SWEEP_TABLES, _run_jobs(images, jobs, cfg, seed, str(config), "species-group sweeps", config,
                                           not force)))
    store.save(config, out)
    return out


def sweeps_wanted(choice: str) -> bool:
    """Notebook 25's ``group_sweeps`` parameter: ``"on"`` / ``"off"``, or ``"auto"`` (on when the models train on a
    GPU, :func:`xaibench.device.torch_device`)."""
    choice = str(choice).strip().lower()
    if choice not in ("auto", "on", "off"):
        raise ValueError(f"group_sweeps={choice!r}: use auto (on when a GPU is present), on or off")
    if choice == "auto":
        from ...device import torch_device

        return torch_device().type == "cuda"
    return choice == "on"
