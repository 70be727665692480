"""Image manipulations change no pixel outside their effective region, and do change it inside."""
import numpy as np
import pytest

from xaibench.evaluation.attribution_gt import check_inside_er
from xaibench.evaluation.attribution_gt import manipulations as mp


def _img(size, seed=0):
    rng = np.random.default_rng(seed)
    # smooth colourful image (blur has something to blur, hue something to rotate)
    yy, xx = np.mgrid[0:size, 0:size] / size
    base = np.stack([np.sin(6 * xx) * 0.5 + 0.5, np.cos(5 * yy) * 0.5 + 0.5, (xx + yy) / 2], -1)
    return np.clip(base * 200 + rng.integers(0, 40, (size, size, 3)), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("kind", mp.KINDS)
@pytest.mark.parametrize("size", [112, 224])
def test_no_pixel_outside_er_changes(kind, size):
    rng = np.random.default_rng(1)
    for _ in range(3):
        for m in [mp.random_manipulation(kind, rng), *mp.visibility_sequence(kind, rng)[::2], mp.R_SWEEP[kind]]:
            img = _img(size)
            out = m(img, rng)
            er = m.er(size)
            check_inside_er(img, out, er)
            assert (out != img).any(axis=-1)[er].any(), f"{m.name()} changed nothing inside its ER"


def test_er_geometry_known_values():
    band = mp.Manipulation("noise", {"top": 80, "bottom": 130, "noise_p": 1.0}).er(224)
    assert band.sum() == 51 * 224 and band[80].all() and not band[131].any()
    rect = mp.Manipulation("watermark", {"top": 150, "bottom": 200, "left": 30, "right": 194, "fontsize": 13}).er(112)
    assert rect.sum() == 25 * 82
    disc = mp.Manipulation("brightness", {"radius": 56, "shift": -0.3}).er(112)
    assert abs(disc.mean() - np.pi / 16) < 0.01  # disc of radius 28 px on a 112 canvas
    blur = mp.Manipulation("blur", {"radius": 56, "blur_sigma": 2}).er(112)
    assert (blur == ~disc).all()
