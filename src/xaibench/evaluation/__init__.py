"""Evaluation protocols and metrics."""
