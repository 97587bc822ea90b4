"""The Python side of bench/tokenize_py_vs_hf.sh: overhead's Python package on the same texts as
the HF reference, in four ways a Python program encodes:
  call      tok(text)["input_ids"] for each text in a loop (the seed's way), one thread
  batch1    tok.encode_batch(texts, threads=1)
  batchN    tok.encode_batch(texts, threads=N)
  pyN       N Python threads (ThreadPoolExecutor), each calling tok(text) on its share of the
            texts: the GIL is released while the C++ tokenizer runs
One warm-up pass, then the median of --passes timed passes. Prints one JSON object per way with
the keys of `overhead bench tokenize --json`: mode, threads, mb_per_s, us_per_item, items, bytes, tokens.

  python3 bench/tokenize_py_bench.py --tokenizer NAME --input TEXTS.jsonl [--passes 5] [--threads N]
"""
import argparse
import json
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import overhead


def timed(passes, run):
    tokens = run()  # warm-up (and the count the timed passes must repeat)
    times = []
    for _ in range(passes):
        t0 = time.perf_counter()
        n = run()
        times.append(time.perf_counter() - t0)
        if n != tokens:
            raise SystemExit("token count changed between passes")
    return statistics.median(times), tokens


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    with open(a.input, encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f if line.strip()]
    nbytes = sum(len(t.encode("utf-8")) for t in texts)
    tok = overhead.Tokenizer.from_pretrained(a.tokenizer)

    def call():
        return sum(len(tok(t, add_special_tokens=True)["input_ids"]) for t in texts)

    def batch(threads):
        return lambda: sum(len(ids) for ids in tok.encode_batch(texts, threads=threads))

    # One slice of the texts per thread, each encoded text by text: N workers sharing one tokenizer.
    slices = [texts[i::a.threads] for i in range(a.threads)]

    def encode_slice(part):
        return sum(len(tok(t)["input_ids"]) for t in part)

    def python_threads():
        with ThreadPoolExecutor(max_workers=a.threads) as pool:
            return sum(pool.map(encode_slice, slices))

    ways = [("call", 1, call), ("batch1", 1, batch(1)), (f"batch{a.threads}", a.threads, batch(a.threads)),
            (f"py{a.threads}", a.threads, python_threads)]
    for mode, threads, run in ways:
        t, tokens = timed(a.passes, run)
        print(json.dumps({"impl": f"overhead {overhead.__version__} (Python)", "mode": mode, "threads": threads,
                          "mb_per_s": nbytes / t / 1e6, "us_per_item": t * 1e6 / len(texts), "items": len(texts),
                          "bytes": nbytes, "tokens": tokens, "passes": a.passes}))


if __name__ == "__main__":
    main()
