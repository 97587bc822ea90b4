#!/usr/bin/env python3
"""`overhead run` with Redis streams for the input and log queues and PostgreSQL as the store.

Runs the five cases on the first --limit MT-Bench records for the three seed tokenizers and checks
that the run exits 0, that PostgreSQL holds every (tokenizer, id) of every case once under
`<experiment>-caseN` with that case's number and its processing stamps, that the streams hold
nothing (entries, pending, dead letters), and that no password shows in the output or in
summary.json. Exit 0 when all holds, 1 otherwise.
"""

import argparse
import os
import sys

from services import Services, first_ids, redact, run_overhead

SEED_TOKENIZERS = ["llama-3.3-70b-instruct", "gemma-2-27b-it", "phi-4"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--overhead", required=True)
    ap.add_argument("--redis-env", required=True)
    ap.add_argument("--postgres-env", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--out", required=True, help="the run's output folder (emptied first)")
    a = ap.parse_args()

    svc = Services(a.redis_env, a.postgres_env)
    tag = f"run{os.getpid()}"
    params = "visibility_ms=5000&max_receives=5"
    in_stream, log_stream, tbl, experiment = f"{tag}-in", f"{tag}-log", f"{tag}_records", "runcheck"
    cmd = [a.overhead, "run", "--queue", f"{svc.redis_env['REDIS_URL']}/{in_stream}?{params}",
           "--log-queue", f"{svc.redis_env['REDIS_URL']}/{log_stream}?{params}",
           "--store", f"{svc.pg['PG_URL']}?table={tbl}", "--data", a.data, "--limit", str(a.limit),
           "--experiment", experiment, "--out", a.out, "--no-progress", "--no-report"]
    output, summary, failures = run_overhead(cmd, a.out, svc.secrets)

    ids = first_ids(a.data, a.limit)
    want = {(t, i) for t in SEED_TOKENIZERS for i in ids}
    rows = svc.psql(f"SELECT experiment, case_number, tokenizer, id, experiment_tokenizer, token_count, received, "
                    f"render_start, encode_end, publish_start, publish_acked, input_deleted FROM {tbl}", check=False) or []
    for case in range(1, 6):
        exp = f"{experiment}-case{case}"
        mine = [r for r in rows if r[0] == exp]
        got = {(r[2], r[3]) for r in mine}
        if got != want or len(mine) != len(want):
            failures.append(f"case {case}: {len(mine)} rows, {len(want - got)} missing, {len(got - want)} unexpected")
        bad = [r for r in mine if int(r[1]) != case or r[4] != f"{exp}#{r[2]}" or int(r[5]) <= 0
               or not 0 < int(r[6]) <= int(r[7]) <= int(r[8]) <= int(r[9]) or int(r[10]) <= 0]
        # Only case 5 reads an input queue, so only its records have an input_deleted stamp.
        bad += [r for r in mine if (int(r[11]) > 0) != (case == 5)]
        if bad:
            failures.append(f"case {case}: {len(bad)} row(s) with a wrong case number, key or stamps, e.g. {bad[0]}")
        print(f"case {case}: {len(mine)} records in {tbl}")
    if len(rows) != 5 * len(want):
        failures.append(f"{len(rows)} rows in the table, expected {5 * len(want)}")
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
    print(f"PASS: the five cases on Redis + PostgreSQL, {len(want)} items each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
