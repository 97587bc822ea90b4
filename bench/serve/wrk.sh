#!/usr/bin/env bash
# Load on `overhead serve` with wrk (Debian), --decoder none, MT-Bench prompts:
#   POST /v1/tokenize         render + encode in the HTTP thread (no pipeline)
#   POST /v1/chat/completions validated, queued, rendered + encoded by the in-process worker,
#                             stored by the consumer, answered from the reply path
# and the gateway's stage histograms from /metrics after the chat run (mean per stage).
# Usage: bash bench/serve/wrk.sh [SECONDS=10] [CONNECTIONS=8] [TOKENIZER=phi-4]
# Prints wrk's summaries, the stage means and `uptime`. Run from the root of a clone after `make build`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_RUN=${1:-10}
CONNECTIONS=${2:-8}
TOKENIZER=${3:-phi-4}
THREADS=$(( CONNECTIONS < 2 ? 1 : 2 ))
BIN=${OVERHEAD_BINARY:-$ROOT/build/overhead}
WORK=$(mktemp -d /tmp/overhead-serve-wrk.XXXXXX)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# shellcheck source=bench/serve/start_serve.sh
source "$ROOT/bench/serve/start_serve.sh"
start_serve "$BIN" "$TOKENIZER" "$WORK"
# The first tokenize request loads the route's binding too.
head -1 "$WORK/bodies.jsonl" | curl -sf "$URL/v1/tokenize" -H 'content-type: application/json' -d @- >/dev/null

for route in /v1/tokenize /v1/chat/completions; do
  echo "== wrk -t$THREADS -c$CONNECTIONS -d${SECONDS_RUN}s --latency POST $route ($TOKENIZER)"
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"${SECONDS_RUN}s" --latency -s "$ROOT/bench/serve/wrk_post.lua" "$URL$route" -- "$WORK/bodies.jsonl"
done

echo "== stage means over the chat requests (from /metrics, overhead_stage_duration_seconds)"
curl -sf "$URL/metrics" | awk '
  /^overhead_stage_duration_seconds_sum/   { match($0, /stage="[a-z]+"/); s = substr($0, RSTART + 7, RLENGTH - 8); sum[s] = $2 }
  /^overhead_stage_duration_seconds_count/ { match($0, /stage="[a-z]+"/); s = substr($0, RSTART + 7, RLENGTH - 8); cnt[s] = $2 }
  END { for (s in sum) if (cnt[s] > 0) printf "  %-8s %9.1f us mean over %d\n", s, 1e6 * sum[s] / cnt[s], cnt[s] }'
echo "== uptime: $(uptime)"
