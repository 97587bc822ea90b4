#!/usr/bin/env bash
# Starts and stops the AWS emulators for tests and local runs (SQS: local-aws-sqs, which
# keeps real visibility timeouts, long polling and redrive; sqslite is not used, it deletes the
# wrong messages in a batch). Installs them first with scripts/install_aws_tools.sh.
#   aws_emulators.sh start DIR   start on a free 127.0.0.1 port, wait until it answers an SQS call,
#                                write DIR/aws.env:
#                                  AWS_SQS_ENDPOINT=http://127.0.0.1:PORT
#                                  AWS_SQS_PORT, AWS_SQS_PID, AWS_EMULATOR_REGION
#                                and dynalite 4 (DynamoDB JSON 1.0, tables made at once):
#                                  AWS_DYNAMODB_ENDPOINT=http://127.0.0.1:PORT
#                                  AWS_DYNAMODB_PORT, AWS_DYNAMODB_PID
#   aws_emulators.sh stop DIR    SIGTERM the processes it started (pid files in DIR/aws)
#   aws_emulators.sh clean DIR   stop, then remove DIR/aws and DIR/aws.env
# The emulators keep their data in memory: a restart starts empty.
# S3: s3rver 3.x (path style, data in DIR/aws/s3, access key id and secret S3RVER, which it
# insists on; it does not check SigV4 signatures), with the bucket overhead-test made at start;
# appends to DIR/aws.env: AWS_S3_ENDPOINT=http://127.0.0.1:PORT, AWS_S3_PORT, AWS_S3_PID,
# AWS_S3_BUCKET.
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
start_dynamodb() {
  local modules=$1
  for attempt in 1 2 3 4 5; do
    local port; port=$(pick_free_port)
    node "$modules/dynalite/cli.js" --host 127.0.0.1 --port "$port" --createTableMs 0 --deleteTableMs 0 \
      --updateTableMs 0 </dev/null >"$data/dynamodb.log" 2>&1 &
    local pid=$!
    echo "$pid" > "$dynamodb_pidfile"
    if wait_until 20 dynamodb_answers "$port"; then
      cat >> "$dir/aws.env" <<ENV
AWS_DYNAMODB_ENDPOINT=http://127.0.0.1:$port
AWS_DYNAMODB_PORT=$port
AWS_DYNAMODB_PID=$pid
ENV
      echo "aws_emulators.sh: dynalite pid $pid on 127.0.0.1:$port"
      return 0
    fi
    stop_pidfile "$dynamodb_pidfile" KILL 1
    echo "aws_emulators.sh: dynalite start on port $port failed (attempt $attempt), trying another port" >&2
  done
  echo "aws_emulators.sh: could not start dynalite; see $data/dynamodb.log" >&2
  exit 1
}

start() {
  command -v node >/dev/null || { echo "aws_emulators.sh: node not installed (run scripts/setup.sh)" >&2; exit 1; }
  mkdir -p "$data"
  if [ -f "$sqs_pidfile" ] && kill -0 "$(cat "$sqs_pidfile")" 2>/dev/null; then
    echo "aws_emulators.sh: already running (sqs pid $(cat "$sqs_pidfile"))"; return 0
  fi
  local modules; modules=$("$root/scripts/install_aws_tools.sh" | tail -n 1)
  for attempt in 1 2 3 4 5; do
    local port; port=$(pick_free_port)
    NODE_PATH="$modules" node "$root/tests/aws/sqs_emulator.js" 127.0.0.1 "$port" </dev/null >"$data/sqs.log" 2>&1 &
    local pid=$!
    echo "$pid" > "$sqs_pidfile"
    if wait_until 20 sqs_answers "$port"; then
      cat > "$dir/aws.env" <<ENV
AWS_SQS_ENDPOINT=http://127.0.0.1:$port
AWS_SQS_PORT=$port
AWS_SQS_PID=$pid
AWS_EMULATOR_REGION=$region
ENV
      echo "aws_emulators.sh: local-aws-sqs pid $pid on 127.0.0.1:$port"
      start_dynamodb "$modules"
      return 0
    fi
    stop_pidfile "$sqs_pidfile" KILL 1
    echo "aws_emulators.sh: sqs start on port $port failed (attempt $attempt), trying another port" >&2
  done
  echo "aws_emulators.sh: could not start local-aws-sqs; see $data/sqs.log" >&2
  exit 1
}

# --- S3 (s3rver)
s3_pidfile="$data/s3.pid"
s3_bucket=overhead-test

# Answers when s3rver serves the bucket made at start (anonymous ListObjects), not just a TCP accept.
s3_answers() { curl -sf -m 2 "http://127.0.0.1:$1/$s3_bucket" >/dev/null; }

start_s3() {
  if [ -f "$s3_pidfile" ] && kill -0 "$(cat "$s3_pidfile")" 2>/dev/null; then
    echo "aws_emulators.sh: already running (s3 pid $(cat "$s3_pidfile"))"; return 0
  fi
  local modules; modules=$("$root/scripts/install_aws_tools.sh" | tail -n 1)
  rm -rf "$data/s3"; mkdir -p "$data/s3"
  for attempt in 1 2 3 4 5; do
    local port; port=$(pick_free_port)
    node "$modules/s3rver/bin/s3rver.js" -d "$data/s3" -a 127.0.0.1 -p "$port" --silent --no-vhost-buckets \
      --configure-bucket "$s3_bucket" </dev/null >"$data/s3.log" 2>&1 &
    local pid=$!
    echo "$pid" > "$s3_pidfile"
    if wait_until 20 s3_answers "$port"; then
      cat >> "$dir/aws.env" <<ENV
AWS_S3_ENDPOINT=http://127.0.0.1:$port
AWS_S3_PORT=$port
AWS_S3_PID=$pid
AWS_S3_BUCKET=$s3_bucket
ENV
      echo "aws_emulators.sh: s3rver pid $pid on 127.0.0.1:$port"
      return 0
    fi
    stop_pidfile "$s3_pidfile" KILL 1
    echo "aws_emulators.sh: s3 start on port $port failed (attempt $attempt), trying another port" >&2
  done
  echo "aws_emulators.sh: could not start s3rver; see $data/s3.log" >&2
  exit 1
}

case "$cmd" in
  start) start; start_s3 ;;
  stop) stop_pidfile "$sqs_pidfile" TERM 10; stop_pidfile "$dynamodb_pidfile" TERM 10; stop_pidfile "$s3_pidfile" TERM 10 ;;
  clean) stop_pidfile "$sqs_pidfile" TERM 10; stop_pidfile "$dynamodb_pidfile" TERM 10; stop_pidfile "$s3_pidfile" TERM 10; rm -rf "$data" "$dir/aws.env" ;;
  *) echo "usage: $0 start|stop|clean DIR" >&2; exit 2 ;;
esac
