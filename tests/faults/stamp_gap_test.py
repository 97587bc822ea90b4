#!/usr/bin/env python3
"""The stamp-patch gap, on real processes: an `overhead worker` SIGKILLed right after it deleted an
input batch, before it did anything else (OVERHEAD_WORKER_CRASH=after_delete:2, the kill falls
exactly there).

A second worker then finishes the input stream and a consumer drains the log stream into
PostgreSQL. Checks: every item is stored exactly once; no row lacks `publish_acked` (the patch
carrying it is confirmed on the log stream before the delete, so no kill can lose it); the rows
without `input_deleted` are exactly one batch (10) and were written by the killed worker (that
stamp exists only after the delete and was still in the dead process's hands); the streams and
their DLQs are empty. Exit 0 when all holds, 1 otherwise.
"""

import argparse
import os
import shutil
import subprocess
import sys

from services import Services, redact

TOKENIZER = "phi-4"
BATCH = 10


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--overhead", required=True)
    ap.add_argument("--redis-env", required=True)
    ap.add_argument("--postgres-env", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--limit", type=int, default=50)
    ap.add_argument("--work-dir", required=True)
    a = ap.parse_args()

    svc = Services(a.redis_env, a.postgres_env)
    shutil.rmtree(a.work_dir, ignore_errors=True)
    os.makedirs(a.work_dir)
    tag = f"gap{os.getpid()}"
    params = "visibility_ms=1000&max_receives=10"
    in_stream, log_stream, tbl, experiment = f"{tag}-in", f"{tag}-log", f"{tag}_records", "gap"
    in_url = f"{svc.redis_env['REDIS_URL']}/{in_stream}?{params}"
    log_url = f"{svc.redis_env['REDIS_URL']}/{log_stream}?{params}"
    store_url = f"{svc.pg['PG_URL']}?table={tbl}"
    failures = []

    def run(name, cmd, env=None):
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
        print(redact(f"{name}: exit {out.returncode}\n{(out.stdout + out.stderr).strip()}", svc.secrets), flush=True)
        return out.returncode

    if run("enqueue", [a.overhead, "enqueue", "--queue", in_url, "--data", a.data, "--limit", str(a.limit),
                       "--tokenizers", TOKENIZER, "--out", a.work_dir]) != 0:
        failures.append("enqueue failed")
    worker = lambda name, idle: [a.overhead, "worker", "--queue", in_url, "--log-queue", log_url, "--experiment",
                                 experiment, "--tokenizers", TOKENIZER, "--name", name, "--idle-exit", str(idle),
                                 "--out", a.work_dir, "--no-progress"]
    crash_env = dict(os.environ, OVERHEAD_WORKER_CRASH="after_delete:2")
    rc = run("worker-killed", worker("worker-killed", 1), crash_env)
    if rc != -9:
        failures.append(f"the first worker should have died of SIGKILL after its 2nd delete, exit {rc}")
    # Longer than the visibility timeout: what the killed worker held and had not deleted comes back.
    if run("worker-after", worker("worker-after", 3)) != 0:
        failures.append("the second worker failed")
    if run("consume", [a.overhead, "consume", "--log-queue", log_url, "--store", store_url, "--idle-exit", "3",
                       "--out", a.work_dir, "--no-progress"]) != 0:
        failures.append("the consumer failed")

    rows = svc.psql(f"SELECT id, worker, publish_acked, input_deleted FROM {tbl}", check=False) or []
    ids = [r[0] for r in rows]
    without_acked = [r for r in rows if int(r[2]) == 0]
    without_deleted = [r for r in rows if int(r[3]) == 0]
    print(f"{len(rows)} rows, {len(set(ids))} distinct ids, {len(without_acked)} without publish_acked, "
          f"{len(without_deleted)} without input_deleted "
          f"(by worker: { {w: sum(1 for r in without_deleted if r[1] == w) for w in {r[1] for r in without_deleted}} })")
    if len(rows) != a.limit or len(set(ids)) != a.limit:
        failures.append(f"{len(rows)} rows, {len(set(ids))} distinct ids, expected {a.limit}")
    if without_acked:
        failures.append(f"{len(without_acked)} rows without publish_acked, e.g. {without_acked[0]}")
    if len(without_deleted) != BATCH or any(r[1] != "worker-killed" for r in without_deleted):
        failures.append(f"expected exactly one batch ({BATCH}) of the killed worker without input_deleted, "
                        f"got {len(without_deleted)}")
    for s in (in_stream, log_stream, in_stream + "-dlq", log_stream + "-dlq"):
        if svc.exists(s):
            n, pending = svc.xlen(s), (0 if s.endswith("-dlq") else svc.xpending(s, "overhead"))
            if n or pending:
                failures.append(f"stream {s}: {n} entries, {pending} pending")

    for f in failures:
        print(redact("FAIL: " + f, svc.secrets))
    if failures:
        return 1
    svc.redis("DEL", in_stream, log_stream, in_stream + "-dlq", log_stream + "-dlq")
    svc.psql(f"DROP TABLE IF EXISTS {tbl}")
    print("PASS: a kill right after a delete costs that batch's input_deleted stamps only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
