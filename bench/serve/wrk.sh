#!/usr/bin/env bash
# Load on `overhead serve` with wrk (Debian), --decoder none, MT-Bench prompts:
#   POST /v1/tokenize         render + encode in the HTTP thread (no pipeline)
#   POST /v1/chat/completions validated, queued, rendered + encoded by the in-process worker,
#                             stored by the consumer, answered from the reply path
# and the gateway's stage histograms from /metrics after the chat run (mean per stage).
# Usage: bash bench/serve/wrk.sh [SECONDS=10] [CONNECTIONS=8] [TOKENIZER=phi-4]
# Prints wrk's summaries, the stage means, the gateway's own request time per route (its
# overhead_http_request_duration_seconds histogram: routing to the answer written, so wrk's share
# of the shared cores is not in it) and `uptime`. Run from the root of a clone after `make build`.
# WRK_CPUS=0 SERVE_CPUS=1 pins wrk and the gateway to CPUs of their own (taskset).
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
  ${WRK_CPUS:+taskset -c "$WRK_CPUS"} wrk -t"$THREADS" -c"$CONNECTIONS" -d"${SECONDS_RUN}s" --latency -s "$ROOT/bench/serve/wrk_post.lua" "$URL$route" -- "$WORK/bodies.jsonl"
done

echo "== stage means over the chat requests (from /metrics, overhead_stage_duration_seconds)"
curl -sf "$URL/metrics" | awk '
  /^overhead_stage_duration_seconds_sum/   { match($0, /stage="[a-z]+"/); s = substr($0, RSTART + 7, RLENGTH - 8); sum[s] = $2 }
  /^overhead_stage_duration_seconds_count/ { match($0, /stage="[a-z]+"/); s = substr($0, RSTART + 7, RLENGTH - 8); cnt[s] = $2 }
  END { for (s in sum) if (cnt[s] > 0) printf "  %-8s %9.1f us mean over %d\n", s, 1e6 * sum[s] / cnt[s], cnt[s] }'
echo "== the gateway's own request time per route (histogram_quantile over its buckets, and the share within 1 ms)"
curl -sf "$URL/metrics" | awk '
  /^overhead_http_request_duration_seconds_bucket/ {
    match($0, /route="[^"]+"/); r = substr($0, RSTART + 7, RLENGTH - 8)
    match($0, /le="[^"]+"/); le = substr($0, RSTART + 4, RLENGTH - 5)
    n[r]++; bound[r, n[r]] = (le == "+Inf") ? 1e9 : le + 0; cum[r, n[r]] = $2 }
  function quantile(r, q,   total, k, lo, below) {
    total = cum[r, n[r]]; lo = 0; below = 0
    for (k = 1; k <= n[r]; k++) {
      if (cum[r, k] >= q * total) {
        if (bound[r, k] >= 1e9) return lo
        return lo + (bound[r, k] - lo) * (q * total - below) / (cum[r, k] - below)
      }
      lo = bound[r, k]; below = cum[r, k]
    }
    return lo }
  END { for (r in n) { total = cum[r, n[r]]; if (total == 0) continue; within = 0
          for (k = 1; k <= n[r]; k++) if (bound[r, k] == 0.001) within = cum[r, k]
          printf "  %-22s p50 %7.3f ms  p99 %7.3f ms  within 1 ms %6.2f%%  (%d requests)\n", r, 1e3 * quantile(r, 0.5), 1e3 * quantile(r, 0.99), 100 * within / total, total } }'
echo "== uptime: $(uptime)"
