"""CUB-200-2011 photographs (100-species subset, 227x227 JPEGs; SOURCES.md §10).

Read from ``data/raw/birds/<Class>/*.jpg``, which ``python -m xaibench.data fetch birds`` (part of
``make data``) fills from the mirror's ``birds/birds.tar.gz`` (checksum-verified, extracted, with a
manifest) -- fetched on demand by :func:`xaibench.data.fetch.ensure_raw` like every other dataset.
Only the requested classes are decoded.
"""
from __future__ import annotations

import numpy as np

from .fetch import ensure_raw

#: confusable pairs present in our subset (the paper's terns/crows/cormorants/jaegers are not)
SIMILAR_PAIRS = (("Bohemian_Waxwing", "Cedar_Waxwing"), ("Eared_Grebe", "Horned_Grebe"),
                 ("Henslow_Sparrow", "Le_Conte_Sparrow"), ("Indigo_Bunting", "Lazuli_Bunting"))
#: visually distinct pairs built from the same eight species (as the authors' script does)
DISTINCT_PAIRS = (("Bohemian_Waxwing", "Horned_Grebe"), ("Henslow_Sparrow", "Indigo_Bunting"),
                  ("Eared_Grebe", "Cedar_Waxwing"), ("Lazuli_Bunting", "Le_Conte_Sparrow"))


def all_classes() -> list[str]:
    """The species (folder names) of the subset, sorted."""
    raw = ensure_raw("birds")
    return sorted(p.name for p in raw.iterdir() if p.is_dir() and any(p.glob("*.jpg")))


def load_classes(classes: tuple[str, ...] | list[str], size: int | None = None) -> dict[str, list[np.ndarray]]:
    """``{class: [uint8 (227, 227, 3) arrays in file order]}`` for the requested species; ``size``:
    resize every image to ``size x size`` on loading (saves memory when many species are loaded)."""
    from PIL import Image

    if size is not None and size < 1:
        raise ValueError(f"size={size!r} must be a positive number of pixels (or None: keep the original size)")
    raw = ensure_raw("birds")
    out: dict[str, list[tuple[str, np.ndarray]]] = {c: [] for c in classes}
    for c in classes:
        for f in sorted((raw / c).glob("*.jpg")):
            with Image.open(f) as im:
                im = im.convert("RGB")
                if size is not None:
                    im = im.resize((size, size), Image.BILINEAR)
                out[c].append((f.name, np.asarray(im)))
    missing = [c for c, v in out.items() if not v]
    if missing:
        raise KeyError(f"no images for {missing}; class names are CUB folder names such as 'Cedar_Waxwing'")
    return {c: [a for _, a in sorted(v, key=lambda t: t[0])] for c, v in out.items()}
