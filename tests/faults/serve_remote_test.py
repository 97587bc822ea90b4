#!/usr/bin/env python3
"""The gateway over a shared Redis queue with its workers elsewhere: `overhead serve --workers 0`
sends every chat request to the input stream, naming its own reply stream; two `overhead worker`
processes and one `overhead consume` on the same Redis and PostgreSQL do the work, and answer on
the reply stream (the RPC pattern).

While requests are in flight one worker is SIGKILLed and started again: what it held comes back
after the visibility timeout, another worker answers it, and every waiting client still gets its
completion. Checks: every request answers 200 with `usage.prompt_tokens` equal to `overhead
tokenize --chat` on the same messages; a body naming a stream that is not a reply stream of the
input is dead-lettered (bad_message), not answered; every record is in PostgreSQL once; the input,
log and reply streams end empty with nothing pending; the gateway exits 0 on SIGTERM. Exit 0 when
all holds, 1 otherwise.
"""

import argparse
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

from services import Services, redact, stop_gracefully

TOKENIZER = "phi-4"
REQUESTS = 24
VISIBILITY_MS = 2000
# Each item waits the modelled decode of max_tokens at this rate, so that items are in a worker's
# hands when it is killed (10 tokens at 50 tok/s: 0.2 s per item).
DECODER = "sim:prefill=100000,decode=50"
MAX_TOKENS = 10


def messages(i):
    return [{"role": "user", "content": f"質問 {i}: 東京から大阪までの距離はおよそ何キロですか？"}]


def cli_chat_count(overhead, work, msgs):
    path = os.path.join(work, "messages.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"messages": msgs}, ensure_ascii=False) + "\n")
    out = subprocess.run([overhead, "tokenize", "--chat", "--tokenizer", TOKENIZER, "--input", path],
                         capture_output=True, text=True, timeout=120, check=True)
    return len(json.loads(out.stdout.splitlines()[0])["ids"])


def start_gateway(a, in_url, log_url, work):
    proc = subprocess.Popen([a.overhead, "serve", "--listen", "127.0.0.1:0", "--tokenizers", TOKENIZER, "--queue", in_url,
                             "--log-queue", log_url, "--workers", "0", "--out", work,
                             "--request-timeout", "60"], stderr=subprocess.PIPE, text=True)
    # "overhead serve: listening on http://127.0.0.1:PORT ...", after any notices (e.g. no Batch API
    # without --store).
    marker = "http://127.0.0.1:"
    seen = []
    for _ in range(20):
        line = proc.stderr.readline()
        seen.append(line.strip())
        if marker in line or not line:
            break
    if marker not in line:
        proc.kill()
        raise RuntimeError(f"the gateway did not start: {' | '.join(seen)}")
    port = int(line.split(marker, 1)[1].split()[0].rstrip(")").split("/")[0])
    # Keep draining stderr so the gateway never blocks on a full pipe.
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
    return proc, port, line.strip()


def post(port, path, body, timeout=90):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", path, json.dumps(body, ensure_ascii=False).encode(), {"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"null")
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--overhead", required=True)
    ap.add_argument("--redis-env", required=True)
    ap.add_argument("--postgres-env", required=True)
    ap.add_argument("--work-dir", required=True)
    a = ap.parse_args()

    svc = Services(a.redis_env, a.postgres_env)
    shutil.rmtree(a.work_dir, ignore_errors=True)
    os.makedirs(a.work_dir)
    tag = f"remote{os.getpid()}"
    params = f"visibility_ms={VISIBILITY_MS}&max_receives=10"
    in_stream, log_stream, tbl = f"{tag}-in", f"{tag}-log", f"{tag}_records"
    in_url = f"{svc.redis_env['REDIS_URL']}/{in_stream}?{params}"
    log_url = f"{svc.redis_env['REDIS_URL']}/{log_stream}?{params}"
    store_url = f"{svc.pg['PG_URL']}?table={tbl}"
    failures = []
    say = lambda text: print(redact(text, svc.secrets), flush=True)

    gateway, port, banner = start_gateway(a, in_url, log_url, a.work_dir)
    say(banner)
    marker = f"/{in_stream}-reply-"
    reply_stream = ""
    if marker in banner:
        suffix = banner.split(marker, 1)[1]
        for stop in "?) ":
            suffix = suffix.split(stop, 1)[0]
        reply_stream = f"{in_stream}-reply-{suffix}"
    if not reply_stream:
        failures.append("the gateway's banner names no reply stream")

    # Each worker holds at most a few items, so the requests spread over both and w1 holds some when
    # it is killed; and no worker stops for an idle moment (one that is slow to start, as under a
    # sanitizer, may find the other has taken everything so far).
    def worker(name):
        return subprocess.Popen([a.overhead, "worker", "--queue", in_url, "--log-queue", log_url, "--tokenizers", TOKENIZER,
                                 "--experiment", "serve", "--decoder", DECODER, "--name", name, "--out", a.work_dir,
                                 "--max-in-flight", "4", "--idle-exit", "600", "--no-progress"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    # A body naming a stream that is not this input's reply stream: no worker may write there. It is
    # also w1's first entry: w1 starts alone and is ready (tokenizers loaded, its Redis consumer
    # named) once it has taken it; then w2 starts.
    svc.redis("XADD", in_stream, "*", "b", json.dumps({"tokenizer": TOKENIZER, "line": 0, "id": "hostile", "model": TOKENIZER,
                                                       "usage": None, "prompt": messages(0), "reply_to": log_stream}))
    workers = {"w1": worker("w1")}

    def w1_has_read():
        return any(str(workers["w1"].pid) in name for name in svc.consumers(in_stream, "overhead"))

    deadline = time.time() + 60
    while time.time() < deadline and not w1_has_read():
        time.sleep(0.05)
    if not w1_has_read():
        failures.append("worker w1 did not read from the input stream within 60 s")
    workers["w2"] = worker("w2")
    consumer = subprocess.Popen([a.overhead, "consume", "--log-queue", log_url, "--store", store_url, "--out", a.work_dir,
                                 "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    results = [None] * REQUESTS

    def ask(i):
        try:
            results[i] = post(port, "/v1/chat/completions",
                              {"model": TOKENIZER, "messages": messages(i), "max_tokens": MAX_TOKENS})
        except Exception as e:  # noqa: BLE001 - reported as a failure below
            results[i] = (0, str(e))

    clients = [threading.Thread(target=ask, args=(i,)) for i in range(REQUESTS)]
    for t in clients:
        t.start()
    # Kill w1 once it holds received, unsettled entries (its Redis consumer is named after its pid).
    held = 0
    deadline = time.time() + 10
    while time.time() < deadline and held == 0:
        held = sum(n for name, n in svc.consumers(in_stream, "overhead").items() if str(workers["w1"].pid) in name)
        time.sleep(0.05)
    if held == 0:
        failures.append("worker w1 never held an entry: the kill would prove nothing")
    time.sleep(0.3)
    workers["w1"].send_signal(signal.SIGKILL)
    killed_rc = workers["w1"].wait()
    say(f"SIGKILLed worker w1 (exit {killed_rc}) holding {held}+ entries, with requests in flight; starting it again")
    workers["w1"] = worker("w1-restarted")
    for t in clients:
        t.join(120)

    ok = [r for r in results if r and r[0] == 200]
    say(f"{len(ok)} of {REQUESTS} requests answered 200")
    for i, r in enumerate(results):
        if not r or r[0] != 200:
            failures.append(f"request {i}: {r}")
    expected = {i: cli_chat_count(a.overhead, a.work_dir, messages(i)) for i in (0, 1, REQUESTS - 1)}
    for i, count in expected.items():
        got = results[i][1]["usage"]["prompt_tokens"] if results[i] and results[i][0] == 200 else None
        if got != count:
            failures.append(f"request {i}: usage.prompt_tokens {got}, `overhead tokenize --chat` says {count}")
        else:
            say(f"request {i}: usage.prompt_tokens {got} = `overhead tokenize --chat`")

    # Let the workers take what the killed one held (it comes back after the visibility timeout,
    # though its request may be answered already) and the consumer store the last records, then
    # stop everything.
    deadline = time.time() + 30
    busy = lambda s: svc.xlen(s) > 0 or svc.xpending(s, "overhead") > 0
    while time.time() < deadline and (busy(in_stream) or busy(log_stream)):
        time.sleep(0.2)
    for p in list(workers.values()) + [consumer]:
        p.send_signal(signal.SIGTERM)  # all at once; each is then waited for in turn
    for name, p in list(workers.items()) + [("consumer", consumer)]:
        rc, out = stop_gracefully(p, 30)
        say(f"{name}: exit {rc}\n{out.strip()}")
    # Last the gateway: a worker may answer a redelivered item a second time (at least once), and
    # the gateway's receiver must still be there to take that reply off its stream.
    deadline = time.time() + 10
    while time.time() < deadline and reply_stream and svc.xlen(reply_stream) > 0:
        time.sleep(0.1)
    gateway_rc, _ = stop_gracefully(gateway, 30)
    if gateway_rc != 0:
        failures.append(f"the gateway exited {gateway_rc} on SIGTERM")

    rows = svc.psql(f"SELECT id FROM {tbl}", check=False) or []
    ids = [r[0] for r in rows]
    say(f"{len(rows)} rows in PostgreSQL, {len(set(ids))} distinct ids")
    if len(rows) != REQUESTS or len(set(ids)) != REQUESTS or "hostile" in ids:
        failures.append(f"{len(rows)} rows ({len(set(ids))} distinct) in the store, expected the {REQUESTS} requests")
    dlq = svc.redis("XRANGE", f"{in_stream}-dlq", "-", "+")
    fields = [dict(zip(e[1][::2], e[1][1::2])) for e in dlq]
    reasons = [f.get("reason", "") for f in fields]
    say(f"input DLQ: {len(dlq)} entries {reasons}")
    # At least once: a worker killed after dead-lettering the body and before deleting it gives
    # the same source entry a second DLQ entry, never another message.
    if not dlq or len({f.get("source") for f in fields}) != 1 or not all("not a reply queue" in r for r in reasons):
        failures.append(f"the hostile body should be the only message in the input DLQ, found {reasons}")
    for s in (in_stream, log_stream, reply_stream):
        if s and (svc.xlen(s) != 0 or svc.xpending(s, "overhead") != 0):
            failures.append(f"{s}: {svc.xlen(s)} entries, {svc.xpending(s, 'overhead')} pending at the end")

    for f in failures:
        say(f"FAIL: {f}")
    say("PASS" if not failures else f"{len(failures)} failure(s)")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
