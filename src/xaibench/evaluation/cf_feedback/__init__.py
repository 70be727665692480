"""Counterfactuals of counterfactuals (Filandrianos et al. 2023): feeding counterfactual editors their
own output.

Modules: :mod:`.metrics` (minimality, inconsistency inc@n, flip rate, t-tests), :mod:`.runner`
(editor chains over the test texts, fluency, Tables 1-5) and :mod:`.claims`.
"""
