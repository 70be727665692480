"""Image saliency maps for a torch image classifier (Zhou et al. 2022, App. B.2), via captum.

Every method maps ``(model, x (B, 3, S, S) float, target (B,))`` to ``(B, S, S)`` non-negative
saliency (channels reduced with absolute values, as the paper does for Gradient):

* ``gradient``: |d logit_target / d x| summed over channels (Simonyan et al. 2013).
* ``smoothgrad``: the same averaged over ``n_samples`` (paper: 50) noisy copies, noise sd
  ``noise_level * (max - min)`` of the image (the paper's value of that fraction is not legible; 0.15
  follows Smilkov et al.'s 10-20% range).
* ``cam``: class activation map (Zhou et al. 2016) -- the authors' "GradCAM" is CAM: last conv
  maps weighted by the linear head's weights of the target class, upsampled bilinearly; negative
  values zeroed (``negatives="relu"``, as the authors' ``saliency_gradcam``) or ``"abs"`` (|.|).
* ``lime``: captum ``Lime`` over SLIC superpixels sized for the canvas (the paper used quickshift
  through the ``lime`` package), |ridge coefficient| (alpha 1, as the ``lime`` package) spread over each
  superpixel; a hidden superpixel takes ``hide`` (an input-space tensor, e.g. a black image as the
  authors' ``hide_color=0``; default 0 in normalised space = the ImageNet-mean grey).
* ``shap``: captum ``GradientShap`` (expected gradients) with a baseline (background) set of images.

Each method is also a registered explainer (family ``image``, output ``image_attribution``,
:class:`SaliencyMap`), so the scorecard scores it under Zhou et al.'s image protocol beside any image
explainer a user registers.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..registry import register_explainer
from .base import ImageExplainer

METHODS = ("gradient", "smoothgrad", "cam", "lime", "shap")


def _reduce(attr) -> np.ndarray:
    return attr.detach().abs().sum(1).cpu().numpy()


def gradient(model, x, target, **_):
    from captum.attr import Saliency

    return _reduce(Saliency(model).attribute(x, target=target, abs=True))


def smoothgrad(model, x, target, n_samples: int = 50, noise_level: float = 0.15, **_):
    from captum.attr import NoiseTunnel, Saliency

    out = []
    for i in range(x.shape[0]):
        xi = x[i : i + 1]
        sd = float(noise_level * (xi.max() - xi.min()).detach())
        a = NoiseTunnel(Saliency(model)).attribute(xi, nt_type="smoothgrad", nt_samples=n_samples, stdevs=sd,
                                                   target=target[i : i + 1], abs=True, nt_samples_batch_size=n_samples)
        out.append(_reduce(a))
    return np.concatenate(out)


CAM_NEGATIVES = ("relu", "abs")


def cam(model, x, target, negatives: str = "relu", **_):
    import torch
    import torch.nn.functional as F

    if negatives not in CAM_NEGATIVES:
        raise ValueError(f"cam: negatives={negatives!r} is not allowed; choose one of {CAM_NEGATIVES}")
    with torch.no_grad():
        f = model.features(x)  # (B, C, h, w)
        w = model.fc.weight[target]  # (B, C)
        m = torch.einsum("bchw,bc->bhw", f, w).unsqueeze(1)
        m = F.interpolate(m, size=x.shape[-2:], mode="bilinear", align_corners=False)
    m = m.squeeze(1)
    return (m.clamp(min=0) if negatives == "relu" else m.abs()).cpu().numpy()


def superpixels(img_uint8: np.ndarray, n_segments: int = 40) -> np.ndarray:
    from skimage.segmentation import slic

    return slic(img_uint8, n_segments=n_segments, compactness=10, start_label=0)


def lime(model, x, target, images: np.ndarray | None = None, n_samples: int = 200, n_segments: int = 40,
         hide=None, **_):
    import torch
    from captum._utils.models.linear_model import SkLearnRidge
    from captum.attr import Lime

    if images is None:
        raise ValueError("lime needs the uint8 images (images=...) to compute superpixels")
    out = []
    for i in range(x.shape[0]):
        seg = torch.as_tensor(superpixels(images[i], n_segments), device=x.device).long()
        mask = seg.unsqueeze(0).unsqueeze(0).expand(1, 3, *seg.shape)
        base = 0.0 if hide is None else torch.as_tensor(hide, dtype=x.dtype).expand_as(x[i : i + 1])
        a = Lime(model, interpretable_model=SkLearnRidge(alpha=1.0)).attribute(
            x[i : i + 1], target=target[i : i + 1], feature_mask=mask, n_samples=n_samples, baselines=base,
            perturbations_per_eval=min(n_samples, 64))
        out.append(a.detach().abs()[:, 0].cpu().numpy())  # same value on every channel of a superpixel
    return np.concatenate(out)


def shap(model, x, target, baselines=None, n_samples: int = 20, **_):
    import torch
    from captum.attr import GradientShap

    if baselines is None:
        baselines = torch.zeros_like(x[:1])
    return _reduce(GradientShap(model).attribute(x, baselines=baselines, target=target, n_samples=n_samples,
                                                stdevs=0.0))


#: methods that differentiate the model with respect to its input
GRADIENT_METHODS = ("gradient", "smoothgrad", "shap")
FUNCS = {"gradient": gradient, "smoothgrad": smoothgrad, "cam": cam, "lime": lime, "shap": shap}


def saliency(method: str, model: Any, x, target, **kw) -> np.ndarray:
    """``(B, S, S)`` saliency of ``method`` for logit ``target``."""
    import torch

    if method not in FUNCS:
        raise KeyError(f"unknown saliency method {method!r}; choose one of {METHODS}")
    model.eval()
    target = torch.as_tensor(np.asarray(target), device=x.device).long()
    if method in GRADIENT_METHODS:
        # captum sets requires_grad itself but warns once per call ("Input Tensor 0 did not already
        # require gradients"), which littered executed notebooks; same gradients either way
        x = x.detach().requires_grad_(True)
    with torch.enable_grad():
        return FUNCS[method](model, x, target, **kw)


# ---- the registered image explainers ------------------------------------------------------------


class SaliencyMap(ImageExplainer):
    """One of :data:`METHODS` as a registered :class:`~xaibench.explainers.base.ImageExplainer`
    (``kwargs``: the method's settings, e.g. ``n_samples``; the ``context`` of ``explain`` -- SHAP's
    ``baselines``, LIME's ``hide`` -- is passed through)."""

    def __init__(self, method: str, **kwargs: Any) -> None:
        if method not in FUNCS:
            raise KeyError(f"unknown saliency method {method!r}; choose one of {METHODS}")
        self.name = method
        self.kwargs = kwargs

    def explain(self, x, targets=None, images=None, **context) -> np.ndarray:
        return saliency(self.name, self.model, x, self._targets(x, targets), images=images,
                        **{**self.kwargs, **context})


def _factory(method: str):
    def make(**kwargs: Any) -> SaliencyMap:
        return SaliencyMap(method, **kwargs)

    make.__name__ = make.__qualname__ = f"saliency_{method}"
    return make


DESCRIPTIONS = {"gradient": "Vanilla gradient saliency |d logit / d x| (Simonyan et al. 2013)",
                "smoothgrad": "SmoothGrad: gradients averaged over noisy copies (Smilkov et al. 2017)",
                "cam": "Class activation map of the last conv block (the authors' 'GradCAM')",
                "lime": "LIME over superpixels, hidden superpixels black (the authors' hide_color=0)",
                "shap": "Expected gradients (captum GradientShap) against test-image backgrounds"}

for _m in METHODS:
    register_explainer(_m, _factory(_m), output="image_attribution", family="image", paper=True, source="project",
                       description=DESCRIPTIONS[_m], models=("small_resnet",))
