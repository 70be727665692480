"""UCI Adult as preprocessed by Ribeiro et al. (anchor) and Hase & Bansal (ACL 2020).

This is ``anchor.utils.load_dataset('adult', balance=True)`` re-implemented on our loader's
rows (``adult.data`` only, 32,561 records):

* 12 features: Age, Workclass, Education, Marital Status, Occupation, Relationship, Race, Sex,
  Capital Gain, Capital Loss, Hours per week, Country (``fnlwgt`` and ``education_num`` dropped);
* category groupings of Education, Marital Status, Occupation and Country (anchor's maps);
* Capital Gain / Loss in three bins: 0, (0, median of the non-zero values], above;
* Age and Hours per week in quartile bins (lime's ``QuartileDiscretizer`` on all 32,561 rows;
  Hours per week has only three distinct quartile edges, so three bins);
* every feature label-encoded in sorted order of its value names;
* balanced by drawing ``min(class count)`` = 7,841 rows per class **with replacement**
  (``np.random.seed(1)``), 15,682 rows in all.

``grouped=False`` reproduces what ``anchor-exp`` 0.0.2.0 actually returns under Python 3: its
value maps compare ``bytes`` with ``str`` and silently do nothing, so no category is grouped and
the capital bins are named ``0/1/2``.  ``replace=False`` is the de-duplicated variant: each census
record is drawn at most once, so no record can sit in two splits.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

FEATURES = ("Age", "Workclass", "Education", "Marital Status", "Occupation", "Relationship", "Race", "Sex",
            "Capital Gain", "Capital Loss", "Hours per week", "Country")
_COLUMNS = ("age", "workclass", "education", "marital_status", "occupation", "relationship", "race", "sex",
            "capital_gain", "capital_loss", "hours_per_week", "native_country")
_ORDINAL = (0, 10)  # Age, Hours per week: quartile bins

EDUCATION_MAP = {
    "10th": "Dropout", "11th": "Dropout", "12th": "Dropout", "1st-4th": "Dropout", "5th-6th": "Dropout",
    "7th-8th": "Dropout", "9th": "Dropout", "Preschool": "Dropout", "HS-grad": "High School grad",
    "Some-college": "High School grad", "Masters": "Masters", "Prof-school": "Prof-School",
    "Assoc-acdm": "Associates", "Assoc-voc": "Associates"}
OCCUPATION_MAP = {
    "Adm-clerical": "Admin", "Armed-Forces": "Military", "Craft-repair": "Blue-Collar",
    "Exec-managerial": "White-Collar", "Farming-fishing": "Blue-Collar", "Handlers-cleaners": "Blue-Collar",
    "Machine-op-inspct": "Blue-Collar", "Other-service": "Service", "Priv-house-serv": "Service",
    "Prof-specialty": "Professional", "Protective-serv": "Other", "Sales": "Sales", "Tech-support": "Other",
    "Transport-moving": "Blue-Collar"}
COUNTRY_MAP = {
    "Cambodia": "SE-Asia", "Canada": "British-Commonwealth", "China": "China", "Columbia": "South-America",
    "Cuba": "Other", "Dominican-Republic": "Latin-America", "Ecuador": "South-America",
    "El-Salvador": "South-America", "England": "British-Commonwealth", "France": "Euro_1", "Germany": "Euro_1",
    "Greece": "Euro_2", "Guatemala": "Latin-America", "Haiti": "Latin-America", "Holand-Netherlands": "Euro_1",
    "Honduras": "Latin-America", "Hong": "China", "Hungary": "Euro_2", "India": "British-Commonwealth",
    "Iran": "Other", "Ireland": "British-Commonwealth", "Italy": "Euro_1", "Jamaica": "Latin-America",
    "Japan": "Other", "Laos": "SE-Asia", "Mexico": "Latin-America", "Nicaragua": "Latin-America",
    "Outlying-US(Guam-USVI-etc)": "Latin-America", "Peru": "South-America", "Philippines": "SE-Asia",
    "Poland": "Euro_2", "Portugal": "Euro_2", "Puerto-Rico": "Latin-America", "Scotland": "British-Commonwealth",
    "South": "Euro_2", "Taiwan": "China", "Thailand": "SE-Asia", "Trinadad&Tobago": "Latin-America",
    "United-States": "United-States", "Vietnam": "SE-Asia"}
MARRIED_MAP = {
    "Never-married": "Never-Married", "Married-AF-spouse": "Married", "Married-civ-spouse": "Married",
    "Married-spouse-absent": "Separated", "Separated": "Separated", "Divorced": "Separated",
    "Widowed": "Widowed"}


@dataclass
class AdultData:
    """Label-encoded Adult rows: ``X[i, j]`` indexes ``values[j]``."""

    X: np.ndarray                       # (n, 12) int64
    y: np.ndarray                       # (n,) int64, 1 = income > 50K
    feature_names: list[str]
    values: list[list[str]]             # value names per feature
    source_rows: np.ndarray             # row of adult.data each sample was drawn from
    meta: dict = field(default_factory=dict)


def _capital_bins(x: np.ndarray, grouped: bool) -> np.ndarray:
    d = np.digitize(x.astype(float), [0, np.median(x[x > 0]), float("inf")], right=True)
    names = ("None", "Low", "High") if grouped else ("0", "1", "2")
    return np.array([names[v] for v in d], dtype=object)


def preprocess(df: pd.DataFrame, grouped: bool = True, balance: bool = True, replace: bool = True,
               seed: int = 1) -> AdultData:
    """Hase & Bansal / anchor preprocessing of the rows of ``adult.data`` (see module docstring).

    ``df`` has the columns of :func:`xaibench.data.loaders.load` (``"adult"``, split ``train``).
    """
    from lime.lime_tabular import QuartileDiscretizer
    from sklearn.preprocessing import LabelEncoder

    missing = [c for c in (*_COLUMNS, "label") if c not in df.columns]
    if missing:
        raise ValueError(f"the Adult frame lacks columns {missing}; pass xaibench.data.loaders.load('adult')")
    cols: list[np.ndarray] = []
    for j, c in enumerate(_COLUMNS):
        col = df[c].astype(str).to_numpy(dtype=object)
        if grouped and c in ("education", "marital_status", "occupation", "native_country"):
            m = {"education": EDUCATION_MAP, "marital_status": MARRIED_MAP, "occupation": OCCUPATION_MAP,
                 "native_country": COUNTRY_MAP}[c]
            col = np.array([m.get(v, v) for v in col], dtype=object)
        if c in ("capital_gain", "capital_loss"):
            col = _capital_bins(df[c].to_numpy(), grouped)
        cols.append(col)
    data = np.zeros((len(df), len(_COLUMNS)), dtype=float)
    values: list[list[str]] = [[] for _ in _COLUMNS]
    categorical = [j for j in range(len(_COLUMNS)) if j not in _ORDINAL]
    for j, col in enumerate(cols):
        if j in _ORDINAL:
            data[:, j] = col.astype(float)
        else:
            le = LabelEncoder().fit(col.astype(str))
            data[:, j] = le.transform(col.astype(str))
            values[j] = [str(v) for v in le.classes_]
    disc = QuartileDiscretizer(data, categorical, list(FEATURES))
    data = disc.discretize(data)
    for j in _ORDINAL:
        values[j] = list(disc.names[j])
    X = data.astype(np.int64)
    y = df["label"].to_numpy(dtype=np.int64)
    rows = np.arange(len(df))
    if balance:
        rng = np.random.RandomState(seed)  # anchor: np.random.seed(1); np.random.choice(...) per class
        n_min = int(np.bincount(y).min())
        idx = np.hstack([rng.choice(np.flatnonzero(y == label), n_min, replace=replace) for label in np.unique(y)])
        X, y, rows = X[idx], y[idx], rows[idx]
    return AdultData(X, y, list(FEATURES), values, rows,
                     meta={"grouped": grouped, "balance": balance, "replace": replace})


def load_adult(grouped: bool = True, balance: bool = True, replace: bool = True) -> AdultData:
    """The preprocessed Adult data from ``data/raw/adult/adult.data`` (``make data`` first)."""
    from .loaders import load

    df = load("adult")
    return preprocess(df[df["split"] == "train"].reset_index(drop=True), grouped=grouped, balance=balance,
                      replace=replace)


def split_indices(n: int, seed: int, fractions: tuple[float, float, float] = (0.8, 0.1, 0.1)) -> dict[str, np.ndarray]:
    """Random 80/10/10 train/dev/test indices for ``n`` rows (one permutation per seed)."""
    if abs(sum(fractions) - 1.0) > 1e-9:
        raise ValueError(f"split fractions must sum to 1, got {fractions}")
    perm = np.random.default_rng(seed).permutation(n)
    n_tr, n_dev = int(round(fractions[0] * n)), int(round(fractions[1] * n))
    return {"train": perm[:n_tr], "dev": perm[n_tr:n_tr + n_dev], "test": perm[n_tr + n_dev:]}
