"""The five image manipulations of Zhou et al. (2022, App. B.1) with their effective regions.

Re-implemented from ``manipulations.py`` of the authors' public code release, on an ``S x S`` canvas: every parameter is
given in the authors' 224-px units and scaled by ``S / 224``.  Each manipulation returns a new
uint8 image and never changes a pixel outside ``er(S)`` (the result is composited with the original
through the ER mask, which also removes rounding changes of the HSV round trip and clips a
watermark glyph that would overflow its rectangle).

* ``blur``: Gaussian blur (sigma) outside a centred disc of ``radius`` -- ER: outside the disc.
* ``brightness``: HSV value shifted by ``shift * cos^2(...)`` inside a centred disc (max at the
  centre; negative = dimmer) -- ER: the disc.
* ``hue``: HSV hue shifted by a signed squared sine over the horizontal band of rows
  ``top..bottom`` -- ER: the band (the paper says "vertical stripe"; the code shifts rows).
* ``noise``: each pixel of the band ``top..bottom`` replaced by a uniform random colour with
  probability ``noise_p`` -- ER: the band.
* ``watermark``: "IMG" + 4 random hex characters (one part white, the other black, at random)
  at a random position inside the rectangle -- ER: the rectangle.  The glyphs are ``fontsize`` scaled
  with the canvas, or ``font_px`` canvas pixels when that parameter is given (legible text on a small canvas).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

KINDS = ("blur", "brightness", "hue", "noise", "watermark")


def rgb_to_hsv(arr: np.ndarray) -> np.ndarray:
    """matplotlib's ``colors.rgb_to_hsv`` (float RGB in [0, 1], shape ``(..., 3)``), bit for bit (the same
    float operations on every pixel), in less than half its time: each pixel's hue is selected with
    ``np.where`` instead of written through boolean masks (ties: blue over green over red, as there)."""
    arr = np.asarray(arr)
    arr = np.asarray(arr, dtype=np.promote_types(arr.dtype, np.float32))
    zero = arr.dtype.type(0)
    r, g, b = arr[..., 0], arr[..., 1], arr[..., 2]
    arr_max = np.maximum(np.maximum(r, g), b)
    delta = arr_max - np.minimum(np.minimum(r, g), b)
    with np.errstate(divide="ignore", invalid="ignore"):  # grey and black pixels: selected away below
        s = np.where(arr_max > 0, delta / arr_max, zero)
        hue = np.where(b == arr_max, 4. + (r - g) / delta, np.where(g == arr_max, 2. + (b - r) / delta, (g - b) / delta))
    out = np.empty_like(arr)
    out[..., 0] = np.where(delta > 0, hue, zero) / 6.0 % 1.0
    out[..., 1] = s
    out[..., 2] = arr_max
    return out


def hsv_to_rgb(hsv: np.ndarray) -> np.ndarray:
    """matplotlib's ``colors.hsv_to_rgb`` (HSV in [0, 1], shape ``(..., 3)``), bit for bit, in less than half of
    its time: the sector's (r, g, b) picked with ``np.choose`` instead of six masked writes."""
    hsv = np.asarray(hsv)
    hsv = np.asarray(hsv, dtype=np.promote_types(hsv.dtype, np.float32))
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    i = (h * 6.0).astype(int)
    f = (h * 6.0) - i  # float64, as in matplotlib; q and t are rounded to h's type when written, as there
    p = v * (1.0 - s)
    q = (v * (1.0 - s * f)).astype(h.dtype)
    t = (v * (1.0 - s * (1.0 - f))).astype(h.dtype)
    k = i % 6  # h = 1 is sector 0
    rgb = np.stack([np.choose(k, [v, q, p, p, t, v]), np.choose(k, [t, v, v, q, p, p]),
                    np.choose(k, [p, p, t, v, v, q])], axis=-1)
    return np.where((s == 0)[..., None], v[..., None], rgb)


def hsv_shift(img: np.ndarray, channel: int, delta: np.ndarray, wrap: bool, where: np.ndarray) -> np.ndarray:
    """``img`` with HSV ``channel`` shifted by ``delta`` at the pixels of the mask ``where`` (the others are
    kept: every conversion is per pixel, so they are not converted at all)."""
    hsv = rgb_to_hsv(img[where].astype(np.float32) / 255.0)
    hsv[..., channel] += delta[where]
    if wrap:
        hsv[..., channel] %= 1.0
    hsv = np.clip(hsv, 0, 1)
    out = img.copy()
    out[where] = np.clip(np.round(hsv_to_rgb(hsv) * 255.0), 0, 255).astype(np.uint8)
    return out


def check_params(kind: str, params: dict) -> None:
    """Refuse parameters under which a manipulation would change nothing or something else than it says: a
    value that is not a finite number, a region that is inverted or of zero size (``top >= bottom``,
    ``left >= right``), a radius <= 0, a negative blur, a noise rate outside (0, 1].  The message names the
    manipulation, the parameter and what is accepted."""
    import math

    for key, v in params.items():
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating))
                              or not math.isfinite(float(v))):
            raise ValueError(f"{kind} manipulation: {key}={v!r} is not a finite number")
    for lo, hi in (("top", "bottom"), ("left", "right")):
        if lo in params and hi in params and not params[lo] < params[hi]:
            raise ValueError(f"{kind} manipulation: the region {lo}={params[lo]!r}, {hi}={params[hi]!r} is "
                             f"{'inverted' if params[lo] > params[hi] else 'of zero size'}; {lo} must be below {hi} "
                             "(224-px units)")
    if "radius" in params and not params["radius"] > 0:
        raise ValueError(f"{kind} manipulation: radius={params['radius']!r}; the disc needs a radius > 0 (224-px units)")
    if "blur_sigma" in params and params["blur_sigma"] < 0:
        raise ValueError(f"{kind} manipulation: blur_sigma={params['blur_sigma']!r}; a blur needs sigma >= 0")
    if "noise_p" in params and not 0 < params["noise_p"] <= 1:
        raise ValueError(f"{kind} manipulation: noise_p={params['noise_p']!r} is a probability per pixel; use a "
                         "value in (0, 1]")


#: :meth:`Manipulation._fixed`'s maps (effective region, HSV shift) by kind, parameters and canvas size; cleared when
#: it holds :data:`_FIXED_MAX` of them
_FIXED: dict[tuple, np.ndarray] = {}
_FIXED_MAX = 256


@contextmanager
def maps_per_image():
    """Within this block every manipulation computes its effective region and HSV shift for each image instead of
    keeping them (:meth:`Manipulation._fixed`): the reference path its tests and ``python -m xaibench.bench
    augmentation`` compare the kept maps with."""
    global _FIXED_MAX
    before, _FIXED_MAX = _FIXED_MAX, 0
    try:
        yield
    finally:
        _FIXED_MAX = before


@dataclass
class Manipulation:
    kind: str
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown manipulation {self.kind!r}; choose one of {KINDS}")
        check_params(self.kind, self.params)

    # ----- geometry (224-px units scaled to the canvas) ------------------------------------------
    def _s(self, size: int, key: str) -> float:
        return self.params[key] * size / 224.0

    def _disc(self, size: int) -> np.ndarray:
        c = (size - 1) / 2.0
        yy, xx = np.mgrid[0:size, 0:size]
        return ((yy - c) ** 2 + (xx - c) ** 2) ** 0.5 <= self._s(size, "radius")

    def _band(self, size: int) -> np.ndarray:
        m = np.zeros((size, size), dtype=bool)
        m[int(round(self._s(size, "top"))): int(round(self._s(size, "bottom"))) + 1] = True
        return m

    def _rect(self, size: int) -> tuple[int, int, int, int]:
        return tuple(int(round(self._s(size, k))) for k in ("top", "bottom", "left", "right"))  # type: ignore

    def _fixed(self, what: str, size: int, compute) -> np.ndarray:
        """``compute()``, a map that depends on the kind, parameters and ``size`` only, kept read-only in
        :data:`_FIXED` for every later image of the same manipulation (a training run applies it to each
        manipulated image of every epoch)."""
        if _FIXED_MAX == 0:  # computed for each image (:func:`maps_per_image`)
            return compute()
        key = (what, self.kind, tuple(sorted(self.params.items())), size)
        hit = _FIXED.get(key)
        if hit is None:
            hit = compute()
            hit.setflags(write=False)
            if len(_FIXED) >= _FIXED_MAX:
                _FIXED.clear()
            _FIXED[key] = hit
        return hit

    def er(self, size: int) -> np.ndarray:
        """Boolean ``(size, size)`` effective region."""
        return self._fixed("er", size, lambda: self._er(size)).copy()

    def _er(self, size: int) -> np.ndarray:
        if self.kind == "blur":
            return ~self._disc(size)
        if self.kind == "brightness":
            return self._disc(size)
        if self.kind in ("hue", "noise"):
            return self._band(size)
        t, b, l, r = self._rect(size)
        m = np.zeros((size, size), dtype=bool)
        m[t:b, l:r] = True
        return m

    # ----- the manipulation ---------------------------------------------------------------------
    def __call__(self, img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        from ...checks import check_images_uint8

        img = check_images_uint8(img, "img", ndim=(3,))
        size = img.shape[0]
        if img.shape != (size, size, 3):
            raise ValueError(f"manipulations expect a square RGB uint8 image, got shape {img.shape}")
        er = self._fixed("er", size, lambda: self._er(size))
        if not er.any():
            raise ValueError(f"{self.name()}: its effective region covers no pixel of a {size}-px image (given in "
                             "224-px units, it lies outside the canvas or rounds to nothing); use a region inside "
                             "0..224 that spans at least one pixel of the image")
        out = getattr(self, f"_{self.kind}")(img, size, rng, er)  # the HSV kinds convert only inside er
        return np.where(er[..., None], out, img)

    def _blur(self, img, size, rng, er):
        from PIL import Image, ImageFilter

        sigma = self._s(size, "blur_sigma")
        return np.asarray(Image.fromarray(img).filter(ImageFilter.GaussianBlur(radius=sigma)))

    def _brightness(self, img, size, rng, er):
        return hsv_shift(img, 2, self._fixed("delta", size, lambda: self._brightness_delta(size)), wrap=False, where=er)

    def _brightness_delta(self, size):
        xs = np.linspace(-1, 1, size)
        xx, yy = np.meshgrid(xs, xs)
        rs = (xx**2 + yy**2) ** 0.5
        rad = self.params["radius"] / 112.0
        ds = (np.cos(0.25 * np.pi / (rad / 2) * rs) ** 2) * self.params["shift"]
        ds[rs > rad] = 0
        return ds

    def _hue(self, img, size, rng, er):
        return hsv_shift(img, 0, self._fixed("delta", size, lambda: self._hue_delta(size)), wrap=True, where=er)

    def _hue_delta(self, size):
        top, bottom = self._s(size, "top"), self._s(size, "bottom")
        rows = np.arange(size)
        ds = np.sin(2 * np.pi / max(bottom - top, 1e-6) * (rows - size / 2))
        ds = ds**2 * np.sign(ds) * self.params["shift"]
        return np.tile(ds[:, None], (1, size))

    def _noise(self, img, size, rng, er):
        out = img.copy()
        hit = rng.random((size, size)) < self.params["noise_p"]
        out[hit] = rng.integers(0, 256, size=(int(hit.sum()), 3), dtype=np.uint8)
        return out

    def glyph_px(self, size: int) -> int:
        """A watermark's glyph size on a ``size``-px canvas: ``font_px`` canvas pixels when given
        (ImageConfig.watermark_font_px), else ``fontsize`` scaled with the canvas (at least 4 px)."""
        if self.params.get("font_px"):
            return int(self.params["font_px"])
        return max(4, int(round(self._s(size, "fontsize"))))

    def _watermark(self, img, size, rng, er):
        from PIL import Image, ImageDraw, ImageFont

        t, b, l, r = self._rect(size)
        font = ImageFont.load_default(size=self.glyph_px(size))
        mx, my = 40 * size / 224, 10 * size / 224
        x = rng.uniform(l + mx, max(l + mx, r - mx))
        y = rng.uniform(t + my, max(t + my, b - my))
        pil = Image.fromarray(img.copy())
        draw = ImageDraw.Draw(pil)
        white, black = (255, 255, 255), (0, 0, 0)
        c1, c2 = (black, white) if rng.random() < 0.5 else (white, black)
        code = "".join(rng.choice(list("0123456789ABCDEF"), 4))
        draw.text((x, y), "IMG", fill=c1, font=font, anchor="rm")
        draw.text((x, y), code, fill=c2, font=font, anchor="lm")
        return np.asarray(pil)

    def name(self) -> str:
        return f"{self.kind}(" + ", ".join(f"{k}={v:.3g}" for k, v in self.params.items()) + ")"


# ----- the parameter distributions of the authors' released scripts (224-px units) -------------------------------------
def random_manipulation(kind: str, rng: np.random.Generator) -> Manipulation:
    """Fig. 5 / 6 runs (the authors' ``dm_attr_vs_er.py``): random ER size, fixed visibility."""
    if kind == "blur":
        return Manipulation("blur", {"radius": rng.uniform(80, 130), "blur_sigma": 2})
    if kind == "brightness":
        return Manipulation("brightness", {"radius": rng.uniform(40, 112), "shift": -0.3})
    if kind in ("hue", "noise"):
        sz = rng.uniform(20, 224)
        top = rng.uniform(0, 224 - sz)
        key = {"shift": 0.04} if kind == "hue" else {"noise_p": 0.02}
        return Manipulation(kind, {"top": float(int(top)), "bottom": float(int(top + sz)), **key})
    h, w = rng.uniform(40, 200), rng.uniform(100, 200)
    top, left = rng.uniform(0, 224 - h), rng.uniform(0, 224 - w)
    return Manipulation("watermark", {"top": float(int(top)), "bottom": float(int(top + h)), "left": float(int(left)),
                                      "right": float(int(left + w)), "fontsize": 13})


#: visibility levels of the authors' ``dm_visibility.py`` (least to most visible)
VISIBILITY = {"blur": ("blur_sigma", (2, 4, 6, 8, 10)), "brightness": ("shift", (-0.1, -0.15, -0.2, -0.25, -0.3)),
              "hue": ("shift", (0.05, 0.1, 0.15, 0.2, 0.25)), "noise": ("noise_p", (0.02, 0.04, 0.06, 0.08, 0.1)),
              "watermark": ("fontsize", (7, 9, 11, 13, 15))}


def visibility_sequence(kind: str, rng: np.random.Generator) -> list[Manipulation]:
    """Fig. 7 groups: one ER, five visibility levels."""
    if kind == "blur":
        base = {"radius": rng.uniform(80, 120)}
    elif kind == "brightness":
        base = {"radius": rng.uniform(40, 112)}
    elif kind in ("hue", "noise"):
        sz = rng.uniform(50, 100)
        top = rng.uniform(0, 224 - sz)
        base = {"top": float(int(top)), "bottom": float(int(top + sz))}
    else:
        h, w = rng.uniform(40, 100), rng.uniform(100, 200)
        top, left = rng.uniform(0, 224 - h), rng.uniform(0, 224 - w)
        base = {"top": float(int(top)), "bottom": float(int(top + h)), "left": float(int(left)),
                "right": float(int(left + w))}
    key, levels = VISIBILITY[kind]
    return [Manipulation(kind, {**base, key: v}) for v in levels]


#: the fixed manipulations of the r sweep (the authors' ``dm_orig_corr_strength.py``; Fig. 8)
R_SWEEP = {"blur": Manipulation("blur", {"radius": 80, "blur_sigma": 10}),
           "brightness": Manipulation("brightness", {"radius": 60, "shift": -0.3}),
           "hue": Manipulation("hue", {"top": 80, "bottom": 130, "shift": 0.15}),
           "noise": Manipulation("noise", {"top": 80, "bottom": 130, "noise_p": 0.03}),
           "watermark": Manipulation("watermark", {"top": 150, "bottom": 200, "left": 30, "right": 194, "fontsize": 13})}
R_VALUES = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
