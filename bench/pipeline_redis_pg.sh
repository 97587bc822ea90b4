#!/usr/bin/env bash
# Case 5 on Redis + PostgreSQL, CPU per item over every process (issue 26's target: <= 80 us, what
# 20,000 items/s needs on two cores). A private redis-server and PostgreSQL (scripts/services/),
# the bundled MT-Bench records for the three seed tokenizers (20,352 items) enqueued first, then
# WORKERS `overhead worker` and CONSUMERS `overhead consume` started together; the clock runs
# from their start until PostgreSQL holds every row (one psql count every 0.1 s).
# CPU, in µs per item: the workers and consumers (user + sys, /usr/bin/time), redis-server and
# PostgreSQL (the postmaster and all its children, /proc/PID/stat before and after; the backends
# that ended meanwhile are counted in the postmaster's cutime/cstime).
#   bash bench/pipeline_redis_pg.sh [WORKERS=2] [CONSUMERS=1]
# OVERHEAD_BINARY picks the binary (an older build, to compare). Run from a clone after `make build`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${OVERHEAD_BINARY:-$ROOT/build/overhead}
WORKERS=${1:-2}
CONSUMERS=${2:-1}
WORK=$(mktemp -d /tmp/overhead-redis-pg.XXXXXX)
cleanup() {
  bash "$ROOT/scripts/services/redis.sh" clean "$WORK" >/dev/null 2>&1 || true
  bash "$ROOT/scripts/services/postgres.sh" clean "$WORK" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
bash "$ROOT/scripts/services/redis.sh" start "$WORK" >/dev/null
bash "$ROOT/scripts/services/postgres.sh" start "$WORK" >/dev/null
# shellcheck disable=SC1091
. "$WORK/redis.env"
# shellcheck disable=SC1091
. "$WORK/postgres.env"
IN="$REDIS_URL/c5-in?visibility_ms=30000&max_receives=5"
LOG="$REDIS_URL/c5-log?visibility_ms=30000"
STORE="$PG_URL?table=c5"
"$BIN" enqueue --queue "$IN" --out "$WORK/enqueue" >/dev/null
ITEMS=$(REDISCLI_AUTH=$REDIS_PASSWORD redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --no-auth-warning XLEN c5-in)

ticks() {  # PID -> utime+stime (+ children's, with 1 as $2) in clock ticks
  awk -v kids="${2:-0}" '{ sub(/^.*\) /, ""); t = $12 + $13; if (kids) t += $14 + $15; print t }' "/proc/$1/stat"
}
pg_ticks() {  # the postmaster (its ended children included) and its live children
  local sum
  sum=$(ticks "$PG_PID" 1)
  for c in $(pgrep -P "$PG_PID"); do sum=$((sum + $(ticks "$c" 0 2>/dev/null || echo 0))); done
  echo "$sum"
}
HZ=$(getconf CLK_TCK)
redis0=$(ticks "$REDIS_PID"); pg0=$(pg_ticks)
echo "== $ITEMS items, $WORKERS workers, $CONSUMERS consumers; start: $(uptime)"
start=$(date +%s.%N)
pids=()
for i in $(seq 1 "$WORKERS"); do
  /usr/bin/time -f '%U %S' -o "$WORK/worker$i.time" "$BIN" worker --queue "$IN" --log-queue "$LOG" --experiment c5 --run-id bench \
    --name "w$i" --idle-exit 2 --no-progress --out "$WORK/w$i" 2>"$WORK/worker$i.log" &
  pids+=($!)
done
for i in $(seq 1 "$CONSUMERS"); do
  /usr/bin/time -f '%U %S' -o "$WORK/consumer$i.time" "$BIN" consume --log-queue "$LOG" --store "$STORE" --idle-exit 3 \
    --no-progress --out "$WORK/c$i" 2>"$WORK/consumer$i.log" &
  pids+=($!)
done
stored=0
until [ "$stored" -ge "$ITEMS" ]; do
  sleep 0.1
  stored=$(PGPASSWORD=$PG_PASSWORD psql -h 127.0.0.1 -p "$PG_PORT" -U "$PG_USER" -d "$PG_DB" -Atqc 'select count(*) from c5' 2>/dev/null || echo 0)
done
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
redis1=$(ticks "$REDIS_PID"); pg1=$(pg_ticks)
for p in "${pids[@]}"; do wait "$p"; done
sum_time() { cat "$WORK"/"$1"*.time | awk '{ u += $1; s += $2 } END { printf "%.3f %.3f", u, s }'; }
read -r wu ws <<<"$(sum_time worker)"
read -r cu cs <<<"$(sum_time consumer)"
awk -v n="$ITEMS" -v t="$elapsed" -v wu="$wu" -v ws="$ws" -v cu="$cu" -v cs="$cs" -v hz="$HZ" \
    -v r="$((redis1 - redis0))" -v pg="$((pg1 - pg0))" 'BEGIN {
  us = 1e6 / n
  printf "start -> %d rows stored: %.2f s, %.0f items/s\n", n, t, n / t
  printf "CPU µs per item:\n"
  printf "  workers (user + sys)   %7.1f (%.1f + %.1f)\n", (wu + ws) * us, wu * us, ws * us
  printf "  consumers              %7.1f\n", (cu + cs) * us
  printf "  redis-server           %7.1f\n", r / hz * us
  printf "  PostgreSQL             %7.1f\n", pg / hz * us
  printf "  total                  %7.1f\n", (wu + ws + cu + cs + (r + pg) / hz) * us
}'
echo "== end: $(uptime)"
