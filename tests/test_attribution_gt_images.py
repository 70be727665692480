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


def test_hsv_conversions_equal_matplotlibs_bit_for_bit():
    from matplotlib import colors

    rng = np.random.default_rng(0)
    levels = (0, 1, 127, 128, 254, 255)  # black, white, greys, and every tie between channels
    ties = np.array([[a, b, c] for a in levels for b in levels for c in levels], np.uint8)
    rgbs = [rng.integers(0, 256, (40, 37, 3), dtype=np.uint8), ties, np.repeat(np.arange(256, dtype=np.uint8)[:, None], 3, 1)]
    for rgb in rgbs:
        x = rgb.astype(np.float32) / 255.0
        ours, theirs = mp.rgb_to_hsv(x), colors.rgb_to_hsv(x)
        assert ours.dtype == theirs.dtype == np.float32
        assert np.array_equal(ours.view(np.uint32), theirs.view(np.uint32))
    hsv = rng.random((20000, 3)).astype(np.float32)
    hsv[:500, 0], hsv[500:1000, 1], hsv[1000:1500, 0] = 1.0, 0.0, 0.0  # hue 1 (sector 0), greys, hue 0
    for h in (hsv, np.clip(colors.rgb_to_hsv(rgbs[0] / np.float32(255)) + np.float32(0.3), 0, 1)):
        ours, theirs = mp.hsv_to_rgb(h), colors.hsv_to_rgb(h)
        assert ours.dtype == theirs.dtype == np.float32
        assert np.array_equal(ours.view(np.uint32), theirs.view(np.uint32))
    assert np.array_equal(mp.hsv_to_rgb(np.array([[0.5, 1.0, 1.0]], np.float32)), [[0.0, 1.0, 1.0]])  # cyan
    assert np.allclose(mp.rgb_to_hsv(np.array([[1.0, 0.5, 0.0]], np.float32)), [[1 / 12, 1.0, 1.0]])  # orange


def test_manipulation_bench_times_every_kind_and_finds_the_hsv_ones_identical_to_matplotlibs():
    from xaibench.bench.manipulations import bench_manipulations

    df = bench_manipulations(n_images=6, size=48)
    assert sorted(set(df["manipulation"])) == sorted(mp.KINDS)
    ref = df[df["implementation"] != "project"]
    assert sorted(ref["manipulation"]) == ["brightness", "hue"] and ref["identical"].all()
    assert df.loc[df["manipulation"].isin(["brightness", "hue"]), "identical"].all()
    assert (df["seconds_per_image"] > 0).all()


def test_bench_reference_converts_every_pixel_with_matplotlib():
    """The bench's "before" leg must really run matplotlib's conversions, on every pixel of the image (not
    only on the effective region, as the project does): spies on matplotlib count the pixels converted."""
    from unittest import mock

    from matplotlib import colors

    from xaibench.bench.manipulations import matplotlib_conversions

    img = np.random.default_rng(0).integers(0, 256, size=(48, 48, 3), dtype=np.uint8)
    manip = mp.Manipulation("brightness", {"radius": 56, "shift": -0.3})
    ours = manip(img, np.random.default_rng(1))
    seen = {"rgb_to_hsv": [], "hsv_to_rgb": []}

    def spy(name, real):
        return lambda a: (seen[name].append(a.shape[0]), real(a))[1]

    with mock.patch.object(colors, "rgb_to_hsv", spy("rgb_to_hsv", colors.rgb_to_hsv)), \
            mock.patch.object(colors, "hsv_to_rgb", spy("hsv_to_rgb", colors.hsv_to_rgb)):
        with matplotlib_conversions():
            ref = manip(img, np.random.default_rng(1))
        assert seen == {"rgb_to_hsv": [48 * 48], "hsv_to_rgb": [48 * 48]}
        manip(img, np.random.default_rng(1))  # outside the context: the project's conversions, matplotlib unused
        assert seen == {"rgb_to_hsv": [48 * 48], "hsv_to_rgb": [48 * 48]}
    assert np.array_equal(ours, ref) and (ours != img).any()


def test_er_geometry_known_values():
    band = mp.Manipulation("noise", {"top": 80, "bottom": 130, "noise_p": 1.0}).er(224)
    assert band.sum() == 51 * 224 and band[80].all() and not band[131].any()
    rect = mp.Manipulation("watermark", {"top": 150, "bottom": 200, "left": 30, "right": 194, "fontsize": 13}).er(112)
    assert rect.sum() == 25 * 82
    disc = mp.Manipulation("brightness", {"radius": 56, "shift": -0.3}).er(112)
    assert abs(disc.mean() - np.pi / 16) < 0.01  # disc of radius 28 px on a 112 canvas
    blur = mp.Manipulation("blur", {"radius": 56, "blur_sigma": 2}).er(112)
    assert (blur == ~disc).all()


def test_saliency_methods_on_a_hand_built_model():
    """A model whose logit difference reads only the top-left 4x4 patch: gradient, SmoothGrad,
    SHAP and LIME must put (nearly) all their mass there; CAM must match its definition."""
    import torch

    from xaibench.evaluation.attribution_gt import attr_pct
    from xaibench.explainers.saliency import saliency

    from tests.helpers.torch_models import PatchNet

    torch.manual_seed(0)
    S = 16

    model = PatchNet(size=S, patch=4)
    x = torch.rand(2, 3, S, S)
    images = (x.permute(0, 2, 3, 1).numpy() * 255).astype(np.uint8)
    er = np.zeros((S, S), bool)
    er[:4, :4] = True
    for method in ("gradient", "smoothgrad", "shap", "cam"):
        s = saliency(method, model, x, [0, 1], n_samples=4, baselines=torch.zeros(1, 3, S, S))
        assert s.shape == (2, S, S)
        assert attr_pct(s[0], er) == pytest.approx(1.0, abs=1e-6), method
    s = saliency("lime", model, x, [0, 1], images=images, n_samples=60, n_segments=16)
    assert s.shape == (2, S, S) and np.isfinite(s).all()


def test_gradient_saliency_known_value_without_captum_warnings():
    """Logit 0 of this model is (sum of the top-left 2x2 patch over all channels) / 16, so its
    input gradient is 1/16 per channel there and 0 elsewhere: the map (|gradient| summed over the
    3 channels) is 3/16 on the patch.  captum's "did not already require gradients" warning must
    not be raised (it littered notebook 25's executed report)."""
    import warnings

    import torch

    from xaibench.explainers.saliency import saliency

    from tests.helpers.torch_models import PatchNet

    x = torch.rand(2, 3, 4, 4)
    expected = np.zeros((2, 4, 4))
    expected[:, :2, :2] = 3 / 16
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = saliency("gradient", PatchNet(size=4, patch=2), x, [0, 1])
        saliency("smoothgrad", PatchNet(size=4, patch=2), x, [0, 1], n_samples=2)
        saliency("shap", PatchNet(size=4, patch=2), x, [0, 1], n_samples=2, baselines=torch.zeros(1, 3, 4, 4))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-7)
    assert not x.requires_grad  # the caller's tensor is left alone


def test_watermark_glyph_size_known_values_and_ink():
    from xaibench.evaluation.attribution_gt import image_runner as ir

    wm = mp.Manipulation("watermark", {"top": 40, "bottom": 200, "left": 10, "right": 214, "fontsize": 13})
    assert wm.glyph_px(224) == 13 and wm.glyph_px(112) == 6 and wm.glyph_px(32) == 4   # scaled, at least 4 px
    big = ir.sized_manipulation(wm, ir.ImageConfig(canvas=112, watermark_font_px=13))
    assert big.glyph_px(112) == 13 and big.params["fontsize"] == 13 and "font_px=13" in big.name()
    assert ir.sized_manipulation(wm, ir.ImageConfig(canvas=112)) is wm                   # 0: unchanged
    blur = mp.Manipulation("blur", {"radius": 80, "blur_sigma": 2})
    assert ir.sized_manipulation(blur, ir.ImageConfig(watermark_font_px=13)) is blur
    img = np.full((112, 112, 3), 128, np.uint8)   # mid grey: every glyph pixel (black or white) changes it
    ink = {m.glyph_px(112): int((m(img, np.random.default_rng(0)) != img).any(-1).sum()) for m in (wm, big)}
    assert ink[13] > 2 * ink[6] > 0
    assert not ((big(img, np.random.default_rng(0)) != img).any(-1) & ~big.er(112)).any()   # still inside the ER


def test_image_store_key_omits_the_default_glyph_size():
    from xaibench.evaluation.attribution_gt import image_runner as ir

    assert "watermark_font_px" not in ir.config_key(ir.ImageConfig())   # entries stored before the field: found
    assert ir.config_key(ir.ImageConfig(watermark_font_px=13))["watermark_font_px"] == 13
    assert ir.ImageConfig.groups("full").watermark_font_px == ir.PAPER_GLYPH_PX == 13
    assert ir.ImageConfig.for_profile("full").watermark_font_px == 0    # the species-pair runs: unchanged
    with pytest.raises(ValueError, match="watermark_font_px"):
        ir.ImageConfig(watermark_font_px=-1)


def test_variant_runs_train_the_first_runs_of_each_kind_again(monkeypatch):
    """The paired experiments (glyphs, depth, width) train again the first ``first`` group runs of each kind of
    ``only``: with 4 runs per kind, first=2 picks jobs 0, 1 (blur) and 4, 5 (brightness), seeded as in run_groups."""
    from xaibench.evaluation.attribution_gt import image_runner as ir

    assert ir.group_jobs_kinds(("blur", "brightness"), 2) == ["blur", "blur", "brightness", "brightness"]
    seen = {}

    class Stop(Exception):
        pass

    def fake_run_cells(fn, cells, desc="", **kw):
        seen["seeds"] = [c[3] for c in cells]
        raise Stop

    monkeypatch.setattr("xaibench.executor.run_cells", fake_run_cells)
    monkeypatch.setattr("xaibench.data.birds.load_classes", lambda names, size=None: {})
    monkeypatch.setattr("xaibench.data.birds.all_classes", lambda: [f"s{i}" for i in range(40)])
    monkeypatch.setattr(ir, "images_store", lambda: type("S", (), {"load": lambda self, c: None})())
    monkeypatch.setattr(ir, "job_parts_store", lambda: type("S", (), {"load": lambda self, c: None})())
    cfg = ir.ImageConfig.groups("quick")
    with pytest.raises(Stop):
        ir.group_variant_runs(cfg, ("blur", "brightness", "hue"), 4, seed=10, only=("blur", "brightness"), first=2,
                              widths=(8,))
    assert seen["seeds"] == [10, 11, 14, 15]
    with pytest.raises(ValueError, match="first"):
        ir.group_variant_runs(cfg, ("blur",), 4, seed=10, only=("blur",), first=0, widths=(8,))
