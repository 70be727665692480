"""Human-grounded evaluation of explanation methods (Lertvittayakumjorn & Toni, EMNLP 2019).

The paper asks people three kinds of questions about the explanations of a 1D-CNN text
classifier and turns every answer into a score in ``{-1, -0.5, 0, +0.5, +1}``:

* **Task 1 -- revealing model behaviour.**  Two models (a well-trained one and a worse one) put
  the same input in the same class; the participant sees *only* the evidence each model's
  explanation gives (the input text is not shown) and says which model is more reasonable.
  Correct = the well-trained model.
* **Task 2 -- justifying predictions.**  The participant sees the top-3 evidence fragments of a
  confident prediction (``max_c p_c > 0.9``) and guesses the class of the document they come
  from.  Correct = the class the model *predicted*.
* **Task 3 -- investigating uncertain predictions.**  The participant sees the top-3 evidence and
  top-3 counter-evidence fragments of an uncertain prediction (``max_c p_c < 0.7``) together with
  the predicted class and its probability, and guesses the *true* class.  Correct = the true
  class.  There is no "can't say" option in this task (the paper: people can still fall back on
  the predicted probability).

One module per idea (everything public is also importable from this package)::

    study        Question / Study, the study-file JSON format and its validation
    answers      the 5-level answer scale (answer codes, options), exported answer tables
    scoring      answer scores, the paper's score tables (ours beside the paper's)
    kappa        Fleiss' kappa between participants
    splits       the two datasets and their four disjoint splits
    training     the well-trained and worse CNNs (recipes, train or reload, macro-F1)
    selection    the paper's question-selection rules
    methods      which explainers the tasks score (declared output "attribution"), explaining texts
    questions    explanations -> task 1-3 questions
    study_files  one survey study file per dataset and task
    readers      simulated participants
    pipeline     the steps notebooks 11 and 21 run (``prepare`` is shared by both)
    protocol     the protocol object of the scorecard, and the methods notebooks 11 and 21 score (``methods_for``)
    plots        the figures of notebooks 11 and 21 (imported on demand: ``from ... import plots``)
    claims       the paper's headline claims beside ours (:mod:`xaibench.evaluation.claims`)

Rank agreement with the paper is :func:`xaibench.evaluation.agreement.rank_agreement`.
"""
from __future__ import annotations

from .answers import *  # noqa: F401,F403
from .answers import __all__ as _answers
from .kappa import *  # noqa: F401,F403
from .kappa import __all__ as _kappa
from .methods import *  # noqa: F401,F403
from .methods import __all__ as _methods
from .pipeline import *  # noqa: F401,F403
from .pipeline import __all__ as _pipeline
from .protocol import methods_for
from .questions import *  # noqa: F401,F403
from .questions import __all__ as _questions
from .readers import *  # noqa: F401,F403
from .readers import __all__ as _readers
from .scoring import *  # noqa: F401,F403
from .scoring import __all__ as _scoring
from .selection import *  # noqa: F401,F403
from .selection import __all__ as _selection
from .splits import *  # noqa: F401,F403
from .splits import __all__ as _splits
from .study import *  # noqa: F401,F403
from .study import __all__ as _study
from .study_files import *  # noqa: F401,F403
from .study_files import __all__ as _study_files
from .training import *  # noqa: F401,F403
from .training import __all__ as _training

__all__ = [*_study, *_answers, *_scoring, *_kappa, *_splits, *_training, *_selection, *_methods, *_questions,
           *_study_files, *_readers, *_pipeline, "methods_for"]
