# Sourced by the gateway's bench scripts (wrk.sh, keepalive.sh): writes one request body per
# MT-Bench record for TOKENIZER into $WORK/bodies.jsonl, starts `$BIN serve` on a free loopback
# port with --decoder none and a queue bound no benchmark reaches, waits until it listens, and
# sends one chat request (the first one loads the tokenizer binding). Sets SERVER_PID and URL; the
# caller's EXIT trap stops the server.
#   start_serve BIN TOKENIZER WORK
start_serve() {
  local bin=$1 tokenizer=$2 work=$3
  python3 "$ROOT/bench/serve/mtbench_bodies.py" "$ROOT/data/jmtbench/records.jsonl.gz" "$tokenizer" "$work/bodies.jsonl"
  # --special-tokens-in-content allow: 522 of the 6,784 MT-Bench conversations hold special-token
  # text (models' earlier answers), which the default refuses; the benchmarks replay them all.
  # $SERVE_CPUS (e.g. 1) pins the gateway to those CPUs, apart from the load generator's.
  ${SERVE_CPUS:+taskset -c "$SERVE_CPUS"} "$bin" serve --listen 127.0.0.1:0 --tokenizers "$tokenizer" --out "$work" --max-queued 100000 \
    --special-tokens-in-content allow 2>"$work/serve.log" &
  SERVER_PID=$!
  for _ in $(seq 1 600); do
    grep -q "listening on" "$work/serve.log" 2>/dev/null && break
    sleep 0.1
  done
  URL=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.log" | head -1)
  [ -n "$URL" ] || { cat "$work/serve.log" >&2; exit 1; }
  head -1 "$work/bodies.jsonl" | curl -sf "$URL/v1/chat/completions" -H 'content-type: application/json' -d @- >/dev/null
}
