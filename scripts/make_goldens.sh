#!/usr/bin/env bash
# Regenerates every golden file from the reference implementations, module by module:
# tokenizer ids (HF tokenizers), chat renders (Python Jinja2 as transformers sets it up),
# chat + tokenize (@huggingface/jinja + HF tokenizers), statistics (numpy, statsmodels).
# Needs scripts/setup.sh and scripts/install_ref.sh first. Deterministic: a rerun changes nothing.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export OVERHEAD_MODELS=${OVERHEAD_MODELS:-$ROOT/models}
export REF_PREFIX=${REF_PREFIX:-$ROOT/.cache/ref}
bash "$ROOT/scripts/install_ref.sh"
bash "$ROOT/scripts/make_tok_goldens.sh"
/usr/bin/python3 "$ROOT/scripts/make_chat_goldens.py"
bash "$ROOT/scripts/make_chat_tok_goldens.sh"
/usr/bin/python3 "$ROOT/scripts/make_stats_goldens.py"
