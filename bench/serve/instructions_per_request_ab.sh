#!/usr/bin/env bash
# The gateway's instructions per chat request, two builds side by side (callgrind: independent of
# the machine's load, which the CPU-time A/B of cpu_per_request_ab.sh is not). Each build runs
# `serve --decoder none` with its in-process worker, consumer and SQLite store under callgrind
# twice: N requests, then 2N (the first N MT-Bench bodies, then the first 2N, posted in turn over
# one kept-alive connection). The difference of the two runs' totals over N cancels what does not
# depend on the requests (start-up, the tokenizer's load, shutdown).
# Usage: bash bench/serve/instructions_per_request_ab.sh BIN_A BIN_B [N=300] [TOKENIZER=phi-4]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN_A=$1 BIN_B=$2
N=${3:-300} TOKENIZER=${4:-phi-4}
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/overhead-ipr-ab.XXXXXX)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
python3 "$ROOT/bench/serve/mtbench_bodies.py" "$ROOT/data/jmtbench/records.jsonl.gz" "$TOKENIZER" "$WORK/bodies.jsonl" 2>/dev/null

# Total instructions of one gateway that answered COUNT requests.
instructions() {  # BIN COUNT NAME
  local bin=$1 count=$2 name=$3 out="$WORK/$3"
  mkdir -p "$out"
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" "$bin" serve --listen 127.0.0.1:0 --tokenizers "$TOKENIZER" \
    --out "$out" --special-tokens-in-content allow --request-timeout 600 2>"$out/serve.log" &
  SERVER_PID=$!
  local url=
  for _ in $(seq 1 1200); do
    url=$(grep -o 'http://127.0.0.1:[0-9]*' "$out/serve.log" 2>/dev/null | head -1 || true)
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { cat "$out/serve.log" >&2; exit 1; }
  python3 - "$url" "$WORK/bodies.jsonl" "$count" <<'PY'
import http.client, sys, urllib.parse
url, path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
u = urllib.parse.urlparse(url)
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
with open(path, encoding="utf-8") as f:
    bodies = [next(f) for _ in range(count)]
for body in bodies:
    conn.request("POST", "/v1/chat/completions", body=body.encode(), headers={"content-type": "application/json"})
    r = conn.getresponse()
    r.read()
    if r.status != 200:
        sys.exit(f"status {r.status}")
PY
  kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=
  awk '/^summary:/ { print $2 }' "$out/cg.out"*
}

echo "== $N and $((2 * N)) requests, $TOKENIZER; load: $(uptime)"
printf '| binary | Ir, %d requests | Ir, %d requests | Ir per request |\n|---|---:|---:|---:|\n' "$N" $((2 * N))
declare -A per
for label in A B; do
  bin=$BIN_A; [ "$label" = B ] && bin=$BIN_B
  one=$(instructions "$bin" "$N" "${label}1")
  two=$(instructions "$bin" $((2 * N)) "${label}2")
  per[$label]=$(awk -v a="$one" -v b="$two" -v n="$N" 'BEGIN { printf "%.0f", (b - a) / n }')
  printf '| %s | %s | %s | %s |\n' "$label" "$one" "$two" "${per[$label]}"
done
awk -v a="${per[A]}" -v b="${per[B]}" 'BEGIN { printf "\nIr per request: B / A = %.4f\n", b / a }'
