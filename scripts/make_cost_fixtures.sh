#!/usr/bin/env bash
# Regenerates the simulator's validation fixtures in tests/cost/fixtures/: measured runs of case 5
# on the embedded default (mem: queues, sqlite: store, the seed's three tokenizers) in several
# configurations, each kept as its per-item timeline (timeline CSV, gzipped) and the fit that
# `overhead analyze` makes of it (fits.json). The validation test fits on one run and predicts
# the others (tests/cost/validation_test.cpp).
#
#   bash scripts/make_cost_fixtures.sh [RECORDS_PER_HALF]   # default 1200 (x 3 tokenizers per run)
#   BACKEND=redis bash scripts/make_cost_fixtures.sh        # the same runs on Redis + PostgreSQL
#   BACKEND=sqs bash scripts/make_cost_fixtures.sh          # on the SQS and DynamoDB emulators
#
# BACKEND=embedded (default) writes tests/cost/fixtures/; BACKEND=redis starts a private Redis and
# PostgreSQL (scripts/services/, loopback, stopped at the end), runs both queues on Redis Streams
# and the store on PostgreSQL, and writes tests/cost/fixtures/redis/; BACKEND=sqs does the same on
# the AWS emulators (local-aws-sqs and dynalite behind their SigV4-checking proxies,
# scripts/services/aws_emulators.sh) and writes tests/cost/fixtures/sqs/.
#
# The bundled MT-Bench records are split in two halves (first and second half of the file); runs
# are named by half, workers, batch size and prefetch. All configurations run back to back in REPS
# rounds (default 8): on a shared machine the neighbours' load bursts stretch a run by up to 4x, so
# one run of a configuration says little. Every run's measured total and p50/p99 cycle go to
# rounds.tsv (the test compares predictions with their medians over rounds); the timelines and
# fits kept are those of the round with the median summed total (a typical round).
set -euo pipefail
command -v jq > /dev/null || { echo "make_cost_fixtures: jq missing: run scripts/setup.sh" >&2; exit 1; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${OVERHEAD_BIN:-$ROOT/build/overhead}
BACKEND=${BACKEND:-embedded}
PER_HALF=${1:-1200}
WORK=$(mktemp -d /tmp/overhead-cost-fixtures.XXXXXX)
[ -x "$BIN" ] || { echo "make_cost_fixtures: $BIN missing: run make" >&2; exit 1; }
case "$BACKEND" in
  embedded)
    OUT=$ROOT/tests/cost/fixtures
    trap 'rm -rf "$WORK"' EXIT ;;
  redis)
    OUT=$ROOT/tests/cost/fixtures/redis
    trap 'bash "$ROOT/scripts/services/redis.sh" clean "$WORK/services" >/dev/null; bash "$ROOT/scripts/services/postgres.sh" clean "$WORK/services" >/dev/null; rm -rf "$WORK"' EXIT
    bash "$ROOT/scripts/services/redis.sh" start "$WORK/services" >/dev/null
    bash "$ROOT/scripts/services/postgres.sh" start "$WORK/services" >/dev/null
    REDIS_URL=$(grep '^REDIS_URL=' "$WORK/services/redis.env" | cut -d= -f2-)
    PG_URL=$(grep '^PG_URL=' "$WORK/services/postgres.env" | cut -d= -f2-) ;;
  sqs)
    OUT=$ROOT/tests/cost/fixtures/sqs
    trap 'bash "$ROOT/scripts/services/aws_emulators.sh" clean "$WORK/services" >/dev/null; rm -rf "$WORK"' EXIT
    bash "$ROOT/scripts/services/aws_emulators.sh" start "$WORK/services" >/dev/null
    # shellcheck disable=SC1091  # written by aws_emulators.sh
    . "$WORK/services/aws.env"
    # The emulators' test-only key pair (aws_emulators.sh); never a real account's.
    export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_EC2_METADATA_DISABLED=true
    SQS_Q="region=us-east-1&visibility_ms=30000&wait_s=1&create=1&endpoint=$AWS_SQS_ENDPOINT"
    DDB_T="llama-3.3-70b-instruct,gemma-2-27b-it,phi-4" ;;
  *) echo "make_cost_fixtures: BACKEND must be embedded, redis or sqs, not $BACKEND" >&2; exit 2 ;;
esac
# The store of one run (a URL): the run's own SQLite file, or its own PostgreSQL table.
store_of() {
  case "$BACKEND" in
    redis) echo "$PG_URL?table=r$1_$2" ;;
    sqs) echo "dynamodb://r$1-$2?region=us-east-1&endpoint=$AWS_DYNAMODB_ENDPOINT&create=1&tokenizers=$DDB_T" ;;
    *) echo "sqlite:$WORK/$1/$2/records.db" ;;
  esac
}
# `overhead run` flags of one run's backends (none on the embedded default).
backend_flags() {
  case "$BACKEND" in
    redis) echo "--queue $REDIS_URL/r$1-$2-in?visibility_ms=30000 --log-queue $REDIS_URL/r$1-$2-log?visibility_ms=30000 --store $(store_of "$1" "$2")" ;;
    sqs) echo "--queue sqs://r$1-$2-in?$SQS_Q --log-queue sqs://r$1-$2-log?$SQS_Q --store $(store_of "$1" "$2")" ;;
  esac
}

total=$(zcat "$ROOT/data/jmtbench/records.jsonl.gz" | wc -l)
half=$((total / 2))
zcat "$ROOT/data/jmtbench/records.jsonl.gz" | awk -v h="$half" -v n="$PER_HALF" -v a="$WORK/half_a.jsonl" -v b="$WORK/half_b.jsonl" \
  'NR <= h && NR <= n { print > a } NR > h && NR <= h + n { print > b }'

# name half workers batch prefetch
RUNS=(
  "a_w1_b10_off a 1 10 off"
  "a_w2_b10_off a 2 10 off"
  "a_w1_b5_off a 1 5 off"
  "a_w1_b10_on a 1 10 on"
  "b_w1_b10_off b 1 10 off"
  "b_w2_b10_on b 2 10 on"
)
REPS=${REPS:-8}
mkdir -p "$OUT"
{
  echo "# Measured runs of case 5 on the $BACKEND backend (by scripts/make_cost_fixtures.sh)"
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# $REPS rounds of every configuration back to back; the timelines and fits are the runs of the round with"
  echo "# the median summed total; rounds.tsv has every run's measured total and p50/p99 cycle (for the medians)"
} > "$OUT/runs.tsv"
for rep in $(seq 1 "$REPS"); do
  sum=0
  for run in "${RUNS[@]}"; do
    read -r name part workers batch prefetch <<<"$run"
    dir=$WORK/$rep/$name
    mkdir -p "$WORK/$rep"
    # shellcheck disable=SC2046  # the flags are words by design (no spaces inside the URLs)
    "$BIN" run --case 5 --data "$WORK/half_$part.jsonl" --workers "$workers" --batch "$batch" --prefetch "$prefetch" \
      --experiment "$name" --out "$dir" --no-report --no-progress --allow-failures $(backend_flags "$rep" "$name") > "$dir.log"
    t=$(jq '.cases[0].total_s' "$dir/summary.json")
    echo "$t" > "$dir.total"
    sum=$(awk -v a="$sum" -v b="$t" 'BEGIN { print a + b }')
    # The run's measured figures (the analysis' definitions), for the median over rounds.
    "$BIN" simulate --replay "$(store_of "$rep" "$name")" --experiment "$name-case5" --write-timeline "$dir/timeline.csv" > /dev/null
    "$BIN" simulate --replay "$dir/timeline.csv" --measured-only --json > "$dir.measured.json"
    printf '%s\t%s\t%s\t%s\t%s\n' "$rep" "$name" "$(jq '.measured_total_s' "$dir.measured.json")" \
      "$(jq '.measured_cycle_us.p50' "$dir.measured.json")" "$(jq '.measured_cycle_us.p99' "$dir.measured.json")" >> "$WORK/rounds.tsv"
  done
  echo "$sum" > "$WORK/$rep.sum"
  echo "# round $rep: $(for run in "${RUNS[@]}"; do read -r name _ <<<"$run"; printf '%s=%.3f ' "$name" "$(cat "$WORK/$rep/$name.total")"; done)(load $(cut -d' ' -f1 /proc/loadavg))" >> "$OUT/runs.tsv"
  echo "make_cost_fixtures: round $rep done, summed total $sum s (load $(cut -d' ' -f1 /proc/loadavg))"
done
best=$(for rep in $(seq 1 "$REPS"); do echo "$(cat "$WORK/$rep.sum") $rep"; done | sort -g | sed -n "$(((REPS + 1) / 2))p" | cut -d' ' -f2)
echo "# kept: round $best" >> "$OUT/runs.tsv"
echo "# name	half	records	workers	batch	prefetch	total_s" >> "$OUT/runs.tsv"
for run in "${RUNS[@]}"; do
  read -r name part workers batch prefetch <<<"$run"
  dir=$WORK/$best/$name
  "$BIN" analyze --store "$(store_of "$best" "$name")" --experiment "$name-case5" --out "$dir/report" --no-png > /dev/null
  cp "$dir/report/fits.json" "$OUT/$name.fits.json"
  gzip -n -9 < "$dir/timeline.csv" > "$OUT/$name.timeline.csv.gz"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$part" "$PER_HALF" "$workers" "$batch" "$prefetch" "$(cat "$dir.total")" >> "$OUT/runs.tsv"
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/runs.tsv"
{ echo "round	name	total_s	p50_us	p99_us"; cat "$WORK/rounds.tsv"; } > "$OUT/rounds.tsv"
