"""Semi-natural ground truth for feature attributions (Zhou et al., AAAI 2022).

Domain-general framework (used by the text and the image experiments alike):

* :mod:`.reassign` -- label reassignment (binary keep-probability ``r``; k-class matrix) and the
  accuracy a classifier can reach *without* the manipulation (``max(r, 1-r)``), with the
  finite-test-set tail bound;
* :mod:`.regions` -- effective regions (ER) of manipulations, the joint ER, and the check that a
  manipulation changed nothing outside its ER;
* :mod:`.metrics` -- Attr% (share of absolute attribution inside the ER), precision/recall of
  selected features against the ER, and the Shapley-value range of Sec. 5.4 / App. B.6.

The text instantiation (article datasets, attention and rationale models) lives in
:mod:`.text_data`, :mod:`.text_runner`, :mod:`.text_eval` and :mod:`.text_plots`; the image one (bird
manipulations, saliency) in :mod:`.manipulations`, :mod:`.image_runner` and :mod:`.image_plots`.
:mod:`.tables` builds the result tables, :mod:`.claims` checks the paper's headline claims against them.
"""
from .metrics import METRICS, Metric, attr_pct, precision_recall, shapley_manipulation_range, shapley_two_player
from .reassign import (accuracy_bound, accuracy_bound_binary, binary_reassignment_matrix, finite_test_tail,
                       reassign_labels, reassign_labels_binary)
from .regions import changed_mask, check_inside_er, joint_er

__all__ = ["METRICS", "Metric", "attr_pct", "precision_recall", "shapley_manipulation_range",
           "shapley_two_player", "accuracy_bound", "accuracy_bound_binary", "binary_reassignment_matrix",
           "finite_test_tail", "reassign_labels", "reassign_labels_binary", "changed_mask", "check_inside_er",
           "joint_er"]
