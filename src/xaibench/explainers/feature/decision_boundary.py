"""Decision Boundary explainer (Hase & Bansal, ACL 2020; code ``peterbhase/InterpretableNLP-ACL2020``).

1. Sample perturbations around the row: on Adult 10,000 rows with 1-3 features (uniformly chosen)
   set to another value drawn uniformly (``sample_perturbations``); on Movie Reviews 1,000
   sentences per attempt (up to ``max_attempts``), each word replaced with probability
   ``0.25 - min(0.005 * length, 0.15)`` by one of its ``top_n`` nearest GloVe neighbours in the
   vocabulary (anchor's ``perturb_sentence`` with a neighbour table, as their text code).
2. Among perturbations the model classifies differently, take the one minimising
   ``#edited features + ||h(x) - h(x')||^2`` with ``h`` the representation the classifier's output
   layer sees (here the concatenated embeddings).
3. Order its edits by the greedy path to the boundary: repeatedly apply the single remaining
   edit that moves the original class's logit least (``get_path_to_decision_boundary``).

Feature scores: the edit applied at step ``s`` of the path scores ``s`` (the last, boundary-crossing
edit is the most important); unedited features score 0.  No flip found -> all zeros.
"""
from __future__ import annotations

import numpy as np

from ...data.feature_data import PAD_ID, UNK_ID
from ._base import PerRowExplainer, row_seed


class DecisionBoundaryExplainer(PerRowExplainer):
    name = "decision_boundary"
    paper_name = "DecisionBoundary"

    def __init__(self, n_samples: int | None = None, top_n: int = 20, max_attempts: int = 5, seed: int = 42):
        super().__init__(seed=seed)
        self.n_samples, self.top_n, self.max_attempts = n_samples, int(top_n), int(max_attempts)
        self._neighbours: dict[int, np.ndarray] = {}

    # ----- perturbation distributions ---------------------------------------------------------
    def _tabular_samples(self, row, rng):
        spec = self.model.spec
        n, M = self.n_samples or 10000, spec.n_features
        card = np.array([len(v) for v in spec.values])
        n_changes = rng.integers(1, 4, size=n)
        chosen = np.argsort(rng.random((n, M)), axis=1) < n_changes[:, None]  # 1-3 random features
        chosen &= card[None, :] > 1
        cur = row - spec.offsets                                              # value index per feature
        shift = 1 + np.floor(rng.random((n, M)) * (card - 1)[None, :]).astype(np.int64)
        new = (cur[None, :] + shift) % card[None, :]                          # uniform over the other values
        return np.where(chosen, new + spec.offsets[None, :], row[None, :])

    def _neighbours_of(self, wid: int) -> np.ndarray:
        if wid not in self._neighbours:
            E = self._unit_emb()
            sims = E @ E[wid]
            sims[[PAD_ID, UNK_ID, wid]] = -np.inf
            if len(sims) > self.top_n + 3:  # more candidates than top_n
                self._neighbours[wid] = np.argpartition(-sims, self.top_n)[: self.top_n]
            else:  # a vocabulary of top_n words or fewer: every other word
                self._neighbours[wid] = np.flatnonzero(np.isfinite(sims))
        return self._neighbours[wid]

    def _unit_emb(self):
        if getattr(self, "_E", None) is None:
            W = self.model.module.embedding.weight.detach().cpu().numpy().astype(np.float64)
            self._E = W / np.maximum(np.linalg.norm(W, axis=1, keepdims=True), 1e-12)
        return self._E

    def _text_samples(self, row, rng):
        pos = np.flatnonzero(row != PAD_ID)
        n = self.n_samples or 1000
        p = 0.25 - min(0.005 * len(pos), 0.15)
        P = np.repeat(row[None], n, axis=0)
        change = rng.random((n, len(pos))) < p
        for k, j in enumerate(pos):
            rows = np.flatnonzero(change[:, k])
            if len(rows) and row[j] not in (PAD_ID, UNK_ID) and len(self._neighbours_of(int(row[j]))):
                P[rows, j] = rng.choice(self._neighbours_of(int(row[j])), size=len(rows))
        return P

    # ----- the explainer ------------------------------------------------------------------------
    def _explain_one(self, row, target):
        model, spec = self.model, self.model.spec
        rng = np.random.default_rng(row_seed(self.seed, row))
        out = np.zeros(spec.n_features)
        attempts = 1 if spec.kind == "tabular" else self.max_attempts
        flips = None
        for _ in range(attempts):
            P = self._tabular_samples(row, rng) if spec.kind == "tabular" else self._text_samples(row, rng)
            P = P[(P != row[None]).any(1)]
            flips = P[model.proba_ids(P).argmax(1) != target] if len(P) else P
            if len(flips):
                break
        if flips is None or not len(flips):
            return out
        h0 = model.embed_ids(row[None]).reshape(1, -1)
        h = model.embed_ids(flips).reshape(len(flips), -1)
        dist = (flips != row[None]).sum(1) + ((h - h0) ** 2).sum(1)
        best = flips[int(np.argmin(dist))]
        # greedy path: apply the edit that changes the target logit least, one at a time
        edits = list(np.flatnonzero(best != row))
        cur = row.copy()
        sign = 1.0 if target == 1 else -1.0
        cur_logit = sign * model.logit_z(cur[None])[0]
        step = 0
        while edits:
            cands = np.repeat(cur[None], len(edits), axis=0)
            cands[np.arange(len(edits)), edits] = best[edits]
            logits = sign * model.logit_z(cands)
            k = int(np.argmin(np.abs(cur_logit - logits)))
            step += 1
            out[edits[k]] = step
            cur, cur_logit = cands[k], logits[k]
            edits.pop(k)
        return out
