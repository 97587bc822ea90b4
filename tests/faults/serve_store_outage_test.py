#!/usr/bin/env python3
"""A store outage under steady gateway load: `overhead serve --workers 0` over Redis Streams, one
`overhead worker` and one `overhead consume` whose store is a private PostgreSQL. wrk offers a
steady rate of chat completions (8 in 10 synchronous, 2 in 10 asynchronous) throughout; after a
warm-up the PostgreSQL server is stopped (its postmaster shut down and gone, the port refusing
connections), left down for --outage seconds, then started again on the same port and data folder.

What must hold (the failure reported most against LLM proxies is logs buffered in memory during a
database outage until the process is killed):
- the resident memory of the gateway, the worker and the consumer stays flat: its maximum over
  the outage is at most its maximum over the warm-up's second half plus --max-growth-mb, and over
  the outage's second half at most its maximum over the outage's first half plus the same bound;
- what piles up instead is bounded: the log stream never holds much more than --max-log-backlog
  (past it the gateway answers 429 with Retry-After), and answers are 200, 202 or 429 only;
- nothing is lost: every request answered 200 or 202 has its row in PostgreSQL once the store is
  back, and no log message went to the log stream's dead-letter queue;
- the backlog drains: the input and log streams end empty with nothing pending;
- every process exits 0 on SIGTERM.
With keys on (docs/serve.md, "Keys, limits and budgets"): the gateway admits by an API key kept in
the same PostgreSQL (--api-keys, a budget, so its spend is read every refresh), and the key still
works through the outage (the keys last read stay in force); every stored row names the key and is
priced (cost_usd > 0), once, so the key's spend is whole; its secret is in no log.
Prints the samples as a table (time, phase, RSS of each process, log backlog, answers by status
so far). Exit 0 when all holds, 1 otherwise.
"""

import argparse
import glob
import gzip
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

from services import Services, read_env, redact, stop_gracefully  # noqa: E402 - beside this file

TOKENIZER = "phi-4"
T0 = time.time()
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
POSTGRES_SH = os.path.join(ROOT, "scripts", "services", "postgres.sh")


def write_bodies(data, model, out, limit):
    """One chat request body per MT-Bench record, the first `limit` of them (wrk posts them in turn)."""
    with gzip.open(data, "rt", encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
        for n, line in enumerate(f):
            if n == limit:
                break
            o.write(json.dumps({"model": model, "messages": json.loads(line)["prompt"]}, ensure_ascii=False) + "\n")


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user (the server runs as nobody under root)
        return True


def port_open(host, port):
    try:
        socket.create_connection((host, port), 1).close()
        return True
    except OSError:
        return False


def answers_so_far(url, auth):
    """{status: count} of the chat routes from the gateway's /metrics ({} when it does not answer)."""
    try:
        text = urllib.request.urlopen(urllib.request.Request(url + "/metrics", headers=auth), timeout=5).read().decode()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        if line.startswith("overhead_http_requests_total{") and ('route="/v1/chat/completions"' in line or 'route="/v1/requests"' in line):
            status = int(line.split('status="', 1)[1].split('"', 1)[0])
            out[status] = out.get(status, 0) + int(float(line.rsplit(" ", 1)[1]))
    return out


def start_gateway(a, in_url, log_url, store_url, log_path):
    log = open(log_path, "w")
    proc = subprocess.Popen([a.overhead, "serve", "--listen", "127.0.0.1:0", "--tokenizers", TOKENIZER, "--queue", in_url,
                             "--log-queue", log_url, "--workers", "0", "--out", a.work_dir,
                             "--max-log-backlog", str(a.max_log_backlog), "--request-timeout", "60",
                             "--api-keys", "--store", store_url, "--key-refresh", "1"], stderr=log)
    for _ in range(600):
        text = open(log_path).read()
        if "listening on http://" in text:
            return proc, "http://" + text.split("listening on http://", 1)[1].split()[0].rstrip(")").split("/")[0]
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"the gateway did not start: {open(log_path).read()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--overhead", required=True)
    ap.add_argument("--redis-env", required=True, help="the redis fixture's env file (its queues; PostgreSQL is private)")
    ap.add_argument("--data", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--warmup", type=float, default=10, help="seconds of load before the store stops")
    ap.add_argument("--outage", type=float, default=300, help="seconds the store is down")
    ap.add_argument("--after", type=float, default=10, help="seconds of load after the store is back")
    ap.add_argument("--rate", type=int, default=400, help="requests/s offered (steady, paced per connection)")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--max-log-backlog", type=int, default=20000)
    ap.add_argument("--sample-every", type=float, default=2)
    ap.add_argument("--max-growth-mb", type=float, default=16)
    ap.add_argument("--drain-timeout", type=float, default=120)
    a = ap.parse_args()
    if shutil.which("wrk") is None:
        print("FAIL: wrk is missing: run scripts/setup.sh (Debian package wrk)")
        return 1
    shutil.rmtree(a.work_dir, ignore_errors=True)
    os.makedirs(a.work_dir)
    pg_dir = os.path.join(a.work_dir, "pg")
    # initdb takes seconds on a busy machine: the request bodies are written meanwhile.
    pg_start = subprocess.Popen(["bash", POSTGRES_SH, "start", pg_dir], stdout=subprocess.DEVNULL)
    write_bodies(a.data, TOKENIZER, os.path.join(a.work_dir, "bodies.jsonl"), limit=1000)
    if pg_start.wait() != 0:
        print("FAIL: PostgreSQL did not start")
        return 1
    procs = {}
    try:
        return run(a, pg_dir, procs)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        # Its data is thrown away: an immediate shutdown (no checkpoint) before the clean-up.
        pid = read_env(os.path.join(pg_dir, "postgres.env")).get("PG_PID") if os.path.exists(os.path.join(pg_dir, "postgres.env")) else None
        if pid and alive(int(pid)):
            os.kill(int(pid), signal.SIGQUIT)
        subprocess.run(["bash", POSTGRES_SH, "clean", pg_dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(f"{time.time() - T0:.1f} s in all", flush=True)


def run(a, pg_dir, procs):
    pg_env = os.path.join(pg_dir, "postgres.env")
    svc = Services(a.redis_env, pg_env)
    say = lambda text: print(redact(text, svc.secrets), flush=True)
    failures = []
    tag = f"outage{os.getpid()}"
    # Visibility and receive limits as a deployment would set them: a consumer that re-received
    # its round every few seconds through a 5-minute outage would dead-letter it, which is the
    # failure this test looks for.
    params = "visibility_ms=5000&max_receives=5"
    in_stream, log_stream, tbl = f"{tag}-in", f"{tag}-log", f"{tag}_records"
    in_url = f"{svc.redis_env['REDIS_URL']}/{in_stream}?{params}"
    log_url = f"{svc.redis_env['REDIS_URL']}/{log_stream}?{params}"
    store_url = f"{svc.pg['PG_URL']}?table={tbl}"
    bodies = os.path.join(a.work_dir, "bodies.jsonl")

    # The API key the load is sent with, in the store that goes down (its budget far above what
    # the run spends: the spend is read, not limiting).
    made = subprocess.run([a.overhead, "keys", "create", "--store", store_url, "--name", "outage-key", "--budget-usd", "1000"],
                          capture_output=True, text=True, check=True)
    secret = made.stdout.strip().splitlines()[-1]
    svc.secrets.append(secret)
    auth = {"Authorization": f"Bearer {secret}"}
    procs["gateway"], url = start_gateway(a, in_url, log_url, store_url, os.path.join(a.work_dir, "serve.log"))
    logs = {}
    for name, cmd in (("worker", [a.overhead, "worker", "--queue", in_url, "--log-queue", log_url, "--tokenizers", TOKENIZER,
                                  "--experiment", "serve", "--name", "w1", "--idle-exit", "3600",
                                  "--price-cpu-usd-per-hour", "0.05"]),
                      ("consumer", [a.overhead, "consume", "--log-queue", log_url, "--store", store_url, "--idle-exit", "3600"])):
        logs[name] = open(os.path.join(a.work_dir, f"{name}.log"), "w")
        procs[name] = subprocess.Popen(cmd + ["--out", a.work_dir, "--no-progress"], stdout=logs[name], stderr=subprocess.STDOUT)
    first = open(bodies, encoding="utf-8").readline().encode()
    # One answered request before the clock starts: the worker has loaded its tokenizer.
    urllib.request.urlopen(urllib.request.Request(url + "/v1/chat/completions", data=first,
                                                  headers={"Content-Type": "application/json", **auth}), timeout=120).read()

    ids_dir = os.path.join(a.work_dir, "ids")
    os.makedirs(ids_dir)
    # wrk runs until it is interrupted --after seconds past the restart (SIGINT: it still prints its
    # summary); its own -d is only a backstop.
    total = a.warmup + a.outage + a.after + 600
    mean_ms = max(1, a.connections * 1000 // a.rate)
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve_outage.lua")
    wrk = subprocess.Popen(["wrk", "-t2", f"-c{a.connections}", f"-d{int(total)}s", "--timeout", "30s", "-s", script, url, "--",
                            bodies, str(mean_ms), ids_dir, secret], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wrk_out = []
    reader = threading.Thread(target=lambda: wrk_out.append(wrk.stdout.read()))
    reader.start()

    samples = []  # (t, phase, {name: RSS MiB}, log backlog, {status: count})
    phase = ["warm-up"]
    start = time.time()
    stop_sampling = threading.Event()

    def sample():
        own = Services(a.redis_env, pg_env)  # its own Redis connection: one connection is not shared by two threads
        names = ("gateway", "worker", "consumer")
        say(f"{'t (s)':>6} {'phase':>8} " + " ".join(f"{n + ' MiB':>12}" for n in names) + f" {'log stream':>10}  answers")
        while not stop_sampling.is_set():
            rss = {n: rss_mb(procs[n].pid) for n in names}
            try:
                backlog = own.xlen(log_stream)
            except Exception:  # noqa: BLE001 - a sample is skipped, not the test
                backlog = -1
            statuses = answers_so_far(url, auth)
            samples.append((time.time() - start, phase[0], rss, backlog, statuses))
            say(f"{samples[-1][0]:6.0f} {phase[0]:>8} " + " ".join(f"{rss[n]:12.1f}" for n in names) +
                f" {backlog:10d}  {dict(sorted(statuses.items()))}")
            stop_sampling.wait(a.sample_every)

    say(f"load starts {start - T0:.1f} s after the test began")
    sampler = threading.Thread(target=sample)
    sampler.start()
    time.sleep(a.warmup)

    pg_pid = int(read_env(pg_env)["PG_PID"])
    pg_port = int(svc.pg["PG_PORT"])
    # The fast shutdown ends every session at once and then checkpoints: the store is down from
    # the signal on, so the outage is counted from there.
    down_at = time.time()
    subprocess.run(["bash", POSTGRES_SH, "stop", pg_dir], check=True, stdout=subprocess.DEVNULL)
    phase[0] = "outage"
    if alive(pg_pid) or port_open("127.0.0.1", pg_port):
        failures.append(f"PostgreSQL (pid {pg_pid}) still runs or its port {pg_port} still answers after the stop")
    say(f"-- PostgreSQL stopped (pid {pg_pid} gone, port {pg_port} refusing {time.time() - down_at:.1f} s after the signal) "
        f"at t={down_at - start:.1f} s")
    time.sleep(max(0.0, a.outage - (time.time() - down_at)))
    if alive(pg_pid) or port_open("127.0.0.1", pg_port):
        failures.append("PostgreSQL came back during the outage")
    subprocess.run(["bash", POSTGRES_SH, "start", pg_dir], check=True, stdout=subprocess.DEVNULL)
    up_at = time.time()
    phase[0] = "back"
    new_port = int(read_env(pg_env)["PG_PORT"])
    say(f"-- PostgreSQL started again (pid {read_env(pg_env)['PG_PID']}, port {new_port}) after {up_at - down_at:.1f} s down")
    if new_port != pg_port:
        failures.append(f"PostgreSQL came back on port {new_port}, not {pg_port}")

    time.sleep(a.after)
    wrk.send_signal(signal.SIGINT)
    try:
        wrk.wait(30)
    except subprocess.TimeoutExpired:
        wrk.kill()
        failures.append("wrk did not stop on SIGINT")
    reader.join()
    phase[0] = "drain"
    report = wrk_out[0] if wrk_out else ""
    say(report.strip())
    drain_deadline = time.time() + a.drain_timeout
    busy = lambda s: svc.xlen(s) > 0 or svc.xpending(s, "overhead") > 0
    while time.time() < drain_deadline and (busy(in_stream) or busy(log_stream)):
        time.sleep(0.5)
    drained_at = time.time()
    stop_sampling.set()
    sampler.join()

    for name in ("worker", "consumer", "gateway"):
        t0 = time.time()
        rc, _ = stop_gracefully(procs[name], 60)
        say(f"{name}: exit {rc} {time.time() - t0:.1f} s after SIGTERM")
        if rc != 0:
            failures.append(f"{name} exited {rc} on SIGTERM")
    for f in logs.values():
        f.close()

    # Answers.
    statuses = {}
    for line in report.splitlines():
        if line.startswith("status "):
            code, n = line[len("status "):].split(":")
            statuses[int(code)] = int(n)
    say(f"answers by status (wrk): {dict(sorted(statuses.items()))}")
    if "Socket errors" in report:
        failures.append(f"wrk: socket errors {report.split('Socket errors', 1)[1].splitlines()[0].strip(': ')}")
    if {c for c in statuses if c not in (200, 202, 429)} or not statuses.get(200):
        failures.append(f"answers other than 200/202/429, or no 200 at all: {statuses}")
    by_phase = {}
    prev = {}
    for _, ph, _, _, st in samples:
        if st:
            d = by_phase.setdefault(ph, {})
            for code, n in st.items():
                d[code] = d.get(code, 0) + n - prev.get(code, 0)
            prev = st
    say(f"answers by phase (from /metrics, sampled): {by_phase}")

    # Memory.
    warm = [s for s in samples if s[1] == "warm-up" and s[0] >= a.warmup / 2]
    outage = [s for s in samples if s[1] == "outage"]
    half = down_at - start + (up_at - down_at) / 2
    early_outage = [s for s in outage if s[0] < half]
    late_outage = [s for s in outage if s[0] >= half]
    if not warm or len(early_outage) < 2 or len(late_outage) < 2:
        failures.append(f"too few memory samples ({len(samples)}) for the phases")
    else:
        for name in ("gateway", "worker", "consumer"):
            w = max(s[2][name] for s in warm)
            e = max(s[2][name] for s in early_outage)
            late = max(s[2][name] for s in late_outage)
            o = max(e, late)
            series = [s[2][name] for s in samples]
            say(f"RSS {name}: warm-up max {w:.1f} MiB, outage max {o:.1f} (first half {e:.1f}, second half {late:.1f}), "
                f"min/median/max over the run {min(series):.1f}/{sorted(series)[len(series) // 2]:.1f}/{max(series):.1f} MiB")
            if o - w > a.max_growth_mb or late - e > a.max_growth_mb:
                failures.append(f"{name}: resident memory grew over the outage ({w:.1f} -> {e:.1f} -> {late:.1f} MiB; "
                                f"allowed +{a.max_growth_mb:.0f})")
    max_backlog = max((s[3] for s in samples), default=0)
    say(f"log stream: at most {max_backlog} entries sampled (--max-log-backlog {a.max_log_backlog})")
    # Past the limit only requests already admitted, and the 50 ms between two reads of the depth,
    # can add to it: a margin of one limit's tenth plus a thousand is far above that.
    if max_backlog > a.max_log_backlog * 1.1 + 1000:
        failures.append(f"the log stream grew to {max_backlog} entries, past --max-log-backlog {a.max_log_backlog}")
    if not by_phase.get("outage", {}).get(429):
        say("note: no 429 during the outage (the backlog stayed under --max-log-backlog)")

    # Records.
    answered = []
    for path in sorted(glob.glob(os.path.join(ids_dir, "ids-*.txt"))):
        with open(path) as f:
            answered += [line.strip() for line in f if line.strip()]
    rows = svc.psql(f"SELECT id FROM {tbl}", check=False)
    if rows is None:
        failures.append("the store cannot be read after the outage")
        rows = []
    stored = {r[0] for r in rows}
    missing = [i for i in answered if i not in stored]
    say(f"{len(answered)} requests answered 200/202 ({len(set(answered))} distinct ids); {len(rows)} rows in PostgreSQL; "
        f"{len(missing)} answered and not stored")
    if not answered:
        failures.append("no request was answered 200/202")
    if missing or len(set(answered)) != len(answered):
        failures.append(f"{len(missing)} answered requests have no row (first: {missing[:3]}); "
                        f"{len(answered) - len(set(answered))} ids answered twice")
    if len(stored) != len(rows):
        failures.append(f"{len(rows) - len(stored)} ids stored twice")
    # The key's spend: every row charged to it and priced, once.
    charged = svc.psql(f"SELECT COUNT(*), COALESCE(SUM(cost_usd), 0) FROM {tbl} WHERE key_name = 'outage-key' AND cost_usd > 0",
                       check=False)
    charged_rows, spend = (int(charged[0][0]), float(charged[0][1])) if charged else (0, 0.0)
    say(f"key outage-key: {charged_rows} priced rows of {len(rows)}, spend ${spend:.3e}")
    if charged_rows != len(rows):
        failures.append(f"{len(rows) - charged_rows} rows are not charged to the key or not priced")

    # Queues.
    caught_up = next((t for t, ph, _, backlog, _ in samples if t >= up_at - start and 0 <= backlog <= a.max_log_backlog // 100), None)
    say(f"log stream back under 1% of --max-log-backlog {'%.1f' % (caught_up - (up_at - start)) if caught_up is not None else '?'} s "
        f"after the store came back (sampled; under load); streams empty {drained_at - up_at:.1f} s after it (load stopped "
        f"{a.after:.0f} s after it)")
    for s in (in_stream, log_stream):
        if busy(s):
            failures.append(f"{s}: {svc.xlen(s)} entries, {svc.xpending(s, 'overhead')} pending {a.drain_timeout:.0f} s after the load")
        if svc.exists(f"{s}-dlq") and svc.xlen(f"{s}-dlq") > 0:
            failures.append(f"{s}-dlq holds {svc.xlen(f'{s}-dlq')} messages")
    out_logs = {n: redact(open(os.path.join(a.work_dir, f"{n}.log")).read(), svc.secrets) for n in ("worker", "consumer")}
    say("consumer log (last lines):\n" + "\n".join(out_logs["consumer"].strip().splitlines()[-6:]))
    for n in ("worker", "consumer", "serve"):
        text = open(os.path.join(a.work_dir, f"{n}.log")).read()
        if any(secret and secret in text for secret in svc.secrets):
            failures.append(f"{n}.log shows a password")
    for stream in (in_stream, log_stream, f"{in_stream}-dlq", f"{log_stream}-dlq"):
        svc.redis("DEL", stream)
    for key in svc.redis("KEYS", f"{in_stream}-reply-*") or []:
        svc.redis("DEL", key)

    for f in failures:
        say(f"FAIL: {f}")
    say(f"load average {os.getloadavg()[0]:.2f}")
    say("PASS" if not failures else f"{len(failures)} failure(s)")
    if not failures:
        shutil.rmtree(os.path.join(a.work_dir, "ids"), ignore_errors=True)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
