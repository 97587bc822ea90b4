"""Shared paths and loaders for the tests of the `overhead` Python package.

The tests read the repository's fixtures and goldens (data/), the fetched tokenizer sets
($OVERHEAD_MODELS or models/ of the clone) and, for the error-message checks, the `overhead`
command ($OVERHEAD_BINARY or build/overhead). A tokenizer set that is not fetched skips its tests.
"""
import gzip
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
MODELS = Path(os.environ.get("OVERHEAD_MODELS", ROOT / "models"))
BINARY = Path(os.environ.get("OVERHEAD_BINARY", ROOT / "build" / "overhead"))

# The seed's tokenizers, by the HF ids its records carry, and the bundled sets they stand for.
SEED_TOKENIZERS = {
    "meta-llama/Llama-3.3-70B-Instruct": "llama-3.3-70b-instruct",
    "google/gemma-2-27b-it": "gemma-2-27b-it",
    "microsoft/phi-4": "phi-4",
}
# Folders of the tokenizer sets, by the short names the goldens use (tok/resolve.cpp's aliases).
SET_DIRS = {
    "llama-3.3-70b-instruct": "llama-3.3-70b-instruct", "gemma-2-27b-it": "gemma-2-27b-it", "phi-4": "phi-4",
    "gemma-3": "raw/gemma3", "llama-3": "raw/llama3", "cl100k": "raw/gpt35turbo", "o200k": "raw/gpt4o",
    "llama3": "raw/llama3", "llama3_1": "raw/llama3_1", "gemini": "raw/gemini", "gpt35turbo": "raw/gpt35turbo",
    "gpt4o": "raw/gpt4o",
}


def set_dir(name):
    return MODELS / SET_DIRS.get(name, name)


def require_set(name):
    if not (set_dir(name) / "tokenizer.json").is_file():
        pytest.skip(f"tokenizer files not fetched: {name} (scripts/setup.sh)")


def read_jsonl(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


_records = None


def mtbench_records():
    """data/jmtbench/records.jsonl.gz, read once per session (6,784 records)."""
    global _records
    if _records is None:
        _records = read_jsonl(DATA / "jmtbench" / "records.jsonl.gz")
    return _records


_tokenizers = {}


def tokenizer(name, **kwargs):
    """One loaded tokenizer per (name, options) for the whole session, as a server keeps one."""
    import overhead

    key = (name, tuple(sorted(kwargs.items())))
    if key not in _tokenizers:
        _tokenizers[key] = overhead.Tokenizer.from_pretrained(name, **kwargs)
    return _tokenizers[key]
