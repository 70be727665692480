"""Counterfactual evaluation of explanations (Ge et al.): faithfulness via counterfactual validity and
proximity (C, C_soft) beside erasure metrics, ranked against a logistic-regression ground truth.

Modules: :mod:`.metrics` (every metric of Tables 1-3, Algorithms 1-2), :mod:`.runner` (models,
explainers and scores per seed), :mod:`.tables` (Tables 1-3 and the models table beside the paper's
values; checks of the printed tables), :mod:`.plots` (the rank-agreement figures) and :mod:`.claims`
(the paper's headline claims with verdicts).
"""
