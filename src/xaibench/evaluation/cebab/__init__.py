"""CEBaB (Abraham et al. 2022): concept-based explainers scored by ICaCE-Error against human edits.

Modules: :mod:`.metrics` (ICaCE/CaCE and the three distances), :mod:`.runner` (one (model, task,
seed) cell: fit, explain, score), :mod:`.tables` (dataset statistics, Table 8), :mod:`.plots`
(Tables 4/10 and Figures 2, 10-12) and :mod:`.claims` (the paper's headline claims with verdicts).
"""
