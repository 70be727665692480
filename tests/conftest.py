import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("XAIBENCH_QUIET", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def pytest_collection_modifyitems(config, items):
    """The notebook smoke runs first: they are the longest tests, so `make test`'s workers start with them (one
    xdist group per worker, balanced in tests/test_notebooks.py) and the short unit tests fill in around them."""
    items.sort(key=lambda item: 0 if "test_notebook_runs_in_quick_profile" in item.nodeid else 1)
