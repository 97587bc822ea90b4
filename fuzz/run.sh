#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan + libFuzzer, own build folder) and runs
# each for SECONDS seconds (default 60) from seed corpora:
#   tokenizer_json_fuzz  seeds: the small tokenizers of fuzz/tokenizers (dictionary tokenizer_json.dict)
#   encode_decode_fuzz   seeds: every text of data/tok/corpus.jsonl, once per fixture tokenizer
#   chat_template_fuzz   seeds: every chat template of data/chat/templates (template NUL messages-JSON)
#
#   bash fuzz/run.sh [SECONDS] [TARGET...]      env: BUILD_FUZZ (default build-fuzz), JOBS (default 2)
#
# Findings (crash-*, leak-*, timeout-* files) land in $BUILD_FUZZ/findings/<target>/; the grown
# corpora stay in $BUILD_FUZZ/corpus/<target>/ so a later run continues from them.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_PER_TARGET=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(tokenizer_json_fuzz encode_decode_fuzz chat_template_fuzz)
B=${BUILD_FUZZ:-$ROOT/build-fuzz}
JOBS=${JOBS:-2}

cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" -DOVERHEAD_SANITIZE=ON -DOVERHEAD_FUZZ=ON \
  -DOVERHEAD_TESTS=OFF -DOVERHEAD_BENCH=OFF >/dev/null
cmake --build "$B" -j "$JOBS" --target "${TARGETS[@]}"

# Seeds are regenerated each run (cheap) so they follow the corpus and fixtures.
SEEDS=$B/seeds
rm -rf "$SEEDS" && mkdir -p "$SEEDS/tokenizer_json_fuzz" "$SEEDS/encode_decode_fuzz" "$SEEDS/chat_template_fuzz"
for f in "$ROOT"/fuzz/tokenizers/*/tokenizer.json; do
  cp "$f" "$SEEDS/tokenizer_json_fuzz/$(basename "$(dirname "$f")").json"
done
python3 - "$ROOT/data/tok/corpus.jsonl" "$SEEDS/encode_decode_fuzz" <<'PY'
import json, os, sys
# First byte picks the fixture tokenizer (4 of them), the rest is the text.
for i, line in enumerate(open(sys.argv[1], encoding="utf-8")):
    text = json.loads(line)["text"].encode("utf-8")
    for k in range(4):
        with open(os.path.join(sys.argv[2], "%04d_%d" % (i, k)), "wb") as f:
            f.write(bytes([k]) + text)
PY
python3 - "$ROOT/data/chat/templates" "$SEEDS/chat_template_fuzz" <<'PY'
import json, os, sys
for fn in sorted(os.listdir(sys.argv[1])):
    if fn.endswith(".json"):
        with open(os.path.join(sys.argv[1], fn), encoding="utf-8") as f:
            src = json.load(f)["chat_template"]
        with open(os.path.join(sys.argv[2], fn[:-5]), "wb") as f:
            f.write(src.encode("utf-8"))
PY

status=0
for t in "${TARGETS[@]}"; do
  corpus=$B/corpus/$t findings=$B/findings/$t
  mkdir -p "$corpus" "$findings"
  args=(-max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 -artifact_prefix="$findings/" -timeout=20 -rss_limit_mb=4096)
  case "$t" in
    tokenizer_json_fuzz) args+=(-max_len=131072 -dict="$ROOT/fuzz/tokenizer_json.dict") ;;
    encode_decode_fuzz) args+=(-max_len=4096) ;;
    chat_template_fuzz) args+=(-max_len=16384) ;;
  esac
  echo "fuzz: $t for ${SECONDS_PER_TARGET}s"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$B/fuzz/$t" "${args[@]}" "$corpus" "$SEEDS/$t" 2>&1 | tail -25 || status=1
  if ls "$findings"/* >/dev/null 2>&1; then
    echo "fuzz: $t: findings in $findings:" && ls -la "$findings"
    status=1
  fi
done
exit $status
