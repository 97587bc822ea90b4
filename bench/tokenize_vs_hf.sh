#!/usr/bin/env bash
# Side-by-side tokenizer speed, in the same run on the same texts: `overhead bench tokenize`
# (single-threaded) against HF tokenizers (encodeBatch, single thread), on every MT-Bench message
# content of data/jmtbench/records.jsonl.gz, add_special_tokens=true, median of PASSES passes.
#
#   bash bench/tokenize_vs_hf.sh [TOKENIZER...]   (default: the three seed tokenizers)
#   env: BUILD (default build), PASSES (default 5), OVERHEAD_MODELS, REF_PREFIX,
#        BASELINE (another `overhead` binary, e.g. of an older commit: measured in the same run
#        against the same HF figure, a row "NAME@baseline" each, for before/after ratios)
#
# Prints a table: MB/s ours, MB/s HF, ratio, us/item, tokens (both sides must agree).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
BIN=$BUILD/overhead
MODELS=${OVERHEAD_MODELS:-$ROOT/models}
PASSES=${PASSES:-5}
export TOKENIZERS_PARALLELISM=false RAYON_NUM_THREADS=1
NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || NAMES=(llama-3.3-70b-instruct gemma-2-27b-it phi-4)

[ -x "$BIN" ] || { echo "tokenize_vs_hf: $BIN not built (make build)" >&2; exit 1; }
dir_of() {  # tokenizer name -> folder the HF reference loads
  case "$1" in
    gemma-3) echo "$MODELS/raw/gemma3" ;;
    llama-3) echo "$MODELS/raw/llama3" ;;
    cl100k) echo "$MODELS/raw/gpt35turbo" ;;
    o200k) echo "$MODELS/raw/gpt4o" ;;
    llama3 | llama3_1 | gemma3 | gemini | gpt35turbo | gpt4o) echo "$MODELS/raw/$1" ;;
    *) echo "$MODELS/$1" ;;
  esac
}

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
TEXTS=$TMP/mtbench_texts.jsonl
python3 - "$ROOT/data/jmtbench/records.jsonl.gz" "$TEXTS" <<'PY'
import gzip, json, sys
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in f:
        if line.strip():
            for m in json.loads(line)["prompt"]:
                out.write(json.dumps({"text": m["content"]}, ensure_ascii=False) + "\n")
PY

echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores; $(uname -sr); node $(node --version)"
echo "# input: every MT-Bench message content ($(wc -l < "$TEXTS") texts, $(python3 -c 'import sys,json; print(sum(len(json.loads(l)["text"].encode()) for l in open(sys.argv[1])))' "$TEXTS") bytes); passes: $PASSES (median)"
for name in "${NAMES[@]}"; do
  ours=$("$BIN" bench tokenize --tokenizer "$name" --input "$TEXTS" --passes "$PASSES" --json | tail -1)
  hf=$(node "$ROOT/bench/hf_tokenize_bench.mjs" --dir "$(dir_of "$name")" --input "$TEXTS" --passes "$PASSES")
  printf '%s\t%s\t%s\n' "$name" "$ours" "$hf"
  if [ -n "${BASELINE:-}" ]; then
    base=$("$BASELINE" bench tokenize --tokenizer "$name" --input "$TEXTS" --passes "$PASSES" --json | tail -1)
    printf '%s\t%s\t%s\n' "$name@baseline" "$base" "$hf"
  fi
done > "$TMP/results.tsv"

python3 - "$TMP/results.tsv" <<'PY'
import json, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print(f"{'tokenizer':<32} {'MB/s ours':>10} {'MB/s HF':>9} {'ratio':>7} {'us/item ours':>13} {'us/item HF':>11} {'tokens ours':>12} {'tokens HF':>10}")
bad = False
for name, o, h in rows:
    o, h = json.loads(o), json.loads(h)
    same = o["tokens"] == h["tokens"]
    bad |= not same
    print(f"{name:<32} {o['mb_per_s']:>10.2f} {h['mb_per_s']:>9.2f} {o['mb_per_s'] / h['mb_per_s']:>6.1f}x "
          f"{o['us_per_item']:>13.2f} {h['us_per_item']:>11.2f} {o['tokens']:>12} {h['tokens']:>10}{'' if same else '  TOKEN COUNTS DIFFER'}")
print(f"# HF: {json.loads(rows[0][2]).get('impl', '?')}, encodeBatch, TOKENIZERS_PARALLELISM=false RAYON_NUM_THREADS=1")
sys.exit(1 if bad else 0)
PY
