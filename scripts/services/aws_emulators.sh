#!/usr/bin/env bash
# Starts and stops the AWS emulators for tests and local runs (SQS: local-aws-sqs, which
# keeps real visibility timeouts, long polling and redrive; sqslite is not used, it deletes the
# wrong messages in a batch). Installs them first with scripts/install_aws_tools.sh.
#   aws_emulators.sh start DIR   start on a free 127.0.0.1 port, wait until it answers an SQS call,
#                                write DIR/aws.env:
#                                  AWS_SQS_ENDPOINT=http://127.0.0.1:PORT (its proxy)
#                                  AWS_SQS_PORT, AWS_SQS_PID, AWS_EMULATOR_REGION, AWS_TEST_KEYS_FILE
#                                and dynalite 4 (DynamoDB JSON 1.0, tables made at once):
#                                  AWS_DYNAMODB_ENDPOINT=http://127.0.0.1:PORT (its proxy)
#                                  AWS_DYNAMODB_PORT, AWS_DYNAMODB_PID
#   aws_emulators.sh stop DIR    SIGTERM the processes it started (pid files in DIR/aws)
#   aws_emulators.sh clean DIR   stop, then remove DIR/aws and DIR/aws.env
# The emulators keep their data in memory: a restart starts empty.
# S3: s3rver 3.x (path style, data in DIR/aws/s3, access key id and secret S3RVER, which it
# insists on; it does not check SigV4 signatures), with the bucket overhead-test made at start;
# appends to DIR/aws.env: AWS_S3_ENDPOINT=http://127.0.0.1:PORT (its proxy), AWS_S3_PORT, AWS_S3_PID,
# AWS_S3_BUCKET.
# Each emulator sits behind its own signature-checking, fault-making proxy (aws_sigv4_proxy.js,
# which re-signs every request with @smithy/signature-v4 and answers 403 on a mismatch): the
# AWS_*_ENDPOINT lines name the proxies, so every request a test sends is verified; the emulators
# themselves are AWS_*_EMULATOR_ENDPOINT. The proxies know the test-only key pairs below
# (AWS_TEST_KEYS_FILE); tests add their own keys and faults through POST ENDPOINT/__proxy/...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/common.sh"

cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|clean DIR" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
data="$dir/aws"
sqs_pidfile="$data/sqs.pid"
dynamodb_pidfile="$data/dynamodb.pid"
region=us-east-1
keys_file="$data/proxy_keys.json"

# The test-only key pairs the proxies accept from the start (the CTest environments use them;
# s3rver insists on the key id S3RVER). Not secrets: no real account has them.
write_keys_file() {
  cat > "$keys_file" <<'KEYS'
[{"accessKeyId": "AKIDEXAMPLETEST", "secretAccessKey": "test-secret-not-real-0123456789"},
 {"accessKeyId": "S3RVER", "secretAccessKey": "S3RVER"}]
KEYS
}

# A proxy answers its own control path without a signature.
proxy_answers() { curl -sf -m 2 "http://127.0.0.1:$1/__proxy/stats" >/dev/null; }

# start_proxy NAME SERVICE UPSTREAM_PORT ENV_PREFIX: the proxy for one emulator on a free port;
# appends ENV_PREFIX_ENDPOINT (the proxy), ENV_PREFIX_EMULATOR_ENDPOINT and the proxy's pid.
start_proxy() {
  local name=$1 svc=$2 upstream=$3 prefix=$4
  proxy_service=$svc proxy_upstream=$upstream proxy_name=$name
  start_on_free_port "$name proxy" "$data/$name-proxy.pid" "$data/$name-proxy.log" launch_proxy proxy_answers
  cat >> "$dir/aws.env" <<ENV
${prefix}_ENDPOINT=http://127.0.0.1:$STARTED_PORT
${prefix}_EMULATOR_ENDPOINT=http://127.0.0.1:$upstream
${prefix}_PROXY_PID=$STARTED_PID
ENV
  echo "aws_emulators.sh: $name SigV4 proxy pid $STARTED_PID on 127.0.0.1:$STARTED_PORT -> $upstream"
}

launch_proxy() {
  NODE_PATH="$modules" node "$here/aws_sigv4_proxy.js" --service "$proxy_service" \
    --upstream "http://127.0.0.1:$proxy_upstream" --host 127.0.0.1 --port "$1" --keys "$keys_file" \
    </dev/null >"$data/$proxy_name-proxy.log" 2>&1 &
}

# Signals all six first, then waits for each: node takes a moment to exit, so one by one is slow.
stop_all() {
  local f names="sqs-proxy dynamodb-proxy s3-proxy sqs dynamodb s3"
  for f in $names; do
    [ -f "$data/$f.pid" ] && kill -0 "$(cat "$data/$f.pid")" 2>/dev/null && kill -TERM "$(cat "$data/$f.pid")" 2>/dev/null || true
  done
  for f in $names; do stop_pidfile "$data/$f.pid" TERM 10; done
}

# Answers when the emulator serves a real SQS JSON call (ListQueues), not just a TCP accept.
sqs_answers() {
  curl -sf -m 2 -X POST "http://127.0.0.1:$1/" \
    -H 'Content-Type: application/x-amz-json-1.0' -H 'X-Amz-Target: AmazonSQS.ListQueues' -d '{}' >/dev/null
}

# Answers when dynalite serves a DynamoDB call (ListTables). It wants a well-formed SigV4 header
# but checks no signature, so curl signs with throwaway keys.
dynamodb_answers() {
  curl -sf -m 2 -X POST "http://127.0.0.1:$1/" --aws-sigv4 "aws:amz:$region:dynamodb" --user probe:probe \
    -H 'Content-Type: application/x-amz-json-1.0' -H 'X-Amz-Target: DynamoDB_20120810.ListTables' -d '{}' >/dev/null
}

# dynalite on a free port (in memory; create/delete/update take no time, as tests make many
# short-lived tables), appended to DIR/aws.env.
launch_dynalite() {
  node "$modules/dynalite/cli.js" --host 127.0.0.1 --port "$1" --createTableMs 0 --deleteTableMs 0 \
    --updateTableMs 0 </dev/null >"$data/dynamodb.log" 2>&1 &
}

start_dynamodb() {
  local modules=$1
  start_on_free_port dynalite "$dynamodb_pidfile" "$data/dynamodb.log" launch_dynalite dynamodb_answers
  cat >> "$dir/aws.env" <<ENV
AWS_DYNAMODB_PORT=$STARTED_PORT
AWS_DYNAMODB_PID=$STARTED_PID
ENV
  echo "aws_emulators.sh: dynalite pid $STARTED_PID on 127.0.0.1:$STARTED_PORT"
  start_proxy dynamodb dynamodb "$STARTED_PORT" AWS_DYNAMODB
}

launch_sqs() {
  NODE_PATH="$modules" node "$root/tests/aws/sqs_emulator.js" 127.0.0.1 "$1" </dev/null >"$data/sqs.log" 2>&1 &
}

start() {
  command -v node >/dev/null || { echo "aws_emulators.sh: node not installed (run scripts/setup.sh)" >&2; exit 1; }
  mkdir -p "$data"
  if [ -f "$sqs_pidfile" ] && kill -0 "$(cat "$sqs_pidfile")" 2>/dev/null; then
    echo "aws_emulators.sh: already running (sqs pid $(cat "$sqs_pidfile"))"; return 0
  fi
  local modules; modules=$("$root/scripts/install_aws_tools.sh" | tail -n 1)
  write_keys_file
  start_on_free_port local-aws-sqs "$sqs_pidfile" "$data/sqs.log" launch_sqs sqs_answers
  cat > "$dir/aws.env" <<ENV
AWS_SQS_PORT=$STARTED_PORT
AWS_SQS_PID=$STARTED_PID
AWS_EMULATOR_REGION=$region
AWS_TEST_KEYS_FILE=$keys_file
ENV
  echo "aws_emulators.sh: local-aws-sqs pid $STARTED_PID on 127.0.0.1:$STARTED_PORT"
  start_proxy sqs sqs "$STARTED_PORT" AWS_SQS
  start_dynamodb "$modules"
}

# --- S3 (s3rver)
s3_pidfile="$data/s3.pid"
s3_bucket=overhead-test

# Answers when s3rver serves the bucket made at start (anonymous ListObjects), not just a TCP accept.
s3_answers() { curl -sf -m 2 "http://127.0.0.1:$1/$s3_bucket" >/dev/null; }

launch_s3rver() {
  node "$modules/s3rver/bin/s3rver.js" -d "$data/s3" -a 127.0.0.1 -p "$1" --silent --no-vhost-buckets \
    --configure-bucket "$s3_bucket" </dev/null >"$data/s3.log" 2>&1 &
}

start_s3() {
  if [ -f "$s3_pidfile" ] && kill -0 "$(cat "$s3_pidfile")" 2>/dev/null; then
    echo "aws_emulators.sh: already running (s3 pid $(cat "$s3_pidfile"))"; return 0
  fi
  local modules; modules=$("$root/scripts/install_aws_tools.sh" | tail -n 1)
  rm -rf "$data/s3"; mkdir -p "$data/s3"
  start_on_free_port s3rver "$s3_pidfile" "$data/s3.log" launch_s3rver s3_answers
  cat >> "$dir/aws.env" <<ENV
AWS_S3_PORT=$STARTED_PORT
AWS_S3_PID=$STARTED_PID
AWS_S3_BUCKET=$s3_bucket
ENV
  echo "aws_emulators.sh: s3rver pid $STARTED_PID on 127.0.0.1:$STARTED_PORT"
  start_proxy s3 s3 "$STARTED_PORT" AWS_S3
}

case "$cmd" in
  start) start; start_s3 ;;
  stop) stop_all ;;
  clean) stop_all; rm -rf "$data" "$dir/aws.env" ;;
  *) echo "usage: $0 start|stop|clean DIR" >&2; exit 2 ;;
esac
