#!/usr/bin/env python3
"""`overhead run` with SQS for the input and log queues, DynamoDB as the store and S3 for case 1's CSV.

The emulators of scripts/services/aws_emulators.sh (local-aws-sqs, dynalite, s3rver), each reached
through its SigV4-checking proxy, so every request of the run is verified. Runs the five cases on
the first --limit MT-Bench records for the three seed tokenizers and checks that:

  * the run exits 0 and writes summary.json, with five cases and no failed item;
  * the table holds every (tokenizer, id) of every case once under `<experiment>-caseN`, with that
    case's number, the key experiment_tokenizer = `<experiment>-caseN#<tokenizer>`, a token count
    and its processing stamps in order; input_deleted only in case 5 (the only case with an input
    queue);
  * case 1's CSV is in the bucket, with one row per (tokenizer, id);
  * the input and log queues and their DLQs exist and are empty (nothing visible, nothing in flight);
  * each proxy verified requests of the run;
  * the secret shows neither in the output nor in summary.json.

s3rver accepts only the access key id S3RVER, and one process has one set of credentials, so the
whole run signs as S3RVER with the test-only secret the proxies know for it (also S3RVER): the
secret check thus also holds the key id out of the output. The table, queues and CSV are read back
with the test's own signed calls (aws_services.py, and a SigV4 GET/DELETE for S3 here), which share
no code with the C++ clients. On success the queues, the table and the object are deleted.
Exit 0 when all holds, 1 otherwise.
"""

import argparse
import csv
import http.client
import io
import json
import os
import sys
import time
import urllib.parse

from aws_services import AwsError, AwsServices, control, sign
from services import first_ids, redact, run_overhead

SEED_TOKENIZERS = ["llama-3.3-70b-instruct", "gemma-2-27b-it", "phi-4"]
KEY_ID = SECRET = "S3RVER"  # s3rver accepts only this key id; a test-only pair, no real account has it
STAMPS = ["received", "render_start", "encode_end", "publish_start", "publish_acked", "input_deleted"]


def s3_call(endpoint, region, method, path):
    """A SigV4-signed path-style S3 request without a body; returns (status, body)."""
    u = urllib.parse.urlsplit(endpoint)
    uri = urllib.parse.quote(path, safe="/-_.~")
    headers = {"host": f"{u.hostname}:{u.port}"}
    sign(headers, method, uri, b"", "s3", region, KEY_ID, SECRET, content_sha256=True)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.request(method, uri, headers=headers)
    res = conn.getresponse()
    return res.status, res.read()


def scan(svc, table):
    """Every item of the table, attributes as plain values (N as int, BOOL as bool)."""
    items, start = [], None
    while True:
        req = {"TableName": table, "ConsistentRead": True}
        if start:
            req["ExclusiveStartKey"] = start
        page = svc.ddb.call("Scan", req)
        for item in page.get("Items", []):
            items.append({k: int(v["N"]) if "N" in v else v.get("S", v.get("BOOL")) for k, v in item.items()})
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--overhead", required=True)
    ap.add_argument("--aws-env", required=True, help="aws.env written by scripts/services/aws_emulators.sh")
    ap.add_argument("--data", required=True)
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--experiment", default="runcheck")
    ap.add_argument("--out", required=True, help="the run's output folder (emptied first)")
    a = ap.parse_args()

    svc = AwsServices(a.aws_env, KEY_ID, SECRET)
    s3_endpoint, bucket = svc.env["AWS_S3_ENDPOINT"], svc.env["AWS_S3_BUCKET"]
    tag = f"runaws{os.getpid()}x{int(time.time()) % 100000}"
    in_q, log_q, tbl, experiment = f"{tag}-in", f"{tag}-log", f"{tag}-records", a.experiment
    queues = (in_q, log_q, in_q + "-dlq", log_q + "-dlq")
    params = f"region={svc.region}&visibility_ms=5000&max_receives=5&wait_s=1&create=1"
    csv_key = f"{tag}/{experiment}-case1.csv"
    cmd = [a.overhead, "run",
           "--queue", f"sqs://{in_q}?endpoint={svc.sqs_endpoint}&{params}",
           "--log-queue", f"sqs://{log_q}?endpoint={svc.sqs_endpoint}&{params}",
           "--store", f"dynamodb://{tbl}?region={svc.region}&endpoint={svc.ddb_endpoint}&create=1",
           "--object-store", f"s3://{bucket}/{tag}?region={svc.region}&endpoint={s3_endpoint}",
           "--data", a.data, "--limit", str(a.limit), "--tokenizers", ",".join(SEED_TOKENIZERS),
           "--experiment", experiment, "--out", a.out, "--no-progress", "--no-report"]
    env = dict(os.environ, AWS_ACCESS_KEY_ID=KEY_ID, AWS_SECRET_ACCESS_KEY=SECRET, AWS_EC2_METADATA_DISABLED="true")
    env.pop("AWS_SESSION_TOKEN", None)
    proxies = {"SQS": svc.sqs_endpoint, "DynamoDB": svc.ddb_endpoint, "S3": s3_endpoint}
    verified = lambda: {name: control(e, "stats")["by_key"].get(KEY_ID, 0) for name, e in proxies.items()}
    before = verified()
    t0 = time.monotonic()
    output, summary, failures = run_overhead(cmd, a.out, svc.secrets, env=env)
    took = time.monotonic() - t0
    after = verified()
    if summary:
        cases = {c.get("case"): c for c in json.loads(summary).get("cases", [])}
        if sorted(cases) != [1, 2, 3, 4, 5]:
            failures.append(f"summary.json lists cases {sorted(cases)}, expected 1..5")
        for n, c in sorted(cases.items()):
            if c.get("failed") or c.get("experiment") != f"{experiment}-case{n}":
                failures.append(f"summary.json case {n}: experiment {c.get('experiment')}, {c.get('failed')} failed")
    for name in proxies:
        if after[name] <= before[name]:
            failures.append(f"no request of the run passed the {name} proxy's signature check")

    ids = first_ids(a.data, a.limit)
    want = {(t, i) for t in SEED_TOKENIZERS for i in ids}
    try:
        rows = scan(svc, tbl)
    except AwsError as e:
        failures.append(f"scan of {tbl}: {e}")
        rows = []
    for case in range(1, 6):
        exp = f"{experiment}-case{case}"
        mine = [r for r in rows if r.get("experiment") == exp]
        got = {(r.get("tokenizer"), r.get("id")) for r in mine}
        if got != want or len(mine) != len(want):
            failures.append(f"case {case}: {len(mine)} items, {len(want - got)} missing, {len(got - want)} unexpected")
        st = lambda r, k: r.get(k, 0)
        bad = [r for r in mine if r.get("case") != case or r.get("experiment_tokenizer") != f"{exp}#{r.get('tokenizer')}"
               or st(r, "token_count") <= 0 or st(r, "publish_acked") <= 0
               or not 0 < st(r, "received") <= st(r, "render_start") <= st(r, "encode_end") <= st(r, "publish_start")]
        # Only case 5 reads an input queue, so only its records have an input_deleted stamp.
        bad += [r for r in mine if (st(r, "input_deleted") > 0) != (case == 5)]
        if bad:
            e = {k: bad[0].get(k) for k in ["experiment_tokenizer", "id", "case", "token_count"] + STAMPS}
            failures.append(f"case {case}: {len(bad)} item(s) with a wrong case number, key or stamps, e.g. {e}")
        print(f"case {case}: {len(mine)} items in {tbl}")
    if len(rows) != 5 * len(want):
        failures.append(f"{len(rows)} items in the table, expected {5 * len(want)}")

    status, body = s3_call(s3_endpoint, svc.region, "GET", f"/{bucket}/{csv_key}")
    if status != 200:
        failures.append(f"case 1's CSV s3://{bucket}/{csv_key}: HTTP {status} {body[:200]!r}")
    else:
        lines = list(csv.DictReader(io.StringIO(body.decode("utf-8"))))
        got = {(r.get("tokenizer"), r.get("id")) for r in lines}
        if got != want or len(lines) != len(want):
            failures.append(f"case 1's CSV: {len(lines)} rows, {len(want - got)} missing, {len(got - want)} unexpected")
        print(f"case 1's CSV: s3://{bucket}/{csv_key}, {len(lines)} rows")

    for q in queues:
        if svc.queue_url(q) is None:
            failures.append(f"queue {q} does not exist")
            continue
        visible, in_flight = svc.counts(q)
        if visible or in_flight:
            failures.append(f"queue {q}: {visible} visible, {in_flight} in flight")

    for f in failures:
        print(redact("FAIL: " + f, svc.secrets))
    if failures:
        print(f"(queues {', '.join(queues)}, table {tbl} and s3://{bucket}/{csv_key} kept)")
        return 1
    for q in queues:
        svc.delete_queue(q)
    svc.delete_table(tbl)
    s3_call(s3_endpoint, svc.region, "DELETE", f"/{bucket}/{csv_key}")
    print(f"PASS: the five cases on SQS + DynamoDB + S3 (emulators behind SigV4 proxies), {len(want)} items each, "
          f"run {took:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
