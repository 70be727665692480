"""Datasets: fetching, loaders and the CEBaB domain model."""
