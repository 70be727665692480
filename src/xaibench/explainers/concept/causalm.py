"""CausaLM adapted to ICaCE (Feder et al., 2021; Appendix E)."""
from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...data.cebab import ASPECTS, CONCEPT_VALUES, CONTROL_CONCEPTS
from ._common import (FittedConceptExplainer, check_data, check_queries, copy_head, embed, head_proba, module_device,
                      proba_lookup, task_targets, train_on_features)


#: where CausaLM's encoders start: "paper" (the pretrained LM, App. E.2) or "explained" (the explained model)
STAGINGS = ("paper", "explained")
#: key of the factual model under the paper staging (a head on the frozen pretrained encoder)
PRETRAINED = "pretrained"
#: part of every stored encoder's key: bump it when the encoder training changes
ENCODER_STORE_VERSION = 1


def cramers_v(a: Sequence[Any], b: Sequence[Any]) -> float:
    """Cramér's V between two categorical series (0 = independent, 1 = one determines the other)."""
    tab = pd.crosstab(pd.Series(list(a)), pd.Series(list(b))).to_numpy(dtype=np.float64)
    n = tab.sum()
    if n == 0 or min(tab.shape) < 2:
        return 0.0
    expected = tab.sum(1, keepdims=True) @ tab.sum(0, keepdims=True) / n
    with np.errstate(invalid="ignore", divide="ignore"):
        chi2 = np.nansum((tab - expected) ** 2 / expected)
    return float(np.sqrt(chi2 / (n * (min(tab.shape) - 1))))


def most_correlated_aspect(data: pd.DataFrame, aspect: str) -> str:
    """The other aspect whose majority label is most associated (Cramér's V) with ``aspect``'s,
    over fit rows where both are Negative/unknown/Positive."""
    best, best_v = None, -1.0
    for other in ASPECTS:
        if other == aspect:
            continue
        a, b = data[f"{aspect}_majority"], data[f"{other}_majority"]
        ok = (a.isin(CONCEPT_VALUES) & b.isin(CONCEPT_VALUES)).to_numpy()
        v = cramers_v(a[ok], b[ok]) if ok.sum() > 1 else 0.0
        if v > best_v:
            best, best_v = other, v
    return best  # type: ignore[return-value]


def _grad_reverse():
    import torch

    class GradReverse(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)

        @staticmethod
        def backward(ctx, g):
            return -g

    return GradReverse.apply


class CausaLMExplainer(FittedConceptExplainer):
    """CausaLM (App. E), TReITE estimator (Eq. 10): ``N'(phi_CF(x)) - N_F(phi_F(x))``.

    Per treated aspect ``C``: an encoder (see ``staging``) is trained (Adam, lr 2e-5,
    3 epochs, batch 48; App. E.2) with two auxiliary heads on phi: ``C`` (3-way label) as an
    adversarial task through a gradient-reversal layer with weight ``lambda`` = 0.1, and the *control
    concept* as a normal task, so ``phi_CF`` forgets ``C`` but keeps the control.  The control
    concepts are the authors' (their released scripts: food -> service, every other aspect -> food;
    :data:`xaibench.data.cebab.CONTROL_CONCEPTS`); ``control="cramers_v"`` picks the other aspect most
    associated with ``C`` on the fit data instead, and a dict sets them explicitly.  ``N'`` (a copy of
    the model's head) is trained on the frozen ``phi_CF`` of the fit data with the gold task labels
    (Adam, lr 1e-3, 50 epochs, batch 256).

    ``baseline`` selects the subtracted term: ``"factual"`` (the paper, App. E.2) -- a *factual model*
    with a head (lr 1e-3, 50 epochs, batch 256) on a frozen ``phi_F``: the pretrained encoder under
    the paper staging; under the ``"explained"`` staging an encoder trained like the counterfactual
    ones with the control task but without the adversarial task (one per control concept) -- or
    ``"explained"``, the explained model's own ``N(phi(x))`` (cheaper, but it mixes the effect with
    the difference between a re-trained head and the original one).

    ``staging`` says where the encoders start (App. E.2 and the authors' ``run_causalm_cebab.py``):
    ``"paper"`` (default) -- each counterfactual encoder is trained from the *pretrained* language
    model (:meth:`pretrained_module` of the explained classifier: the pretrained transformer, or the
    LSTM's GloVe embeddings with a seeded random LSTM) on the concept objectives only, which do not
    involve the task label; it is stored under ``data/models/causalm/`` keyed on the starting weights,
    the seed, the treated and control concepts, the hyper-parameters and the fit rows, so tasks with the
    same fit rows (5-way and ternary) share it; the factual model is a task head on the frozen
    pretrained encoder (E.2: "freeze the embedding weights and train only the classification head").
    ``"explained"`` -- the earlier variant: encoders start from the explained model's fine-tuned
    weights, and the factual model fine-tunes an encoder with the control task (one per control).

    Deviations: CausaLM's masked-language-model objective is omitted (the explained models need not
    have an LM head), and the auxiliary heads use their own learning rate ``head_lr``.  The estimate ignores ``c'``: the
    counterfactual representation only removes ``C``, so (as the paper notes) it can only estimate
    ``c' = unknown`` well.  Features are computed once per text and kept in memory.
    """

    name = "causalm"

    def __init__(self, seed: int = 42, lam: float = 0.1, lr: float = 2e-5, epochs: int = 3, batch_size: int = 48,
                 head_lr: float = 1e-3, head_epochs: int = 50, head_batch_size: int = 256,
                 control: Mapping[str, str] | str | None = None, aspects: Sequence[str] = ASPECTS,
                 baseline: str = "factual", staging: str = "paper", store: bool = True,
                 store_dir: str | None = None):
        self.seed = int(seed)
        self.lam = float(lam)
        self.lr = float(lr)
        self.epochs = int(epochs)
        self.batch_size = int(batch_size)
        self.head_lr = float(head_lr)
        self.head_epochs = int(head_epochs)
        self.head_batch_size = int(head_batch_size)
        if control is None or control == "authors":
            self.control: Mapping[str, str] | str = dict(CONTROL_CONCEPTS)
        elif control == "cramers_v":
            self.control = "cramers_v"
        elif isinstance(control, Mapping):
            self.control = {**CONTROL_CONCEPTS, **dict(control)}
        else:
            raise ValueError(f"control must be None/'authors', 'cramers_v' or a dict aspect -> control; got {control!r}")
        if baseline not in ("factual", "explained"):
            raise ValueError(f"baseline must be 'factual' (App. E.2) or 'explained'; got {baseline!r}")
        self.baseline = baseline
        if staging not in STAGINGS:
            raise ValueError(f"staging must be one of {STAGINGS} ('paper': encoders from the pretrained LM, App. E.2; "
                             f"'explained': from the explained model); got {staging!r}")
        self.staging = staging
        self.store = bool(store)
        #: folder of the stored encoders (``None``: ``data/models/causalm`` of the active profile)
        self.store_dir = store_dir
        bad = [a for a in aspects if a not in ASPECTS]
        if bad:
            raise ValueError(f"unknown aspect(s) {bad}; aspects are {ASPECTS}")
        self.aspects = tuple(aspects)

    # -- adversarial stage -----------------------------------------------------------------------
    def _adversarial(self, aspect: str, texts: list[str], y_tc: np.ndarray | None, y_cc: np.ndarray, d: int,
                     start: Any = None):
        """Fine-tune an encoder -- ``start`` (a fresh module) or a copy of the explained model's: control
        task, plus the adversarial task on ``aspect`` unless ``y_tc`` is ``None`` (the factual model)."""
        import torch

        from ... import levers
        from ...models.training import length_bucketed_batches
        from ...progress import progress
        from ...utils import set_seed

        set_seed(self.seed)
        module = copy.deepcopy(self.model.module) if start is None else start
        device = module_device(module)
        tc_head = torch.nn.Linear(d, len(CONCEPT_VALUES)).to(device)
        cc_head = torch.nn.Linear(d, len(CONCEPT_VALUES)).to(device)
        for p in module.parameters():
            p.requires_grad_(True)
        opt = torch.optim.Adam([{"params": list(module.parameters()), "lr": self.lr},
                                {"params": list(tc_head.parameters()) + list(cc_head.parameters()),
                                 "lr": self.head_lr}],
                               **levers.optimizer_kwargs())
        reverse = _grad_reverse()
        ce = torch.nn.CrossEntropyLoss(ignore_index=-1)
        rng = np.random.default_rng(self.seed)
        lengths = np.array([len(t) for t in texts])
        hist = []
        module.train()
        for epoch in range(self.epochs):
            tot = {"control": 0.0, "adversary": 0.0, "adversary_acc": 0.0, "n": 0}
            batches = length_bucketed_batches(lengths, self.batch_size, rng)
            for idx in progress(batches, desc=f"CausaLM {aspect} epoch {epoch + 1}/{self.epochs}", leave=False):
                ids, mask = self.model.encode([texts[i] for i in idx])
                with levers.autocast(device):  # bfloat16 only with the bf16 lever (xaibench.levers)
                    h = module.features(ids, mask).float()
                c = torch.as_tensor(y_cc[idx], device=h.device)
                loss = h.sum() * 0.0
                if y_tc is not None:
                    t = torch.as_tensor(y_tc[idx], device=h.device)
                    adv_logits = tc_head(reverse(h))
                    l_adv = ce(adv_logits, t)
                    loss = loss + self.lam * l_adv
                    tot["adversary"] += float(l_adv.detach()) * len(idx)
                    tot["adversary_acc"] += float((adv_logits.argmax(1) == t).float().sum())
                if (c >= 0).any():
                    l_cc = ce(cc_head(h), c)
                    loss = loss + l_cc
                    tot["control"] += float(l_cc.detach()) * len(idx)
                opt.zero_grad()
                loss.backward()
                opt.step()
                tot["n"] += len(idx)
            n = max(1, tot.pop("n"))
            hist.append({"epoch": epoch + 1, **{k: v / n for k, v in tot.items()}})
        module.eval()
        for p in module.parameters():
            p.requires_grad_(False)
        return module, hist

    # -- the paper's staging: counterfactual encoders from the pretrained LM, stored ------------------
    def _start_digest(self, module) -> str:
        """Hash of what a stored encoder depends on besides the fit: the starting encoder's weights
        (head excluded, so tasks with other class counts share it), the tokenisation, the seed, the
        hyper-parameters, the torch thread count and the device."""
        import hashlib

        h = hashlib.sha256()
        for name, p in sorted(module.state_dict().items()):
            if name.startswith("head."):
                continue
            h.update(name.encode())
            h.update(p.detach().cpu().contiguous().numpy().tobytes())
        vocab = getattr(self.model, "vocab", None)
        if vocab is not None:
            h.update("\x00".join(vocab.itos).encode())
        from ...device import thread_count

        # training results depend on the torch thread count (XAIBENCH_THREADS, pinned while training) and
        # the device, so both are part of the key
        h.update(repr((type(self.model).__name__, getattr(self.model, "max_length", None), self.seed, self.lam,
                       self.lr, self.epochs, self.batch_size, self.head_lr, ENCODER_STORE_VERSION,
                       thread_count(), str(module_device(module)))).encode())
        return h.hexdigest()

    def _encoder_path(self, start_digest: str, aspect: str, control: str, texts: list[str], y_tc: np.ndarray,
                      y_cc: np.ndarray):
        import hashlib

        from ... import paths

        h = hashlib.sha256(start_digest.encode())
        h.update(repr((aspect, control)).encode())
        h.update("\x00".join(texts).encode())
        h.update(np.asarray(y_tc, dtype=np.int64).tobytes())
        h.update(np.asarray(y_cc, dtype=np.int64).tobytes())
        root = Path(self.store_dir) if self.store_dir is not None else paths.models_dir() / "causalm"
        return root / f"{h.hexdigest()[:20]}.pt"

    def _paper_encoder(self, aspect: str, control: str, texts: list[str], y_tc: np.ndarray, y_cc: np.ndarray,
                       d: int):
        """The counterfactual encoder of ``aspect`` trained from the pretrained LM (read from the store
        when an identical one was trained before, e.g. for another task with the same fit rows)."""
        import torch

        from ...io import atomic_path, read_or_rebuild

        start = self.model.pretrained_module()  # fresh for every aspect: training changes it in place
        if self._start_key is None:  # the same starting weights for every aspect of a fit: hash them once
            self._start_key = self._start_digest(start)
        path = self._encoder_path(self._start_key, aspect, control, texts, y_tc, y_cc)

        def read(p):
            blob = torch.load(p, map_location="cpu", weights_only=True)
            missing, unexpected = start.load_state_dict(blob["encoder"], strict=False)
            if unexpected or any(not k.startswith("head.") for k in missing):
                raise ValueError(f"stored encoder does not fit the model (missing {missing}, unexpected {unexpected})")
            start.eval()
            for q in start.parameters():
                q.requires_grad_(False)
            self.store_hits_ += 1
            return start, list(blob["history"])

        def build():
            module, hist = self._adversarial(aspect, texts, y_tc, y_cc, d, start=start)
            if self.store:
                enc = {k: v.detach().cpu() for k, v in module.state_dict().items() if not k.startswith("head.")}
                with atomic_path(path, ".pt") as tmp:
                    torch.save({"encoder": enc, "history": hist}, tmp)
            return module, hist

        if not self.store:
            return build()
        return read_or_rebuild(path, read, build, what="CausaLM encoder")

    def _features(self, module, texts: list[str]) -> np.ndarray:
        import torch

        order = np.argsort([len(t) for t in texts], kind="stable")
        bs = int(getattr(self.model, "batch_size", 32))
        out = None
        with torch.inference_mode():
            for i in range(0, len(texts), bs):
                idx = order[i:i + bs]
                ids, mask = self.model.encode([texts[j] for j in idx])
                f = module.features(ids, mask).float().cpu().numpy()
                if out is None:
                    out = np.zeros((len(texts), f.shape[1]), dtype=np.float32)
                out[idx] = f
        return out if out is not None else np.zeros((0, 0), dtype=np.float32)

    def _cached_features(self, memo: dict[str, np.ndarray], encoder: Any, texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in memo]
        if todo:
            for t, f in zip(todo, self._features(encoder, todo)):
                memo[t] = f
        return np.stack([memo[t] for t in texts]) if len(texts) else np.zeros((0, 0), dtype=np.float32)

    def cf_features(self, aspect: str, texts: Sequence[str]) -> np.ndarray:
        """phi_CF for ``aspect`` (memoised per text)."""
        self._require_fit()
        return self._cached_features(self._memo[aspect], self.encoders_[aspect], texts)

    def factual_features(self, control: str, texts: Sequence[str]) -> np.ndarray:
        """phi_F of the factual model with control concept ``control`` (``"pretrained"`` under the
        paper staging: the frozen pretrained encoder; memoised per text)."""
        self._require_fit()
        return self._cached_features(self._factual_memo[control], self.factual_encoders_[control], texts)

    def _control_of(self, data: pd.DataFrame, aspect: str) -> str:
        cc = most_correlated_aspect(data, aspect) if self.control == "cramers_v" else self.control.get(aspect)
        if cc not in ASPECTS or cc == aspect:
            raise ValueError(f"control concept for {aspect!r} must be another aspect; got {cc!r}")
        return cc

    def _head(self, feats: np.ndarray, y: np.ndarray, desc: str):
        head = copy_head(self.model)
        hist = train_on_features(head, feats, y, lr=self.head_lr, epochs=self.head_epochs,
                                 batch_size=self.head_batch_size, seed=self.seed, desc=desc)
        return head, hist

    def fit(self, model: Any, data: pd.DataFrame) -> "CausaLMExplainer":
        self.model = model
        data = check_data(data)
        y_task = task_targets(model, data)
        task_rows = np.nonzero(y_task >= 0)[0]
        if len(task_rows) < 2:
            raise ValueError("CausaLM needs gold task labels for at least two fit rows")
        texts_all = data["text"].tolist()
        task_texts = [texts_all[i] for i in task_rows]
        d = embed(model, texts_all[:1]).shape[1]
        code = {v: i for i, v in enumerate(CONCEPT_VALUES)}
        self.encoders_: dict[str, Any] = {}
        self.heads_: dict[str, Any] = {}
        self.control_: dict[str, str] = {}
        self.history_: dict[str, Any] = {}
        self.factual_encoders_: dict[str, Any] = {}
        self.factual_heads_: dict[str, Any] = {}
        self.factual_history_: dict[str, Any] = {}
        self._memo: dict[str, dict[str, np.ndarray]] = {}
        self._factual_memo: dict[str, dict[str, np.ndarray]] = {}
        #: wall seconds per stage of the fit (bench_cebab): encoder fine-tunes and the heads on frozen features
        self.timings_: dict[str, float] = {"counterfactual_encoders_s": 0.0, "counterfactual_heads_s": 0.0,
                                           "factual_encoders_s": 0.0, "factual_heads_s": 0.0}
        #: counterfactual encoders read from the store instead of trained (paper staging)
        self.store_hits_ = 0
        self._start_key: str | None = None
        clock = time.perf_counter

        def labels(aspect: str, rows: np.ndarray) -> np.ndarray:
            return data[f"{aspect}_majority"].iloc[rows].map(lambda v: code.get(v, -1)).to_numpy(dtype=np.int64)

        for a in self.aspects:
            cc = self.control_[a] = self._control_of(data, a)
            rows = np.nonzero(data[f"{a}_majority"].isin(CONCEPT_VALUES).to_numpy())[0]
            if len(rows) < 2:
                raise ValueError(f"too few fit rows with a {a} label for CausaLM")
            t0 = clock()
            fit_texts = [texts_all[i] for i in rows]
            if self.staging == "paper":
                enc, hist = self._paper_encoder(a, cc, fit_texts, labels(a, rows), labels(cc, rows), d)
            else:
                enc, hist = self._adversarial(a, fit_texts, labels(a, rows), labels(cc, rows), d)
            self.timings_["counterfactual_encoders_s"] += clock() - t0
            self.encoders_[a] = enc
            self._memo[a] = {}
            self._fitted = True  # the feature functions are usable from here on
            t0 = clock()
            self.heads_[a], head_hist = self._head(self.cf_features(a, task_texts), y_task[task_rows],
                                                   f"CausaLM head {a}")
            self.timings_["counterfactual_heads_s"] += clock() - t0
            self.history_[a] = {"adversarial": hist, "head": head_hist}
            if self.baseline == "factual" and self.staging == "paper" and PRETRAINED not in self.factual_encoders_:
                # E.2: the factual model is a task head on the frozen pretrained encoder (no concept training)
                self.factual_encoders_[PRETRAINED] = self.model.pretrained_module()
                self._factual_memo[PRETRAINED] = {}
                t0 = clock()
                self.factual_heads_[PRETRAINED], fhead_hist = self._head(
                    self.factual_features(PRETRAINED, task_texts), y_task[task_rows], "CausaLM factual head")
                self.timings_["factual_heads_s"] += clock() - t0
                self.factual_history_[PRETRAINED] = {"head": fhead_hist}
            elif self.baseline == "factual" and self.staging == "explained" and cc not in self.factual_encoders_:
                frows = np.nonzero(data[f"{cc}_majority"].isin(CONCEPT_VALUES).to_numpy())[0]
                t0 = clock()
                fenc, fhist = self._adversarial(f"factual({cc})", [texts_all[i] for i in frows], None,
                                                labels(cc, frows), d)
                self.timings_["factual_encoders_s"] += clock() - t0
                self.factual_encoders_[cc] = fenc
                self._factual_memo[cc] = {}
                t0 = clock()
                self.factual_heads_[cc], fhead_hist = self._head(self.factual_features(cc, task_texts),
                                                                 y_task[task_rows], f"CausaLM factual head {cc}")
                self.timings_["factual_heads_s"] += clock() - t0
                self.factual_history_[cc] = {"control": fhist, "head": fhead_hist}
        self._fitted = True
        return self

    def reference_proba(self, aspect: str, texts: Sequence[str]) -> np.ndarray:
        """The subtracted term for ``aspect``: the factual model's ``N_F(phi_F(x))`` or ``N(phi(x))``."""
        self._require_fit()
        if self.baseline == "explained":
            return proba_lookup(self.model, list(texts))
        key = PRETRAINED if self.staging == "paper" else self.control_[aspect]
        return head_proba(self.factual_heads_[key], self.factual_features(key, list(texts)))

    def explain(self, queries: pd.DataFrame) -> np.ndarray:
        self._require_fit()
        q = check_queries(queries, need=("text", "aspect"))
        missing = sorted(set(q["aspect"]) - set(self.aspects))
        if missing:
            raise ValueError(f"CausaLM was fitted for aspects {self.aspects}, not {missing}")
        texts = q["text"].tolist()
        out = np.zeros((len(q), int(self.model.n_classes)))
        for a in self.aspects:
            m = (q["aspect"] == a).to_numpy()
            if m.any():
                sub = [t for t, k in zip(texts, m) if k]
                out[m] = head_proba(self.heads_[a], self.cf_features(a, sub)) - self.reference_proba(a, sub)
        return out
