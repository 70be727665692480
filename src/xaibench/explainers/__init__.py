"""Explanation methods (see :mod:`xaibench.explainers.base` for the interface)."""
