#!/usr/bin/env python3
"""A day of a team's requests through `overhead serve --api-keys`, every request priced, then the
per-key report (docs/cost-model.md, "A day of requests priced per key").

Three keys with the shapes a team's day has: an interactive assistant (many short chats), a
nightly evaluation (MT-Bench prompts with long answers) and a summariser (long prompts, short
answers). The gateway runs the sim decoder for Llama 3.1 8B on one H100 (prefill and decode rates
of the server model) with the worker priced by `--price-instance m7i.large` (E) and
`--gpu h100-sxm --model llama-3.1-8b` (D from the profile), and its store is a fresh SQLite file;
the requests are sent as fast as the gateway answers them (the day's count, not its hours). Then
`overhead analyze --by key` prints E, D and the total per key.

    python3 bench/serve/priced_day.py build/overhead [--scale 1.0]
"""

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MODEL = "llama-3.3-70b-instruct"  # the tokenizer and template (Llama-3's); the profile priced is 8B's


def start(binary, work, store):
    log = open(os.path.join(work, "serve.log"), "w")
    proc = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--tokenizers", MODEL, "--api-keys", "--store", store,
                             "--out", work, "--decoder", "sim:prefill=20000,decode=2500", "--max-decodes", "64",
                             "--special-tokens-in-content", "allow", "--max-queued", "100000",
                             "--price-instance", "m7i.large", "--gpu", "h100-sxm", "--model", "llama-3.1-8b"], stderr=log)
    for _ in range(600):
        text = open(os.path.join(work, "serve.log")).read()
        if "listening on http://" in text:
            return proc, "http://" + text.split("listening on http://", 1)[1].split()[0].rstrip(")").split("/")[0]
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    raise SystemExit("the gateway did not start:\n" + open(os.path.join(work, "serve.log")).read())


def chat(url, secret, messages, max_tokens):
    body = json.dumps({"model": MODEL, "messages": messages, "max_tokens": max_tokens}).encode()
    req = urllib.request.Request(url + "/v1/chat/completions", data=body,
                                 headers={"Content-Type": "application/json", "Authorization": "Bearer " + secret})
    with urllib.request.urlopen(req, timeout=120) as r:
        return r.status


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies each key's request count")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="priced_day_")
    store = "sqlite:" + os.path.join(work, "serve.db")
    prompts = []
    with gzip.open(os.path.join(ROOT, "data", "jmtbench", "records.jsonl.gz"), "rt", encoding="utf-8") as f:
        for line in f:
            prompts.append(json.loads(line)["prompt"])
    secrets = {}
    for name in ("assistant", "nightly-eval", "summariser"):
        out = subprocess.run([a.binary, "keys", "create", "--store", store, "--name", name], capture_output=True, text=True, check=True)
        secrets[name] = out.stdout.strip().splitlines()[-1]
    proc, url = start(a.binary, work, store)
    try:
        long_text = " ".join(p[-1]["content"] for p in prompts[:40] if isinstance(p[-1].get("content"), str))[:12000]
        day = []
        for i in range(int(600 * a.scale)):  # short chats, short answers
            day.append(("assistant", [{"role": "user", "content": prompts[i % len(prompts)][-1]["content"]}], 120))
        for i in range(int(300 * a.scale)):  # whole MT-Bench conversations, long answers
            day.append(("nightly-eval", prompts[(i * 7) % len(prompts)], 800))
        for i in range(int(100 * a.scale)):  # long documents, short summaries
            day.append(("summariser", [{"role": "user", "content": "Summarise:\n" + long_text[i * 50:]}], 150))
        t0 = time.time()
        with ThreadPoolExecutor(16) as pool:
            statuses = list(pool.map(lambda d: chat(url, secrets[d[0]], d[1], d[2]), day))
        bad = [s for s in statuses if s != 200]
        print(f"{len(day)} requests in {time.time() - t0:.1f} s; {len(bad)} not 200", file=sys.stderr)
        time.sleep(3)  # the last records reach the store
    finally:
        proc.terminate()
        proc.wait(30)
    report = os.path.join(work, "report")
    subprocess.run([a.binary, "analyze", "--store", store, "--experiment", "serve", "--by", "key", "--out", report], check=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
