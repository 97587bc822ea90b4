#!/usr/bin/env python3
"""`overhead aws-init` against the emulators (through their SigV4 proxies): the first run creates
the two queues with their DLQs and redrive policies, the table with the seed's keys, the key
store's and the batch store's tables beside it (which `overhead serve --store` then opens) and the
bucket; a second run finds them all and changes nothing; a bad prefix is a usage error (exit 2).
The queues and the table are checked with a client of the test's own (tests/faults/aws_services.py).
Usage: aws_init_test.py OVERHEAD AWS_ENV
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "faults"))
from aws_services import AwsServices  # noqa: E402

overhead, env_path = sys.argv[1], sys.argv[2]
# s3rver accepts only the key id S3RVER; the proxies know this pair for all three services.
svc = AwsServices(env_path, "S3RVER", "S3RVER")
os.environ.update(AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER", AWS_EC2_METADATA_DISABLED="true")
os.environ.pop("AWS_SESSION_TOKEN", None)
prefix = f"init{os.getpid()}x{int(time.time()) % 100000}"
cmd = [overhead, "aws-init", "--region", svc.region, "--prefix", prefix, "--max-receives", "4",
       "--sqs-endpoint", svc.sqs_endpoint, "--dynamodb-endpoint", svc.ddb_endpoint, "--s3-endpoint", svc.env["AWS_S3_ENDPOINT"]]
failures = []


def run():
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        sys.exit(f"FAIL: aws-init exited {p.returncode}")
    return p.stdout


def states(out):
    """{name: created|exists} from the item lines."""
    return {line.split()[2]: line.split()[0] for line in out.splitlines() if line.startswith(("created ", "exists "))}


names = [f"{prefix}-experiment-prompt-queue", f"{prefix}-experiment-prompt-queue-dlq", f"{prefix}-experiment-db-queue",
         f"{prefix}-experiment-db-queue-dlq", f"{prefix}-experiment_records", f"{prefix}-experiment-results",
         f"{prefix}-experiment_records-keys", f"{prefix}-experiment_records-batches"]
first = run()
if states(first) != {n: "created" for n in names}:
    failures.append(f"first run: {states(first)}")
second = run()
if states(second) != {n: "exists" for n in names}:
    failures.append(f"second run is not idempotent: {states(second)}")
for line in ("queue=sqs://" + names[0], "log_queue=sqs://" + names[2], "store=dynamodb://" + names[4],
             "object_store=s3://" + names[5]):
    if line not in second:
        failures.append(f"the output lacks {line}")

for q in (names[0], names[2]):
    attrs = svc.sqs.call("GetQueueAttributes", {"QueueUrl": svc.queue_url(q), "AttributeNames": ["All"]})["Attributes"]
    dlq_arn = svc.sqs.call("GetQueueAttributes", {"QueueUrl": svc.queue_url(q + "-dlq"),
                                                  "AttributeNames": ["QueueArn"]})["Attributes"]["QueueArn"]
    policy = json.loads(attrs.get("RedrivePolicy", "{}"))
    if policy.get("deadLetterTargetArn") != dlq_arn or int(policy.get("maxReceiveCount", 0)) != 4:
        failures.append(f"{q}: redrive policy {policy}, expected {dlq_arn} after 4 receives")
    if attrs.get("VisibilityTimeout") != "30":
        failures.append(f"{q}: VisibilityTimeout {attrs.get('VisibilityTimeout')}")
table = svc.ddb.call("DescribeTable", {"TableName": names[4]})["Table"]
keys = {k["KeyType"]: k["AttributeName"] for k in table["KeySchema"]}
types = {a["AttributeName"]: a["AttributeType"] for a in table["AttributeDefinitions"]}
if keys != {"HASH": "experiment_tokenizer", "RANGE": "id"} or types != {"experiment_tokenizer": "S", "id": "S"}:
    failures.append(f"table keys {keys} {types}")
if table.get("BillingModeSummary", {}).get("BillingMode", "PAY_PER_REQUEST") != "PAY_PER_REQUEST":
    failures.append(f"table billing {table.get('BillingModeSummary')}")

keys_table = svc.ddb.call("DescribeTable", {"TableName": names[6]})["Table"]
if {k["KeyType"]: k["AttributeName"] for k in keys_table["KeySchema"]} != {"HASH": "name"}:
    failures.append(f"keys table keys {keys_table['KeySchema']}")
batches_table = svc.ddb.call("DescribeTable", {"TableName": names[7]})["Table"]
if {k["KeyType"]: k["AttributeName"] for k in batches_table["KeySchema"]} != {"HASH": "kind", "RANGE": "id"}:
    failures.append(f"batches table keys {batches_table['KeySchema']}")
if sorted(i["IndexName"] for i in batches_table.get("LocalSecondaryIndexes", [])) != ["newest", "open"]:
    failures.append(f"batches table indexes {batches_table.get('LocalSecondaryIndexes')}")

# The printed URLs work: a record goes in through the store URL and the worker's queue URL opens.
store = second.split("store=")[1].split("\n")[0]
status = subprocess.run([overhead, "status", "--queue", second.split("\nqueue=")[1].split("\n")[0], "--json"],
                        capture_output=True, text=True)
if status.returncode != 0 or json.loads(status.stdout)[0].get("dead_letters") != 0:
    failures.append(f"overhead status on the printed queue URL: {status.stdout} {status.stderr}")

# The key store opens the keys table made here on the printed store URL (without create=1).
keys = subprocess.run([overhead, "keys", "list", "--store", store], capture_output=True, text=True)
if keys.returncode != 0:
    failures.append(f"overhead keys list on the printed store URL: {keys.stdout} {keys.stderr}")

bad = subprocess.run([overhead, "aws-init", "--region", svc.region, "--prefix", "Bad_Prefix"], capture_output=True, text=True)
if bad.returncode != 2 or "--prefix" not in bad.stderr:
    failures.append(f"a bad prefix: exit {bad.returncode}, {bad.stderr.strip()}")

for q in names[:4]:
    svc.delete_queue(q)
for t in (names[4], names[6], names[7]):
    svc.delete_table(t)
for f in failures:
    print("FAIL:", f)
print("PASS" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
