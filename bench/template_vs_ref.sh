#!/usr/bin/env bash
# Chat-template render speed on the MT-Bench prompts, in the same run: ours (overhead bench
# template), @huggingface/jinja (compiled once, Node) and Python Jinja2 (as transformers sets it up).
# Prints us/render and MB/s for each and our speed-up over both.
#   bench/template_vs_ref.sh [tokenizer ...]     (default: the seed's three)
# Env: OVERHEAD_MODELS (tokenizer sets), REF_PREFIX (where scripts/install_ref.sh put node_modules),
#      PASSES (default 10), PY_PASSES (default 3).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MODELS="${OVERHEAD_MODELS:-$ROOT/models}"
REF_PREFIX="${REF_PREFIX:-$ROOT/.cache/ref}"
INPUT="$ROOT/data/jmtbench/records.jsonl.gz"
PASSES="${PASSES:-10}"
PY_PASSES="${PY_PASSES:-3}"
DATE=2024-07-26
BIN="$ROOT/build/overhead"
[ -x "$BIN" ] || { echo "build/overhead missing: run make first" >&2; exit 1; }
[ $# -gt 0 ] || set -- llama-3.3-70b-instruct gemma-2-27b-it phi-4
export REF_NODE_MODULES="$REF_PREFIX/node_modules"
field() { python3 -c "import json,sys; print('%.3f' % json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
echo "# chat template render, MT-Bench prompts ($(zcat "$INPUT" | wc -l) records), $(nproc) cores, $(uname -m)"
printf '%-24s %14s %14s %14s %9s %9s\n' tokenizer "ours us" "hf-jinja us" "jinja2 us" "x hf" "x py"
for t in "$@"; do
  cfg="$MODELS/$t/tokenizer_config.json"
  [ -f "$cfg" ] || cfg="$MODELS/raw/$t/tokenizer_config.json"
  ours=$("$BIN" bench template --tokenizer "$(dirname "$cfg")" --input "$INPUT" --field prompt --passes "$PASSES" --date "$DATE" --json)
  hf=$(node "$ROOT/bench/template_hf_jinja.mjs" "$cfg" "$INPUT" prompt "$PASSES" "$DATE")
  py=$(/usr/bin/python3 "$ROOT/bench/template_py_jinja2.py" "$cfg" "$INPUT" prompt "$PY_PASSES" "$DATE")
  o=$(field "$ours" us_per_render); h=$(field "$hf" us_per_render); p=$(field "$py" us_per_render)
  printf '%-24s %14s %14s %14s %9s %9s\n' "$t" "$o" "$h" "$p" \
    "$(python3 -c "print('%.1f' % ($h/$o))")" "$(python3 -c "print('%.1f' % ($p/$o))")"
  echo "  ours $(field "$ours" mb_per_s) MB/s | hf-jinja $(field "$hf" mb_per_s) MB/s | jinja2 $(field "$py" mb_per_s) MB/s"
done
