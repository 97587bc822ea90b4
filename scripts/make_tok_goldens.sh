#!/usr/bin/env bash
# Regenerates the tokenizer goldens in data/tok/golden/ from the HF reference (HF tokenizers'
# Rust core through @anush008/tokenizers, single-threaded), for every tokenizer name the project
# covers. Deterministic: same corpus, records and reference version -> byte-identical files.
#
#   bash scripts/make_tok_goldens.sh [NAME...]      (default: all 12 names)
#
# Needs: scripts/setup.sh (tokenizer files in $OVERHEAD_MODELS or models/) and scripts/install_ref.sh
# (reference modules in $REF_PREFIX or .cache/ref). The corpus itself comes from
# scripts/make_tok_corpus.py and is committed; this script does not rewrite it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODELS=${OVERHEAD_MODELS:-$ROOT/models}
OUT=$ROOT/data/tok/golden
export TOKENIZERS_PARALLELISM=false RAYON_NUM_THREADS=1

# name -> folder under the models dir. The seven short names, then the raw asset folders (the
# same files as some aliases, but covered under their own names since both spellings are accepted).
declare -A DIRS=(
  [llama-3.3-70b-instruct]=llama-3.3-70b-instruct [gemma-2-27b-it]=gemma-2-27b-it [phi-4]=phi-4
  [gemma-3]=raw/gemma3 [llama-3]=raw/llama3 [cl100k]=raw/gpt35turbo [o200k]=raw/gpt4o
  [llama3]=raw/llama3 [llama3_1]=raw/llama3_1 [gemini]=raw/gemini [gpt35turbo]=raw/gpt35turbo [gpt4o]=raw/gpt4o
)
ALL=(llama-3.3-70b-instruct gemma-2-27b-it phi-4 gemma-3 llama-3 cl100k o200k llama3 llama3_1 gemini gpt35turbo gpt4o)
NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || NAMES=("${ALL[@]}")

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"
for name in "${NAMES[@]}"; do
  dir=${DIRS[$name]:-}
  [ -n "$dir" ] || { echo "make_tok_goldens: unknown tokenizer name '$name' (known: ${ALL[*]})" >&2; exit 2; }
  [ -f "$MODELS/$dir/tokenizer.json" ] || { echo "make_tok_goldens: $MODELS/$dir/tokenizer.json missing: run scripts/setup.sh" >&2; exit 1; }
  node "$ROOT/scripts/ref/tok_goldens.mjs" --name "$name" --dir "$MODELS/$dir" \
    --corpus "$ROOT/data/tok/corpus.jsonl" --records "$ROOT/data/jmtbench/records.jsonl.gz" \
    --out "$TMP" --sample-every 50
  for f in "$TMP/$name".*; do
    gzip -n -9 -c "$f" > "$OUT/$(basename "$f").gz"
    rm -f "$f"
  done
done
du -ch "$OUT"/*.gz | tail -1 | sed 's/^/make_tok_goldens: golden size /'
