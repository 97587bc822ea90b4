#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan + libFuzzer, own build folder) and runs
# each for SECONDS seconds (default 60) from seed corpora:
#   tokenizer_json_fuzz  seeds: the small tokenizers of fuzz/tokenizers and hostile variants of one
#                        (fuzz/hostile_tokenizers.py: growing normalizers, deep nesting; dictionary
#                        tokenizer_json.dict)
#   encode_decode_fuzz   seeds: every text of data/tok/corpus.jsonl, once per fixture tokenizer
#   chat_template_fuzz   seeds: every chat template of data/chat/templates (template NUL messages-JSON)
#   jsonl_record_fuzz    seeds: the first 300 MT-Bench records, one line each (dictionary pipe_json.dict)
#   queue_body_fuzz      seeds: their work-item bodies (first byte 0) and log-queue records and stamp
#                        patches (first byte 1) (dictionary pipe_json.dict)
#   gateway_request_fuzz seeds: request bodies made from the first 100 MT-Bench prompts for the chat,
#                        tokenize, render and detokenize routes (first byte), with tools, content
#                        parts and the refused parameters (dictionary gateway_json.dict); needs models/
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
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(tokenizer_json_fuzz encode_decode_fuzz chat_template_fuzz jsonl_record_fuzz queue_body_fuzz gateway_request_fuzz)
B=${BUILD_FUZZ:-$ROOT/build-fuzz}
JOBS=${JOBS:-2}

cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" -DOVERHEAD_SANITIZE=ON -DOVERHEAD_FUZZ=ON \
  -DOVERHEAD_TESTS=OFF -DOVERHEAD_BENCH=OFF >/dev/null
cmake --build "$B" -j "$JOBS" --target "${TARGETS[@]}"

# Seeds are regenerated each run (cheap) so they follow the corpus and fixtures.
SEEDS=$B/seeds
rm -rf "$SEEDS" && mkdir -p "$SEEDS/tokenizer_json_fuzz" "$SEEDS/encode_decode_fuzz" "$SEEDS/chat_template_fuzz" \
  "$SEEDS/jsonl_record_fuzz" "$SEEDS/queue_body_fuzz" "$SEEDS/gateway_request_fuzz"
for f in "$ROOT"/fuzz/tokenizers/*/tokenizer.json; do
  cp "$f" "$SEEDS/tokenizer_json_fuzz/$(basename "$(dirname "$f")").json"
done
python3 "$ROOT/fuzz/hostile_tokenizers.py" "$ROOT/fuzz/tokenizers/bytelevel_tiny/tokenizer.json" "$SEEDS/tokenizer_json_fuzz"
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
python3 - "$ROOT/data/jmtbench/records.jsonl.gz" "$SEEDS/jsonl_record_fuzz" "$SEEDS/queue_body_fuzz" <<'PY'
import gzip, json, os, sys
# The same shapes the pipeline writes: a source line, its work-item body (encode_item_body's
# field order), and a log-queue record and stamp patch list.
for i, line in enumerate(gzip.open(sys.argv[1], "rt", encoding="utf-8")):
    if i == 300:
        break
    line = line.rstrip("\n")
    with open(os.path.join(sys.argv[2], "%04d" % i), "wb") as f:
        f.write(line.encode("utf-8"))
    rec = json.loads(line)
    usage = rec.get("usage")
    body = {"tokenizer": "phi-4", "line": i + 1, "id": rec.get("id"), "model": rec.get("model"),
            "usage": usage, "prompt": rec.get("prompt")}
    with open(os.path.join(sys.argv[3], "item_%04d" % i), "wb") as f:
        f.write(b"\0" + json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    if i < 20:
        key = "jmtbench-case5#phi-4"
        record = {"experiment_tokenizer": key, "id": str(rec.get("id")), "model": "m", "start_time": "2026-12-02T12:00:00.000001Z",
                  "end_time": "2026-12-02T12:00:00.000101Z", "token_count": 40 + i, "api_input": None, "api_output": 7,
                  "experiment": "jmtbench-case5", "tokenizer": "phi-4", "case": 5, "worker": "w", "seq": i, "batch": i // 10,
                  "batch_boundary": i % 10 == 0, "received": 1, "render_start": 2, "render_end": 3, "encode_end": 4,
                  "publish_start": 5, "publish_acked": 0, "input_deleted": 0, "prompt_chars": 9, "prompt_bytes": 9,
                  "run_id": "20261202T120000Z-0a1b2c3d"}
        stamps = {"stamps": [{"experiment_tokenizer": key, "id": str(rec.get("id")), "publish_acked": 6, "input_deleted": 7}]}
        for name, doc in (("record", record), ("stamps", stamps)):
            with open(os.path.join(sys.argv[3], "%s_%04d" % (name, i)), "wb") as f:
                f.write(b"\1" + json.dumps(doc, separators=(",", ":")).encode("utf-8"))
PY
python3 - "$ROOT/data/jmtbench/records.jsonl.gz" "$SEEDS/gateway_request_fuzz" <<'PY'
import gzip, json, os, sys
# First byte: 0 chat/completions, 1 tokenize, 2 render, 3 detokenize; the rest is the raw body.
tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
def write(name, route, body):
    with open(os.path.join(sys.argv[2], name), "wb") as f:
        f.write(bytes([route]) + json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
for i, line in enumerate(gzip.open(sys.argv[1], "rt", encoding="utf-8")):
    if i == 100:
        break
    messages = json.loads(line)["prompt"]
    model = ("phi-4", "llama-3.3-70b-instruct", "microsoft/phi-4")[i % 3]
    chat = {"model": model, "messages": messages}
    if i % 4 == 1: chat["tools"] = tools
    if i % 5 == 2: chat.update({"stream": True, "stream_options": {"include_usage": True}, "max_tokens": 16})
    if i % 7 == 3: chat.update({"n": 1, "logprobs": False, "response_format": {"type": "text"}, "temperature": 0.5})
    if i % 11 == 4: chat["messages"] = [{"role": m["role"], "content": [{"type": "text", "text": m["content"]}]}
                                        if isinstance(m.get("content"), str) else m for m in messages]
    write("chat_%03d" % i, 0, chat)
    write("tokenize_%03d" % i, 1, {"model": model, "messages": messages, "add_generation_prompt": i % 2 == 0}
          if i % 3 else {"model": model, "prompt": messages[0].get("content") or "", "add_special_tokens": i % 2 == 0})
    write("render_%03d" % i, 2, {"model": model, "messages": messages, "tools": tools} if i % 4 == 1 else {"model": model, "messages": messages})
    write("detokenize_%03d" % i, 3, {"model": model, "tokens": [(i * 7919 + k * 104729) % 100000 for k in range(i % 40)]})
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
    jsonl_record_fuzz | queue_body_fuzz) args+=(-max_len=65536 -dict="$ROOT/fuzz/pipe_json.dict") ;;
    gateway_request_fuzz) args+=(-max_len=65536 -dict="$ROOT/fuzz/gateway_json.dict") ;;
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
