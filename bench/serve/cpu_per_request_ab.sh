#!/usr/bin/env bash
# The gateway's CPU per chat request, two builds side by side in one run: rounds alternate the
# binaries (A, B, A, B, ...), each a fresh `serve --decoder none` with its in-process worker,
# consumer and SQLite store under `wrk` over the MT-Bench bodies; CPU is the gateway process's
# user + system time over the wrk run (from /proc), per request answered. Prints a row per round
# and the ratio B / A of the mean CPU per request (the machine's noise moves both alike).
# Usage: bash bench/serve/cpu_per_request_ab.sh BIN_A BIN_B [ROUNDS=3] [SECONDS=8] [CONNECTIONS=8] [TOKENIZER=phi-4]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN_A=$1 BIN_B=$2
ROUNDS=${3:-3} SECONDS_RUN=${4:-8} CONNECTIONS=${5:-8} TOKENIZER=${6:-phi-4}
SERVER_PID=
WORK=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  [ -z "$WORK" ] || rm -rf "$WORK"
}
trap cleanup EXIT
# shellcheck source=bench/serve/start_serve.sh
source "$ROOT/bench/serve/start_serve.sh"

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

RESULTS=$(mktemp /tmp/overhead-ab.XXXXXX)
echo "== load before: $(uptime)"
printf '| round | binary | requests | non-2xx | CPU per request (µs) |\n|---:|---|---:|---:|---:|\n'
for round in $(seq 1 "$ROUNDS"); do
  for label in A B; do
    bin=$BIN_A; [ "$label" = B ] && bin=$BIN_B
    WORK=$(mktemp -d /tmp/overhead-ab-serve.XXXXXX)
    start_serve "$bin" "$TOKENIZER" "$WORK" >/dev/null
    before=$(cpu_ticks "$SERVER_PID")
    out=$(wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_RUN}s" -s "$ROOT/bench/serve/wrk_post.lua" "$URL/v1/chat/completions" -- "$WORK/bodies.jsonl")
    after=$(cpu_ticks "$SERVER_PID")
    requests=$(echo "$out" | awk '/requests in/ { print $1 }')
    non2xx=$(echo "$out" | awk '/Non-2xx/ { print $NF }'); non2xx=${non2xx:-0}
    hz=$(getconf CLK_TCK)
    us=$(awk -v t=$((after - before)) -v hz="$hz" -v n="$requests" 'BEGIN { printf "%.1f", 1e6 * t / hz / n }')
    printf '| %d | %s | %s | %s | %s |\n' "$round" "$label" "$requests" "$non2xx" "$us"
    echo "$label $us" >>"$RESULTS"
    kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=
    rm -rf "$WORK"; WORK=
  done
done
awk '{ s[$1] += $2; n[$1]++ } END { a = s["A"] / n["A"]; b = s["B"] / n["B"];
  printf "\nmean CPU per request: A %.1f µs, B %.1f µs; B / A = %.3f\n", a, b, b / a }' "$RESULTS"
rm -f "$RESULTS"
echo "== load after: $(uptime)"
