"""Input checks shared by every public entry point (models, explainers, protocols).

Each check raises at once, with one message that names the parameter, shows the bad value and says
what is allowed, instead of letting a bad input turn into a silent number or an opaque error from
deep inside numpy, torch or spaCy.  Type problems raise ``TypeError``, bad values ``ValueError``.

* :func:`check_texts` -- a list of ``str`` (a single string is refused, not read as characters; with
  ``nonempty``, each holding at least one word);
* :func:`check_targets` -- one class index per text;
* :func:`check_labels` -- integer class labels ``0..K-1`` (no NaN, no gaps when K is inferred);
* :func:`check_count` -- an ``int`` setting with a lower bound (``n_explain``, ``n_train``, ...);
* :func:`check_images_uint8` -- RGB images holding uint8 values 0..255;
* :func:`check_columns` -- a DataFrame that has the columns a function reads;
* :func:`check_feature_ids` -- integer feature ids (``-1`` = none) below the number of features;
* :func:`check_finite` -- a float array without NaN/inf;
* :func:`check_nonempty_mask` -- a boolean region with at least one feature.
"""
from __future__ import annotations

import numbers
from typing import Any, Iterable

import numpy as np

_FIX_SURROGATES = ("decode the source with errors='replace' (not 'surrogateescape'), or clean the texts: "
                   "[t.encode('utf-8', 'replace').decode('utf-8') for t in texts]")


def _show(values: Any, k: int = 5) -> str:
    """Up to ``k`` distinct values of ``values`` (for messages)."""
    seen: list = []
    for v in np.asarray(values).reshape(-1).tolist():
        if not any(v == s or (v != v and s != s) for s in seen):
            seen.append(v)
        if len(seen) >= k:
            break
    return repr(seen)


def check_texts(texts, what: str = "texts", nonempty: bool = False) -> list[str]:
    """``texts`` must be a list (or other sequence) of ``str`` without lone surrogates (with ``nonempty``: each
    with at least one word, for a model whose attention or rationale over no word is undefined).  Returns it
    as a list; raises ``TypeError``/``ValueError`` saying which item is wrong and how to fix it."""
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"{what}: pass a list of texts, not a single string (wrap it: [text]); "
                        f"got {type(texts).__name__} {texts!r:.40}")
    if texts is None or not hasattr(texts, "__iter__"):
        raise TypeError(f"{what} must be a list of str; got {type(texts).__name__}")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            hint = " (missing values? drop or fill them first, e.g. df['text'].fillna(''))" if t is None or (
                isinstance(t, float) and t != t) else ""
            raise TypeError(f"{what} must be str; item {i} is {type(t).__name__} {t!r:.40}{hint}")
        try:
            t.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(f"{what}: item {i} holds a lone surrogate {t[e.start]!r} at character {e.start} "
                             f"(bytes that were not valid UTF-8); {_FIX_SURROGATES}") from None
        if nonempty and not t.split():
            raise ValueError(f"{what}: item {i} is {t!r:.20}, a text without a word: there is no word to read, "
                             "attend over, select or attribute; drop such texts first, e.g. [t for t in texts if t.split()]")
    return out


def _as_int_array(values: Any, what: str, fix: str, allow_bool: bool = False) -> np.ndarray:
    """``values`` as a 1-d int64 array; every item must be an integer (Python/numpy int, or a float
    with a whole value such as ``1.0``); NaN, fractions and strings are refused (bools too unless
    ``allow_bool``)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise TypeError(f"{what} must be a list of class indices; got {type(values).__name__} {values!r:.40} ({fix})")
    arr = values if isinstance(values, np.ndarray) else None
    if arr is None:
        try:
            arr = np.asarray(list(values))
        except (TypeError, ValueError):
            arr = np.asarray(list(values), dtype=object)
    if arr.ndim == 2 and arr.shape[1] == 1:  # a column vector
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one class index per item (1-d); got shape {arr.shape} ({fix})")
    if arr.dtype.kind in "iu" or (arr.dtype.kind == "b" and allow_bool):
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        nan = np.isnan(arr)
        if nan.any():
            raise ValueError(f"{what}: item {int(np.flatnonzero(nan)[0])} is NaN (a missing value); "
                             f"drop or fill it first ({fix})")
        frac = ~np.isfinite(arr) | (arr != np.round(arr))
        if frac.any():
            i = int(np.flatnonzero(frac)[0])
            raise ValueError(f"{what} must be whole class indices; item {i} is {float(arr[i])!r} ({fix})")
        return arr.astype(np.int64)
    for i, v in enumerate(arr.tolist()):  # objects, strings, bools: find the first bad item
        if (isinstance(v, bool) and not allow_bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{what} must be class indices (int); item {i} is {v!r:.40} ({fix})")
        if not isinstance(v, numbers.Integral):
            f = float(v)
            if f != f:
                raise ValueError(f"{what}: item {i} is NaN (a missing value); drop or fill it first ({fix})")
            if not np.isfinite(f) or f != int(f):
                raise ValueError(f"{what} must be whole class indices; item {i} is {f!r} ({fix})")
    return np.asarray([int(v) for v in arr.tolist()], dtype=np.int64)


def check_targets(targets: Any, n_texts: int, n_classes: int | None = None, what: str = "targets",
                  default: str = "the predicted classes") -> np.ndarray:
    """``targets`` as an int array: one class index in ``[0, n_classes)`` per text (``default``: what
    ``targets=None`` gives, for the message)."""
    fix = f"pass one class index per text, or targets=None for {default}"
    arr = _as_int_array(targets, what, fix)
    if len(arr) != n_texts:
        raise ValueError(f"got {n_texts} texts but {len(arr)} {what}; pass one target per text")
    if n_classes is not None and ((arr < 0).any() or (arr >= n_classes).any()):
        raise ValueError(f"{what} must lie in [0, {n_classes - 1}]; got {sorted(set(arr.tolist()))}")
    return arr


def check_labels(labels: Any, n_classes: int | None = None, n: int | None = None, what: str = "labels",
                 texts_name: str = "texts") -> np.ndarray:
    """Class labels as an int64 array.

    With ``n_classes``: every label must lie in ``[0, n_classes)``.  Without (a model that infers
    its number of classes K from the labels): the labels must be exactly the classes ``0..K-1``,
    each present, so that no class without an example (e.g. labels ``{1, 2}`` building a 3-class
    model) is created silently.  ``n``: the number of texts the labels belong to.
    """
    fix = "re-encode them as 0..K-1, e.g. np.unique(labels, return_inverse=True)[1]"
    arr = _as_int_array(labels, what, fix, allow_bool=True)
    if n is not None and len(arr) != n:
        raise ValueError(f"got {n} {texts_name} but {len(arr)} {what}; pass one label per text")
    if not len(arr):
        raise ValueError(f"{what} is empty; pass at least one labelled text")
    if n_classes is not None:
        if arr.min() < 0 or arr.max() >= n_classes:
            raise ValueError(f"{what} must lie in [0, {n_classes - 1}]; got values {sorted(set(arr.tolist()))[:10]} "
                             f"({fix})")
        return arr
    got = sorted(set(arr.tolist()))
    if got != list(range(len(got))) or len(got) < 2:
        raise ValueError(f"{what} must be the class indices 0..K-1 (K >= 2), each with at least one example; "
                         f"got values {got[:10]} ({fix})")
    return arr


def check_count(value: Any, name: str, minimum: int = 1) -> int:
    """``value`` as an int ``>= minimum`` (a setting such as ``n_explain`` or ``n_train``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int >= {minimum}; got {type(value).__name__} {value!r:.40}")
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}; got {value}")
    return int(value)


def check_images_uint8(images: Any, what: str = "images", ndim: tuple[int, ...] = (3, 4)) -> np.ndarray:
    """RGB images (``(H, W, 3)`` or ``(B, H, W, 3)``) holding uint8 values 0..255, as uint8.

    Integer arrays within 0..255 are accepted; float arrays (e.g. images scaled to [0, 1]), values
    above 255 or below 0, and NaN are refused instead of being cast silently."""
    a = np.asarray(images)
    if a.dtype.kind not in "uif":
        raise TypeError(f"{what} must be uint8 RGB images (values 0..255); got dtype {a.dtype}")
    if a.ndim not in ndim or a.shape[-1] != 3:
        raise ValueError(f"{what} must be RGB images of shape {' or '.join(('(H, W, 3)', '(B, H, W, 3)')[n - 3] for n in ndim)}; "
                         f"got shape {a.shape}")
    if a.dtype == np.uint8:
        return a
    if a.dtype.kind == "f":
        if np.isnan(a).any():
            raise ValueError(f"{what} hold NaN; images must be uint8 values 0..255")
        lo, hi = float(a.min()) if a.size else 0.0, float(a.max()) if a.size else 0.0
        scale = (" (they look scaled to [0, 1]: use (img * 255).round().astype(np.uint8))"
                 if a.size and hi <= 1.0 else "")
        raise TypeError(f"{what} must be uint8 RGB images (values 0..255); got dtype {a.dtype} with values in "
                        f"[{lo:g}, {hi:g}]{scale}")
    if a.size and (a.min() < 0 or a.max() > 255):
        raise ValueError(f"{what} must hold values 0..255 (uint8); got values in [{a.min()}, {a.max()}]")
    return a.astype(np.uint8)


def check_columns(df: Any, cols: Iterable[str], what: str, hint: str = "") -> None:
    """``df`` must be a DataFrame with every column of ``cols``."""
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame; got {type(df).__name__}")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{what} is missing column(s) {missing}; got columns {list(df.columns)}"
                         + (f" ({hint})" if hint else ""))


def check_feature_ids(ids: Any, n_features: int | None = None, what: str = "selected") -> np.ndarray:
    """A 2-d array of feature ids per row (``-1`` = no feature), as int64.

    Float ids (``1.5``, NaN) are refused, as are ids below ``-1`` and ids ``>= n_features``."""
    a = np.asarray(ids)
    if a.dtype.kind not in "iu":
        if a.dtype.kind == "f" and a.size and np.isnan(a).any():
            raise TypeError(f"{what} must hold integer feature ids (-1 for none); got NaN (dtype {a.dtype})")
        raise TypeError(f"{what} must hold integer feature ids (-1 for none); got dtype {a.dtype} "
                        f"with values {_show(a)}")
    if a.ndim != 2:
        raise ValueError(f"{what} must be a 2-d array (rows x selected features); got shape {a.shape}")
    a = a.astype(np.int64)
    bad = (a < -1) | ((a >= n_features) if n_features is not None else False)
    if bad.any():
        allowed = f"[0, {n_features - 1}]" if n_features is not None else "0 or above"
        raise ValueError(f"{what}: feature ids must be -1 (none) or in {allowed}; got {_show(a[bad])}")
    return a


def check_finite(values: Any, what: str) -> np.ndarray:
    """``values`` as a float64 array without NaN or infinity."""
    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be numbers; got {type(values).__name__}") from None
    bad = ~np.isfinite(a)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{what} must be finite numbers; got {a[idx]} at index {idx} "
                         f"({int(bad.sum())} non-finite value(s))")
    return a


def check_nonempty_mask(mask: Any, what: str) -> np.ndarray:
    """A boolean mask with at least one True entry (an empty region has no share to measure)."""
    m = np.asarray(mask, dtype=bool)
    if not m.any():
        raise ValueError(f"{what} is empty (no feature of the {m.shape} mask is in it); a share of "
                         "attribution on an empty region is undefined")
    return m
