#!/usr/bin/env bash
# Many kept-alive clients on `overhead serve` (issue 21, defect 14), --decoder none, MT-Bench prompts:
#  1. CLIENTS kept-alive connections (default 1,000) offering RATE requests/s in all (default 2,000)
#     of POST /v1/chat/completions: wrk with wrk_paced.lua (each connection waits a random
#     0..2×(CLIENTS/RATE) s before each request). Prints wrk's summary: the served rate and the
#     latency percentiles of what was served, timeouts and errors.
#  2. IDLE idle kept-alive connections (default 10,000; each sent one GET /healthz): the server's
#     RSS and thread count before and while they are held, and the time of a chat request and of
#     /healthz meanwhile.
#  Over run 1 it prints the server's CPU, run-queue wait and timeslices per request (/proc schedstat).
# Usage: bash bench/serve/keepalive.sh [SECONDS=30] [CLIENTS=1000] [RATE=2000] [IDLE=10000] [TOKENIZER=phi-4]
# OVERHEAD_BINARY picks the binary (an older build, to compare). Run from the root of a clone after
# `make build`. Raises `ulimit -n` (soft) to the hard limit: both sides hold IDLE descriptors.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_RUN=${1:-30}
CLIENTS=${2:-1000}
RATE=${3:-2000}
IDLE=${4:-10000}
TOKENIZER=${5:-phi-4}
BIN=${OVERHEAD_BINARY:-$ROOT/build/overhead}
MEAN_MS=$(( CLIENTS * 1000 / RATE ))
ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -gt $(( IDLE + 100 )) ] || { echo "ulimit -n $(ulimit -n) is too low for $IDLE connections" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is not installed (Debian package wrk)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/overhead-keepalive.XXXXXX)
SERVER_PID=
HOLDER_PID=
cleanup() {
  if [ -n "$HOLDER_PID" ]; then kill "$HOLDER_PID" 2>/dev/null || true; fi
  if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
echo "== start: $(uptime)"
# shellcheck source=bench/serve/start_serve.sh
source "$ROOT/bench/serve/start_serve.sh"
start_serve "$BIN" "$TOKENIZER" "$WORK"
PORT=${URL##*:}

proc() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$SERVER_PID/status"; }
probe() {  # seconds for one chat request and one /healthz, each on a new connection
  local chat health
  chat=$(head -1 "$WORK/bodies.jsonl" | curl -s -o /dev/null -m 30 -w '%{http_code} %{time_total}' "$URL/v1/chat/completions" -H 'content-type: application/json' -d @- || true)
  health=$(curl -s -o /dev/null -m 30 -w '%{http_code} %{time_total}' "$URL/healthz" || true)
  echo "chat: $chat s, /healthz: $health s"
}

# The server's threads' scheduler figures (/proc/PID/task/*/schedstat: ns on a CPU, ns waiting on
# a run queue, timeslices), summed per thread name: where the time of a request goes when the
# cores are shared.
schedstat() {
  for t in /proc/$SERVER_PID/task/*; do
    printf '%s %s\n' "$(tr ' ' '_' <"$t/comm")" "$(cat "$t/schedstat")"
  done | awk '{cpu[$1]+=$2; wait[$1]+=$3; n[$1]+=$4} END {for (k in cpu) printf "%s %d %d %d\n", k, cpu[k], wait[k], n[k]}' | sort
}
sched_delta() {  # BEFORE AFTER REQUESTS: per thread name, CPU and run-queue wait per request, mean wait per timeslice
  join <(echo "$1") <(echo "$2") | awk -v r="$3" 'BEGIN {printf "   %-16s %14s %16s %16s %16s\n", "threads", "CPU us/request", "wait us/request", "slices/request", "wait us/slice"}
    {c=$5-$2; w=$6-$3; n=$7-$4; if (n > 0) printf "   %-16s %14.1f %16.1f %16.1f %16.1f\n", $1, c/1000/r, w/1000/r, n/r, w/1000/n}'
}

echo "== 1. $CLIENTS kept-alive clients offering $RATE requests/s of POST /v1/chat/completions for ${SECONDS_RUN}s"
echo "   (wrk -t2 -c$CLIENTS -d${SECONDS_RUN}s --timeout 10s --latency -s wrk_paced.lua, mean wait $MEAN_MS ms)"
SCHED_BEFORE=$(schedstat)
wrk -t2 -c"$CLIENTS" -d"${SECONDS_RUN}s" --timeout 10s --latency -s "$ROOT/bench/serve/wrk_paced.lua" "$URL/v1/chat/completions" \
  -- "$WORK/bodies.jsonl" "$MEAN_MS" | tee "$WORK/wrk.out"
SCHED_AFTER=$(schedstat)
SERVED=$(awk '/requests in/ {print $1}' "$WORK/wrk.out")
echo "   the server's threads over the run ($SERVED requests; /proc/PID/task/*/schedstat):"
sched_delta "$SCHED_BEFORE" "$SCHED_AFTER" "${SERVED:-1}"
echo "   uptime after: $(uptime)"
sleep 2

echo "== 2. $IDLE idle kept-alive connections"
echo "   before: RSS $(proc VmRSS) kB, threads $(proc Threads); $(probe)"
mkfifo "$WORK/hold"
python3 "$ROOT/bench/serve/idle_connections.py" 127.0.0.1 "$PORT" "$IDLE" 60 <"$WORK/hold" >"$WORK/idle.out" &
HOLDER_PID=$!
exec 3>"$WORK/hold"  # holds the connections open until closed
for _ in $(seq 1 900); do [ -s "$WORK/idle.out" ] && break; sleep 0.1; done
echo "   opened: $(cat "$WORK/idle.out")"
sleep 1
echo "   held:   RSS $(proc VmRSS) kB (peak $(proc VmHWM) kB), threads $(proc Threads); $(probe)"
exec 3>&-
wait "$HOLDER_PID" 2>/dev/null || true
HOLDER_PID=
echo "== uptime: $(uptime)"
