"""Runs the counterfactual-feedback experiments and builds Tables 1-5 / Figures 3-6 (and a per-step table).

``run_experiment`` feeds each editor its own output on a seeded test sample and stores the chains
as one :class:`~xaibench.store.ResultStore` entry (chains and run statistics together, keyed on every
setting, so notebook re-runs and ``make`` are incremental) under ``data/results/cf_feedback/``.  ``add_fluency`` scores every chain text with the base LM (SmolLM2 by
default) and the in-domain LM; the table builders put the paper's numbers beside ours.
"""
from __future__ import annotations

import hashlib
import json
import os
from typing import NamedTuple, Sequence

import numpy as np
import pandas as pd

from ... import io, paths
from ...device import load_average
from ...tables import paper_values
from . import metrics as cf

EDITOR_ORDER = ("mice", "polyjuice", "textfooler")
SAMPLE_SIZES = (10, 50, 100, 200, 500)
#: texts per dataset of the full-profile run (notebook 22's defaults, ``make all``): the paper's 500 IMDb
#: reviews; 1,000 Newsgroups posts of the test split (the paper: the whole split), which keeps the full run of
#: notebooks 12 and 22 to about an hour on 2 CPU cores
FULL_SAMPLE = {"imdb": 500, "newsgroups": 1000}


#: result-format versions of the stores below (bump when what an entry holds, or how it is computed, changes)
CHAINS_VERSION = 2
TRADEOFF_VERSION = 2
ANTONYMS_VERSION = 2
INFILLER_FLUENCY_VERSION = 1
FLUENCY_VERSION = 1  # version 1 stores keep their original file names (the key gains ``v`` from version 2 on)


def _key(**kw) -> str:
    return hashlib.sha1(json.dumps(kw, sort_keys=True, default=str).encode()).hexdigest()[:12]


def chains_store():
    """Editor chains and their run statistics (:func:`run_experiment`), one entry per setting."""
    from ...store import ResultStore

    return ResultStore(paths.results_dir() / "cf_feedback", "chains", version=CHAINS_VERSION)


def tradeoff_store():
    """Results of :func:`infiller_tradeoff`, one entry per setting."""
    from ...store import ResultStore

    return ResultStore(paths.results_dir() / "cf_feedback", "infiller_tradeoff", version=TRADEOFF_VERSION)


def editor_order(names) -> list[str]:
    """The editors among ``names`` in display order: the paper's three (:data:`EDITOR_ORDER`) first, then the
    others (an editor added through ``editors`` / Make's ``EXPLAINERS``) as they come."""
    names = list(dict.fromkeys(names))
    return [e for e in EDITOR_ORDER if e in names] + [e for e in names if e not in EDITOR_ORDER]


def chain_config(dataset: str, editor: str, n_texts: int, n_steps: int = cf.N_STEPS, seed: int = 42,
                 predictor: str = "logreg", max_words: int | None = 400, max_train: int | None = None,
                 lm_max_texts: int | None = 20000, infiller: str = "bigram") -> dict:
    """The store key of :func:`run_experiment`'s chains.  An editor other than the paper's three (a registered
    one) is keyed on its factory's source file too (``editor_code``), so an edited editor runs again, and one that
    runs an original model on the model it loads (``editor_model``: id or folder, MiCE's weights file)."""
    from ...explainers.counterfactual.mice import INFILLERS, TWO_SIDED_VERSION

    config = {"dataset": dataset, "editor": editor, "n_texts": n_texts, "n_steps": n_steps, "seed": seed,
              "predictor": predictor, "max_words": max_words, "max_train": max_train, "lm_max_texts": lm_max_texts}
    if infiller != INFILLERS[0]:  # the default stays out of the key: stored default runs keep their entries
        config["infiller"] = infiller
        config["infiller_version"] = TWO_SIDED_VERSION
    if editor not in EDITOR_ORDER:
        from ... import registry
        from ...store import source_digest

        spec = next((s for s in registry.explainer_specs(family="counterfactual") if s.name == editor), None)
        config["editor_code"] = source_digest(spec.factory) if spec is not None else ""
        if spec is not None:
            from ...explainers.counterfactual import editor_source

            model = editor_source(editor, dataset)["model"]
            if model:
                config["editor_model"] = model
    return config


def editor_sources(editors: Sequence[str], datasets: Sequence[str]) -> pd.DataFrame:
    """Which editor ran as what, per dataset (:func:`xaibench.explainers.counterfactual.editor_source`): an
    offline stand-in, an original model (and the id or folder it loaded) or a user's registered editor."""
    from ...explainers.counterfactual import editor_source

    return pd.DataFrame([{"dataset": d, **editor_source(e, d)} for d in datasets for e in editors])


def _checked_config(dataset: str, editor: str, n_texts: int, n_steps: int, seed: int, predictor: str,
                    max_words: int | None, max_train: int | None, lm_max_texts: int | None, infiller: str) -> dict:
    """:func:`chain_config` of checked arguments (a bad count or infiller raises before anything is trained)."""
    from ...checks import check_count
    from ...explainers.counterfactual.mice import INFILLERS

    n_texts = check_count(n_texts, "n_texts", 1)
    n_steps = check_count(n_steps, "n_steps", 1)
    if infiller not in INFILLERS:
        raise ValueError(f"infiller={infiller!r}: use one of {INFILLERS}")
    if infiller != INFILLERS[0] and editor != "mice":
        raise ValueError(f"infiller={infiller!r} is a setting of the mice editor; editor={editor!r} takes the default")
    return chain_config(dataset, editor, n_texts, n_steps=n_steps, seed=seed, predictor=predictor,
                        max_words=max_words, max_train=max_train, lm_max_texts=lm_max_texts, infiller=infiller)


def _compute_chains(config: dict, progress: bool = True) -> tuple[pd.DataFrame, dict]:
    """The chains and run statistics of a :func:`chain_config` (computed, not stored): one part of all its texts."""
    return _merge_parts(config, [_compute_part(ChainPart(config, 0, 1), progress=progress)])


class ChainPart(NamedTuple):
    """Part ``part`` of ``n_parts`` of the run ``config``: a contiguous slice of its seeded sample (a unit of the
    executor; :func:`run_experiments`)."""
    config: dict
    part: int = 0
    n_parts: int = 1


def _part_bounds(n: int, part: int, n_parts: int) -> tuple[int, int]:
    """The texts ``[start, stop)`` of part ``part`` of ``n_parts`` of a sample of ``n`` texts (contiguous, sizes
    differing by at most one, in text order)."""
    return n * part // n_parts, n * (part + 1) // n_parts


def _compute_part(item: ChainPart, progress: bool = True) -> tuple[pd.DataFrame | None, dict]:
    """The chains of one part of a run (``text_id`` numbered in the whole sample) and its counts, which
    :func:`_merge_parts` adds up; ``(None, counts)`` for a part with no text (a sample shorter than its parts).

    Every editor draws from generators seeded per text, and the predictor (the TF-IDF model) scores each text on
    its own, so a text's chain is the same whichever texts share its part."""
    import time

    from ...data.cf_data import sample_test
    from ...explainers.counterfactual import build_editor
    from ...models.cf_predictors import get_predictor, max_words as model_max_words

    config = item.config
    dataset, editor, predictor, seed = config["dataset"], config["editor"], config["predictor"], config["seed"]
    editor_kw = {"infiller": config["infiller"]} if "infiller" in config else {}
    started = time.time()
    model = get_predictor(dataset, predictor, seed=seed, cache=predictor != "logreg", max_train=config["max_train"])
    pred = cf.CountingPredictor(model)
    ed = build_editor(editor, pred, dataset, seed=seed, lm_max_texts=config["lm_max_texts"], **editor_kw)
    sample = sample_test(dataset, config["n_texts"], seed=seed, max_words=config["max_words"])
    start, stop = _part_bounds(len(sample), item.part, item.n_parts)
    texts = sample["text"].tolist()[start:stop]
    if not texts and item.n_parts > 1:  # (a run of one part: run_chains names the empty sample)
        return None, {"n_texts": 0, "started": started, "ended": time.time()}
    limit = model_max_words(model)
    n_long = int(sum(len(t.split()) > limit for t in texts)) if limit else 0
    load0 = load_average()
    t0 = time.perf_counter()
    chains = cf.run_chains(ed, pred, texts, n_steps=config["n_steps"], progress=progress)
    secs = time.perf_counter() - t0
    if start:
        chains["text_id"] += start
    chains["gold"] = chains["text_id"].map(dict(enumerate(sample["label"].tolist())))
    chains.insert(0, "editor", editor)
    chains.insert(0, "dataset", dataset)
    carried = chains["carried"].astype(bool)
    counts = {"n_texts": len(texts),
              "n_edit_steps": int(((chains["step"] > 0) & ~carried).sum()),  # carried steps are no edits
              "seconds": secs, "predictor_calls": pred.n_calls, "predictor_texts": pred.n_texts,
              "predictor_texts_incremental": pred.n_incremental, "n_texts_longer_than_model_reads": n_long,
              "n_carried_steps": int(carried.sum()), "n_chains_carried": int(chains.loc[carried, "text_id"].nunique()),
              "cpus": os.cpu_count(), "load_start": load0, "load_end": load_average(), "started": started}
    if getattr(ed, "swaps", None) is not None:  # TextFooler: its accepted swaps, and those that are WordNet antonyms
        from ...explainers.counterfactual.wordnet import load_wordnet

        n_sw, n_ant, _ = count_antonym_swaps(ed.swaps, load_wordnet())
        counts.update(n_swaps=n_sw, n_antonym_swaps=n_ant)
    chains["proba"] = chains["proba"].map(json.dumps)
    counts["ended"] = time.time()
    return chains, counts


def _merge_parts(config: dict, parts: Sequence[tuple[pd.DataFrame | None, dict]]) -> tuple[pd.DataFrame, dict]:
    """One run's ``(chains, stats)`` from its parts (in text order): the chains concatenated, the counts and
    seconds added up (``seconds``: the chains' compute time over all parts), the per-edit figures computed from the
    sums, the load average at the start of the first part to start and at the end of the last to end.  A run of
    more than one part says how many (``n_parts``)."""
    done = [(c, n) for c, n in parts if c is not None]
    if not done:
        raise ValueError(f"no text to edit in {config['dataset']}'s sample of {config['n_texts']}")
    chains = done[0][0] if len(done) == 1 else pd.concat([c for c, _ in done], ignore_index=True)
    total = {k: sum(n[k] for _, n in done) for k in ("n_texts", "n_edit_steps", "seconds", "predictor_calls",
                                                      "predictor_texts", "predictor_texts_incremental",
                                                      "n_texts_longer_than_model_reads", "n_carried_steps",
                                                      "n_chains_carried")}
    n_edits = total["n_edit_steps"]
    first = min(done, key=lambda p: p[1]["started"])[1]
    last = max(done, key=lambda p: p[1]["ended"])[1]
    stats = {"dataset": config["dataset"], "editor": config["editor"], "predictor": config["predictor"],
             "n_texts": total["n_texts"], "n_edit_steps": n_edits, "seconds": total["seconds"],
             "seconds_per_edit": total["seconds"] / max(n_edits, 1),
             "predictor_calls_per_edit": total["predictor_calls"] / max(n_edits, 1),
             "predictor_texts_per_edit": total["predictor_texts"] / max(n_edits, 1),
             "predictor_texts_incremental_per_edit": total["predictor_texts_incremental"] / max(n_edits, 1),
             "n_texts_longer_than_model_reads": total["n_texts_longer_than_model_reads"],
             "n_carried_steps": total["n_carried_steps"], "n_chains_carried": total["n_chains_carried"],
             # the machine and how busy it was (1-minute load average at start and end of the run)
             "cpus": first["cpus"], "load_start": first["load_start"], "load_end": last["load_end"]}
    if any("n_swaps" in n for _, n in done):
        stats.update(n_swaps=sum(n.get("n_swaps", 0) for _, n in done),
                     n_antonym_swaps=sum(n.get("n_antonym_swaps", 0) for _, n in done))
    if len(parts) > 1:
        stats["n_parts"] = len(parts)
    return chains, stats


def run_experiment(dataset: str, editor: str, n_texts: int, n_steps: int = cf.N_STEPS, seed: int = 42,
                   predictor: str = "logreg", max_words: int | None = 400, progress: bool = True,
                   refresh: bool = False, max_train: int | None = None, lm_max_texts: int | None = 20000,
                   infiller: str = "bigram") -> tuple[pd.DataFrame, dict]:
    """Chains of ``editor`` on ``n_texts`` seeded test texts of ``dataset``; ``(chains, stats)``.

    ``stats``: seconds and predictor calls/texts per edit step (``bench_editors``).  Texts longer
    than ``max_words`` words are left out of the sample (run time; stated in DEVIATIONS.md).
    ``max_train``/``lm_max_texts`` cap the predictor's and the infiller's training sets (quick runs).
    ``infiller``: MiCE's stage-1 infiller (``"bigram"``, the default, or ``"two-sided"``; MiCE only).
    """
    config = _checked_config(dataset, editor, n_texts, n_steps, seed, predictor, max_words, max_train,
                             lm_max_texts, infiller)
    store = chains_store()
    cached = None if refresh else store.load(config)
    if cached is not None:
        return cached["chains"], cached["stats"]
    chains, stats = _compute_chains(config, progress=progress)
    store.save(config, {"chains": chains, "stats": stats})  # chains and their stats: one unit
    return chains, stats


#: seconds per text of an editor's chain of :data:`~.metrics.N_STEPS` edits (report 22's full run, two chains side
#: by side on 2 cores, rounded; an editor not listed counts 1): the order in which :func:`run_experiments` hands
#: the runs to the executor, longest first, and how it splits them across the workers.  It only decides which
#: worker runs what when; the chains are the same in any order and any split.
CHAIN_COST = {"textfooler": 2.2, "mice": 1.6, "polyjuice": 0.1}
#: seconds a part of a run costs beyond its texts: the predictor and the editor (vectors, sentence encoder,
#: infiller, spaCy) set up in its worker (cold, about 10 s; a worker that set them up for an earlier part, less)
PART_OVERHEAD = 20.0
#: the finest split :func:`chain_parts` tries: parts per worker
MAX_PARTS_PER_WORKER = 8
#: the share of the unsplit runs' time a split must save to be taken (the costs are rough)
MIN_SPLIT_GAIN = 0.03
#: predictors whose output for a text does not depend on the texts scored with it (the TF-IDF model: one sparse
#: row each); only their runs are split.  A transformer pads a batch to its longest text, which can move its
#: output in the last bits, and its on-disk output cache keeps whichever batch scored a text first
SPLITTABLE_PREDICTORS = ("logreg",)


def chain_cost(config: dict) -> float:
    """The rough seconds of a :func:`chain_config`'s run: :data:`CHAIN_COST` x texts x steps / N_STEPS."""
    return CHAIN_COST.get(config["editor"], 1.0) * config["n_texts"] * config["n_steps"] / cf.N_STEPS


def _lpt_span(costs: Sequence[float], n_workers: int) -> float:
    """When ``n_workers`` workers that each take the next cell as they free up finish ``costs`` handed out
    longest first (the executor's order)."""
    import heapq

    loads = [0.0] * n_workers
    for c in sorted(costs, reverse=True):
        heapq.heapreplace(loads, loads[0] + c)
    return max(loads)


def chain_parts(costs: Sequence[float], n_texts: Sequence[int], n_workers: int,
                overhead: float = PART_OVERHEAD) -> list[int]:
    """How many parts each run is split into so that ``n_workers`` workers finish together: of the splits into
    parts of at most ``total / (n_workers * g)`` (g = 1 .. :data:`MAX_PARTS_PER_WORKER`), the one whose parts, each
    costing ``overhead`` more, finish first when handed out longest first (ties: fewer parts), if it saves at
    least :data:`MIN_SPLIT_GAIN` of the time of one cell per run; else no split.  ``costs[i]``: run i's
    :func:`chain_cost`; a run has at most ``n_texts[i]`` parts.  One worker: no split."""
    import math

    ones = [1] * len(costs)
    if n_workers <= 1 or not costs:
        return ones
    total = float(sum(costs))

    def span(ks):
        return _lpt_span([c / k + overhead for c, k in zip(costs, ks) for _ in range(k)], n_workers)

    whole = span(ones)
    best, best_span = ones, whole
    for g in range(1, MAX_PARTS_PER_WORKER + 1):
        most = total / (n_workers * g)
        ks = [max(1, min(int(n), math.ceil(c / most - 1e-9))) for c, n in zip(costs, n_texts)]
        t = span(ks)
        if t < best_span - 1e-9 or (abs(t - best_span) <= 1e-9 and sum(ks) < sum(best)):
            best, best_span = ks, t
    return best if best_span <= (1 - MIN_SPLIT_GAIN) * whole else ones


def run_experiments(runs: Sequence[dict], refresh: bool = False, progress: bool = True,
                    parts: int | None = None) -> list[tuple[pd.DataFrame, dict]]:
    """:func:`run_experiment` of every ``runs`` item (its keyword arguments: ``dataset``, ``editor``, ``n_texts``
    and any others), in order.  The runs not stored yet are computed as independent cells of
    :mod:`xaibench.executor` (``XAIBENCH_SCHEDULER``: serial, local processes or Dask); the driver stores each run
    as its last cell finishes.

    A run may be split into parts, contiguous slices of its texts computed in separate cells and concatenated
    in text order (:func:`chain_parts`: so that the workers finish together instead of waiting on the longest
    run).  Every editor draws from generators seeded per text and the predictor scores each text on its own, so
    the chains are the same in any process, order and split (tested; only the measured ``seconds`` differ), and a
    split run is stored as the one entry of its setting (stored runs are read back whatever split made them).
    ``parts``: None (default) splits only for a parallel backend, as :func:`chain_parts` decides; an integer
    splits every run into that many parts (at most one per text; 1: one cell per run).  Only the runs of a
    predictor of :data:`SPLITTABLE_PREDICTORS` (the default TF-IDF model) are split."""
    import functools
    import inspect

    from ...executor import get_executor, run_cells
    from ...store import canonical

    # the settings of a run and their defaults: run_experiment's
    defaults = {k: p.default for k, p in inspect.signature(run_experiment).parameters.items()
                if p.default is not inspect.Parameter.empty and k not in ("progress", "refresh")}
    if parts is not None and (isinstance(parts, bool) or int(parts) != parts or parts < 1):
        raise ValueError(f"parts={parts!r}: use None (split as the workers need) or an integer >= 1")
    configs = {}  # setting (its canonical JSON) -> chain_config, each setting once
    keys = []
    for kw in runs:
        if set(kw) - set(defaults) - {"dataset", "editor", "n_texts"} or not {"dataset", "editor", "n_texts"} <= set(kw):
            raise ValueError(f"a run of run_experiments takes dataset, editor, n_texts and optionally "
                             f"{sorted(defaults)}; got {sorted(kw)}")
        config = _checked_config(**{**defaults, **kw})
        keys.append(json.dumps(canonical(config)))
        configs.setdefault(keys[-1], config)
    store = chains_store()
    got = {}
    for key, config in configs.items():
        hit = None if refresh else store.load(config)
        if hit is not None:
            got[key] = (hit["chains"], hit["stats"])
    todo = [k for k in configs if k not in got]
    cost = {k: chain_cost(configs[k]) for k in todo}
    # a chain keeps one core busy (Python; TextFooler's similarity checks pin one torch thread): cell_threads=1
    # lets XAIBENCH_SCHEDULER=processes start a worker per core
    most = [configs[k]["n_texts"] if configs[k]["predictor"] in SPLITTABLE_PREDICTORS else 1 for k in todo]
    if parts is None:
        n_parts = chain_parts([cost[k] for k in todo], most, get_executor().slots(cell_threads=1))
    else:
        n_parts = [min(int(parts), m) for m in most]
    cells = [(k, ChainPart(configs[k], i, n)) for k, n in zip(todo, n_parts) for i in range(n)]
    cells.sort(key=lambda c: -cost[c[0]] / c[1].n_parts)  # longest first (ties keep the input order)
    done: dict[str, list] = {k: [None] * n for k, n in zip(todo, n_parts)}

    def save(j: int, result: tuple[pd.DataFrame | None, dict]) -> None:  # in the driver, as each part finishes
        key, item = cells[j]
        done[key][item.part] = result
        if all(p is not None for p in done[key]):  # the run's last part: the run is stored, as one entry
            merged = _merge_parts(configs[key], done.pop(key))
            store.save(configs[key], {"chains": merged[0], "stats": merged[1]})
            got[key] = merged

    run_cells(functools.partial(_compute_part, progress=progress), [item for _, item in cells],
              desc="editor chains (dataset x editor" + (" x part)" if len(cells) > len(todo) else ")"),
              on_result=save, cell_threads=1)
    return [got[k] for k in keys]


def count_antonym_swaps(swaps: Sequence[tuple[str, str]], wordnet) -> tuple[int, int, list[str]]:
    """``(swaps, swaps whose replacement is a WordNet antonym of the original word, those pairs as "a->b")``."""
    ant = [f"{a}->{b}" for a, b in swaps if wordnet.is_antonym(a, b)]
    return len(swaps), len(ant), ant


#: the settings of :func:`textfooler_antonym_swaps`
ANTONYM_SETTINGS = ("before", "inflected antonyms", "after")


def textfooler_antonym_swaps(samples: dict[str, int], seed: int = 42, predictor: str = "logreg",
                             max_words: int | None = 400, max_train: int | None = None,
                             refresh: bool = False, settings: Sequence[str] = ANTONYM_SETTINGS) -> pd.DataFrame:
    """TextFooler's first edit of the first ``samples[dataset]`` texts of each dataset's seeded sample in three
    settings (``setting``): ``before`` -- vectors counter-fitted with WordNet's lemma antonym pairs only, no veto
    (the earlier editor); ``inflected antonyms`` -- the antonym constraints extended to inflected forms, no veto;
    ``after`` -- those vectors and the WordNet antonym veto (the editor of the main run).  Accepted swaps, how many
    replace a word by one of its WordNet antonyms (on lemmas, :meth:`WordNet.is_antonym`), the most frequent such
    pairs and the flip rate.  ``settings``: a subset of :data:`ANTONYM_SETTINGS` (quick runs: ``("after",)``,
    which needs no second set of vectors).  Stored as one result-store entry under ``data/results/cf_feedback/``."""
    from collections import Counter

    from ...data.cf_data import sample_test
    from ...explainers.counterfactual.counterfit import counterfitted_glove
    from ...explainers.counterfactual.textfooler import TextFooler
    from ...explainers.counterfactual.wordnet import load_wordnet
    from ...models.cf_predictors import get_predictor

    bad = [x for x in settings if x not in ANTONYM_SETTINGS]
    if bad or not settings:
        raise ValueError(f"settings={tuple(settings)!r}: use a non-empty subset of {ANTONYM_SETTINGS}")
    from ...store import ResultStore

    store = ResultStore(paths.results_dir() / "cf_feedback", "textfooler_antonyms", version=ANTONYMS_VERSION)
    config = {"samples": dict(samples), "seed": seed, "predictor": predictor, "max_words": max_words,
              "max_train": max_train, "settings": list(settings)}
    cached = None if refresh else store.load(config)
    if cached is not None:
        return cached["table"]
    wn = load_wordnet()
    rows = []
    for d, n in samples.items():
        model = get_predictor(d, predictor, seed=seed, cache=predictor != "logreg", max_train=max_train)
        texts = sample_test(d, n, seed=seed, max_words=max_words)["text"].tolist()
        for setting, inflected, veto in (("before", False, False), ("inflected antonyms", True, False),
                                         ("after", True, True)):
            if setting not in settings:
                continue
            ed = TextFooler(antonym_veto=veto, vectors=counterfitted_glove(inflected_antonyms=inflected),
                            wordnet=wn).fit(cf.CountingPredictor(model))
            edits = ed.explain(texts)
            n_sw, n_ant, pairs = count_antonym_swaps(ed.swaps, wn)
            flips = [c[0] for c in edits if c]
            n_flip = int((model.predict_proba(flips).argmax(1) != model.predict_proba(
                [t for t, c in zip(texts, edits) if c]).argmax(1)).sum()) if flips else 0
            common = {"dataset": d, "setting": setting, "inflected_antonyms": inflected, "antonym_veto": veto,
                      "ours_std": np.nan, "paper": np.nan, "n_texts": len(texts),
                      "top_antonym_pairs": "; ".join(f"{p} ({k})" for p, k in Counter(pairs).most_common(8))}
            for metric, value, lower in (("accepted_swaps", n_sw, False), ("antonym_swaps", n_ant, True),
                                         ("antonym_share", n_ant / n_sw if n_sw else np.nan, True),
                                         ("flip_rate@1", n_flip / len(texts) if texts else np.nan, False)):
                rows.append({**common, "metric": metric, "ours": value, "lower_is_better": lower})
    cols = ["dataset", "setting", "inflected_antonyms", "antonym_veto", "metric", "ours", "ours_std", "paper", "n_texts", "lower_is_better",
            "top_antonym_pairs"]
    df = pd.DataFrame(rows)[cols]
    store.save(config, {"table": df})
    return df


def add_fluency(chains: pd.DataFrame, dataset: str, base_lm: str = "smollm2", steps: Sequence[int] | None = None,
                seed: int = 42, max_train: int | None = None, lm_max_texts: int | None = 20000,
                base_max_texts: int | None = None, lm_dtype: str = "float32",
                base_more: dict[int, int] | None = None) -> pd.DataFrame:
    """Columns ``nll_base``/``ppl_base`` (causal LM) and ``nll_fine``/``ppl_fine`` (in-domain
    bigram LM on the dataset's train split, label-pooled) for the rows at ``steps`` (all if None).

    ``base_max_texts``: the causal LM (~2 s per 300-word review on 2 CPU cores) scores only the
    chains of the first ``base_max_texts`` texts of the seeded sample (NaN elsewhere, to bound the run time);
    ``base_more`` (step -> N): these steps also on the chains of the first N texts (e.g. the paper's Table 3
    steps on more texts than the per-step figure).  The in-domain LM scores every row.  Texts repeated across
    editors (the originals) are scored once.
    """
    from ...explainers.counterfactual.mice import cached_infiller
    from ...models.cf_predictors import get_predictor
    from ...nlp import tokens

    cf.check_chains(chains, ("text_id", "step", "text"))
    chains = chains.copy()
    rows = chains.index if steps is None else chains.index[chains["step"].isin(list(steps))]
    texts = chains.loc[rows, "text"].tolist()
    tid, stp = chains.loc[rows, "text_id"], chains.loc[rows, "step"]
    keep = pd.Series(True, index=rows) if base_max_texts is None else tid < base_max_texts
    for step, n in (base_more or {}).items():
        if int(n) < 0:
            raise ValueError(f"base_more[{step!r}]={n!r} must be >= 0 texts")
        keep |= (stp == step) & (tid < int(n))
    base_rows = rows[keep.to_numpy()]
    uniq = list(dict.fromkeys(chains.loc[base_rows, "text"]))
    by_text, n_trunc = cached_nll(uniq, base_lm, lm_dtype, dataset)
    chains["nll_base"] = np.nan
    chains.loc[base_rows, "nll_base"] = [by_text[t] for t in chains.loc[base_rows, "text"]]
    chains.attrs["n_truncated_base"] = n_trunc
    chains.attrs["n_scored_base"] = len(uniq)
    fine = cached_infiller(dataset, get_predictor(dataset, seed=seed, max_train=max_train), lm_max_texts, seed)
    chains.loc[rows, "nll_fine"] = [fine.nll([w.lower() for w in tokens(t)]) for t in texts]
    chains["ppl_base"] = np.exp(chains["nll_base"])
    chains["ppl_fine"] = np.exp(chains["nll_fine"])
    return chains


def fluency_texts_table(chains: pd.DataFrame) -> pd.DataFrame:
    """The per-text values behind Table 3 (``cf_feedback_fluency_texts``): one row per (dataset, editor, LM, step,
    text) that :func:`add_fluency` scored, ``quantity`` ``nll``, the text's mean token NLL as ``ours`` (tidy:
    ``ours_std`` and ``paper`` empty; the paper prints no per-text values); what the claims pair over texts."""
    cf.check_chains(chains, ("dataset", "editor", "text_id", "step", "nll_base", "nll_fine"),
                    "chains (with the columns add_fluency adds)")
    parts = []
    for lm in ("base", "fine"):
        v = chains[["dataset", "editor", "step", "text_id", f"nll_{lm}"]].rename(columns={f"nll_{lm}": "ours"})
        parts.append(v.dropna(subset=["ours"]).assign(lm=lm, quantity="nll", ours_std=np.nan, paper=np.nan))
    out = pd.concat(parts, ignore_index=True)
    return out[["dataset", "editor", "lm", "quantity", "step", "text_id", "ours", "ours_std", "paper"]].sort_values(
        ["dataset", "editor", "lm", "step", "text_id"], kind="stable").reset_index(drop=True)


def cached_nll(texts: list[str], base_lm: str, dtype: str, dataset: str) -> tuple[dict[str, float], int]:
    """Base-LM mean NLL per text, stored per (dataset, LM, dtype) under ``data/results/cf_feedback/`` keyed
    by the text's SHA-1 (re-runs of the notebook score only new texts); ``(nll by text, n truncated)``."""
    from ...models.lm import load_causal_lm, resolve_lm_dtype, sequence_nll

    dtype = resolve_lm_dtype(dtype)
    settings = {"lm": base_lm, "dtype": dtype, "max_tokens": 512}
    key = _key(**settings) if FLUENCY_VERSION == 1 else _key(**settings, v=FLUENCY_VERSION)
    path = paths.results_dir() / "cf_feedback" / f"fluency_{dataset}_{key}.parquet"
    store = io.read_or_rebuild(path, _read_fluency, lambda: pd.DataFrame({"sha": [], "nll": [], "truncated": []}),
                               what="fluency store")
    sha = {t: hashlib.sha1(t.encode()).hexdigest() for t in texts}
    have = set(store["sha"])
    todo = [t for t in texts if sha[t] not in have]
    if todo:
        model, tok = load_causal_lm(base_lm, dtype=dtype)
        rows = []
        from ...progress import progress

        for b in progress(range(0, len(todo), 64), desc=f"{base_lm} NLL (64 texts)"):  # saved every 64 texts
            chunk = todo[b:b + 64]
            nll, _ = sequence_nll(chunk, model, tok)
            n_tok = [len(tok(t, add_special_tokens=False)["input_ids"]) + 1 for t in chunk]
            rows.append(pd.DataFrame({"sha": [sha[t] for t in chunk], "nll": nll, "truncated": [n > 512 for n in n_tok]}))
            store = pd.concat([store] + rows[-1:], ignore_index=True)
            io.write_parquet(path, store)
    got = store.drop_duplicates("sha").set_index("sha")
    return {t: float(got.at[sha[t], "nll"]) for t in texts}, int(sum(bool(got.at[sha[t], "truncated"]) for t in texts))


def _read_fluency(path) -> pd.DataFrame:
    df = pd.read_parquet(path)
    missing = {"sha", "nll", "truncated"} - set(df.columns)
    if missing:
        raise ValueError(f"columns {sorted(missing)} are missing")
    return df


def predictor_and_first_texts(dataset: str, n_sample: int, n_texts: int, seed: int, predictor: str,
                               max_words: int | None, max_train: int | None):
    """The predictor and the first ``n_texts`` texts of the dataset's seeded sample of ``n_sample``
    (the texts the chains start from): what the infiller measurements edit."""
    from ...data.cf_data import sample_test
    from ...models.cf_predictors import get_predictor

    model = get_predictor(dataset, predictor, seed=seed, cache=predictor != "logreg", max_train=max_train)
    texts = sample_test(dataset, n_sample, seed=seed, max_words=max_words)["text"].tolist()[:n_texts]
    return model, texts


def infiller_tradeoff(samples: dict[str, int], n_texts: int = 10, seed: int = 42,
                      predictor: str = "logreg", max_words: int | None = 400, mlm_train_texts: int = 1000,
                      refresh: bool = False, max_train: int | None = None,
                      lm_max_texts: int | None = 20000) -> pd.DataFrame:
    """MiCE stage 1 measured both ways: the label-conditioned bigram infiller vs a label-conditioned
    MLM head trained here on the frozen MiniLM (:mod:`xaibench.explainers.counterfactual.mlm`).

    The first MiCE edit of the first ``n_texts`` texts of each dataset's seeded sample (the same
    sample as the chains: ``samples[dataset]`` texts), everything else of the editor unchanged: flip rate,
    mean minimality and seconds per edit (plus the MLM head's training seconds and final
    cross-entropy).  Stored under ``data/results/cf_feedback/`` (the MLM costs seconds per edit).
    ``max_train``/``lm_max_texts`` cap the predictor's and the bigram infiller's training sets as in
    :func:`run_experiment` (quick runs).
    """
    import time

    from ...config import positive_int
    from ...explainers.counterfactual.mice import MiCE
    from ...explainers.counterfactual.mlm import train_mlm_infiller

    positive_int(n_texts, "n_texts")
    config = {"samples": dict(samples), "n_texts": n_texts, "seed": seed, "predictor": predictor,
              "max_words": max_words, "mlm_train_texts": mlm_train_texts,
              "max_train": max_train, "lm_max_texts": lm_max_texts}
    store = tradeoff_store()
    cached = None if refresh else store.load(config)
    if cached is not None:
        return cached["table"]
    rows = []
    for d, n_sample in samples.items():
        model, texts = predictor_and_first_texts(d, n_sample, n_texts, seed, predictor, max_words, max_train)
        t0 = time.perf_counter()
        mlm = train_mlm_infiller(d, model, max_texts=mlm_train_texts, seed=seed)
        train_s = time.perf_counter() - t0
        for name, lm in (("bigram (label-conditioned)", None), ("MLM head on MiniLM (label-conditioned)", mlm)):
            pred = cf.CountingPredictor(model)
            editor = MiCE(dataset=d, lm=lm, seed=seed, lm_max_texts=lm_max_texts).fit(pred)
            load0 = load_average()
            t0 = time.perf_counter()
            ch = cf.run_chains(editor, pred, texts, n_steps=1)
            secs = time.perf_counter() - t0
            first = ch[ch["step"] == 1]
            common = {"dataset": d, "infiller": name, "ours_std": np.nan, "paper": np.nan, "n_texts": len(first),
                      "load_avg_1min": round((load0 + load_average()) / 2, 2)}
            rows += [{**common, "metric": "flip_rate@1", "ours": float(first["flipped"].mean()), "lower_is_better": False},
                     {**common, "metric": "minimality@1", "ours": float(first["minimality"].mean()), "lower_is_better": True},
                     {**common, "metric": "seconds_per_edit", "ours": secs / max(len(first), 1), "lower_is_better": True}]
            if lm is not None:
                rows += [{**common, "metric": "training_seconds", "ours": train_s, "lower_is_better": True},
                         {**common, "metric": "training_cross_entropy", "ours": mlm.train_loss, "lower_is_better": True}]
    cols = ["dataset", "infiller", "metric", "ours", "ours_std", "paper", "n_texts", "lower_is_better", "load_avg_1min"]
    df = pd.DataFrame(rows)[cols]
    store.save(config, {"table": df})
    return df


#: infillers :func:`infiller_fluency` can measure (``"mlm"``: the MLM head of :func:`infiller_tradeoff`, seconds per edit)
FLUENCY_INFILLERS = ("bigram", "two-sided", "mlm")


def infiller_fluency(samples: dict[str, int], n_texts: int = 20, seed: int = 42, predictor: str = "logreg",
                     max_words: int | None = 400, infillers: Sequence[str] = ("bigram", "two-sided"),
                     base_lm: str = "smollm2", lm_dtype: str = "auto", mlm_train_texts: int = 1000,
                     refresh: bool = False, max_train: int | None = None,
                     lm_max_texts: int | None = 20000) -> pd.DataFrame:
    """How readable MiCE's edits are with each stage-1 infiller: the first MiCE edit of the first ``n_texts``
    texts of each dataset's seeded sample (``samples[dataset]`` texts, as the chains), one run per infiller.

    Metrics (``ours``; ``ours_std`` the standard deviation over texts where one exists):

    * ``nll_delta_mean`` / ``nll_delta_std`` -- the base LM's (SmolLM2) mean token NLL of the edit minus that of
      its original, paired per text, over the texts the editor changed (carried steps left out; ``n_texts``);
    * ``flip_rate`` -- share of the texts whose edit reaches another class; ``minimality`` -- mean token
      Levenshtein distance of the edit to its original; ``seconds_per_edit`` -- wall time of the edits (the
      infiller's training excluded; the base LM runs after the edits, outside the edit loop).

    ``infillers``: a subset of :data:`FLUENCY_INFILLERS`.  Stored as one result-store entry keyed on every
    setting under ``data/results/cf_feedback/``; the base-LM scores go through the fluency store of
    :func:`add_fluency`.  ``paper`` is NaN (the paper's MiCE infills with T5).
    """
    import time

    from ...config import positive_int
    from ...explainers.counterfactual.mice import INFILLER_VERSION, TWO_SIDED_VERSION, MiCE
    from ...models.lm import resolve_lm_dtype
    from ...nlp import nlp
    from ...store import ResultStore

    n_texts = positive_int(n_texts, "n_texts")
    bad = [x for x in infillers if x not in FLUENCY_INFILLERS]
    if bad or not infillers:
        raise ValueError(f"infillers={tuple(infillers)!r}: use a non-empty subset of {FLUENCY_INFILLERS}")
    dtype = resolve_lm_dtype(lm_dtype)
    config = {"samples": dict(samples), "n_texts": n_texts, "seed": seed, "predictor": predictor,
              "max_words": max_words, "infillers": list(infillers), "base_lm": base_lm, "lm_dtype": dtype,
              "max_train": max_train, "lm_max_texts": lm_max_texts,
              "infiller_versions": {"bigram": INFILLER_VERSION, "two-sided": TWO_SIDED_VERSION}}
    if "mlm" in infillers:
        config["mlm_train_texts"] = mlm_train_texts
    store = ResultStore(paths.results_dir() / "cf_feedback", "infiller_fluency", version=INFILLER_FLUENCY_VERSION)
    cached = None if refresh else store.load(config)
    if cached is not None:
        return cached["table"]
    rows = []
    for d, n_sample in samples.items():
        model, texts = predictor_and_first_texts(d, n_sample, n_texts, seed, predictor, max_words, max_train)
        for name in infillers:
            pred = cf.CountingPredictor(model)
            if name == "mlm":
                from ...explainers.counterfactual.mlm import train_mlm_infiller

                editor = MiCE(dataset=d, lm=train_mlm_infiller(d, model, max_texts=mlm_train_texts, seed=seed),
                              seed=seed).fit(pred)
            else:
                editor = MiCE(dataset=d, seed=seed, lm_max_texts=lm_max_texts, infiller=name).fit(pred)
            nlp()  # the tokenizer is loaded before the clock starts (the first infiller would pay for it)
            load0 = load_average()
            t0 = time.perf_counter()
            ch = cf.run_chains(editor, pred, texts, n_steps=1)
            secs = time.perf_counter() - t0
            load1 = load_average()
            orig = ch[ch["step"] == 0].set_index("text_id")["text"]
            first = ch[ch["step"] == 1].set_index("text_id")
            edited = first[~first["carried"].astype(bool)]
            by_text, _ = cached_nll(list(dict.fromkeys(orig.tolist() + edited["text"].tolist())), base_lm, dtype, d)
            delta = np.array([by_text[t] - by_text[orig[i]] for i, t in edited["text"].items()], dtype=float)
            delta = delta[~np.isnan(delta)]
            sd = float(delta.std(ddof=1)) if len(delta) > 1 else np.nan
            common = {"dataset": d, "infiller": name, "paper": np.nan, "load_avg_1min": round((load0 + load1) / 2, 2)}
            n = len(first)
            for metric, value, std, k, lower in (
                    ("nll_delta_mean", float(delta.mean()) if len(delta) else np.nan, sd, len(delta), True),
                    ("nll_delta_std", sd, np.nan, len(delta), True),
                    ("flip_rate", float(first["flipped"].astype(float).mean()), np.nan, n, False),
                    ("minimality", float(first["minimality"].mean()),
                     float(first["minimality"].std(ddof=1)) if n > 1 else np.nan, n, True),
                    ("seconds_per_edit", secs / max(n, 1), np.nan, n, True)):
                rows.append({**common, "metric": metric, "ours": value, "ours_std": std, "n_texts": k,
                             "lower_is_better": lower})
    cols = ["dataset", "infiller", "metric", "n_texts", "lower_is_better", "ours", "ours_std", "paper", "load_avg_1min"]
    df = pd.DataFrame(rows)[cols]
    store.save(config, {"table": df})
    return df


# ---------------------------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------------------------
def _paper(paper_table: str, **f) -> dict:
    pv = paper_values("cf_feedback", paper_table=paper_table)
    out = {}
    for _, r in pv.iterrows():
        out[tuple(str(r[k]) for k in f)] = r["value"]
    return out


def table_inconsistency(chains: pd.DataFrame, ns: Sequence[int] = (1, 2, 3, 5, 9)) -> pd.DataFrame:
    cf.check_chains(chains, ("dataset", "editor", *cf.CHAIN_COLUMNS))
    pv = paper_values("cf_feedback", paper_table="Table 1")
    rows = []
    for (d, e), g in chains.groupby(["dataset", "editor"], sort=False):
        dist = cf.chain_distances(g)
        per_text = cf.per_text_inc_matrix(g)
        for n in ns:
            vals = per_text[:, min(n, per_text.shape[1]) - 1]
            p = pv[(pv.dataset == d) & (pv.editor == e) & (pd.to_numeric(pv.step, errors="coerce") == n)]
            rows.append({"dataset": d, "editor": e, "metric": f"inc@{n}", "ours": cf.inc_at_n(dist, n),
                         "ours_std": float(np.nanstd(vals, ddof=1)) if np.sum(~np.isnan(vals)) > 1 else np.nan,
                         "paper": float(p["value"].iloc[0]) if len(p) else np.nan,
                         "n_texts": len(dist), "lower_is_better": True})
    return pd.DataFrame(rows)


def table_flip_rate(chains: pd.DataFrame, ns: Sequence[int] = (1, 9)) -> pd.DataFrame:
    cf.check_chains(chains, ("dataset", "editor", *cf.CHAIN_COLUMNS))
    pv = paper_values("cf_feedback", paper_table="Table 2")
    rows = []
    for (d, e), g in chains.groupby(["dataset", "editor"], sort=False):
        for n in ns:
            p = pv[(pv.dataset == d) & (pv.editor == e) & (pd.to_numeric(pv.step, errors="coerce") == n)]
            rows.append({"dataset": d, "editor": e, "metric": f"flip_rate@{n}", "ours": cf.flip_rate_at(g, n),
                         "ours_std": np.nan, "paper": float(p["value"].iloc[0]) if len(p) else np.nan,
                         "n_texts": g["text_id"].nunique(), "lower_is_better": False})
    return pd.DataFrame(rows)


def table_fluency(chains: pd.DataFrame, ns: Sequence[int] = (1, 9)) -> pd.DataFrame:
    """Mean NLL and perplexity (base and in-domain LM) at steps ``ns``; paper's ppl-base/ppl-fine
    (steps 1 and 9 only), each marked not comparable in ``paper_comparable``.

    The paper's values are per-character perplexities (its ``perplexity.py`` joins each text's
    characters with blank lines before GPT-2 scores it; see :mod:`.claims`), a different quantity
    from ours: they are put beside both of our quantities for reference, not for comparison.
    """
    cf.check_chains(chains, ("dataset", "editor", "step", "nll_base", "ppl_base", "nll_fine", "ppl_fine"),
                    "chains (with the columns add_fluency adds)")
    pv = paper_values("cf_feedback", paper_table="Table 3")
    note = "not comparable: per-character perplexity (perplexity.py scores a text's characters one per line)"
    rows = []
    for (d, e), g in chains.groupby(["dataset", "editor"], sort=False):
        for n in ns:
            s = g[g["step"] == n]
            for lm, pm in (("base", "ppl_base"), ("fine", "ppl_imdb" if d == "imdb" else "ppl_newsgroup")):
                p = pv[(pv.dataset == d) & (pv.editor == e) & (pv.metric == pm)
                       & (pd.to_numeric(pv.step, errors="coerce") == n)]
                for q in ("nll", "ppl"):
                    v = s[f"{q}_{lm}"].dropna()
                    rows.append({"dataset": d, "editor": e, "lm": lm, "quantity": q, "step": n,
                                 "ours": float(v.mean()) if len(v) else np.nan,
                                 "ours_std": float(v.std(ddof=1)) if len(v) > 1 else np.nan,
                                 "paper": float(p["value"].iloc[0]) if len(p) else np.nan,
                                 "paper_metric": pm, "paper_comparable": note if len(p) else "",
                                 "n_texts": len(v), "lower_is_better": True})
    return pd.DataFrame(rows)


def table_sample_size(chains: pd.DataFrame, sample_sizes: Sequence[int] = SAMPLE_SIZES) -> pd.DataFrame:
    cf.check_chains(chains, ("dataset", "editor", *cf.CHAIN_COLUMNS))
    pv = paper_values("cf_feedback", paper_table=["Table 4", "Table 5"])
    out = []
    for d, gd in chains.groupby("dataset", sort=False):
        mats = {e: cf.per_text_inc_matrix(g) for e, g in gd.groupby("editor")}
        n_max = min(len(m) for m in mats.values())
        sizes = [n for n in sample_sizes if n <= n_max] or [n_max]
        t = cf.ttests(mats, sizes, steps=range(1, cf.N_STEPS))
        t.insert(0, "dataset", d)
        out.append(t)
    t = pd.concat(out, ignore_index=True)
    key = pv.assign(step=pv.step.astype(float).astype(int), sample_size=pv.sample_size.astype(float).astype(int))
    key = key.groupby(["dataset", "editor", "comparison_editor", "sample_size", "step"])["value"].first()
    t["paper"] = [key.get((r.dataset, r.editor, r.comparison_editor, r.sample_size, r.step), np.nan)
                  for r in t.itertuples()]
    t = t.rename(columns={"p_value": "ours"})
    t["ours_std"] = np.nan
    t["lower_is_better"] = True
    return t


#: metrics of :func:`table_per_step` and whether lower is better
PER_STEP_METRICS = {"minimality": True, "inc": True, "n_tokens": False, "erased_over_70pct": True}


def table_per_step(chains: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, editor, feedback step): mean and std over the chains that reach the step of

    * ``minimality`` -- distance of the edit to its input (Figures 3a and 5);
    * ``inc`` -- the step's inconsistency ``relu(d_{k+1} - d_k)`` (Figures 3b and 6a; step k needs edit k+1);
    * ``n_tokens`` -- tokens of the step's text (step 0: the originals; Figure 4 and Appendix D);
    * ``erased_over_70pct`` -- share of the step's edits that keep under 30% of their input's tokens
      (the paper's "over 70% erased", Section 5).

    The paper prints these only as figures, so ``paper`` is NaN.
    """
    cf.check_chains(chains, ("dataset", "editor", "text_id", "step", "minimality", "n_tokens"))
    rows = []
    for (d, e), g in chains.groupby(["dataset", "editor"], sort=False):
        g = g.sort_values(["text_id", "step"])
        prev_tokens = g.groupby("text_id")["n_tokens"].shift(1)
        per_text = {"minimality": g["minimality"], "n_tokens": g["n_tokens"],
                    "erased_over_70pct": (g["n_tokens"] < 0.3 * prev_tokens).where(prev_tokens.notna())}
        inc = pd.Series(np.nan, index=g.index)
        for _, c in g[g["step"] > 0].groupby("text_id"):
            s = cf.inc_steps(c["minimality"].tolist())
            inc.loc[c.index[:len(s)]] = s
        per_text["inc"] = inc
        for step, idx in g.groupby("step").groups.items():
            for m, lower in PER_STEP_METRICS.items():
                v = pd.to_numeric(per_text[m].loc[idx], errors="coerce").dropna().astype(float)
                if not len(v):
                    continue
                rows.append({"dataset": d, "editor": e, "step": int(step), "metric": m, "ours": float(v.mean()),
                             "ours_std": float(v.std(ddof=1)) if len(v) > 1 else np.nan, "paper": np.nan,
                             "n_texts": len(v), "lower_is_better": lower})
    cols = ["dataset", "editor", "step", "metric", "ours", "ours_std", "paper", "n_texts", "lower_is_better"]
    return pd.DataFrame(rows, columns=cols).sort_values(["dataset", "editor", "metric", "step"], ignore_index=True)


# ---------------------------------------------------------------------------------------------
# figures
# ---------------------------------------------------------------------------------------------
def per_step_frame(chains: pd.DataFrame) -> pd.DataFrame:
    """Long frame of per-step minimality, inconsistency, target probability, NLLs."""
    cf.check_chains(chains, ("dataset", "editor", "text_id", "step", "minimality", "p_target", "n_tokens"))
    rows = []
    for (d, e, tid), g in chains[chains["step"] > 0].groupby(["dataset", "editor", "text_id"]):
        g = g.sort_values("step")
        inc = cf.inc_steps(g["minimality"].tolist())
        for k, r in enumerate(g.itertuples()):
            rows.append({"dataset": d, "editor": e, "text_id": tid, "step": r.step, "minimality": r.minimality,
                         "inc": inc[k] if k < len(inc) else np.nan, "p_target": r.p_target,
                         "n_tokens": r.n_tokens,
                         "nll_base": getattr(r, "nll_base", np.nan), "nll_fine": getattr(r, "nll_fine", np.nan)})
    return pd.DataFrame(rows)


def _texts_per_editor(frame: pd.DataFrame) -> int:
    """The most texts any editor has rows for (0 for an empty frame)."""
    if "text_id" not in frame.columns or not len(frame):
        return 0
    return int(frame.groupby("editor")["text_id"].nunique().max())


def _texts_range(frame: pd.DataFrame) -> tuple[int, int]:
    """The fewest and the most texts an (editor, step) box of ``frame`` holds ((0, 0) for an empty frame): they differ
    where some steps are scored on more texts (base-LM fluency: Table 3's steps)."""
    if "text_id" not in frame.columns or not len(frame):
        return 0, 0
    per = frame.groupby(["editor", "step"])["text_id"].nunique()
    return int(per.min()), int(per.max())


#: per-step columns drawn on a symmetric-log axis (zeros and a few very large values: Polyjuice's step-1 inc)
SYMLOG_COLUMNS = ("minimality", "inc")
#: per-step columns whose quantity the paper prints: column -> (paper table, metric of cf_feedback.csv).  Table 1's
#: inc@n is the mean of the per-step inc over steps 1..n, drawn at step n beside ours (:func:`inc_at_n_per_step`)
PAPER_STEP_VALUES = {"inc": ("Table 1", "inc")}
#: what the caption says of the other per-step columns (default: :data:`NO_PAPER_NUMBER`)
NO_PAPER_NUMBER = "paper: no number printed"
PAPER_STEP_NOTES = {
    "p_target": "paper: no number printed (its flip rates, Table 2, are another quantity)",
    "nll_base": "paper: Table 3's ppl-base is a per-character perplexity, not comparable: not drawn",
    "nll_fine": "paper: Table 3's fine-PPL is a per-character perplexity, not comparable: not drawn",
}


def inc_at_n_per_step(data: pd.DataFrame, n: int) -> float:
    """Table 1's inc@n from a :func:`per_step_frame` slice of one editor: the mean of every per-(text, step)
    inc of steps 1..n, pooled (as :func:`.metrics.inc_at_n`); NaN without any."""
    v = data.loc[data["step"] <= n, "inc"].dropna()
    return float(v.mean()) if len(v) else float("nan")


def _draw_paper_inc(ax, data: pd.DataFrame, dataset: str, steps: list, editors: list[str]) -> list:
    """Table 1's inc@n (red) and ours (black x) at step n, on each editor's box; the legend handles drawn."""
    table, metric = PAPER_STEP_VALUES["inc"]
    pv = paper_values("cf_feedback", paper_table=table, dataset=dataset, metric=metric)
    width = 0.8 / max(len(editors), 1)
    paper_xy, ours_xy = [], []
    for j, e in enumerate(editors):
        for r in pv[pv["editor"] == e].itertuples():
            n = int(float(r.step))
            if n not in steps:
                continue
            x = steps.index(n) - 0.4 + width * (j + 0.5)
            paper_xy.append((x, float(r.value)))
            ours_xy.append((x, inc_at_n_per_step(data[data["editor"] == e], n)))
    if not paper_xy:
        return []
    px, py = zip(*paper_xy)
    ox, oy = zip(*ours_xy)
    paper = ax.scatter(px, py, marker="_", s=140, linewidths=2.2, c="crimson", zorder=5,
                       label=f"paper ({table}): inc@n, mean of steps 1..n")
    ours = ax.scatter(ox, oy, marker="x", s=22, linewidths=1.2, c="black", zorder=6,
                      label="ours: inc@n, mean of steps 1..n")
    return [paper, ours]


def plot_steps(frame: pd.DataFrame, dataset: str, metrics: Sequence[tuple[str, str]], title: str):
    """Box plots per feedback step and editor with every outlier drawn and the mean marked (white diamond);
    ``minimality`` and ``inc`` on a symmetric-log axis, so rare large values (which carry the mean) stay visible.
    The paper's printed numbers of a panel (:data:`PAPER_STEP_VALUES`: Table 1's inc@n) are drawn in red beside
    ours; the caption under the panels says, per panel, which paper number is drawn or that none is
    (:data:`PAPER_STEP_NOTES`)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    sub = frame[frame["dataset"] == dataset]
    n = _texts_per_editor(sub)
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.6), squeeze=False)
    extra, notes = [], []
    for ax, (col, label) in zip(axes[0], metrics):
        data = sub.dropna(subset=[col])
        steps = sorted(data["step"].unique().tolist())
        editors = editor_order(data["editor"])
        sns.boxplot(data=data, x="step", y=col, hue="editor", order=steps, hue_order=editors, ax=ax,
                    showfliers=True, fliersize=1.5, linewidth=0.8, showmeans=True,
                    meanprops={"marker": "D", "markerfacecolor": "white", "markeredgecolor": "black",
                               "markersize": 3.5})
        if col in PAPER_STEP_VALUES:
            drawn = _draw_paper_inc(ax, data, dataset, steps, editors)
            extra += drawn
            table = PAPER_STEP_VALUES[col][0]
            notes.append(f"{label}: red = paper ({table}), x = ours" if drawn
                         else f"{label}: paper: no number printed for {dataset}")
        else:
            notes.append(f"{label}: {PAPER_STEP_NOTES.get(col, NO_PAPER_NUMBER)}")
        if col in SYMLOG_COLUMNS:
            ax.set_yscale("symlog", linthresh=1.0)
            if len(data) and data[col].min() >= 0:  # counts and distances: no empty negative half
                ax.set_ylim(bottom=0)
        lo, hi = _texts_range(data)  # a panel scored on fewer texts, at some steps or all (base-LM fluency), says so
        label = f"{label}, symlog" if col in SYMLOG_COLUMNS else label
        texts = f"{hi} text{'s' if hi != 1 else ''}" if lo == hi else f"{lo}-{hi} texts by step"
        ax.set_title(f"{label} ({texts})" if lo < n else label)
        ax.set_xlabel("feedback step")
        ax.set_ylabel("")
        if ax is not axes[0][-1] and ax.get_legend():
            ax.get_legend().remove()
    last = axes[0][-1]
    leg = last.get_legend()
    handles = (list(leg.legend_handles) if leg else []) + extra
    labels = ([t.get_text() for t in leg.get_texts()] if leg else []) + [h.get_label() for h in extra]
    if handles:
        last.legend(handles, labels, title="editor", bbox_to_anchor=(1.02, 1), loc="upper left", fontsize=8)
    fig.suptitle(f"{title} ({n} texts per editor)" if n else title)
    fig.tight_layout()
    fig.text(0.01, 0.0, "; ".join(notes), ha="left", va="top", fontsize=8, wrap=True)
    return fig


def plot_lengths(chains: pd.DataFrame):
    """Figure 4: mean tokens of the edit vs tokens of its input (binned), per editor."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    cf.check_chains(chains, ("dataset", "editor", "text_id", "step", "n_tokens"))
    rows = []
    for (d, e, tid), g in chains.groupby(["dataset", "editor", "text_id"]):
        g = g.sort_values("step")
        n = g["n_tokens"].tolist()
        rows += [{"dataset": d, "editor": e, "input_tokens": a, "output_tokens": b} for a, b in zip(n[:-1], n[1:])]
    df = pd.DataFrame(rows)
    g_n = chains.groupby(["dataset", "editor"])["text_id"].nunique().groupby("dataset").max().to_dict()
    df["input_bin"] = (df["input_tokens"] // 50) * 50 + 25  # the bin's centre: output = input lies on the diagonal
    fig, axes = plt.subplots(1, df["dataset"].nunique(), figsize=(11, 3.8), squeeze=False)
    for ax, (d, g) in zip(axes[0], df.groupby("dataset")):
        sns.lineplot(data=g, x="input_bin", y="output_tokens", hue="editor", hue_order=editor_order(g["editor"]),
                     marker="o", ax=ax, errorbar=None)
        lim = g["input_bin"].max() + 25
        ax.plot([0, lim], [0, lim], color="grey", lw=0.8, ls="--", label="output = input")
        ax.set_title(f"{d}: tokens of the edit vs its input ({g_n[d]} texts per editor)")
        ax.set_xlabel("input tokens (bins of 50, centres)")
        ax.set_ylabel("mean output tokens")
    fig.tight_layout()
    return fig, df
