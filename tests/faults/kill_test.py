#!/usr/bin/env python3
"""Kill test on Redis Streams + PostgreSQL: nothing lost, nothing duplicated.

Enqueues the MT-Bench records for the three seed tokenizers into one Redis input stream, runs
`overhead worker` and `overhead consume` processes against it, a log stream and one PostgreSQL
table, and SIGKILLs a random worker or consumer at random moments (seeded; the seed is printed),
restarting each at once. Then it checks that:

  * every (tokenizer, id) is in PostgreSQL exactly once, with its processing stamps in order;
  * the input and log streams and their dead-letter streams hold no entries, and no pending ones;
  * `overhead status --json` agrees (nothing waiting, in flight, or dead-lettered);
  * every last incarnation of a process exited 0.

The items are enqueued before the processes start. Each kill hits a worker or a consumer (a coin
flip) at a random point of that kind's progress (inputs deleted, log messages settled), so it
falls while work remains however fast the machine is. The victim is one of that kind holding
entries of its stream at that moment (XINFO CONSUMERS), else one that has received at all, so a
kill orphans real work rather than a process still loading its tokenizers.

Exit 0 when every check holds, 1 when one fails, 2 on a usage error. Passwords never appear in the
output: URLs are printed with `***`.
"""

import argparse
import gzip
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

from services import Services, redact

ROLES = []  # every process slot of the run, so an early exit still ends them
SEED_TOKENIZERS = ["llama-3.3-70b-instruct", "gemma-2-27b-it", "phi-4"]


class Role:
    """One worker or consumer slot: its current process and its incarnations."""

    def __init__(self, name, kind, make_cmd, work_dir):
        self.name, self.kind, self.make_cmd, self.work_dir = name, kind, make_cmd, work_dir
        self.incarnation = 0
        self.proc = None
        self.started = 0.0
        self.logs = []

    def start(self):
        self.incarnation += 1
        tag = f"{self.name}.{self.incarnation}"
        log_path = os.path.join(self.work_dir, "logs", tag + ".log")
        self.logs.append(log_path)
        with open(log_path, "wb") as log:
            self.proc = subprocess.Popen(self.make_cmd(tag), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.started = time.monotonic()

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


def load_lines(data, limit):
    """The first `limit` (0 = all) non-blank JSONL lines of the data file."""
    opener = gzip.open if data.endswith(".gz") else open
    lines = []
    with opener(data, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                lines.append(line)
                if limit and len(lines) == limit:
                    break
    return lines


def table(headers, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    line = lambda cells: "| " + " | ".join(str(c).rjust(w) for c, w in zip(cells, widths)) + " |"
    return "\n".join([line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in rows])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--overhead", required=True, help="the overhead binary")
    ap.add_argument("--redis-env", required=True, help="redis.env written by scripts/services/redis.sh")
    ap.add_argument("--postgres-env", required=True, help="postgres.env written by scripts/services/postgres.sh")
    ap.add_argument("--data", required=True, help="the MT-Bench records (JSONL, .gz ok)")
    ap.add_argument("--limit", type=int, default=0, help="first N records only (0 = all)")
    ap.add_argument("--kills", type=int, default=10, help="SIGKILLs while work remains (at least this many)")
    ap.add_argument("--seed", type=int, default=None, help="RNG seed (default: from the clock; always printed)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--consumers", type=int, default=2)
    ap.add_argument("--visibility-ms", type=int, default=2000, help="visibility timeout of both streams")
    ap.add_argument("--max-receives", type=int, default=10, help="deliveries before an entry moves to the DLQ")
    ap.add_argument("--timeout", type=float, default=300, help="give up after this many seconds")
    ap.add_argument("--work-dir", required=True, help="folder for logs and dead-letter files (emptied first)")
    ap.add_argument("--keep", action="store_true", help="keep the streams and the table afterwards")
    a = ap.parse_args()
    if a.kills < 0 or a.workers < 1 or a.consumers < 1 or a.limit < 0 or a.visibility_ms < 100:
        ap.error("--kills >= 0, --workers/--consumers >= 1, --limit >= 0, --visibility-ms >= 100")

    seed = a.seed if a.seed is not None else int(time.time() * 1000) % 1_000_000_007
    rng = random.Random(seed)
    svc = Services(a.redis_env, a.postgres_env)
    run_tag = f"kill{os.getpid()}x{seed}"
    group = "kill"
    params = f"group={group}&visibility_ms={a.visibility_ms}&max_receives={a.max_receives}"
    in_stream, log_stream, tbl = f"{run_tag}-in", f"{run_tag}-log", f"{run_tag}_records".replace("-", "_")
    in_url = f"{svc.redis_env['REDIS_URL']}/{in_stream}?{params}"
    log_url = f"{svc.redis_env['REDIS_URL']}/{log_stream}?{params}"
    store_url = f"{svc.pg['PG_URL']}?table={tbl}"
    experiment = "kill"
    # A worker exits when its stream stayed empty this long: longer than a visibility timeout, so
    # the entries a killed peer held come back (and are taken) before the last worker leaves.
    idle_exit = max(3.0, 2.5 * a.visibility_ms / 1000)
    say = lambda text: print(redact(text, svc.secrets), flush=True)

    shutil.rmtree(a.work_dir, ignore_errors=True)
    os.makedirs(os.path.join(a.work_dir, "logs"))
    out_dir = os.path.join(a.work_dir, "out")

    lines = load_lines(a.data, a.limit)
    ids = [json.loads(line)["id"] for line in lines]
    expected = {(t, i) for t in SEED_TOKENIZERS for i in ids}
    say(f"kill test: seed {seed}; {len(ids)} records x {len(SEED_TOKENIZERS)} tokenizers = {len(expected)} items; "
        f"{a.workers} workers, {a.consumers} consumers, {a.kills} kills; "
        f"visibility {a.visibility_ms} ms, max_receives {a.max_receives}")
    say(f"  input {in_url}\n  log   {log_url}\n  store {store_url}")
    t0 = time.monotonic()
    deadline = t0 + a.timeout

    # All items go out before any process starts: the kills fall into a backlog, as when a fleet
    # works through a large batch.
    enq = subprocess.run([a.overhead, "enqueue", "--queue", in_url, "--data", a.data, "--limit", str(a.limit),
                          "--tokenizers", ",".join(SEED_TOKENIZERS), "--out", out_dir], capture_output=True, text=True)
    say("  " + (enq.stdout + enq.stderr).strip())
    if enq.returncode != 0 or svc.xlen(in_stream) != len(expected):
        say(f"FAIL: enqueue exited {enq.returncode}; the input stream holds {svc.xlen(in_stream)} of {len(expected)}")
        return 1

    worker_cmd = lambda tag: [a.overhead, "worker", "--queue", in_url, "--log-queue", log_url, "--experiment", experiment,
                              "--tokenizers", ",".join(SEED_TOKENIZERS), "--name", tag, "--idle-exit", str(idle_exit),
                              "--out", out_dir, "--no-progress", "--allow-failures"]
    # Consumers run until told to stop (SIGTERM, graceful): in a deployment they never leave, and
    # an idle exit could leave while every worker is reloading after a kill.
    consumer_cmd = lambda tag: [a.overhead, "consume", "--log-queue", log_url, "--store", store_url, "--idle-exit",
                                "86400", "--out", os.path.join(out_dir, tag), "--no-progress", "--allow-failures"]
    roles = ROLES
    roles += [Role(f"worker{i}", "worker", worker_cmd, a.work_dir) for i in range(a.workers)]
    roles += [Role(f"consumer{i}", "consumer", consumer_cmd, a.work_dir) for i in range(a.consumers)]
    for r in roles:
        r.start()

    def stored():
        rows = svc.psql(f"SELECT count(*) FROM {tbl}", check=False)
        return int(rows[0][0]) if rows else 0

    def holdings():
        """{role name: (registered with its stream, entries it holds)} of the running roles."""
        cons = {"worker": svc.consumers(in_stream, group), "consumer": svc.consumers(log_stream, group)}
        out = {}
        for r in roles:
            if not r.running():
                continue
            mine = [n for n in cons[r.kind] if f":{r.proc.pid}:" in n]
            out[r.name] = (bool(mine), sum(cons[r.kind][n] for n in mine))
        return out

    def give_up(why):
        say(f"FAIL: {why}")
        for r in roles:
            if r.running():
                r.kill()
        for r in roles:
            for p in r.logs[-2:]:
                with open(p, encoding="utf-8", errors="replace") as f:
                    say(f"--- {os.path.basename(p)} (last lines)\n" + "".join(f.readlines()[-5:]))
        return 1

    def consumers_alive():
        for r in roles:
            if r.kind == "consumer" and not r.running():
                return f"{r.name} exited on its own with code {r.proc.returncode}"
        return None

    # Ready = a worker and a consumer have each read from their stream (a worker has loaded its
    # tokenizers); the kills may start from there.
    while True:
        if time.monotonic() > deadline:
            return give_up("timeout before a worker and a consumer were ready")
        if (quit := [r for r in roles if not r.running()]):
            return give_up(f"{quit[0].name} exited before it was ready, code {quit[0].proc.returncode}")
        held = holdings()
        if all(any(held[r.name][0] for r in roles if r.kind == kind) for kind in ("worker", "consumer")):
            break
        time.sleep(0.1)
    ready = time.monotonic()
    say(f"  ready after {ready - t0:.1f} s")

    # The schedule: each kill's kind (worker or consumer) is a coin flip, and its moment a random
    # point of that kind's progress (inputs the workers have deleted, log messages the consumers
    # have settled), so each falls while its kind still has work however fast the machine is, and
    # a stall (every worker reloading after a kill) holds the next kill back too. Progress is read
    # from Redis alone, on one connection, so the test looks many times a second.
    plan = {"worker": [], "consumer": []}
    for _ in range(a.kills):
        plan[rng.choice(["worker", "consumer"])].append(int(rng.uniform(0.03, 0.9) * len(expected)))
    for marks in plan.values():
        marks.sort()

    def progress():
        log_len = svc.xlen(log_stream)
        return {"worker": len(expected) - svc.xlen(in_stream), "consumer": svc.entries_added(log_stream) - log_len,
                "log_len": log_len}

    kills = []
    killed_tags = set()  # the incarnations that died by SIGKILL (= their --name for workers)
    while plan["worker"] or plan["consumer"]:
        if time.monotonic() > deadline:
            return give_up(f"timeout during the kills (stored {stored()} of {len(expected)})")
        if (why := consumers_alive()):
            return give_up(why)
        done = progress()
        if done["worker"] >= len(expected) and done["log_len"] == 0:
            return give_up(f"the run finished before {len(plan['worker']) + len(plan['consumer'])} of the kills: "
                           "use more items")
        due = [k for k in plan if plan[k] and done[k] >= plan[k][0]]
        # The victim, of the due kind: a process holding entries of its stream right now if one
        # does; else one that has read from it (not one still loading its tokenizers).
        held = holdings()
        pool = []
        if due:
            kind = due[0]
            mine = {n: v for n, v in held.items() if n.startswith(kind)}
            pool = [n for n, (_, pending) in mine.items() if pending > 0] or [n for n, (reg, _) in mine.items() if reg]
        if not pool:
            time.sleep(0.01)
            continue
        plan[kind].pop(0)
        chosen = rng.choice(sorted(pool))
        victim = next(r for r in roles if r.name == chosen)
        pending, old_pid = held[chosen][1], victim.proc.pid
        killed_tags.add(f"{victim.name}.{victim.incarnation}")
        victim.kill()
        when = time.monotonic() - t0
        victim.start()
        kills.append((len(kills) + 1, f"{when:.1f}", victim.name, old_pid, pending, done["worker"], done["consumer"],
                      victim.proc.pid))
        say(f"  kill {len(kills):2d} at {when:6.1f} s: {victim.name} pid {old_pid} held {pending} entries; "
            f"inputs done {done['worker']}, log messages settled {done['consumer']}; restarted as pid {victim.proc.pid}")

    # The workers leave on their own once the input stayed empty; then the consumers drain the
    # log stream, and are stopped once nothing is waiting or in flight there.
    while any(r.running() for r in roles if r.kind == "worker"):
        if time.monotonic() > deadline:
            return give_up(f"timeout waiting for the workers (stored {stored()} of {len(expected)})")
        time.sleep(0.2)
    while svc.xlen(log_stream) > 0 or svc.xpending(log_stream, group) > 0:
        if time.monotonic() > deadline:
            return give_up(f"timeout draining the log stream (stored {stored()} of {len(expected)})")
        if not any(r.running() for r in roles if r.kind == "consumer"):
            return give_up("every consumer exited before the log stream was drained")
        time.sleep(0.2)
    for r in roles:
        if r.running() and r.kind == "consumer":
            r.proc.send_signal(signal.SIGTERM)
    for r in roles:
        try:
            r.proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return give_up(f"{r.name} did not stop after SIGTERM")
    duration = time.monotonic() - t0

    # --- the checks ---
    failures = []
    rows = svc.psql(f"SELECT tokenizer, id, experiment_tokenizer FROM {tbl}")
    got = [(t, i) for t, i, _ in rows]
    got_set = set(got)
    bad_keys = [r for r in rows if r[2] != f"{experiment}#{r[0]}"]
    missing = expected - got_set
    extra = got_set - expected
    duplicates = len(got) - len(got_set)
    (bad_stamps, no_acked, no_deleted, workers_seen), = svc.psql(
        f"SELECT count(*) FILTER (WHERE token_count <= 0 OR received <= 0 OR render_start < received OR "
        f"render_end < render_start OR encode_end < render_end OR publish_start < encode_end OR "
        f"start_time = '' OR end_time = '' OR end_time < start_time OR worker = '' OR case_number <> 5), "
        f"count(*) FILTER (WHERE publish_acked <= 0), count(*) FILTER (WHERE input_deleted <= 0), "
        f"count(DISTINCT worker) FROM {tbl}")
    streams = {}
    for s in (in_stream, log_stream, in_stream + "-dlq", log_stream + "-dlq"):
        exists = svc.exists(s)
        streams[s] = (svc.xlen(s) if exists else 0, svc.xpending(s, group) if exists and not s.endswith("-dlq") else 0)
    status = subprocess.run([a.overhead, "status", "--queue", in_url, "--queue", log_url, "--json"],
                            capture_output=True, text=True)
    status_rows = json.loads(status.stdout) if status.returncode == 0 else []
    exit_codes = {r.name: r.proc.returncode for r in roles}

    if missing:
        failures.append(f"{len(missing)} item(s) missing from the store, e.g. {sorted(missing)[:3]}")
    if extra:
        failures.append(f"{len(extra)} unexpected item(s) in the store, e.g. {sorted(extra)[:3]}")
    if duplicates:
        failures.append(f"{duplicates} duplicate row(s)")
    if bad_keys:
        failures.append(f"{len(bad_keys)} row(s) whose experiment_tokenizer is not {experiment}#<tokenizer>")
    if int(bad_stamps):
        failures.append(f"{bad_stamps} row(s) without their processing stamps in order")
    for s, (length, pending) in streams.items():
        if length or pending:
            failures.append(f"stream {s} holds {length} entries, {pending} pending")
    if status.returncode != 0 or len(status_rows) != 2:
        failures.append("overhead status --json failed: " + redact(status.stderr.strip(), svc.secrets))
    for q in status_rows:
        if q.get("waiting") or q.get("in_flight") or q.get("dead_letters"):
            failures.append(f"overhead status: {q}")
    for name, code in exit_codes.items():
        if code != 0:
            failures.append(f"{name} (last incarnation) exited {code}")
    # What the processes printed: never a password, and no server notice (noise in every log).
    for r in roles:
        for path in r.logs:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            if any(secret and secret in text for secret in svc.secrets):
                failures.append(f"a password shows in {os.path.basename(path)}")
            if "NOTICE:" in text:
                failures.append(f"{os.path.basename(path)} holds a server NOTICE line")
    if len(kills) < a.kills:
        failures.append(f"only {len(kills)} of {a.kills} kills happened")
    # A kill between a worker's delete of its input and the stamp patch it sends next loses that
    # patch: the record stays, without publish_acked/input_deleted. That costs measurements, not
    # records, so it is allowed, but only in rows written by a worker incarnation that was killed:
    # in any other row a missing stamp is a patch lost without a crash.
    worker_kills = sum(1 for k in kills if k[2].startswith("worker"))
    unpatched = svc.psql(f"SELECT worker, count(*) FROM {tbl} WHERE publish_acked <= 0 OR input_deleted <= 0 "
                         f"GROUP BY worker ORDER BY worker")
    unexplained = [(w, n) for w, n in unpatched if w not in killed_tags]
    if unexplained:
        failures.append(f"rows without publish_acked/input_deleted from workers that were not killed: {unexplained}")

    print()
    say(table(["kill", "at s", "victim", "pid", "entries held", "inputs done", "log msgs settled", "new pid"], kills))
    print()
    say(table(["what", "count"], [
        ("items enqueued", len(expected)),
        ("rows in the store", len(got)),
        ("distinct (tokenizer, id)", len(got_set)),
        ("missing", len(missing)),
        ("unexpected", len(extra)),
        ("rows with processing stamps out of order", bad_stamps),
        ("rows without publish_acked (lost stamp patch)", no_acked),
        ("rows without input_deleted (lost stamp patch)", no_deleted),
        ("... of them from a worker not killed (must be 0)", sum(int(n) for _, n in unexplained)),
        ("worker names in the records", workers_seen),
        ("kills (workers / consumers)", f"{len(kills)} ({worker_kills} / {len(kills) - worker_kills})"),
        ("input stream entries / pending", "%d / %d" % streams[in_stream]),
        ("log stream entries / pending", "%d / %d" % streams[log_stream]),
        ("DLQ entries (input, log); expected 0, 0", f"{streams[in_stream + '-dlq'][0]}, {streams[log_stream + '-dlq'][0]}"),
        ("duration s", f"{duration:.1f}"),
    ]))
    print()
    if failures:
        for f in failures:
            say("FAIL: " + f)
        say(f"(seed {seed}; logs in {a.work_dir}/logs; streams {in_stream}, {log_stream} and table {tbl} kept)")
        return 1
    if not a.keep:
        svc.redis("DEL", in_stream, log_stream, in_stream + "-dlq", log_stream + "-dlq")
        svc.psql(f"DROP TABLE IF EXISTS {tbl}")
    say(f"PASS: {len(expected)} items stored exactly once through {len(kills)} kills in {duration:.1f} s (seed {seed})")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        # Whatever went wrong, no process of ours outlives the test.
        for role in ROLES:
            if role.running():
                role.kill()
