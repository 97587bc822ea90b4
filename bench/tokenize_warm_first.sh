#!/usr/bin/env bash
# Warm and first-pass encode speed, ours and HF tokenizers side by side in one run, on the
# Japanese MT-Bench message contents (data/jmtbench/records.jsonl.gz) and the English corpus of
# the same shape (bench/english/texts.jsonl.gz), one thread each, add_special_tokens=true.
#
#   bash bench/tokenize_warm_first.sh [TOKENIZER...]   (default: the three seed tokenizers)
#   env: BUILD (default build), PASSES (warm passes, median; default 5), CPU (pin both sides to
#        this core with taskset), CORPORA (default "ja en"), OVERHEAD_MODELS, REF_PREFIX /
#        REF_NODE_MODULES (the HF reference, scripts/install_ref.sh; without it only ours is shown)
#
# Warm = the median of PASSES passes after one untimed pass (as tokbench and toks report it);
# first = the first pass of a fresh process, after loading (each side's process is started
# anew for every row). MB/s are 10^6 input bytes over the thread's CPU time (ours) or the
# process's CPU time (HF, a single-threaded reference), so other load on the machine changes
# them less than wall time; ratios are ours / HF. Token totals must agree on both sides.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
BIN=$BUILD/overhead
MODELS=${OVERHEAD_MODELS:-$ROOT/models}
PASSES=${PASSES:-5}
CORPORA=${CORPORA:-ja en}
export TOKENIZERS_PARALLELISM=false RAYON_NUM_THREADS=1
NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || NAMES=(llama-3.3-70b-instruct gemma-2-27b-it phi-4)
[ -x "$BIN" ] || { echo "tokenize_warm_first: $BIN not built" >&2; exit 1; }
PIN=()
[ -n "${CPU:-}" ] && PIN=(taskset -c "$CPU")

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
python3 - "$ROOT/data/jmtbench/records.jsonl.gz" "$TMP/ja.jsonl" <<'PY'
import gzip, json, sys
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in f:
        if line.strip():
            for m in json.loads(line)["prompt"]:
                out.write(json.dumps({"text": m["content"]}, ensure_ascii=False) + "\n")
PY
gzip -dc "$ROOT/bench/english/texts.jsonl.gz" > "$TMP/en.jsonl"

HF=1
node -e 'import(process.argv[1]).then(m => m.refNodeModules())' "$ROOT/scripts/ref/hf_tokenizers.mjs" >/dev/null 2>&1 || HF=0
[ $HF = 1 ] || echo "# HF reference not installed (scripts/install_ref.sh): ours only" >&2

echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg); passes: $PASSES${CPU:+; pinned to CPU $CPU}"
for name in "${NAMES[@]}"; do
  dir=$MODELS/$name
  for corpus in $CORPORA; do
    ours=$("${PIN[@]}" "$BIN" bench tokenize --tokenizer "$name" --input "$TMP/$corpus.jsonl" --passes "$PASSES" --threads 1 --json | tail -1)
    hf=null
    [ $HF = 1 ] && hf=$("${PIN[@]}" node "$ROOT/bench/hf_tokenize_bench.mjs" --dir "$dir" --input "$TMP/$corpus.jsonl" --passes "$PASSES")
    printf '%s\t%s\t%s\t%s\n' "$name" "$corpus" "$ours" "$hf"
  done
done > "$TMP/results.tsv"

python3 - "$TMP/results.tsv" <<'PY'
import json, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print(f"{'tokenizer':<24} {'texts':<5} {'MB':>5} | {'warm ours':>9} {'HF':>7} {'ratio':>7} | {'first ours':>10} {'HF':>7} {'ratio':>7} | {'load s':>6} {'tokens':>10}")
bad = False
for name, corpus, o, h in rows:
    o, h = json.loads(o), json.loads(h)
    def ratio(a, b):
        return f"{a / b:>6.1f}x" if b else f"{'-':>7}"
    hw = h["cpu_mb_per_s"] if h else 0
    hf1 = h["first_cpu_mb_per_s"] if h else 0
    same = not h or h["tokens"] == o["tokens"]
    bad |= not same
    print(f"{name:<24} {corpus:<5} {o['bytes'] / 1e6:>5.2f} | {o['cpu_mb_per_s']:>9.1f} {hw:>7.2f} {ratio(o['cpu_mb_per_s'], hw)} | "
          f"{o['first_cpu_mb_per_s']:>10.1f} {hf1:>7.2f} {ratio(o['first_cpu_mb_per_s'], hf1)} | {o['load_s']:>6.3f} {o['tokens']:>10}"
          f"{'' if same else '  TOKEN COUNTS DIFFER: HF ' + str(h['tokens'])}")
impl = next((json.loads(r[3]).get("impl") for r in rows if r[3] != "null"), None)
print(f"# HF: {impl}, encodeBatch, one thread" if impl else "# HF: not measured")
sys.exit(1 if bad else 0)
PY
