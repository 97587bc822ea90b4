#!/usr/bin/env bash
# Builds and runs the libFuzzer targets with clang (ASan + UBSan), each for FUZZ_SECONDS (default
# 60), from a seed corpus. Crashes land in fuzz/corpus-<target>/../crash-*.
#   fuzz/run.sh [target ...]     targets: chat_template
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/build-fuzz"
SECONDS_EACH="${FUZZ_SECONDS:-60}"
CXX="${FUZZ_CXX:-clang++-14}"
command -v "$CXX" >/dev/null || CXX=clang++
mkdir -p "$OUT"
FLAGS=(-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I"$ROOT/src")
[ $# -gt 0 ] || set -- chat_template

build_chat_template() {
  "$CXX" "${FLAGS[@]}" -o "$OUT/chat_template_fuzz" "$ROOT/fuzz/chat_template_fuzz.cpp" "$ROOT"/src/chat/*.cpp
  local corpus="$ROOT/fuzz/corpus-chat_template"
  mkdir -p "$corpus"
  # Seeds: every fixture template and the tokenizer sets' templates.
  python3 - "$ROOT" "$corpus" <<'PY'
import json, os, sys
root, corpus = sys.argv[1], sys.argv[2]
d = os.path.join(root, "data", "chat", "templates")
for fn in os.listdir(d):
    if fn.endswith(".json"):
        with open(os.path.join(corpus, fn[:-5] + ".jinja"), "w", encoding="utf-8") as f:
            f.write(json.load(open(os.path.join(d, fn), encoding="utf-8"))["chat_template"])
PY
}

for t in "$@"; do
  "build_$t"
  echo "== fuzzing $t for ${SECONDS_EACH}s"
  "$OUT/${t}_fuzz" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
    "$ROOT/fuzz/corpus-$t"
done
