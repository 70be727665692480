"""Counterfactual evaluation of explanation faithfulness (Ge et al. 2021), and its baselines.

Given a model ``F`` (an :class:`~xaibench.models.embedding_lr.EmbeddingLR`), id rows ``X`` with
predictions ``y_hat`` and, per explainer, the top-``K`` features ``e_i`` of every row:

* **Selection** (:func:`top_k`): an explanation is the ``K`` features with the largest score *towards*
  the predicted class (``selection="supporting"``, default: the features that argue for the
  prediction; features that argue against it are never selected) or with the largest ``|score|``
  (``selection="absolute"``).  The ground truth uses the same rule on the LR's own shares.
* **Algorithm 1** (:func:`discrete_counterfactuals`): exhaustive search over the selected features'
  values (Cartesian product in the features' value order, the original combination excluded);
  ``rule="first_flip"`` (default, the paper's Algorithm 1) returns the first candidate that flips the
  label and, when none does, the one with the largest drop of ``p(y_hat | x')``; ``rule="max_drop"``
  always returns the largest drop (it flips whenever any candidate does).
* **Abstentions**: a row where an explainer selects no feature (Decision Boundary finding no flip,
  an empty anchor) has no counterfactual.  ``abstention="fail"`` (default) counts it as a failed
  counterfactual: it enters Validity and Validity_soft over *all* rows with 0, Proximity is the mean
  over the answered rows and ``C = Validity / Proximity`` (Eq. 3), ``C_soft = Validity_soft / Proximity``
  (Eq. 5), so every explainer is scored on the same rows.  ``abstention="skip"`` keeps the sums of
  Eqs. 3 and 5 over all rows, to which an abstention adds nothing (C over the answered rows only).
* **Algorithm 2** (:func:`continuous_counterfactuals`): optimise the selected features' embeddings,
  ``min sum_j ||w_j - w'_j||^2 + alpha * p(y_hat | x')`` (Eq. 7), all rows at once with Adam.
* **Metrics** (Eqs. 1-5): Validity, Proximity (mean Euclidean distance), ``C = sum I(flip) /
  sum dist``, Validity_soft, ``C_soft = sum (p - p') / sum dist``.  For Algorithm 1 two distances
  are reported as in the paper's Table 1: one-hot (``sqrt(2 * #changed)``, used by C(disc.)) and
  embedding (used by C_soft(disc.)).
* **Erasure baselines** (Eqs. 8-10): comprehensiveness, sufficiency and decision-flip ratio with
  the removed features replaced by a zero embedding (``del.``) or ``<unk>`` (``mask``, text only).
* **GroundTruth**: the fraction of the LR's own top-``K`` features (by its effect towards the predicted
  class, or by ``|effect|``, the same ``selection`` as the explainers) that the explainer selects.  The
  effect is ``w_j . (e(x_j) - r_j)`` with ``r_j`` the reference of :data:`GROUND_TRUTHS`: by default
  (``reference``, Molnar's reading) a categorical feature's first value and 0 for a word, so that on Adult
  deleting a feature (zero embedding) does not remove exactly its effect; ``zero`` (deletion) and
  ``train_mean`` are options.  :func:`tau_ceiling` is the largest tau a ranking can reach when the
  ground truth ties explainers.
* **Rank agreement** (Eqs. 11-12): Kendall's tau and Spearman's rho between a metric's ranking of
  the explainers and the GroundTruth ranking.

Every metric in :data:`METRICS` declares ``lower_is_better``.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ...checks import check_count, check_feature_ids, check_finite, check_targets
from ...data.feature_data import PAD_ID, UNK_ID
from ..base import Metric
from ...models.embedding_lr import REFERENCES


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("comp_del", False, label="Comp. (del.)", description="p(y|x) - p(y|x without e), e replaced by zero embeddings"),
    Metric("suff_del", True, label="Suff. (del.)", description="p(y|x) - p(y|e only), the rest replaced by zero embeddings"),
    Metric("comp_mask", False, label="Comp. (mask)", description="as Comp. (del.) with <unk> embeddings"),
    Metric("suff_mask", True, label="Suff. (mask)", description="as Suff. (del.) with <unk> embeddings"),
    Metric("dfr", False, label="DFR", description="fraction of predictions flipped by deleting e (Serrano & Smith)"),
    Metric("validity_disc", False, label="Validity (disc.)", description="fraction of Algorithm 1 counterfactuals that flip"),
    Metric("proximity_disc", None, label="Proximity (disc., one-hot)", description="mean one-hot Euclidean distance"),
    Metric("c_disc", False, label="C (disc.)", description="sum flips / sum one-hot distance"),
    Metric("validity_soft_disc", False, label="Validity_soft (disc.)", description="mean p(y|x) - p(y|x') of Algorithm 1"),
    Metric("proximity_soft_disc", None, label="Proximity (disc., embedding)", description="mean embedding Euclidean distance"),
    Metric("c_soft_disc", False, label="C_soft (disc.)", description="sum (p - p') / sum embedding distance"),
    Metric("validity_cont", False, label="Validity (cont.)", description="fraction of Algorithm 2 counterfactuals that flip"),
    Metric("proximity_cont", None, label="Proximity (cont.)", description="mean embedding Euclidean distance of Algorithm 2"),
    Metric("c_cont", False, label="C (cont.)", description="sum flips / sum distance (Algorithm 2)"),
    Metric("validity_soft_cont", False, label="Validity_soft (cont.)", description="mean p(y|x) - p(y|x') of Algorithm 2"),
    Metric("c_soft_cont", False, label="C_soft (cont.)", description="sum (p - p') / sum distance (Algorithm 2)"),
    Metric("ground_truth", False, label="GroundTruth", description="fraction of the LR's top-K features recovered"),
)}


#: feature selection rules: ``supporting`` (score towards the predicted class > 0), ``absolute`` (|score| > 0)
SELECTIONS = ("supporting", "absolute")
#: Algorithm 1 rules: ``first_flip`` (the paper's), ``max_drop`` (always the largest probability drop)
RULES = ("first_flip", "max_drop")
#: what the ground truth's effects are measured against: ``reference`` (default; Molnar's reading of an
#: LR: a categorical feature against its reference category, the first value; a word's embedding against 0),
#: ``zero`` (the zero embedding: deletion, the erasure metrics' operation) or ``train_mean`` (the slot's
#: training-mean embedding); see :meth:`xaibench.models.embedding_lr.EmbeddingLR.reference_shares`
GROUND_TRUTHS = REFERENCES
#: how a row without any selected feature is scored: ``fail`` (a failed counterfactual) or ``skip``
ABSTENTIONS = ("fail", "skip")


def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


# ----------------------------------------------------------------------------------------------
# selections
# ----------------------------------------------------------------------------------------------
def top_k(scores: np.ndarray, X: np.ndarray, k: int, selection: str = "supporting") -> np.ndarray:
    """``(n, k)`` indices of the ``k`` selected features, best first (ties by position); ``-1`` pads
    rows with fewer than ``k`` candidates.  ``scores`` are signed towards the explained class.

    ``selection="supporting"``: the largest positive scores (features that push towards the
    predicted class; a feature scored <= 0 is never selected); ``"absolute"``: the largest ``|score|``
    (non-zero).  Padding is never selected."""
    check_count(k, "k", 1)
    _check_choice("selection", selection, SELECTIONS)
    scores, X = check_finite(scores, "scores (the explainer's feature scores)"), np.asarray(X)
    if scores.shape != X.shape:
        raise ValueError(f"scores {scores.shape} and rows {X.shape} differ in shape")
    if scores.ndim == 2 and k > scores.shape[1]:
        raise ValueError(f"k={k} exceeds the {scores.shape[1]} features of each row; use k <= {scores.shape[1]}")
    real = X != PAD_ID
    if selection == "supporting":
        mag = np.where(real & (scores > 0), scores, -np.inf)
    else:
        mag = np.where(real & (scores != 0), np.abs(scores), -np.inf)
    order = np.argsort(-mag, axis=1, kind="stable")[:, :k]
    ok = np.take_along_axis(mag, order, axis=1) > -np.inf
    return np.where(ok, order, -1)


def supporting_shares(model: Any, X: np.ndarray, targets: np.ndarray | None = None, reference: str = "zero",
                      train_X: np.ndarray | None = None) -> np.ndarray:
    """``(n, M)``: each feature's logit effect ``w_j . e(x_j) - w_j . r_j`` (``reference`` ``r_j``, see
    :data:`GROUND_TRUTHS`; ``zero``: the share ``w_j . e(x_j)``) signed towards ``targets`` (default: the
    model's predictions), i.e. positive when the feature pushes towards that class."""
    X = np.asarray(X)
    t = model.proba_ids(X).argmax(1) if targets is None else np.asarray(targets)
    return model.effects(X, reference, train_X) * np.where(t == 1, 1.0, -1.0)[:, None]


def ground_truth_selection(model: Any, X: np.ndarray, k: int, selection: str = "supporting",
                           reference: str = "reference", train_X: np.ndarray | None = None) -> np.ndarray:
    """The white box's own top-``k`` features: by its effect towards the predicted class (``supporting``)
    or by ``|effect|`` (``absolute``), the effect measured against ``reference`` (:data:`GROUND_TRUTHS`)."""
    _check_choice("reference", reference, GROUND_TRUTHS)
    return top_k(supporting_shares(model, X, reference=reference, train_X=train_X), X, k, selection)


def tau_ceiling(truth: np.ndarray) -> float:
    """The largest Kendall tau (Eq. 11, tau-a) any ranking can reach against ``truth``: the share of pairs
    that ``truth`` does not tie (a tied pair counts as neither concordant nor discordant)."""
    v = np.asarray(truth, dtype=float)
    n = len(v)
    if n < 2:
        raise ValueError(f"need at least two values; got {n}")
    tied = sum(int(v[i] == v[j]) for i in range(n) for j in range(i + 1, n))
    return float(1 - tied / (n * (n - 1) / 2))


def abstained(selected: np.ndarray) -> np.ndarray:
    """Per row: ``True`` where nothing is selected (the explainer gave no feature a usable score)."""
    return ~(np.asarray(selected) >= 0).any(1)


def ground_truth_recall(selected: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per row: ``|selected ∩ truth| / |truth|`` (``-1`` entries ignored; 0 for an empty truth)."""
    selected, truth = check_feature_ids(selected, what="selected"), check_feature_ids(truth, what="truth")
    if len(selected) != len(truth):
        raise ValueError(f"selected has {len(selected)} rows but truth {len(truth)}; pass one row per explained row")
    out = np.zeros(len(truth))
    for i, (s, t) in enumerate(zip(selected, truth)):
        t = set(int(v) for v in t if v >= 0)
        out[i] = len(t & set(int(v) for v in s if v >= 0)) / len(t) if t else 0.0
    return out


def _check_inputs(model: Any, X: np.ndarray, selected: np.ndarray, targets: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The id rows ``X`` (``(n, M)``, n >= 1), the selections (integer ids -1 or in ``[0, M)``, one row per
    row of ``X``) and the targets (one class per row) every metric below reads."""
    X = np.asarray(X)
    M = model.spec.n_features
    if X.ndim != 2 or X.shape[1] != M:
        raise ValueError(f"X must be id rows of shape (n, {M}); got shape {X.shape}")
    if X.dtype.kind not in "iu":
        raise TypeError(f"X must hold integer feature-value ids; got dtype {X.dtype}")
    if not len(X):
        raise ValueError("X has no rows; pass at least one row to explain (n_explain >= 1)")
    selected = check_feature_ids(selected, M, "selected")
    if len(selected) != len(X):
        raise ValueError(f"selected has {len(selected)} rows but X {len(X)}; pass one row of feature ids per row")
    if targets is not None:
        targets = check_targets(targets, len(X), getattr(model, "n_classes", None),
                                default="the model's predictions")
    return X, selected, targets


def _selected_mask(selected: np.ndarray, M: int) -> np.ndarray:
    mask = np.zeros((len(selected), M), dtype=bool)
    rows, cols = np.nonzero(selected >= 0)
    mask[rows, selected[rows, cols]] = True
    return mask


# ----------------------------------------------------------------------------------------------
# erasure baselines (DeYoung et al. 2020; Serrano & Smith 2019)
# ----------------------------------------------------------------------------------------------
def erasure_scores(model: Any, X: np.ndarray, selected: np.ndarray, targets: np.ndarray,
                   mode: str = "delete") -> dict[str, np.ndarray]:
    """Per-row comprehensiveness, sufficiency and decision flip (``mode``: ``delete`` = zero
    embedding, ``mask`` = ``<unk>``; padding is never touched)."""
    if mode not in ("delete", "mask"):
        raise ValueError(f"mode must be 'delete' or 'mask', got {mode!r}")
    if mode == "mask" and model.spec.kind != "text":
        raise ValueError("masking needs an <unk> embedding: only text datasets have one (use mode='delete')")
    fill = PAD_ID if mode == "delete" else UNK_ID
    X, selected, targets = _check_inputs(model, X, selected, targets)
    sel = _selected_mask(selected, X.shape[1])
    real = X != PAD_ID
    n = np.arange(len(X))
    p = model.proba_ids(X)[n, targets]
    x_wo = np.where(sel, fill, X)
    x_only = np.where(real & ~sel, fill, X)
    p_wo = model.proba_ids(x_wo)
    p_only = model.proba_ids(x_only)[n, targets]
    return {"comp": p - p_wo[n, targets], "suff": p - p_only, "flip": (p_wo.argmax(1) != targets).astype(float)}


# ----------------------------------------------------------------------------------------------
# counterfactual search
# ----------------------------------------------------------------------------------------------
@dataclass
class Counterfactuals:
    X_cf: np.ndarray | None     # (n, M) ids (Algorithm 1) or None (Algorithm 2 edits embeddings)
    p: np.ndarray               # p(y_hat | x)
    p_cf: np.ndarray            # p(y_hat | x_cf)
    flipped: np.ndarray         # bool
    dist: np.ndarray            # Euclidean distance in embedding space
    dist_onehot: np.ndarray | None = None
    abstained: np.ndarray | None = None   # bool: rows without any selected feature


def discrete_counterfactuals(model: Any, X: np.ndarray, selected: np.ndarray, targets: np.ndarray,
                             max_candidates: int = 100_000, rule: str = "first_flip") -> Counterfactuals:
    """Algorithm 1: every combination of the selected features' values (``itertools.product`` over
    each feature's values in order, the original excluded).  ``rule="first_flip"`` (the paper's):
    the first combination that flips the prediction, else the one with the lowest ``p(y_hat | x')``;
    ``rule="max_drop"``: always the lowest ``p(y_hat | x')``.  Rows with nothing selected keep ``x' = x``."""
    _check_choice("rule", rule, RULES)
    spec = model.spec
    X, selected, targets = _check_inputs(model, X, selected, targets)
    n = len(X)
    X_cf = X.copy()
    for i in range(n):
        feats = [int(f) for f in selected[i] if f >= 0]
        if not feats:
            continue
        grids = [spec.candidates(f) for f in feats]
        size = int(np.prod([len(g) for g in grids]))
        if size > max_candidates:
            raise ValueError(f"row {i}: {size} combinations exceed max_candidates={max_candidates}")
        combos = np.array(list(itertools.product(*grids)), dtype=np.int64)
        combos = combos[(combos != X[i, feats][None, :]).any(1)]
        if not len(combos):
            continue
        cand = np.repeat(X[i][None], len(combos), axis=0)
        cand[:, feats] = combos
        proba = model.proba_ids(cand)
        flips = np.flatnonzero(proba.argmax(1) != targets[i])
        if rule == "first_flip" and len(flips):
            X_cf[i] = cand[int(flips[0])]
        else:
            X_cf[i] = cand[int(np.argmin(proba[:, targets[i]]))]
    idx = np.arange(n)
    p = model.proba_ids(X)[idx, targets]
    pcf_all = model.proba_ids(X_cf)
    changed = (X_cf != X).sum(1)
    dist = np.sqrt(((model.embed_ids(X_cf) - model.embed_ids(X)) ** 2).sum((1, 2)))
    return Counterfactuals(X_cf, p, pcf_all[idx, targets], pcf_all.argmax(1) != targets, dist,
                           np.sqrt(2.0 * changed), abstained(selected))


def continuous_counterfactuals(model: Any, X: np.ndarray, selected: np.ndarray, targets: np.ndarray,
                               alpha: float = 50.0, steps: int = 100, lr: float = 0.1, init_std: float = 0.01,
                               seed: int = 0) -> Counterfactuals:
    """Algorithm 2: Adam on ``sum ||w - w'||^2 + alpha * p(y_hat | x')`` over the selected features'
    embeddings (initialised at the originals plus ``N(0, init_std^2)`` noise), all rows in one batch.
    The model is used as a differentiable black box (``model.logits_from_embeddings``)."""
    import torch

    X, selected, targets = _check_inputs(model, X, selected, targets)
    n, M = X.shape
    rows, cols = np.nonzero(selected >= 0)
    feats = selected[rows, cols]
    dev = model.device
    with torch.no_grad():
        E0 = model.module.embedding(torch.as_tensor(X, device=dev)).float()
    r_t, f_t = torch.as_tensor(rows, device=dev), torch.as_tensor(feats, device=dev)
    V0 = E0[r_t, f_t]                                        # (n_sel, d) original selected embeddings
    g = torch.Generator(device="cpu").manual_seed(int(seed))
    V = (V0 + (torch.randn(V0.shape, generator=g) * init_std).to(dev)).clone().requires_grad_(True)
    tgt = torch.as_tensor(targets, device=dev)
    opt = torch.optim.Adam([V], lr=lr)

    def forward(Vv):
        E = E0.index_put((r_t, f_t), Vv)
        return E, torch.softmax(model.logits_from_embeddings(E), -1).gather(1, tgt[:, None])[:, 0]

    if len(rows):
        with torch.enable_grad():
            for _ in range(int(steps)):
                _, p_cf = forward(V)
                loss = ((V - V0) ** 2).sum() + alpha * p_cf.sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
    with torch.no_grad():
        E_np = forward(V)[0].cpu().numpy().astype(np.float64)
    z = np.einsum("nmd,md->n", E_np, model.weights) + model.bias
    p1 = 1.0 / (1.0 + np.exp(-z))
    proba_cf = np.stack([1 - p1, p1], 1)
    idx = np.arange(n)
    p = model.proba_ids(X)[idx, targets]
    dist = np.sqrt(((E_np - model.embed_ids(X)) ** 2).sum((1, 2)))
    return Counterfactuals(None, p, proba_cf[idx, targets], proba_cf.argmax(1) != targets, dist,
                           abstained=abstained(selected))


def min_flip_distance(model: Any, X: np.ndarray, selected: np.ndarray) -> np.ndarray:
    """Per row: the smallest Euclidean distance by which editing only the selected features' embeddings can
    flip the LR's prediction, ``|z(x)| / ||w_S||`` (the logit moves by ``w_S . delta``); NaN where nothing is
    selected.  No counterfactual of Algorithm 2 that flips a row is closer than this (a lower bound on
    its Proximity)."""
    X, selected, _ = _check_inputs(model, X, selected)
    mask = _selected_mask(selected, X.shape[1])
    wnorm = np.sqrt((mask * (model.weights ** 2).sum(1)[None, :]).sum(1))
    z = np.abs(model.logit_z(X))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(mask.any(1), z / wnorm, np.nan)


def subset(cf: Counterfactuals, rows: np.ndarray) -> Counterfactuals:
    """The counterfactuals of ``rows`` only (e.g. one explainer's share of a batched search)."""
    import dataclasses

    return Counterfactuals(**{f.name: None if getattr(cf, f.name) is None else getattr(cf, f.name)[rows]
                              for f in dataclasses.fields(cf)})


def counterfactual_scores(cf: Counterfactuals, suffix: str, abstention: str = "fail") -> dict[str, float]:
    """Validity, Proximity, C, Validity_soft, C_soft (Eqs. 1-5) of one set of counterfactuals.

    ``abstention="fail"``: a row without a selected feature (``cf.abstained``) is a failed
    counterfactual: flip 0 and probability drop 0 in Validity / Validity_soft (means over all rows),
    Proximity = mean distance over the answered rows, ``C = Validity / Proximity`` and
    ``C_soft = Validity_soft / Proximity``.  Without abstentions this equals the sums of Eqs. 3 and 5.
    ``abstention="skip"``: the sums over all rows (an abstention adds nothing to either)."""
    _check_choice("abstention", abstention, ABSTENTIONS)
    n = len(cf.p)
    gone = np.zeros(n, bool) if cf.abstained is None else np.asarray(cf.abstained, bool)
    flips = np.where(gone, 0.0, cf.flipped.astype(float))
    drop = np.where(gone, 0.0, cf.p - cf.p_cf)
    out = {f"validity_{suffix}": flips.mean(), f"validity_soft_{suffix}": drop.mean()}

    def prox(d: np.ndarray) -> float:
        if abstention == "skip":
            return float(d.mean())
        return float(d[~gone].mean()) if (~gone).any() else float("nan")

    def ratio(num: np.ndarray, d: np.ndarray) -> float:
        if abstention == "skip":
            return _ratio(num, d)
        p = prox(d)
        return float(num.mean()) / p if np.isfinite(p) and p > 0 else float("nan")

    if cf.dist_onehot is not None:   # Algorithm 1: C on one-hot distances, C_soft on embeddings
        out.update({f"proximity_{suffix}": prox(cf.dist_onehot), f"c_{suffix}": ratio(flips, cf.dist_onehot),
                    f"proximity_soft_{suffix}": prox(cf.dist), f"c_soft_{suffix}": ratio(drop, cf.dist)})
    else:
        out.update({f"proximity_{suffix}": prox(cf.dist), f"c_{suffix}": ratio(flips, cf.dist),
                    f"c_soft_{suffix}": ratio(drop, cf.dist)})
    return {k: float(v) for k, v in out.items()}


def _ratio(num: np.ndarray, den: np.ndarray) -> float:
    d = float(np.sum(den))
    return float(np.sum(num)) / d if d > 0 else float("nan")


# ----------------------------------------------------------------------------------------------
# one explainer, all metrics
# ----------------------------------------------------------------------------------------------
def evaluate_selection(model: Any, X: np.ndarray, selected: np.ndarray, truth: np.ndarray,
                       discrete: bool = True, continuous: bool = True, alpha: float = 50.0,
                       cont_kwargs: Mapping[str, Any] | None = None, rule: str = "first_flip",
                       abstention: str = "fail") -> dict[str, float]:
    """Every metric of :data:`METRICS` for one explainer's selections on rows ``X`` (targets: the
    model's predictions), plus ``abstentions`` (rows without a selected feature)."""
    _check_choice("rule", rule, RULES)
    _check_choice("abstention", abstention, ABSTENTIONS)
    X, selected, _ = _check_inputs(model, X, selected)
    targets = model.proba_ids(X).argmax(1)
    out: dict[str, float] = {"ground_truth": float(ground_truth_recall(selected, truth).mean()),
                             "abstentions": float(abstained(selected).sum())}
    er = erasure_scores(model, X, selected, targets, "delete")
    out.update(comp_del=er["comp"].mean(), suff_del=er["suff"].mean(), dfr=er["flip"].mean())
    if model.spec.kind == "text":
        em = erasure_scores(model, X, selected, targets, "mask")
        out.update(comp_mask=em["comp"].mean(), suff_mask=em["suff"].mean())
    if discrete and model.spec.kind == "tabular":
        out.update(counterfactual_scores(discrete_counterfactuals(model, X, selected, targets, rule=rule), "disc",
                                         abstention))
    if continuous:
        cf = continuous_counterfactuals(model, X, selected, targets, alpha=alpha, **dict(cont_kwargs or {}))
        out.update(counterfactual_scores(cf, "cont", abstention))
    return {k: float(v) for k, v in out.items()}


# ----------------------------------------------------------------------------------------------
# rank agreement (Eqs. 11-12)
# ----------------------------------------------------------------------------------------------
def kendall_tau(u: np.ndarray, v: np.ndarray) -> float:
    """Eq. 11: (concordant - discordant) / (n (n-1) / 2); tied pairs count as neither (tau-a)."""
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    n = len(u)
    if n != len(v) or n < 2:
        raise ValueError(f"need two equally long vectors of length >= 2; got {len(u)} and {len(v)}")
    s = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            s += np.sign(u[i] - u[j]) * np.sign(v[i] - v[j])
    return float(s / (n * (n - 1) / 2))


def spearman_rho(u: np.ndarray, v: np.ndarray) -> float:
    """Eq. 12, Spearman's rho: the Pearson correlation of the average ranks (:func:`scipy.stats.spearmanr`).
    Without ties it equals Eq. 12's ``1 - 6 sum d^2 / (n (n^2 - 1))``; with ties it stays exact, where
    that shortcut does not.  NaN when either vector is constant."""
    from scipy.stats import spearmanr

    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    n = len(u)
    if n != len(v) or n < 2:
        raise ValueError(f"need two equally long vectors of length >= 2; got {len(u)} and {len(v)}")
    if np.ptp(u) == 0 or np.ptp(v) == 0:
        return float("nan")
    return float(spearmanr(u, v).statistic)


def oriented(values: np.ndarray, metric: str) -> np.ndarray:
    """Metric values turned so that larger is better (negated for ``lower_is_better``)."""
    m = METRICS[metric]
    if m.lower_is_better is None:
        raise ValueError(f"{metric} is not a quality score and has no ranking")
    return -np.asarray(values, dtype=float) if m.lower_is_better else np.asarray(values, dtype=float)


def ranks(values: np.ndarray, metric: str) -> np.ndarray:
    """1 = best, by the metric's direction (ties share the lower rank)."""
    from scipy.stats import rankdata

    return rankdata(-oriented(values, metric), method="min").astype(int)


def rank_agreement(scores: Mapping[str, float], truth: Mapping[str, float], metric: str) -> dict[str, float]:
    """Kendall's tau and Spearman's rho between a metric's and GroundTruth's explainer rankings."""
    names = [k for k in truth if k in scores and np.isfinite(scores[k])]
    u = oriented(np.array([scores[k] for k in names]), metric)
    v = np.array([truth[k] for k in names], dtype=float)
    return {"kendall_tau": kendall_tau(u, v), "spearman_rho": spearman_rho(u, v), "n_explainers": len(names)}
