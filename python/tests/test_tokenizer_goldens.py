"""Ids, counts and decodes equal to HF tokenizers' (data/tok/golden, made by scripts/make_tok_goldens.sh)
for every tokenizer set, through the Python API: tok(text), encode, encode_batch, count, decode."""
import gzip

import pytest

from conftest import DATA, mtbench_records, read_jsonl, require_set, tokenizer

GOLDENS = DATA / "tok" / "golden"
NAMES = sorted({p.name.split(".corpus.")[0] for p in GOLDENS.glob("*.corpus.jsonl.gz")})


def test_every_golden_set_is_checked():
    assert len(NAMES) == 12, NAMES


def corpus_texts():
    return [r["text"] for r in read_jsonl(DATA / "tok" / "corpus.jsonl")]


def mtbench_messages():
    """Every message content, record by record, message by message (the goldens' order)."""
    return [m["content"] for r in mtbench_records() for m in r["prompt"]]


@pytest.mark.parametrize("name", NAMES)
def test_corpus(name):
    require_set(name)
    tok = tokenizer(name)
    texts = corpus_texts()
    golden = read_jsonl(GOLDENS / f"{name}.corpus.jsonl.gz")
    assert len(golden) == len(texts)
    batch = tok.encode_batch(texts, threads=2)
    batch_plain = tok.encode_batch(texts, add_special_tokens=False, threads=1)
    for text, g, ids, plain in zip(texts, golden, batch, batch_plain):
        where = f"{name} corpus line {g['line']}"
        assert ids == g["ids"], where
        assert plain == g["ids_no_special"], where
        assert tok(text)["input_ids"] == g["ids"], where
        assert tok(text, add_special_tokens=False)["input_ids"] == g["ids_no_special"], where
        assert tok.count(text) == len(g["ids"]), where
        assert tok.decode(g["ids"]) == g["decoded"], where
        assert tok.decode(g["ids"], skip_special_tokens=True) == g["decoded_skip_special"], where


@pytest.mark.parametrize("name", NAMES)
def test_mtbench_sample(name):
    """The MT-Bench messages the goldens keep with full ids (every 50th)."""
    require_set(name)
    tok = tokenizer(name)
    texts = mtbench_messages()
    for s in read_jsonl(GOLDENS / f"{name}.mtbench-sample.jsonl.gz"):
        assert tok.encode(texts[s["index"]]) == s["ids"], f"{name} MT-Bench message {s['index']}"


@pytest.mark.parametrize("name", ["llama-3.3-70b-instruct", "gemma-2-27b-it", "phi-4"])
def test_mtbench_counts(name):
    """Every MT-Bench message's id count, for the seed's tokenizers (all twelve sets are checked
    on every message by tests/tok/golden_mtbench_test.cpp; here the Python batch path)."""
    require_set(name)
    tok = tokenizer(name)
    texts = mtbench_messages()
    with gzip.open(GOLDENS / f"{name}.mtbench.tsv.gz", "rt", encoding="utf-8") as f:
        counts = [int(line.split("\t")[0]) for line in f if not line.startswith("#")]
    assert len(counts) == len(texts)
    ids = tok.encode_batch(texts)
    mismatched = [i for i, (got, want) in enumerate(zip(ids, counts)) if len(got) != want]
    assert not mismatched, f"{name}: {len(mismatched)} messages differ in count, first {mismatched[:5]}"
