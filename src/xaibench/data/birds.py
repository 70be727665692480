"""CUB-200-2011 photographs (100-species subset, 227x227 JPEGs; SOURCES.md §10).

Read straight from ``birds.tar.gz`` (no extraction needed): ``data/raw/birds/<Class>/*.jpg`` when
present, else ``<mirror>/birds/birds.tar.gz`` (``XAIBENCH_DATA_MIRROR`` or the project's data
mirror).  Only the requested classes are decoded.
"""
from __future__ import annotations

import io as _io
import tarfile
from pathlib import Path

import numpy as np

from .. import paths

#: confusable pairs present in our subset (the paper's terns/crows/cormorants/jaegers are not)
SIMILAR_PAIRS = (("Bohemian_Waxwing", "Cedar_Waxwing"), ("Eared_Grebe", "Horned_Grebe"),
                 ("Henslow_Sparrow", "Le_Conte_Sparrow"), ("Indigo_Bunting", "Lazuli_Bunting"))
#: visually distinct pairs built from the same eight species (as the authors' script does)
DISTINCT_PAIRS = (("Bohemian_Waxwing", "Horned_Grebe"), ("Henslow_Sparrow", "Indigo_Bunting"),
                  ("Eared_Grebe", "Cedar_Waxwing"), ("Lazuli_Bunting", "Le_Conte_Sparrow"))


def _tarball() -> Path:
    cands = []
    mirror = paths.data_mirror()
    if mirror is not None:
        cands.append(Path(mirror) / "birds" / "birds.tar.gz")
    cands.append(paths.raw_dir() / "birds.tar.gz")
    for c in cands:
        if c.exists():
            return c
    raise FileNotFoundError("birds.tar.gz not found; put it under data/raw/ or set XAIBENCH_DATA_MIRROR to the folder "
                            f"holding birds/birds.tar.gz (looked at {[str(c) for c in cands]})")


def load_classes(classes: tuple[str, ...] | list[str]) -> dict[str, list[np.ndarray]]:
    """``{class: [uint8 (227, 227, 3) arrays in file order]}`` for the requested species."""
    from PIL import Image

    out: dict[str, list[tuple[str, np.ndarray]]] = {c: [] for c in classes}
    raw = paths.raw_dir() / "birds"
    if raw.is_dir():
        for c in classes:
            for f in sorted((raw / c).glob("*.jpg")):
                out[c].append((f.name, np.asarray(Image.open(f).convert("RGB"))))
    else:
        with tarfile.open(_tarball(), "r:gz") as tar:
            for m in tar:
                parts = m.name.split("/")
                if m.isfile() and len(parts) >= 3 and parts[-2] in out:
                    data = tar.extractfile(m).read()
                    out[parts[-2]].append((parts[-1], np.asarray(Image.open(_io.BytesIO(data)).convert("RGB"))))
    missing = [c for c, v in out.items() if not v]
    if missing:
        raise KeyError(f"no images for {missing}; class names are CUB folder names such as 'Cedar_Waxwing'")
    return {c: [a for _, a in sorted(v, key=lambda t: t[0])] for c, v in out.items()}
