#!/usr/bin/env python3
"""Soak of `overhead serve` on the embedded default: wrk keeps it busy for a while with real
MT-Bench prompts over chat completions (synchronous and asynchronous) and tokenize, while the
gateway's resident memory is sampled every few seconds.

Checks: every answer is 200 or 202, or 429 when asynchronous requests outran the worker past
--max-queued (the bound that keeps the backlog in memory finite); no connection failed; the
gateway stored records; it exits 0 on SIGTERM; and memory is flat: the resident size over the last quarter of the
run is at most the one over the third quarter plus --max-growth-mb. The first half is warm-up: allocator arenas,
SQLite's page cache and the reply box's kept asynchronous answers (the newest 10,000) fill up
there; at 700-900 asynchronous requests/s the box alone is full only after 11-14 s, inside a 30 s run's second
quarter, so a second quarter compared with the last measured the box filling, not a leak. A leak of a few hundred
bytes per request still shows: the last quarter alone serves 20,000-30,000 requests.
Prints the samples as a table. Exit 0 when all holds, 1 otherwise.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "serve"))
from mtbench_bodies import write_bodies  # noqa: E402 - the bench scripts' body writer, shared
from services import stop_gracefully  # noqa: E402 - beside this file; connects to nothing on import

TOKENIZER = "phi-4"


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--overhead", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--seconds", type=int, default=300)
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--sample-every", type=float, default=5.0)
    ap.add_argument("--max-growth-mb", type=float, default=16.0)
    ap.add_argument("--work-dir", required=True)
    a = ap.parse_args()
    if shutil.which("wrk") is None:
        print("FAIL: wrk is missing: run scripts/setup.sh (Debian package wrk)")
        return 1
    shutil.rmtree(a.work_dir, ignore_errors=True)
    os.makedirs(a.work_dir)
    bodies = os.path.join(a.work_dir, "bodies.jsonl")
    write_bodies(a.data, TOKENIZER, bodies)

    log_path = os.path.join(a.work_dir, "serve.log")
    log = open(log_path, "w")
    # 522 of the 6,784 MT-Bench conversations hold phi-4 special-token text (earlier answers of models
    # that wrote <|im_end|> into their text), which the gateway refuses by default: the soak replays
    # them as they are, so every route sees the whole data set.
    server = subprocess.Popen([a.overhead, "serve", "--listen", "127.0.0.1:0", "--tokenizers", TOKENIZER, "--out", a.work_dir,
                               "--special-tokens-in-content", "allow"],
                              stderr=log)
    url = None
    for _ in range(600):
        text = open(log_path).read()
        if "listening on http://" in text:
            url = "http://" + text.split("listening on http://", 1)[1].split()[0]
            break
        time.sleep(0.1)
    if url is None:
        server.kill()
        print(f"FAIL: the gateway did not start:\n{open(log_path).read()}")
        return 1
    first = open(bodies, encoding="utf-8").readline().encode()
    for route in ("/v1/tokenize", "/v1/chat/completions"):  # loads the binding before the clock starts
        urllib.request.urlopen(urllib.request.Request(url + route, data=first, headers={"Content-Type": "application/json"}), timeout=120).read()

    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve_soak.lua")
    # A long timeout: a shared machine can stall a request for seconds, which is not a failure here.
    wrk = subprocess.Popen(["wrk", "-t2", f"-c{a.connections}", f"-d{a.seconds}s", "--timeout", "30s", "-s", script, url, "--", bodies],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wrk_out = []
    reader = threading.Thread(target=lambda: wrk_out.append(wrk.stdout.read()))
    reader.start()
    samples = []  # (seconds since start, RSS MiB)
    start = time.time()
    print(f"{'t (s)':>6} {'RSS (MiB)':>10}", flush=True)
    while wrk.poll() is None:
        samples.append((time.time() - start, rss_mb(server.pid)))
        print(f"{samples[-1][0]:6.0f} {samples[-1][1]:10.1f}", flush=True)
        time.sleep(a.sample_every)
    reader.join()
    report = wrk_out[0] if wrk_out else ""
    print(report.strip())
    failures = []
    if "Socket errors" in report:
        failures.append(f"wrk: socket errors {report.split('Socket errors', 1)[1].splitlines()[0].strip(': ')}")
    statuses = {}
    for line in report.splitlines():
        if line.startswith("status "):
            code, n = line[len("status "):].split(":")
            statuses[int(code)] = int(n)
    print(f"answers by status: {dict(sorted(statuses.items()))}")
    unexpected = {c: n for c, n in statuses.items() if c not in (200, 202, 429)}
    if unexpected or not statuses.get(200):
        failures.append(f"answers other than 200/202/429, or no 200 at all: {statuses}")
    requests = 0
    for line in report.splitlines():
        if "requests in" in line:
            requests = int(line.split()[0])
    if requests == 0:
        failures.append("wrk completed no request")

    quarter = [s for s in samples if s[0] >= a.seconds / 2 and s[0] < 3 * a.seconds / 4]
    last = [s for s in samples if s[0] >= 3 * a.seconds / 4]
    if len(quarter) < 2 or len(last) < 2:
        failures.append(f"too few memory samples ({len(samples)}) for --seconds {a.seconds}")
    else:
        early, late = max(r for _, r in quarter), max(r for _, r in last)
        print(f"RSS: third quarter max {early:.1f} MiB, last quarter max {late:.1f} MiB (growth {late - early:+.1f} MiB, "
              f"allowed {a.max_growth_mb:.1f}); median over the run {statistics.median(r for _, r in samples):.1f} MiB; "
              f"{requests} requests in {a.seconds} s ({requests / a.seconds:.0f}/s); load {os.getloadavg()[0]:.2f}")
        if late - early > a.max_growth_mb:
            failures.append(f"resident memory grew {late - early:.1f} MiB between the third and the last quarter")

    rc, _ = stop_gracefully(server, 60)
    if rc != 0:
        failures.append(f"the gateway exited {rc} on SIGTERM")
    log.close()
    db = os.path.join(a.work_dir, "serve.db")
    stored = int(subprocess.run(["sqlite3", db, "SELECT COUNT(*) FROM records"], capture_output=True, text=True).stdout.strip() or 0)
    print(f"{stored} records stored")
    if stored == 0:
        failures.append("no record was stored")
    for f in failures:
        print(f"FAIL: {f}")
    print("PASS" if not failures else f"{len(failures)} failure(s)")
    shutil.rmtree(a.work_dir, ignore_errors=True)  # the store of a long soak is large
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
