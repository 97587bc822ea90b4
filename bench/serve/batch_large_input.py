#!/usr/bin/env python3
"""A batch input of SIZE MiB through `overhead serve`: the gateway's memory while it takes the file
(OpenAI's Uploads API, as `overhead batch submit` sends it, in 64 MiB parts), validates it and
sends it to the batch lane, against the same for a file a tenth of the size. Memory that does not
grow with the file is the claim (docs/serve.md "Large inputs"): the parts, the pieces read back and
the lane's window are bounded, the file is not.

    python3 bench/serve/batch_large_input.py [SIZE_MIB=1024] [SMALL_MIB=SIZE/10]
    env: OVERHEAD_BINARY (default build/overhead)

Lines are chat requests of about SIZE/50,000 bytes each (50,000 lines: OpenAI's and the gateway's
--max-batch-lines). The decoder is the simulator (the engine is not what is measured); the batch is
cancelled once the lane holds its first window, so the run measures taking, validating and sending.
Prints a table: phase times and the gateway's peak resident memory (VmHWM, and VmRSS sampled every
50 ms) per phase.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

BINARY = os.environ.get("OVERHEAD_BINARY", "build/overhead")
MODEL = "llama-3.3-70b-instruct"
LINES = 50000


def write_input(path, size_mib):
    """LINES chat requests of equal size adding up to about size_mib MiB."""
    per_line = size_mib * 1024 * 1024 // LINES
    words = [f"w{k % 997}" for k in range(per_line // 4)]
    with open(path, "w") as f:
        for i in range(LINES):
            prefix = {"custom_id": f"big-{i}", "method": "POST", "url": "/v1/chat/completions",
                      "body": {"model": MODEL, "max_tokens": 4, "messages": [{"role": "user", "content": ""}]}}
            head = json.dumps(prefix)
            room = max(0, per_line - len(head) - 1)
            text = " ".join(words)[:room]
            prefix["body"]["messages"][0]["content"] = f"{i} {text}"
            f.write(json.dumps(prefix) + "\n")
    return os.path.getsize(path)


def memory_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        m = re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.M)
    return int(m.group(1)) if m else 0


class Sampler(threading.Thread):
    """The gateway's VmRSS every 50 ms; peak() since the last mark()."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.stop, self.top = pid, False, 0

    def run(self):
        while not self.stop:
            try:
                self.top = max(self.top, memory_kib(self.pid, "VmRSS"))
            except OSError:
                return
            time.sleep(0.05)

    def mark(self):
        top, self.top = self.top, 0
        return top


def get(url):
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.loads(r.read())


def post(url):
    req = urllib.request.Request(url, data=b"", method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def measure(size_mib, work):
    path = os.path.join(work, f"in-{size_mib}.jsonl")
    size = write_input(path, size_mib)
    out = os.path.join(work, f"out-{size_mib}")
    gateway = subprocess.Popen([BINARY, "serve", "--listen", "127.0.0.1:0", "--tokenizers", MODEL, "--out", out,
                                "--decoder", "sim:prefill=200000,decode=20000", "--max-body-bytes", str(1 << 20),
                                "--shutdown-timeout", "2"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = None
    for line in gateway.stdout:
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            base = m.group(1).rstrip("/")
            break
    threading.Thread(target=lambda: [None for _ in gateway.stdout], daemon=True).start()
    if not base:
        sys.exit("the gateway did not start")
    sampler = Sampler(gateway.pid)
    sampler.start()
    time.sleep(0.5)
    row = {"file MiB": size / (1 << 20), "idle RSS MiB": sampler.mark() / 1024}
    t0 = time.time()
    sub = subprocess.run([BINARY, "batch", "submit", path, "--part-bytes", str(64 << 20), "--url", base],
                         capture_output=True, text=True)
    if sub.returncode != 0:
        sys.exit(sub.stderr)
    batch = json.loads(sub.stdout)
    row["upload s"] = time.time() - t0
    row["upload RSS MiB"] = sampler.mark() / 1024
    t1 = time.time()
    while True:
        b = get(f"{base}/v1/batches/{batch['id']}")
        if b["status"] != "validating":
            break
        time.sleep(0.2)
    if b["status"] != "in_progress":
        sys.exit(f"the batch is {b['status']}: {json.dumps(b.get('errors'))[:400]}")
    row["validate s"] = time.time() - t1
    row["validate RSS MiB"] = sampler.mark() / 1024
    time.sleep(3)  # the first windows sent, the workers answering
    metrics = urllib.request.urlopen(f"{base}/metrics", timeout=10).read().decode()
    row["lines sent"] = int(re.search(r"^overhead_batch_lines_sent_total (\d+)$", metrics, re.M).group(1))
    row["send RSS MiB"] = sampler.mark() / 1024
    post(f"{base}/v1/batches/{batch['id']}/cancel")
    row["VmHWM MiB"] = memory_kib(gateway.pid, "VmHWM") / 1024
    sampler.stop = True
    gateway.terminate()
    gateway.wait(timeout=30)
    os.remove(path)
    return row


def main():
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    small = int(sys.argv[2]) if len(sys.argv) > 2 else max(1, size // 10)
    with tempfile.TemporaryDirectory(prefix="overhead-large-input-") as work:
        rows = [measure(small, work), measure(size, work)]
    keys = list(rows[0].keys())
    print("| " + " | ".join(["measure"] + [f"{r['file MiB']:.0f} MiB input" for r in rows]) + " |")
    print("|---|" + "---|" * len(rows))
    for k in keys[1:]:
        print("| " + " | ".join([k] + [f"{r[k]:.1f}" if isinstance(r[k], float) else str(r[k]) for r in rows]) + " |")
    print(f"\nVmHWM ratio (large / small input): {rows[1]['VmHWM MiB'] / rows[0]['VmHWM MiB']:.2f}"
          f" for a file {rows[1]['file MiB'] / rows[0]['file MiB']:.1f}x larger")


if __name__ == "__main__":
    main()
