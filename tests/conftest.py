import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("XAIBENCH_QUIET", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
