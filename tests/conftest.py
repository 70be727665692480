import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("XAIBENCH_QUIET", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def pytest_collection_modifyitems(config, items):
    """The notebook smoke runs first: they are the longest tests, so `make test`'s workers start with them (one
    xdist group per worker, balanced in tests/test_notebooks.py) and the short unit tests fill in around them."""
    items.sort(key=lambda item: 0 if "test_notebook_runs_in_quick_profile" in item.nodeid else 1)


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _restore_the_profile():
    """``use_profile`` sets ``XAIBENCH_PROFILE`` for the whole process (as a notebook needs): each test gets back
    the profile it started with, so a test that switched to the quick profile does not move another test's tables."""
    before = os.environ.get("XAIBENCH_PROFILE")
    yield
    if before is None:
        os.environ.pop("XAIBENCH_PROFILE", None)
    else:
        os.environ["XAIBENCH_PROFILE"] = before
