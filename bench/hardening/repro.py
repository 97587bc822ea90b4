#!/usr/bin/env python3
"""Replays the reproductions of issue 21's 14 defects against one `overhead` binary and prints, per
defect, what came back (status or exit code and the gist), the wall time and the peak resident
memory of the process that matters (the gateway for the HTTP defects, else the command), measured
by /usr/bin/time -v. Run it on an old build and a new one to compare (bench/hardening/repro.sh).

    python3 bench/hardening/repro.py BINARY [--only 1,3,12] [--work-dir DIR]

Everything runs on 127.0.0.1 in a temporary folder; each gateway is started for its defect and
stopped after it, so its peak RSS is that defect's. A reproduction that cannot run on the binary
(an option it does not know, say) prints what it said instead of a figure.
"""

import argparse
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOKENIZER = "phi-4"
CHAT = {"model": TOKENIZER, "messages": [{"role": "user", "content": "How far is Tokyo from Osaka?"}]}
ROWS = []


def row(defect, what, result, secs, rss_mb):
    ROWS.append((defect, what, result, secs, rss_mb))
    print(f"{defect:>3}  {what:<52} {result:<60} {secs:>8} {rss_mb:>9}", flush=True)


def fmt_s(s):
    return "-" if s is None else f"{s:.2f} s"


def fmt_mb(kb):
    return "-" if kb is None else f"{kb / 1024:.0f} MB"


def parse_time_v(text):
    """(peak RSS kB, signal or None) from /usr/bin/time -v's report."""
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    sig = re.search(r"Command terminated by signal (\d+)", text)
    return (int(m.group(1)) if m else None), (int(sig.group(1)) if sig else None)


def timed(cmd, timeout=120, stdin=None, env=None, keep_stdout=True):
    """Runs cmd under /usr/bin/time -v: (exit code or 'signal N' or 'timeout', seconds, peak kB, output)."""
    t0 = time.time()
    # A command whose output may be large writes it to a file, of which the first bytes are kept.
    sink = subprocess.PIPE if keep_stdout else tempfile.TemporaryFile()
    p = subprocess.Popen(["/usr/bin/time", "-v"] + cmd, stdin=stdin, stdout=sink, stderr=subprocess.PIPE, env=env)
    try:
        out, err = p.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        for child in children(p.pid):
            os.kill(child, signal.SIGKILL)
        out, err = p.communicate()
        timed_out = True
    secs = time.time() - t0
    err = err.decode(errors="replace")
    kb, sig = parse_time_v(err)
    report_at = err.find("\tCommand being timed")
    if not keep_stdout:
        sink.seek(0)
        out = sink.read(300)
        sink.close()
    output = (out or b"").decode(errors="replace") + (err[:report_at] if report_at >= 0 else err)
    rc = "timeout" if timed_out else (f"signal {sig}" if sig else p.returncode)
    if isinstance(rc, int) and rc != 0:
        m = re.search(r"Command exited with non-zero status (\d+)", err)
        rc = int(m.group(1)) if m else rc
    return rc, secs, kb, output


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


class Gateway:
    """`overhead serve` under /usr/bin/time -v on a free port; stop() gives its exit and peak RSS."""

    def __init__(self, binary, work, *args, env=None):
        self.work = tempfile.mkdtemp(dir=work)
        self.log_path = os.path.join(self.work, "serve.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(["/usr/bin/time", "-v", binary, "serve", "--listen", "127.0.0.1:0", "--tokenizers", TOKENIZER,
                                      "--out", self.work] + list(args), stdout=subprocess.DEVNULL, stderr=self.log, env=env)
        self.port = None
        for _ in range(600):
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", open(self.log_path).read())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        if self.port is None:
            self.stop()
            raise RuntimeError("the gateway did not start: " + open(self.log_path).read()[-400:])
        self.pid = (children(self.proc.pid) or [self.proc.pid])[0]

    def alive(self):
        return self.proc.poll() is None

    def stop(self, timeout=60):
        """SIGTERM; (exit, seconds to exit, peak kB, log)."""
        t0 = time.time()
        if self.proc.poll() is None:
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.proc.wait()
        secs = time.time() - t0
        self.log.close()
        text = open(self.log_path, errors="replace").read()
        kb, sig = parse_time_v(text)
        m = re.search(r"Command exited with non-zero status (\d+)", text)
        rc = f"signal {sig}" if sig else (int(m.group(1)) if m else 0)
        return rc, secs, kb, text

    def request(self, method, path, body=None, headers=None, timeout=60):
        """(status, parsed JSON or text, seconds); status 0 with the error when the connection failed."""
        t0 = time.time()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
            h = {"Content-Type": "application/json"} if data is not None else {}
            h.update(headers or {})
            conn.request(method, path, data, h)
            r = conn.getresponse()
            raw = r.read()
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = raw[:200].decode(errors="replace")
            return r.status, parsed, time.time() - t0
        except (OSError, http.client.HTTPException) as e:
            return 0, str(e), time.time() - t0
        finally:
            conn.close()


def err_code(body):
    return body.get("error", {}).get("code") if isinstance(body, dict) else str(body)[:40]


def nested(depth):
    return ('{"model":"%s","messages":[{"role":"user","content":"hi","x":' % TOKENIZER + "[" * depth + "]" * depth + "}]}").encode()


def d1(b, w):
    g = Gateway(b, w)
    st, body, secs = g.request("POST", "/v1/chat/completions", nested(200000))
    after = g.request("POST", "/v1/chat/completions", CHAT)[0] if g.alive() else 0
    rc, _, kb, _ = g.stop()
    row(1, "chat body nested 200,000 deep (400 KB)", f"{st or 'no answer'} {err_code(body) if st else ''}; next request {after or 'refused'}; "
        f"gateway exit {rc}", fmt_s(secs), fmt_mb(kb))


def d2(b, w):
    g = Gateway(b, w, "--max-queued", "4", "--request-timeout", "30")
    st, body, secs = g.request("POST", "/v1/chat/completions", nested(300))
    asyncs = [g.request("POST", "/v1/requests", nested(300))[0] for _ in range(5)]
    time.sleep(1)
    after, _, _ = g.request("POST", "/v1/chat/completions", CHAT)
    rc, _, kb, _ = g.stop()
    row(2, "depth 300 sync; 5 async at --max-queued 4; then chat", f"sync {st} {err_code(body)}; async {asyncs}; then chat {after}",
        fmt_s(secs), fmt_mb(kb))


def chunked_post(port, path, total, timeout=120):
    """POSTs `total` bytes as a chunked JSON body; (status or error, seconds, bytes sent)."""
    t0 = time.time()
    sock = socket.create_connection(("127.0.0.1", port), timeout)
    head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").encode()
    sent = 0
    status = None
    try:
        sock.sendall(head)
        prefix = ('{"model":"%s","prompt":"' % TOKENIZER).encode()
        piece = b"a" * (1 << 20)
        sock.sendall(b"%x\r\n%s\r\n" % (len(prefix), prefix))
        while sent < total:
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            sent += len(piece)
        tail = b'"}'
        sock.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(tail), tail))
    except OSError:
        pass  # the server stopped reading: its answer, if any, is waiting
    try:
        data = sock.recv(4096)
        status = int(data.split()[1]) if data.startswith(b"HTTP/") else f"closed ({len(data)} bytes)"
    except (OSError, IndexError, ValueError) as e:
        status = f"no answer ({type(e).__name__})"
    sock.close()
    return status, time.time() - t0, sent


def d3(b, w):
    g = Gateway(b, w)
    st1, s1, sent1 = chunked_post(g.port, "/v1/chat/completions", 200 << 20)
    st2, s2, sent2 = chunked_post(g.port, "/v1/tokenize", 20 << 20)
    time.sleep(1)
    rss_after = rss_kb(g.pid)
    rc, _, kb, _ = g.stop()
    row(3, "chunked 200 MB chat body; 20 MB chunked tokenize", f"{st1} after {sent1 >> 20} MiB sent; {st2} after {sent2 >> 20} MiB; "
        f"RSS after {fmt_mb(rss_after)}", f"{s1:.2f}+{s2:.2f} s", fmt_mb(kb))


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None


def d4(b, w):
    g = Gateway(b, w, "--read-timeout", "10")
    stop = threading.Event()

    def trickle():
        try:
            s = socket.create_connection(("127.0.0.1", g.port), 30)
            for ch in b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n":
                if stop.is_set():
                    break
                s.send(bytes([ch]))
                stop.wait(2)
            s.close()
        except OSError:
            pass

    ts = [threading.Thread(target=trickle) for _ in range(8)]
    for t in ts:
        t.start()
    time.sleep(3)
    hs, _, hsecs = g.request("GET", "/healthz", timeout=15)
    cs, _, csecs = g.request("POST", "/v1/chat/completions", CHAT, timeout=15)
    stop.set()
    for t in ts:
        t.join()
    rc, _, kb, _ = g.stop()
    row(4, "8 connections trickling a byte / 2 s; then health, chat", f"/healthz {hs or 'no answer'} in {hsecs:.2f} s; "
        f"chat {cs or 'no answer'} in {csecs:.2f} s", fmt_s(hsecs + csecs), fmt_mb(kb))


def d5(b, w):
    shown = []
    worst = (0, 0, 0)
    for url in ("redis://:hunter2#x@127.0.0.1:1/0", "redis://u:hun/ter2@127.0.0.1:1/0", "redis://u:hunter2?x@127.0.0.1:1/0"):
        rc, secs, kb, out = timed([b, "status", "--queue", url], timeout=60)
        secret = url.split(":")[2].split("@")[0]
        shown.append("shown" if secret in out or "hunter2" in out else "hidden")
        worst = max(worst, (secs, kb or 0, rc), key=lambda x: x[0])
    row(5, "status --queue with # / ? in the password", f"exit {worst[2]}; password {', '.join(shown)}", fmt_s(worst[0]),
        fmt_mb(worst[1]))


def d6(b, w):
    g = Gateway(b, w)
    ids = [g.request("POST", "/v1/requests", CHAT)[1].get("id", "") for _ in range(3)]
    rc, _, kb, _ = g.stop()
    hexes = [re.sub(r"^(req_|chatcmpl-)", "", i) for i in ids]
    row(6, "async ids (the only barrier between token sharers)", f"{', '.join(ids[:2])} ({len(hexes[0]) * 4} bits each)", "-",
        fmt_mb(kb))


def d7(b, w):
    # The cost model since the fix holds KV in a memory fraction of what the weights leave (17 GB
    # here): 32,400 tokens (10.6 GB) now fit one sequence and are priced at a batch of 1; 64,400
    # tokens (21.1 GB) cannot, and must be refused.
    for tokens in (32000, 64000):
        rc, secs, kb, out = timed([b, "cost", "--gpu", "h100-sxm", "--gpus", "2", "--model", "llama-3.3-70b",
                                   "--workload", f"in={tokens},out=400", "--e-us", "100,1"])
        said = gist(out) if rc != 0 else next((line.strip() for line in out.splitlines() if "usd_per_request" in line), "")
        row(7, f"cost --workload in={tokens},out=400, 2 x H100, 70B", f"exit {rc}: {said}", fmt_s(secs), fmt_mb(kb))


def gist(out, n=70):
    lines = [line.strip() for line in out.splitlines() if line.strip() and not line.startswith("Command exited")]
    text = next((line for line in lines if re.search(r"error|must|cannot|not|refus|\$", line, re.I)), lines[0] if lines else "")
    return text[:n]


def d8(b, w):
    rc, secs, kb, out = timed([b, "serve", "--listen", "127.0.0.1:0", "--out", w, "--request-timeout", "nan"], timeout=10)
    rc2, _, _, out2 = timed([b, "cost", "--gpu", "h100-sxm", "--model", "llama-3.1-8b", "--utilization", "nan", "--e-us", "100,1"])
    rc3, _, _, out3 = timed([b, "cost", "--gpu", "h100-sxm", "--model", "llama-3.1-8b", "--e-us", "1,2,3"])
    row(8, "serve --request-timeout nan; cost --utilization nan; --e-us 1,2,3",
        f"exit {rc}, {rc2}, {rc3}: {gist(out, 40)}", fmt_s(secs), fmt_mb(kb))


def d9(b, w):
    for n in ("1e7", "1e8"):
        rc, secs, kb, out = timed([b, "simulate", "--gpu", "h100-sxm", "--model", "llama-3.1-8b", "--rate", "10", "--e-us", "100,1",
                                   "--requests", str(int(float(n)))], timeout=300)
        row(9, f"simulate --requests {n}", f"exit {rc}" + ("" if rc in (0, "timeout") else f": {gist(out, 50)}"), fmt_s(secs), fmt_mb(kb))


def d10(b, w):
    path = os.path.join(w, "foreign.db")
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE notes (t TEXT)")
    con.execute("INSERT INTO notes VALUES ('mine')")
    con.commit()
    con.close()
    before = hashlib.md5(open(path, "rb").read()).hexdigest()
    rc, secs, kb, out = timed([b, "analyze", "--store", f"sqlite:{path}"])
    after = hashlib.md5(open(path, "rb").read()).hexdigest()
    extra = [s for s in ("-wal", "-shm") if os.path.exists(path + s)]
    row(10, "analyze --store sqlite:foreign.db", f"exit {rc}; file {'unchanged' if before == after else 'CHANGED'}"
        f"{'; made ' + ','.join(extra) if extra else ''}", fmt_s(secs), fmt_mb(kb))


def d11(b, w):
    g = Gateway(b, w, "--shutdown-timeout", "3", "--decoder", "sim:prefill=100000,decode=10", "--max-decodes", "64")
    results = []
    body = dict(CHAT, max_tokens=100)  # 10 s each at 10 tokens/s
    ts = [threading.Thread(target=lambda: results.append(g.request("POST", "/v1/chat/completions", body, timeout=60)[0])) for _ in range(8)]
    for t in ts:
        t.start()
    time.sleep(1.5)
    rc, secs, kb, _ = g.stop()
    for t in ts:
        t.join()
    stored = "?"
    db = os.path.join(g.work, "serve.db")
    if os.path.exists(db):
        stored = sqlite3.connect(db).execute("SELECT COUNT(*) FROM records").fetchone()[0]
    row(11, "SIGTERM with 8 requests in flight, --shutdown-timeout 3", f"exit {rc}; answers {sorted(results)}; rows stored {stored}",
        fmt_s(secs), fmt_mb(kb))


def d12(b, w):
    for mb in (25, 100):
        path = os.path.join(w, f"line{mb}.jsonl")
        with open(path, "w") as f:
            f.write('{"messages":[{"role":"user","content":"' + "x" * (mb * 1000000) + '"}]}\n')
        # The 100 MB line once at the default --max-line-bytes (64 MiB: refused) and once under a
        # limit above it, for the time and memory of reading it whole.
        for limit in ([], ["--max-line-bytes", "200000000"]) if mb == 100 else ([],):
            rc, secs, kb, out = timed([b, "template", "--tokenizer", TOKENIZER, "--input", path] + limit, timeout=300, keep_stdout=False)
            row(12, f"template on one {mb} MB line" + (" --max-line-bytes 2e8" if limit else ""),
                f"exit {rc}" + ("" if rc == 0 else f": {gist(out, 50)}"), fmt_s(secs), fmt_mb(kb))
        os.remove(path)
    rc, secs, kb, out = timed([b, "template", "--tokenizer", TOKENIZER, "--input", "/dev/zero"], timeout=20, keep_stdout=False)
    row(12, "template --input /dev/zero", f"exit {rc}" + ("" if rc in (0, "timeout") else f": {gist(out, 50)}"), fmt_s(secs), fmt_mb(kb))


def d13(b, w):
    token_file = os.path.join(w, "token")
    with open(token_file, "w") as f:
        f.write("s3cret\n")
    g = Gateway(b, w, "--auth-token-file", token_file)
    auth = {"Authorization": "Bearer s3cret"}
    out = {
        "bearer": g.request("POST", "/v1/tokenize", CHAT, {"Authorization": "bearer s3cret"})[0],
        "n=2": g.request("POST", "/v1/chat/completions", dict(CHAT, n=2), auth)[0],
        "logprobs": g.request("POST", "/v1/chat/completions", dict(CHAT, logprobs=True), auth)[0],
        "json_object": g.request("POST", "/v1/chat/completions", dict(CHAT, response_format={"type": "json_object"}), auth)[0],
        "detok 4e9": g.request("POST", "/v1/detokenize", {"model": TOKENIZER, "tokens": [1, 4000000000]}, auth)[0],
        "text/plain": g.request("POST", "/v1/tokenize", json.dumps(CHAT).encode(), dict(auth, **{"Content-Type": "text/plain"}))[0],
        "GET tokenize": g.request("GET", "/v1/tokenize", None, auth)[0],
    }
    rc, _, kb, _ = g.stop()
    row(13, "lowercase bearer; n, logprobs, json_object; ...", " ".join(f"{k} {v}" for k, v in out.items()), "-", fmt_mb(kb))


def d14(b, w):
    if shutil.which("wrk") is None:
        row(14, "200 kept-alive clients, 1 request / 100 ms each", "wrk missing", "-", "-")
        return
    g = Gateway(b, w, "--max-queued", "100000")
    bodies = os.path.join(w, "bodies.jsonl")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "serve", "mtbench_bodies.py"),
                    os.path.join(ROOT, "data", "jmtbench", "records.jsonl.gz"), TOKENIZER, bodies], check=True, stderr=subprocess.DEVNULL)
    t0 = time.time()
    out = subprocess.run(["wrk", "-t2", "-c200", "-d15s", "--timeout", "10s", "--latency", "-s",
                          os.path.join(ROOT, "bench", "serve", "wrk_paced.lua"), f"http://127.0.0.1:{g.port}/v1/chat/completions",
                          "--", bodies, "100"], capture_output=True, text=True).stdout
    secs = time.time() - t0
    rc, _, kb, _ = g.stop()
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p99 = re.search(r"99%\s+(\S+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    row(14, "200 kept-alive clients, 1 request / 100 ms each, 15 s", f"{rate.group(1) if rate else '?'} requests/s served "
        f"(2,000 offered), p99 {p99.group(1) if p99 else '?'}{'; ' + errors.group(1) if errors else ''}", fmt_s(secs), fmt_mb(kb))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--only", default="", help="comma-separated defect numbers (default: all 14)")
    ap.add_argument("--work-dir", default="")
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    work = a.work_dir or tempfile.mkdtemp(prefix="overhead-repro.")
    os.makedirs(work, exist_ok=True)
    only = {int(x) for x in a.only.split(",") if x}
    print(f"binary {binary}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average {os.getloadavg()[0]:.2f}", flush=True)
    print(f"{'#':>3}  {'reproduction':<52} {'result':<60} {'time':>8} {'peak RSS':>9}", flush=True)
    cases = [d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13, d14]
    for n, case in enumerate(cases, 1):
        if only and n not in only:
            continue
        try:
            case(binary, work)
        except Exception as e:  # noqa: BLE001 - one reproduction that cannot run is reported, the rest go on
            row(n, case.__name__, f"could not run: {str(e)[:80]}", "-", "-")
    print(f"load average at the end {os.getloadavg()[0]:.2f}", flush=True)
    if not a.work_dir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
