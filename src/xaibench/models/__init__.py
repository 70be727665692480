"""Classifiers (see :mod:`xaibench.models.base`)."""
