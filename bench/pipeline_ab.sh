#!/usr/bin/env bash
# The pipeline's instructions per item, two builds side by side: callgrind counts (independent of
# the machine's load) of `overhead run` for case 1 (render + encode + publish + store, no broker)
# and case 5 (the whole pipeline on the embedded default), each build into a fresh --out folder.
# Prints Ir per item for each and the ratio B / A.
# Usage: bash bench/pipeline_ab.sh BIN_A BIN_B [ITEMS=500] [TOKENIZER=phi-4]
set -euo pipefail
BIN_A=$1 BIN_B=$2
ITEMS=${3:-500} TOKENIZER=${4:-phi-4}
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/overhead-pipeline-ab.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# Instructions of one run, the whole process (callgrind's summary line).
instructions() {  # BIN CASE NAME
  valgrind --tool=callgrind --callgrind-out-file="$WORK/$3.out" "$1" run --no-progress --no-report --case "$2" \
    --limit "$ITEMS" --tokenizers "$TOKENIZER" --out "$WORK/$3" >/dev/null 2>"$WORK/$3.log"
  awk '/^summary:/ { print $2 }' "$WORK/$3.out"
}

echo "== $ITEMS items, $TOKENIZER; load: $(uptime)"
printf '| case | A: Ir per item | B: Ir per item | B / A |\n|---:|---:|---:|---:|\n'
for c in 1 5; do
  a=$(instructions "$BIN_A" "$c" "a$c")
  b=$(instructions "$BIN_B" "$c" "b$c")
  awk -v c="$c" -v a="$a" -v b="$b" -v n="$ITEMS" 'BEGIN { printf "| %d | %.1fk | %.1fk | %.4f |\n", c, a / n / 1e3, b / n / 1e3, b / a }'
done
