"""``python -m xaibench.bench infillers``: the two MiCE infillers of a dataset (bigram and two-sided, Filandrianos
et al. 2023) trained one after the other, each tokenising and labelling the training texts itself (``separate``)
vs the second reading the first one's spaCy tokens and predicted labels (``shared``, what
:func:`~xaibench.explainers.counterfactual.ngram.train_ngram` does) -> ``figures/tables/bench_infillers.csv``.

The training set is the full runs': ``max_texts`` (20,000, notebooks 12 and 22's ``lm_max_texts``) train texts
labelled by the dataset's TF-IDF predictor trained on the whole train split (trained now when it is not stored).
``identical`` says whether both ways give the same pickled models, byte for byte."""
from __future__ import annotations

import pickle
import time

import pandas as pd


def bench_infillers(datasets: tuple[str, ...] = ("imdb", "newsgroups"), max_texts: int = 20000,
                    predictor: str = "logreg", seed: int = 42) -> pd.DataFrame:
    from ..data.cf_data import load_cf_dataset
    from ..explainers.counterfactual import ngram
    from ..models.cf_predictors import get_predictor
    from ..nlp import nlp
    from .common import machine_context

    nlp()  # the pipeline's load is not part of either way
    rows = []
    for d in datasets:
        clf = get_predictor(d, predictor, seed=seed)
        n_train = int((load_cf_dataset(d)["split"] == "train").sum())
        seconds, models = {}, {}
        for how in ("separate", "shared"):
            ngram._TRAINING_SET.clear()
            t0, built = time.perf_counter(), []
            for kind in ngram._KINDS:
                if how == "separate":
                    ngram._TRAINING_SET.clear()
                built.append(pickle.dumps(ngram.train_ngram(d, clf, max_texts=max_texts, seed=seed, kind=kind)))
            seconds[how], models[how] = time.perf_counter() - t0, built
        ngram._TRAINING_SET.clear()
        rows.append({"dataset": d, "n_texts": min(n_train, max_texts), "predictor": predictor,
                     "seconds_separate": round(seconds["separate"], 1), "seconds_shared": round(seconds["shared"], 1),
                     "seconds_saved": round(seconds["separate"] - seconds["shared"], 1),
                     "identical": models["separate"] == models["shared"]})
    return pd.DataFrame(rows).assign(**machine_context())
