#!/usr/bin/env python3
"""Writes one chat request body per MT-Bench record, {"model": MODEL, "messages": PROMPT}, one per
line, for the load generators (bench/serve/*.sh, tests/faults/serve_soak_test.py) to post in turn.

    python3 bench/serve/mtbench_bodies.py RECORDS.jsonl.gz MODEL OUT.jsonl
"""

import gzip
import json
import sys


def write_bodies(src, model, out):
    n = total = 0
    with gzip.open(src, "rt", encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
        for line in f:
            body = json.dumps({"model": model, "messages": json.loads(line)["prompt"]}, ensure_ascii=False)
            o.write(body + "\n")
            n += 1
            total += len(body.encode()) + 1
    return n, total


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    n, total = write_bodies(*sys.argv[1:4])
    print(f"{n} MT-Bench prompts, mean {total // max(n, 1)} bytes per body", file=sys.stderr)
