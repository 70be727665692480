"""Benchmarks (``make bench``): wall time, forward passes and peak memory, written to
``figures/tables/bench_<name>.csv`` (and a Markdown rendering beside it).

One entry point, ``python -m xaibench.bench <name>`` (:mod:`xaibench.bench.__main__`), and one
module per benchmark:

* :mod:`~xaibench.bench.training` -- one CEBaB fine-tuning run per (model, task), each in a fresh
  subprocess that reports its own peak RSS;
* :mod:`~xaibench.bench.cebab` -- the eight concept explainers on one trained 5-way MiniLM, cold cache;
* :mod:`~xaibench.bench.attribution` -- every local explainer (seconds and forward passes per
  explanation) on the CNN and MiniLM;
* :mod:`~xaibench.bench.faithfulness` -- Ge et al.: seconds per explanation and counterfactual search;
* :mod:`~xaibench.bench.attribution_gt` -- Zhou et al. 2022: attention / rationale training and
  attribution time per model and method;
* :mod:`~xaibench.bench.editors` -- seconds and predictor calls per edit step of each counterfactual editor;
* :mod:`~xaibench.bench.make_all` -- what the last full ``make all`` cost, per notebook and paper.
* :mod:`~xaibench.bench.timings` -- no measurement: ``docs/timings.md`` and the README's timing table,
  generated from the bench tables (the last step of ``make bench``).

This is the top layer: it may import every other part of xaibench.
"""
from __future__ import annotations

from .common import MACHINE_KEYS, write_bench_table

__all__ = ["MACHINE_KEYS", "write_bench_table"]
