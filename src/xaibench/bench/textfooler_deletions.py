"""``python -m xaibench.bench textfooler_deletions``: TextFooler's word-importance step (Filandrianos et al.'s
chains, notebooks 12, 22 and 30) deletes each content word of the text once and scores every deleted text.  The
tf-idf logistic regression scores them from the text's n-gram counts, tokenising again only the runs around each
deleted word (:meth:`~xaibench.models.logreg.LogRegClassifier.predict_proba_splices`, ``now``), instead of
featurising every deleted text (``before``) -> ``figures/tables/bench_textfooler_deletions.csv``.

Per dataset: the full run's predictor and a sample of its texts (at most 400 words, as the runs draw them), each
text's deletions scored both ways, ``repeats`` times (the fastest counts); the seconds per text's deletions, the
deletions per text, and whether both ways give the same probabilities, bit for bit.  TextFooler scores them once
per edit of every chain (the full runs: 9 edits of 500 IMDb and 1,000 Newsgroups texts in notebook 22)."""
from __future__ import annotations

import numpy as np
import pandas as pd

SAMPLE = {"imdb": 40, "newsgroups": 60}


def bench_textfooler_deletions(sample: dict[str, int] | None = None, repeats: int = 3, seed: int = 42) -> pd.DataFrame:
    from ..data.cf_data import sample_test
    from ..evaluation.cf_feedback.protocol import SETTINGS
    from ..explainers.counterfactual.common import doc_parts, join_tokens
    from ..explainers.counterfactual.textfooler import TextFooler, score_deletions
    from ..models.cf_predictors import get_predictor
    from ..nlp import parse
    from .common import fastest_of, machine_context

    s = SETTINGS["full"]
    rows = []
    for d, n in (sample or SAMPLE).items():
        model = get_predictor(d, s["predictor"], seed=seed, max_train=s["max_train"])
        texts = sample_test(d, n, seed=seed, max_words=s["max_words"])["text"].tolist()
        batches = []
        for doc in parse(texts, disable=("parser", "lemmatizer")):
            words, spaces = doc_parts(doc)
            pos = TextFooler.deletion_positions(doc)
            if pos:
                batches.append((words, spaces, pos, [join_tokens(words[:i] + words[i + 1:], spaces[:i] + spaces[i + 1:])
                                                     for i in pos]))
        ways = {"before": lambda: [model.predict_proba(b[3]) for b in batches],
                "now": lambda: [score_deletions(model, *b) for b in batches]}
        seconds, got = fastest_of(ways, repeats)
        identical = all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(got["before"], got["now"]))
        for way in ways:
            rows.append({"dataset": d, "way": way, "n_texts": len(batches),
                         "deletions_per_text": round(float(np.mean([len(b[2]) for b in batches])), 1),
                         "seconds": round(seconds[way], 3),
                         "ms_per_text": round(1000 * seconds[way] / max(len(batches), 1), 2),
                         "speedup_vs_before": round(seconds["before"] / seconds[way], 2), "identical": identical,
                         **machine_context()})
    return pd.DataFrame(rows)
