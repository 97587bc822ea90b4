#!/usr/bin/env bash
# Pipeline benchmark: the five cases on the embedded default over the full bundled MT-Bench set
# x the seed's three tokenizers, then case 5 with prefetch off, then cases 1 and 5 with two
# workers. Prints the table of each run and a comparison of the figures the issue targets:
# case 1 us/item, case 5 / case 1, and batch-boundary vs other items with prefetch on and off.
# Usage: bench/pipeline.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
OUT=${2:-$ROOT/out/bench-pipeline}
BIN=$BUILD/overhead
cd "$ROOT"
rm -rf "$OUT"
run() {  # name, args...
  local name=$1; shift
  echo "== $name: overhead run $*"
  "$BIN" run --no-progress --out "$OUT/$name" "$@"
}
run all-prefetch-on
run case5-prefetch-off --case 5 --prefetch off
run two-workers --case 1,5 --workers 2
python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
def load(name):
    with open(os.path.join(out, name, "summary.json")) as f:
        return {c["case"]: c for c in json.load(f)["cases"]}
on, off, two = load("all-prefetch-on"), load("case5-prefetch-off"), load("two-workers")
print("\n== targets")
print(f"case 1, one worker:   {on[1]['us_per_item']:.2f} us/item wall (target <= 25); "
      f"CPU {on[1]['process_cpu_us_per_item']:.2f} us/item (process), {on[1]['worker_cpu_us_per_item']:.2f} (worker thread)")
print(f"case 5, one worker:   {on[5]['us_per_item']:.2f} us/item wall; "
      f"CPU {on[5]['process_cpu_us_per_item']:.2f} us/item (process), {on[5]['worker_cpu_us_per_item']:.2f} (worker thread)")
print(f"case 1, two workers:  {two[1]['us_per_item']:.2f} us/item")
print(f"case 5 / case 1, one worker:  {on[5]['total_s'] / on[1]['total_s']:.2f} (target <= 1.3)")
print(f"case 5 / case 1, two workers: {two[5]['total_s'] / two[1]['total_s']:.2f}")
for label, c in (("prefetch on ", on[5]), ("prefetch off", off[5])):
    s = c["stages_us"]
    print(f"case 5 {label}: time between items, before a batch-boundary item {s['between_boundary']:.2f} us, "
          f"before others {s['between_other']:.2f} us; gap boundary {s['gap_boundary']:.2f} / other {s['gap_other']:.2f} us; "
          f"total {c['total_s']:.3f} s")
PY
