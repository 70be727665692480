"""A small ResNet in plain torch (torchvision does not import beside our torch build).

``SmallResNet(widths=(16, 32, 64), blocks=1)``: 3x3 stem, one stage per width (the first keeps the
resolution, the others halve it) of basic residual blocks (conv-BN-ReLU-conv-BN + shortcut), global
average pooling, linear head.  ``features(x)`` returns the last conv maps (for CAM: the logit of
class c is ``fc.weight[c] . GAP(features)`` + bias).  Inputs: ``(B, 3, S, S)`` normalised with the
ImageNet statistics (:func:`normalise`).
"""
from __future__ import annotations

import numpy as np

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def normalise_arithmetic(images: np.ndarray):
    """:func:`normalise` by its arithmetic on every pixel: ``(x / 255 - mean) / std`` in float32 (the reference
    :func:`normalise` is tested and benchmarked against)."""
    import torch

    from ..checks import check_images_uint8

    images = check_images_uint8(images, "images", ndim=(4,))
    x = (np.asarray(images, dtype=np.float32) / 255.0 - IMAGENET_MEAN) / IMAGENET_STD
    return torch.as_tensor(x).permute(0, 3, 1, 2).contiguous()


#: the normalised value of every uint8 level (rows) in every channel (columns), by :func:`normalise_arithmetic`'s
#: float32 arithmetic: a pixel's value depends on its level and channel only, so a look-up gives the same bits
_LEVELS = (np.arange(256, dtype=np.float32)[:, None] / 255.0 - IMAGENET_MEAN) / IMAGENET_STD


def normalise(images: np.ndarray, out=None):
    """uint8 ``(B, S, S, 3)`` -> float tensor ``(B, 3, S, S)`` (ImageNet mean/variance): each pixel looked up in
    the table of its 256 levels per channel, bit for bit :func:`normalise_arithmetic` in about a third of its
    time.  ``out``: a contiguous float32 CPU tensor of that shape to write into (a training loop reuses one per
    epoch instead of allocating a new one); returned."""
    import torch

    from ..checks import check_images_uint8

    images = check_images_uint8(images, "images", ndim=(4,))
    b, h, w, _ = images.shape
    if out is None:
        out = torch.empty((b, 3, h, w), dtype=torch.float32)
    elif (tuple(out.shape) != (b, 3, h, w) or out.dtype != torch.float32 or out.device.type != "cpu"
          or not out.is_contiguous()):
        raise ValueError(f"normalise: out must be a contiguous float32 CPU tensor of shape {(b, 3, h, w)}, got "
                         f"{out.dtype} {tuple(out.shape)} on {out.device}")
    buf = out.numpy()
    for c in range(3):  # mode="clip": unbuffered (a uint8 level is always a valid row)
        np.take(_LEVELS[:, c], images[..., c], out=buf[:, c], mode="clip")
    return out


def receptive_field(n_stages: int, blocks: int = 1) -> int:
    """Side in input pixels of the region one unit of :func:`SmallResNet`'s last feature map sees
    (``n_stages`` widths, ``blocks`` blocks per stage): every 3x3 convolution widens it by twice the
    current stride, and the stem and the first convolution of each later stage double the stride.
    Three stages see 47 px, four 95 px (on the 112-px canvas of the species-group runs)."""
    from ..checks import check_count

    check_count(n_stages, "n_stages", 1)
    check_count(blocks, "blocks", 1)
    rf, jump = 3, 2  # the stem: one 3x3 convolution with stride 2
    for stage in range(n_stages):
        for block in range(blocks):
            for conv in range(2):  # conv-BN-ReLU-conv-BN; the shortcut is 1x1 and sees no more
                rf += 2 * jump
                if stage > 0 and block == 0 and conv == 0:
                    jump *= 2  # this convolution has stride 2: the next ones step twice as far
    return rf


def SmallResNet(n_classes: int = 2, widths: tuple[int, ...] = (16, 32, 64), blocks: int = 1):
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.short = (nn.Sequential() if stride == 1 and cin == cout else
                          nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)))

        def forward(self, x):
            y = torch.relu(self.b1(self.c1(x)))
            return torch.relu(self.b2(self.c2(y)) + self.short(x))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 2, 1, bias=False), nn.BatchNorm2d(widths[0]),
                                      nn.ReLU())
            layers, cin = [], widths[0]
            for i, w in enumerate(widths):
                for j in range(blocks):
                    layers.append(Block(cin, w, 2 if (i > 0 and j == 0) else 1))
                    cin = w
            self.body = nn.Sequential(*layers)
            self.fc = nn.Linear(cin, n_classes)

        def features(self, x):
            return self.body(self.stem(x))

        def forward(self, x):
            return self.fc(self.features(x).mean(dim=(2, 3)))

    return Net()
