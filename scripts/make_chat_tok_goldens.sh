#!/usr/bin/env bash
# Regenerates the goldens of `overhead tokenize --chat` in data/chat/goldens/tokenize/ from the
# reference pipeline: the chat template rendered by @huggingface/jinja, the text encoded by HF
# tokenizers (scripts/ref/chat_tok_goldens.mjs), for the seed's three tokenizers.
#
#   bash scripts/make_chat_tok_goldens.sh [TOKENIZER...]
#
# Per tokenizer:
#   <name>.cases.jsonl        data/chat/tokenize_cases.jsonl, field messages: full ids, both encodings
#   <name>.cases-agp.jsonl    the same with add_generation_prompt=True
#   <name>.mtbench.jsonl.gz   data/jmtbench/records.jsonl.gz, field prompt, add_generation_prompt=False
#                             (as the seed ran it): count + digest of the ids per record
# Needs the tokenizer files ($OVERHEAD_MODELS or models/, scripts/setup.sh) and the reference modules
# ($REF_PREFIX or .cache/ref, scripts/install_ref.sh). Deterministic: strftime_now is pinned to DATE.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODELS=${OVERHEAD_MODELS:-$ROOT/models}
OUT=$ROOT/data/chat/goldens/tokenize
DATE=2024-07-26
NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || NAMES=(llama-3.3-70b-instruct gemma-2-27b-it phi-4)
REF="$ROOT/scripts/ref/chat_tok_goldens.mjs"
mkdir -p "$OUT"
for name in "${NAMES[@]}"; do
  dir=$MODELS/$name
  [ -f "$dir/tokenizer_config.json" ] || { echo "make_chat_tok_goldens: $dir/tokenizer_config.json missing: run scripts/setup.sh" >&2; exit 1; }
  node "$REF" --dir "$dir" --input "$ROOT/data/chat/tokenize_cases.jsonl" --field messages --date "$DATE" --full \
    > "$OUT/$name.cases.jsonl"
  node "$REF" --dir "$dir" --input "$ROOT/data/chat/tokenize_cases.jsonl" --field messages --date "$DATE" --full \
    --add-generation-prompt > "$OUT/$name.cases-agp.jsonl"
  node "$REF" --dir "$dir" --input "$ROOT/data/jmtbench/records.jsonl.gz" --field prompt --date "$DATE" \
    | gzip -n -9 > "$OUT/$name.mtbench.jsonl.gz"
  echo "make_chat_tok_goldens: $name: $(zcat "$OUT/$name.mtbench.jsonl.gz" | grep -c '"error"' || true) MT-Bench records the template refuses"
done
