#!/usr/bin/env python3
"""Kill test on SQS + DynamoDB (the emulators, behind their SigV4 proxies): nothing lost, nothing
duplicated.

Enqueues the MT-Bench records for the three seed tokenizers into one sqs:// input queue, runs
`overhead worker` and `overhead consume` processes against it, an sqs:// log queue and one
dynamodb:// table, and SIGKILLs a random worker or consumer at random moments (seeded; the seed
is printed), restarting each at once. Meanwhile the proxies answer a small share of this run's
requests with throttling or 5xx errors (--fault-rate), so the retries run under the kills too.
Then it checks that:

  * every (tokenizer, id) is in the table exactly once, under experiment_tokenizer = EXPERIMENT#TOKENIZER;
  * the input and log queues are empty (nothing visible, nothing in flight) and so are their DLQs;
  * `overhead status --json` agrees;
  * every request of the run passed the proxies' signature check, and the faults were made;
  * every last incarnation of a process exited 0.

SQS does not say which consumer holds a message, so the victim is any running process of the
due kind that has been up for a moment (past its tokenizer load); each kill falls at a random
point of that kind's progress (inputs done; log messages settled), so it lands while work remains.

Exit 0 when every check holds, 1 when one fails, 2 on a usage error.
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

from aws_services import AwsServices, control
from kill_test import ROLES, SEED_TOKENIZERS, Role, load_lines, table
from services import redact


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--overhead", required=True, help="the overhead binary")
    ap.add_argument("--aws-env", required=True, help="aws.env written by scripts/services/aws_emulators.sh")
    ap.add_argument("--data", required=True, help="the MT-Bench records (JSONL, .gz ok)")
    ap.add_argument("--limit", type=int, default=0, help="first N records only (0 = all)")
    ap.add_argument("--kills", type=int, default=10, help="SIGKILLs while work remains (at least this many)")
    ap.add_argument("--seed", type=int, default=None, help="RNG seed (default: from the clock; always printed)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--consumers", type=int, default=2)
    ap.add_argument("--visibility-ms", type=int, default=2000, help="visibility timeout of both queues (whole seconds on SQS)")
    ap.add_argument("--max-receives", type=int, default=10, help="deliveries before a message moves to the DLQ")
    ap.add_argument("--fault-rate", type=float, default=0.02,
                    help="share of this run's requests the proxies answer with throttling, and again with 5xx")
    ap.add_argument("--min-uptime", type=float, default=1.0, help="a victim has run at least this long (s)")
    ap.add_argument("--timeout", type=float, default=300, help="give up after this many seconds")
    ap.add_argument("--work-dir", required=True, help="folder for logs (emptied first)")
    ap.add_argument("--keep", action="store_true", help="keep the queues and the table afterwards")
    a = ap.parse_args()
    if a.kills < 0 or a.workers < 1 or a.consumers < 1 or a.limit < 0 or a.visibility_ms < 1000 or not 0 <= a.fault_rate < 0.5:
        ap.error("--kills >= 0, --workers/--consumers >= 1, --limit >= 0, --visibility-ms >= 1000, 0 <= --fault-rate < 0.5")

    seed = a.seed if a.seed is not None else int(time.time() * 1000) % 1_000_000_007
    rng = random.Random(seed)
    run_tag = f"awskill{os.getpid()}x{seed}"
    # This run's own key pair: the proxies learn it now, and its faults touch no other test.
    # The driver's own checks sign with a second pair, which meets no fault.
    key_id, secret = f"AKID{run_tag.upper()}", f"kill-secret-{rng.getrandbits(64):016x}"
    driver_id, driver_secret = key_id + "DRIVER", f"driver-secret-{rng.getrandbits(64):016x}"
    svc = AwsServices(a.aws_env, driver_id, driver_secret)
    svc.secrets.append(secret)
    for endpoint in (svc.sqs_endpoint, svc.ddb_endpoint):
        control(endpoint, "keys", {"accessKeyId": key_id, "secretAccessKey": secret})
        control(endpoint, "keys", {"accessKeyId": driver_id, "secretAccessKey": driver_secret})
        if a.fault_rate > 0:
            for kind in ("throttle", "5xx"):
                control(endpoint, "faults", {"kind": kind, "key": key_id, "probability": a.fault_rate})
    child_env = dict(os.environ, AWS_ACCESS_KEY_ID=key_id, AWS_SECRET_ACCESS_KEY=secret, AWS_EC2_METADATA_DISABLED="true")
    child_env.pop("AWS_SESSION_TOKEN", None)
    say = lambda text: print(redact(text, svc.secrets), flush=True)

    in_q, log_q, tbl = f"{run_tag}-in", f"{run_tag}-log", f"{run_tag}-records"
    common = f"region={svc.region}&visibility_ms={a.visibility_ms}&max_receives={a.max_receives}&wait_s=1&create=1"
    in_url = f"sqs://{in_q}?endpoint={svc.sqs_endpoint}&{common}"
    log_url = f"sqs://{log_q}?endpoint={svc.sqs_endpoint}&{common}"
    store_url = f"dynamodb://{tbl}?region={svc.region}&endpoint={svc.ddb_endpoint}&create=1&tokenizers={','.join(SEED_TOKENIZERS)}"
    experiment = "kill"
    idle_exit = max(4.0, 2.5 * a.visibility_ms / 1000)

    shutil.rmtree(a.work_dir, ignore_errors=True)
    os.makedirs(os.path.join(a.work_dir, "logs"))
    out_dir = os.path.join(a.work_dir, "out")

    lines = load_lines(a.data, a.limit)
    ids = [json.loads(line)["id"] for line in lines]
    expected = {(t, i) for t in SEED_TOKENIZERS for i in ids}
    say(f"aws kill test: seed {seed}; {len(ids)} records x {len(SEED_TOKENIZERS)} tokenizers = {len(expected)} items; "
        f"{a.workers} workers, {a.consumers} consumers, {a.kills} kills; visibility {a.visibility_ms} ms, "
        f"max_receives {a.max_receives}; proxy faults {a.fault_rate:.0%} throttling + {a.fault_rate:.0%} 5xx")
    say(f"  input {in_url}\n  log   {log_url}\n  store {store_url}")
    t0 = time.monotonic()
    deadline = t0 + a.timeout

    enq = subprocess.run([a.overhead, "enqueue", "--queue", in_url, "--data", a.data, "--limit", str(a.limit),
                          "--tokenizers", ",".join(SEED_TOKENIZERS), "--out", out_dir],
                         capture_output=True, text=True, env=child_env)
    say("  " + (enq.stdout + enq.stderr).strip())
    if enq.returncode != 0 or svc.queued(in_q) != len(expected):
        say(f"FAIL: enqueue exited {enq.returncode}; the input queue holds {svc.queued(in_q)} of {len(expected)}")
        return 1

    worker_cmd = lambda tag: [a.overhead, "worker", "--queue", in_url, "--log-queue", log_url, "--experiment", experiment,
                              "--tokenizers", ",".join(SEED_TOKENIZERS), "--name", tag, "--idle-exit", str(idle_exit),
                              "--out", out_dir, "--no-progress", "--allow-failures"]
    consumer_cmd = lambda tag: [a.overhead, "consume", "--log-queue", log_url, "--store", store_url, "--idle-exit",
                                "86400", "--out", os.path.join(out_dir, tag), "--no-progress", "--allow-failures"]
    roles = ROLES
    roles += [Role(f"worker{i}", "worker", worker_cmd, a.work_dir) for i in range(a.workers)]
    roles += [Role(f"consumer{i}", "consumer", consumer_cmd, a.work_dir) for i in range(a.consumers)]
    # Role.start runs the command with the process environment: put this run's keys there.
    os.environ.update(AWS_ACCESS_KEY_ID=key_id, AWS_SECRET_ACCESS_KEY=secret, AWS_EC2_METADATA_DISABLED="true")
    os.environ.pop("AWS_SESSION_TOKEN", None)
    for r in roles:
        r.start()

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

    def progress():
        in_left, log_left = svc.queued(in_q), svc.queued(log_q)
        worker = len(expected) - in_left
        return {"worker": worker, "consumer": max(0, worker - log_left), "log_left": log_left, "in_left": in_left}

    # Ready = a worker has taken its first input (it has loaded its tokenizers).
    while True:
        if time.monotonic() > deadline:
            return give_up("timeout before a worker took an input")
        if (quit := [r for r in roles if not r.running()]):
            return give_up(f"{quit[0].name} exited before it was ready, code {quit[0].proc.returncode}")
        if svc.counts(in_q)[1] > 0 or progress()["worker"] > 0:
            break
        time.sleep(0.05)
    say(f"  ready after {time.monotonic() - t0:.1f} s")

    plan = {"worker": [], "consumer": []}
    for _ in range(a.kills):
        kind = rng.choice(["worker", "consumer"])
        # Consumers trail the workers and see duplicates (a killed worker's input is done again), so
        # their marks stop earlier, while their queue still holds work.
        plan[kind].append(int(rng.uniform(0.03, 0.85 if kind == "worker" else 0.6) * len(expected)))
    for marks in plan.values():
        marks.sort()

    kills = []
    while plan["worker"] or plan["consumer"]:
        if time.monotonic() > deadline:
            return give_up(f"timeout during the kills ({len(kills)} done)")
        for r in roles:
            if r.kind == "consumer" and not r.running():
                return give_up(f"{r.name} exited on its own with code {r.proc.returncode}")
        done = progress()
        if done["in_left"] == 0 and done["log_left"] == 0:
            return give_up(f"the run finished before {len(plan['worker']) + len(plan['consumer'])} of the kills: "
                           "use more items")
        if done["in_left"] == 0 and plan["worker"]:
            # The workers finished first: a kill now would orphan nothing, so the rest go to consumers.
            plan["consumer"] = sorted(plan["consumer"] + [max(done["consumer"], m) for m in plan["worker"]])
            say(f"  inputs all done: the {len(plan['worker'])} worker kill(s) left go to consumers")
            plan["worker"] = []
        due = [k for k in plan if plan[k] and done[k] >= plan[k][0]]
        now = time.monotonic()
        pool = [r for r in roles if due and r.kind == due[0] and r.running() and now - r.started >= a.min_uptime]
        if not pool:
            time.sleep(0.05)
            continue
        kind = due[0]
        plan[kind].pop(0)
        victim = rng.choice(pool)
        old_pid = victim.proc.pid
        victim.kill()
        when = time.monotonic() - t0
        victim.start()
        kills.append((len(kills) + 1, f"{when:.1f}", victim.name, old_pid, done["worker"], done["consumer"], victim.proc.pid,
                      done["in_left"] if kind == "worker" else done["log_left"]))
        say(f"  kill {len(kills):2d} at {when:6.1f} s: {victim.name} pid {old_pid}; its queue held {kills[-1][7]}; inputs done {done['worker']}, "
            f"log messages settled {done['consumer']}; restarted as pid {victim.proc.pid}")

    while any(r.running() for r in roles if r.kind == "worker"):
        if time.monotonic() > deadline:
            return give_up("timeout waiting for the workers")
        time.sleep(0.2)
    while svc.queued(log_q) > 0:
        if time.monotonic() > deadline:
            return give_up("timeout draining the log queue")
        if not any(r.running() for r in roles if r.kind == "consumer"):
            return give_up("every consumer exited before the log queue was drained")
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
    rows = svc.table_keys(tbl)
    got = [(t, i) for t, i, _ in rows]
    got_set = set(got)
    missing, extra, duplicates = expected - got_set, got_set - expected, len(got) - len(got_set)
    bad_keys = [r for r in rows if r[2] != f"{experiment}#{r[0]}"]
    queues = {q: svc.counts(q) for q in (in_q, log_q, in_q + "-dlq", log_q + "-dlq")}
    status = subprocess.run([a.overhead, "status", "--queue", in_url, "--queue", log_url, "--json"],
                            capture_output=True, text=True, env=child_env)
    status_rows = json.loads(status.stdout) if status.returncode == 0 else []
    after = {e: control(e, "stats") for e in (svc.sqs_endpoint, svc.ddb_endpoint)}
    verified = {e: after[e]["by_key"].get(key_id, 0) for e in after}
    faults = {e: after[e]["faults_by_key"].get(key_id, 0) for e in after}
    rejected = {e: after[e]["rejected_by_key"].get(key_id, 0) + after[e]["rejected_by_key"].get(driver_id, 0)
                for e in after}

    if missing:
        failures.append(f"{len(missing)} item(s) missing from the table, e.g. {sorted(missing)[:3]}")
    if extra:
        failures.append(f"{len(extra)} unexpected item(s) in the table, e.g. {sorted(extra)[:3]}")
    if duplicates:
        failures.append(f"{duplicates} duplicate row(s)")
    if bad_keys:
        failures.append(f"{len(bad_keys)} row(s) whose experiment_tokenizer is not {experiment}#<tokenizer>")
    for q, (visible, in_flight) in queues.items():
        if visible or in_flight:
            failures.append(f"queue {q} holds {visible} visible, {in_flight} in flight")
    if status.returncode != 0 or len(status_rows) != 2:
        failures.append("overhead status --json failed: " + redact(status.stderr.strip(), svc.secrets))
    for q in status_rows:
        if q.get("in_flight") or q.get("dead_letters"):
            failures.append(f"overhead status: {q}")
    for e in after:
        if rejected[e]:
            failures.append(f"the proxy at {e} refused {rejected[e]} request(s) during the run")
        if not verified[e]:
            failures.append(f"no request of this run went through the proxy at {e}")
        if a.fault_rate > 0 and faults[e] == 0:
            failures.append(f"the proxy at {e} made no fault")
    for r in roles:
        if r.proc.returncode != 0:
            failures.append(f"{r.name} (last incarnation) exited {r.proc.returncode}")
        for path in r.logs:
            with open(path, encoding="utf-8", errors="replace") as f:
                if secret in f.read():
                    failures.append(f"the secret shows in {os.path.basename(path)}")
    if len(kills) < a.kills:
        failures.append(f"only {len(kills)} of {a.kills} kills happened")
    worker_kills = sum(1 for k in kills if k[2].startswith("worker"))
    print()
    say(table(["kill", "at s", "victim", "pid", "inputs done", "log msgs settled", "new pid", "its queue held"], kills))
    print()
    say(table(["what", "count"], [
        ("items enqueued", len(expected)),
        ("rows in the table", len(got)),
        ("distinct (tokenizer, id)", len(got_set)),
        ("missing", len(missing)),
        ("unexpected", len(extra)),
        ("kills (workers / consumers)", f"{len(kills)} ({worker_kills} / {len(kills) - worker_kills})"),
        ("input queue visible / in flight", "%d / %d" % queues[in_q]),
        ("log queue visible / in flight", "%d / %d" % queues[log_q]),
        ("DLQ messages (input, log); expected 0, 0", f"{sum(queues[in_q + '-dlq'])}, {sum(queues[log_q + '-dlq'])}"),
        ("requests verified by the proxies (SQS, DynamoDB)", f"{verified[svc.sqs_endpoint]}, {verified[svc.ddb_endpoint]}"),
        ("faults made by the proxies (SQS, DynamoDB)", f"{faults[svc.sqs_endpoint]}, {faults[svc.ddb_endpoint]}"),
        ("requests refused by the proxies", sum(rejected.values())),
        ("duration s", f"{duration:.1f}"),
    ]))
    print()
    if failures:
        for f in failures:
            say("FAIL: " + f)
        say(f"(seed {seed}; logs in {a.work_dir}/logs; queues {in_q}, {log_q} and table {tbl} kept)")
        return 1
    if not a.keep:
        for q in (in_q, log_q, in_q + "-dlq", log_q + "-dlq"):
            svc.delete_queue(q)
        svc.delete_table(tbl)
    say(f"PASS: {len(expected)} items stored exactly once through {len(kills)} kills in {duration:.1f} s (seed {seed})")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        for role in ROLES:
            if role.running():
                role.kill()
