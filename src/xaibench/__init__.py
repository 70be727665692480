"""xaibench."""
