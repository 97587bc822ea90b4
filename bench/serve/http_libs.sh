#!/usr/bin/env bash
# cpp-httplib vs Boost.Beast under the same work (issue 13: "measure before choosing"). Starts the
# two bench servers (overhead_bench_httplib_server, overhead_bench_beast_server; both call the same
# TokenizeHandler), checks that they answer the same bodies byte for byte, warms each, then runs wrk
# against each in turn for each route and connection count:
#   POST /v1/tokenize  MT-Bench prompts (wrk_post.lua posts them in turn): render + encode inline
#   GET  /ping         a fixed 5-byte body: the library's own per-request cost
# Rounds alternate the order (httplib first in odd rounds, Beast first in even ones) so that drift
# in the machine's load falls on both alike. Besides wrk's figures it reads each server's CPU time
# (utime + stime from /proc/PID/stat) around each run: CPU per request is the fairest figure on a
# shared machine, since it does not count the time the server waited for a core.
# Usage: bash bench/serve/http_libs.sh [SECONDS=10] [ROUNDS=2] [TOKENIZER=phi-4]
# Run from the root of a clone after `ninja -C build overhead_bench_httplib_server overhead_bench_beast_server`
# (OVERHEAD_BENCH_DIR overrides build/bench; OVERHEAD_MODELS where the tokenizer sets are).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_RUN=${1:-10}
ROUNDS=${2:-2}
TOKENIZER=${3:-phi-4}
BENCH_DIR=${OVERHEAD_BENCH_DIR:-$ROOT/build/bench}
LIBS=(httplib beast)
ROUTES=(/v1/tokenize /ping)
CONNS=(1 8)
CLK_TCK=$(getconf CLK_TCK)
WORK=$(mktemp -d /tmp/overhead-http-libs.XXXXXX)
declare -A PID PORT
cleanup() {
  for lib in "${LIBS[@]}"; do
    if [ -n "${PID[$lib]:-}" ]; then kill -TERM "${PID[$lib]}" 2>/dev/null || true; wait "${PID[$lib]}" 2>/dev/null || true; fi
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
for lib in "${LIBS[@]}"; do
  [ -x "$BENCH_DIR/overhead_bench_${lib}_server" ] || { echo "missing $BENCH_DIR/overhead_bench_${lib}_server (needs OVERHEAD_BENCH and, for beast, Boost)" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "wrk is not installed (Debian package wrk)" >&2; exit 1; }
echo "== start: $(uptime)"

# One body per MT-Bench record: its prompt messages for the chosen model.
python3 "$ROOT/bench/serve/mtbench_bodies.py" "$ROOT/data/jmtbench/records.jsonl.gz" "$TOKENIZER" "$WORK/bodies.jsonl"

# Both servers stay up for the whole run (the idle one sleeps in a wait), so rounds can alternate.
for lib in "${LIBS[@]}"; do
  "$BENCH_DIR/overhead_bench_${lib}_server" 0 "$TOKENIZER" >"$WORK/$lib.out" 2>"$WORK/$lib.err" &
  PID[$lib]=$!
  for _ in $(seq 1 100); do [ -s "$WORK/$lib.out" ] && break; sleep 0.1; done
  PORT[$lib]=$(head -1 "$WORK/$lib.out")
  [ -n "${PORT[$lib]}" ] || { cat "$WORK/$lib.err" >&2; exit 1; }
done

# Same request, same answer: every MT-Bench body and /ping, compared byte for byte (status and
# body; the headers differ by design, httplib adds Keep-Alive).
python3 - "$WORK/bodies.jsonl" "${PORT[httplib]}" "${PORT[beast]}" <<'PY'
import http.client, sys
bodies, ports = sys.argv[1], sys.argv[2:]
conns = [http.client.HTTPConnection("127.0.0.1", int(p)) for p in ports]
def ask(c, method, path, body=None):
    c.request(method, path, body=body, headers={"Content-Type": "application/json"} if body else {})
    r = c.getresponse()
    return r.status, r.read()
n = 0
with open(bodies, "rb") as f:
    for n, line in enumerate(f, 1):
        answers = [ask(c, "POST", "/v1/tokenize", line.rstrip(b"\n")) for c in conns]
        if answers[0] != answers[1] or answers[0][0] != 200:
            sys.exit(f"body {n}: httplib {answers[0][0]} {answers[0][1][:200]!r} vs beast {answers[1][0]} {answers[1][1][:200]!r}")
answers = [ask(c, "GET", "/ping") for c in conns]
if answers[0] != answers[1] or answers[0][0] != 200: sys.exit(f"/ping: {answers[0]!r} vs {answers[1]!r}")
print(n, file=open(sys.argv[1] + ".checked", "w"))
PY
n=$(cat "$WORK/bodies.jsonl.checked")
echo "== identical answers from both servers: $n /v1/tokenize bodies and /ping"

cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }

# wrk against one server: appends "round lib route conns requests rps p50_us p99_us cpu_ticks errors".
run() {
  local round=$1 lib=$2 route=$3 conns=$4 seconds=$5 threads=$(( $4 < 2 ? 1 : 2 ))
  local url="http://127.0.0.1:${PORT[$lib]}$route" script=()
  [ "$route" = /v1/tokenize ] && script=(-s "$ROOT/bench/serve/wrk_post.lua")
  local before after
  before=$(cpu_ticks "${PID[$lib]}")
  wrk -t"$threads" -c"$conns" -d"${seconds}s" --latency "${script[@]}" "$url" -- "$WORK/bodies.jsonl" >"$WORK/wrk.out"
  after=$(cpu_ticks "${PID[$lib]}")
  [ "$round" = warm ] && return 0
  awk -v round="$round" -v lib="$lib" -v route="$route" -v conns="$conns" -v ticks=$((after - before)) '
    function us(v) { if (v ~ /us$/) return v + 0; if (v ~ /ms$/) return 1e3 * v; if (v ~ /m$/) return 6e7 * v; return 1e6 * v }
    $1 == "50%" { p50 = us($2) }  $1 == "99%" { p99 = us($2) }
    / requests in / { n = $1 }  /^Requests\/sec:/ { rps = $2 }
    /Non-2xx|Socket errors/ { err = err $0 }
    END { printf "%s %s %s %s %d %.1f %.0f %.0f %d %s\n", round, lib, route, conns, n, rps, p50, p99, ticks, (err == "" ? "-" : "errors") }' \
    "$WORK/wrk.out" >>"$WORK/results.txt"
  grep -E "Non-2xx|Socket errors" "$WORK/wrk.out" | sed "s|^|  $lib $route c$conns: |" >&2 || true
}

for lib in "${LIBS[@]}"; do  # loads the binding, faults in the pages, starts the pool threads
  for route in "${ROUTES[@]}"; do run warm "$lib" "$route" 8 2; done
done
for round in $(seq 1 "$ROUNDS"); do
  order=("${LIBS[@]}"); [ $((round % 2)) = 0 ] && order=(beast httplib)
  for route in "${ROUTES[@]}"; do
    for conns in "${CONNS[@]}"; do
      for lib in "${order[@]}"; do run "$round" "$lib" "$route" "$conns" "$SECONDS_RUN"; done
    done
  done
  echo "== round $round done: $(uptime)"
done

echo "== wrk ${SECONDS_RUN}s per run, $ROUNDS runs per row ($TOKENIZER); req/s, p50, p99: mean over the runs;"
echo "   CPU/req: the server's utime+stime over all its runs / its requests; cores: that CPU time / the runs' wall time;"
echo "   x: beast / httplib"
awk -v hz="$CLK_TCK" -v secs="$SECONDS_RUN" '
  { k = $3 " " $4 " " $2; runs[k]++; n[k] += $5; rps[k] += $6; p50[k] += $7; p99[k] += $8; ticks[k] += $9; if ($10 != "-") bad[k] = 1 }
  END {
    printf "%-13s %5s %-8s %10s %10s %10s %12s %6s %8s %8s %8s %8s\n", "route", "conns", "library", "req/s", "p50 us", "p99 us", "CPU us/req", "cores", "x req/s", "x p50", "x p99", "x CPU"
    split("/v1/tokenize /ping", routes, " "); split("1 8", conns, " ")
    for (r = 1; r <= 2; r++) for (c = 1; c <= 2; c++) {
      h = routes[r] " " conns[c] " httplib"; b = routes[r] " " conns[c] " beast"
      for (i = 0; i < 2; i++) {
        k = i ? b : h
        cpu[k] = n[k] ? 1e6 * ticks[k] / hz / n[k] : 0
        printf "%-13s %5s %-8s %10.0f %10.0f %10.0f %12.1f %6.2f", routes[r], conns[c], (i ? "beast" : "httplib") (bad[k] ? "!" : ""), rps[k] / runs[k], p50[k] / runs[k], p99[k] / runs[k], cpu[k], ticks[k] / hz / (runs[k] * secs)
        if (i) printf " %8.2f %8.2f %8.2f %8.2f", (rps[b] / runs[b]) / (rps[h] / runs[h]), p50[b] / p50[h], p99[b] / p99[h], cpu[h] ? cpu[b] / cpu[h] : 0
        printf "\n"
      }
    }
  }' "$WORK/results.txt"
echo "== threads: httplib $(awk '/^Threads/ { print $2 }' "/proc/${PID[httplib]}/status"), beast $(awk '/^Threads/ { print $2 }' "/proc/${PID[beast]}/status") (nproc $(nproc))"
echo "== end: $(uptime)"
