#!/usr/bin/env bash
# Installs the reference implementations used for goldens and side-by-side benchmarks
# (HF tokenizers native via N-API, @huggingface/jinja, tiktoken) into .cache/ref/ of this clone,
# from the pinned package-lock.json. Idempotent. Python Jinja2 comes from Debian (scripts/setup.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${REF_PREFIX:-$ROOT/.cache/ref}
mkdir -p "$PREFIX"
if [ -d "$PREFIX/node_modules/@huggingface/jinja" ] && cmp -s "$ROOT/scripts/ref/package-lock.json" "$PREFIX/package-lock.json"; then
  exit 0
fi
cp "$ROOT/scripts/ref/package.json" "$ROOT/scripts/ref/package-lock.json" "$PREFIX/"
(cd "$PREFIX" && npm ci --no-audit --no-fund --loglevel=error)
echo "install_ref: reference modules in $PREFIX/node_modules"
