#!/usr/bin/env bash
# Tokenizer speed from Python against HF tokenizers, in the same run on the same texts (every
# MT-Bench message content of data/jmtbench/records.jsonl.gz, add_special_tokens=true), median of
# PASSES passes, single-threaded and with THREADS threads.
#
#   bash bench/tokenize_py_vs_hf.sh [TOKENIZER...]   (default: the three seed tokenizers)
#   env: PYTHON (default build/python-venv/bin/python, where `make test` installs the package),
#        PASSES (default 5), THREADS (default nproc), OVERHEAD_MODELS, REF_PREFIX
#
# HF's own Python package (`tokenizers`) is not packaged for Debian 12 and cannot be installed
# here, so the HF side is the same Rust core through node (@anush008/tokenizers, as
# bench/tokenize_vs_hf.sh), its best call: one encodeBatch over all texts, with RAYON_NUM_THREADS
# = 1 and = THREADS. Ours from Python: tok(text) text by text (the seed's way), encode_batch with
# 1 and THREADS threads, and THREADS Python threads calling tok(text) (bench/tokenize_py_bench.py).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-$ROOT/build/python-venv/bin/python}
MODELS=${OVERHEAD_MODELS:-$ROOT/models}
PASSES=${PASSES:-5}
THREADS=${THREADS:-$(nproc)}
NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || NAMES=(llama-3.3-70b-instruct gemma-2-27b-it phi-4)

"$PYTHON" -c 'import overhead' 2>/dev/null || {
  echo "tokenize_py_vs_hf: $PYTHON cannot import overhead (make test installs it; or PYTHON=...)" >&2; exit 1; }
bash "$ROOT/scripts/install_ref.sh"
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
"$PYTHON" - "$ROOT/data/jmtbench/records.jsonl.gz" "$TEXTS" <<'PY'
import gzip, json, sys
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in f:
        if line.strip():
            for m in json.loads(line)["prompt"]:
                out.write(json.dumps({"text": m["content"]}, ensure_ascii=False) + "\n")
PY

echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $("$PYTHON" --version); node $(node --version)"
echo "# input: every MT-Bench message content ($(wc -l < "$TEXTS") texts); passes: $PASSES (median); threads: $THREADS"
for name in "${NAMES[@]}"; do
  "$PYTHON" "$ROOT/bench/tokenize_py_bench.py" --tokenizer "$name" --input "$TEXTS" --passes "$PASSES" \
    --threads "$THREADS" | sed "s/^/$name\tours\t/"
  for t in 1 "$THREADS"; do
    TOKENIZERS_PARALLELISM=$([ "$t" = 1 ] && echo false || echo true) RAYON_NUM_THREADS=$t \
      node "$ROOT/bench/hf_tokenize_bench.mjs" --dir "$(dir_of "$name")" --input "$TEXTS" --passes "$PASSES" |
      sed "s/^/$name\thf$t\t/"
  done
done > "$TMP/results.tsv"

"$PYTHON" - "$TMP/results.tsv" "$THREADS" <<'PY'
import json, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
threads = sys.argv[2]
by_name = {}
for name, side, js in rows:
    by_name.setdefault(name, []).append((side, json.loads(js)))
print(f"{'tokenizer':<24} {'way':<34} {'threads':>7} {'MB/s':>8} {'us/item':>8} {'vs HF same threads':>19} {'tokens':>9}")
bad = False
for name, results in by_name.items():
    hf = {1: next(r for s, r in results if s == "hf1"), int(threads): next(r for s, r in results if s == f"hf{threads}")}
    for side, r in results:
        t = r.get("threads", 1) if side == "ours" else int(side[2:])
        way = {"call": "tok(text) per text", "batch1": "encode_batch", f"batch{threads}": "encode_batch",
               f"py{threads}": "Python threads, tok(text)"}.get(r.get("mode"), "HF encodeBatch (node)")
        ratio = r["mb_per_s"] / hf[t]["mb_per_s"]
        same = r["tokens"] == hf[1]["tokens"]
        bad |= not same
        print(f"{name:<24} {way:<34} {t:>7} {r['mb_per_s']:>8.2f} {r['us_per_item']:>8.2f} {ratio:>18.1f}x "
              f"{r['tokens']:>9}{'' if same else '  TOKEN COUNTS DIFFER'}")
print(f"# HF: {json.loads(rows[-1][2]).get('impl', '?')}, one encodeBatch call over all texts per pass")
sys.exit(1 if bad else 0)
PY
