// Interactive latency under a running batch: p99 TTFT of streamed chat requests through
// `overhead serve` with no batch, then with a BATCH-line batch in progress, in the same run, and
// the ratio (target <= 1.2). The engine is a paced fake with SLOTS sequences at once (a request
// past them waits for a free one, as a real engine's scheduler makes it wait): what a batch can
// take from interactive traffic is engine slots, which the worker's lane rule bounds
// (pipe/lane_source.hpp: batch items hold at most half of --max-decodes).
//
//   node bench/serve/batch_interference.mjs [BATCH=10000] [RATE=8/s] [SECONDS=20]
//   env: OVERHEAD_BINARY (default build/overhead), PACE (engine tokens/s per sequence, 200),
//        SLOTS (engine sequences, 16), MAX_DECODES (the gateway's, 16)
import {spawn} from 'node:child_process';
import http from 'node:http';
import {mkdtempSync, rmSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const BATCH = Number(process.argv[2] ?? 10000);
const RATE = Number(process.argv[3] ?? 8);
const SECONDS = Number(process.argv[4] ?? 20);
const BINARY = process.env.OVERHEAD_BINARY ?? 'build/overhead';
const PACE = Number(process.env.PACE ?? 200);
const SLOTS = Number(process.env.SLOTS ?? 16);
const MAX_DECODES = Number(process.env.MAX_DECODES ?? 16);
const MODEL = 'llama-3.3-70b-instruct';
const INTERACTIVE_TOKENS = 16;
const BATCH_TOKENS = 8;

// The engine: SLOTS sequences at once, FIFO beyond; each streams max_tokens chunks at PACE.
let busy = 0;
const waiting = [];
function release() {
  --busy;
  if (waiting.length) {
    ++busy;
    waiting.shift()();
  }
}
function chunk(text, finish) {
  return 'data: ' + JSON.stringify({id: 'cmpl-bench', object: 'text_completion', created: 1733300000, model: 'bench',
    choices: [{index: 0, text, logprobs: null, finish_reason: finish}], usage: null}) + '\n\n';
}
const engine = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    const tokens = Math.max(1, JSON.parse(body).max_tokens ?? 16);
    const start = () => {
      res.writeHead(200, {'Content-Type': 'text/event-stream'});
      let sent = 0;
      const timer = setInterval(() => {
        ++sent;
        res.write(chunk(' tok', sent === tokens ? 'length' : null));
        if (sent < tokens) return;
        clearInterval(timer);
        res.write('data: ' + JSON.stringify({id: 'cmpl-bench', object: 'text_completion', created: 1, model: 'bench', choices: [],
          usage: {prompt_tokens: 10, completion_tokens: tokens, total_tokens: tokens + 10}}) + '\n\n');
        res.end('data: [DONE]\n\n');
        release();
      }, 1000 / PACE);
      res.on('close', () => {
        if (sent < tokens) {
          clearInterval(timer);
          release();
        }
      });
    };
    if (busy < SLOTS) {
      ++busy;
      start();
    } else {
      waiting.push(start);
    }
  });
});
await new Promise((r) => engine.listen(0, '127.0.0.1', r));
const engineUrl = `http://127.0.0.1:${engine.address().port}/v1`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'overhead-batch-bench-'));
const gateway = spawn(BINARY, ['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--out', dir, '--decoder',
                               `openai:${engineUrl},model=bench`, '--max-decodes', String(MAX_DECODES), '--max-queued', '100000'],
                      {stdio: ['ignore', 'ignore', 'pipe']});
let stderr = '';
gateway.stderr.setEncoding('utf8');
gateway.stderr.on('data', (d) => { stderr += d; });
const base = await new Promise((resolve, reject) => {
  const t = setInterval(() => {
    const m = stderr.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
    if (m) {
      clearInterval(t);
      resolve(m[1]);
    }
  }, 20);
  gateway.on('exit', (c) => reject(new Error('overhead serve exited ' + c + ': ' + stderr)));
});

async function ttft(i) {
  const started = performance.now();
  const r = await fetch(base + '/v1/chat/completions', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({model: MODEL, messages: [{role: 'user', content: `Interactive question ${i}.`}], max_tokens: INTERACTIVE_TOKENS,
                          stream: true})});
  let first = 0;
  const decoder = new TextDecoder();
  let pending = '';
  for await (const bytes of r.body) {
    pending += decoder.decode(bytes, {stream: true});
    if (!first && pending.includes('"content":" tok')) first = performance.now();
  }
  return first ? first - started : NaN;
}

async function interactive(label) {
  const all = [];
  const end = performance.now() + SECONDS * 1000;
  let i = 0;
  while (performance.now() < end) {
    all.push(ttft(i++));
    await new Promise((r) => setTimeout(r, 1000 / RATE));
  }
  const t = (await Promise.all(all)).filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  const q = (p) => t[Math.min(t.length - 1, Math.floor(p * t.length))];
  console.log(`${label}: ${t.length} streams, TTFT p50 ${q(0.5).toFixed(1)} ms, p99 ${q(0.99).toFixed(1)} ms, max ${t[t.length - 1].toFixed(1)} ms`);
  return q(0.99);
}

async function json(url, init) {
  const r = await fetch(url, init);
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${text}`);
  return JSON.parse(text);
}

try {
  await interactive('warm-up');
  const alone = await interactive('no batch');
  const lines = Array.from({length: BATCH}, (_, i) => JSON.stringify({custom_id: `b${i}`, method: 'POST', url: '/v1/chat/completions',
    body: {model: MODEL, messages: [{role: 'user', content: `Batch question ${i}.`}], max_tokens: BATCH_TOKENS}}));
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([lines.join('\n') + '\n']), 'bench.jsonl');
  const file = await json(base + '/v1/files', {method: 'POST', body: form});
  const batchStarted = performance.now();
  const batch = await json(base + '/v1/batches', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h'})});
  for (;;) {
    const b = await json(`${base}/v1/batches/${batch.id}`);
    if (b.request_counts.completed > 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const during = await interactive(`with a ${BATCH}-line batch in progress`);
  const mid = await json(`${base}/v1/batches/${batch.id}`);
  console.log(`batch during the measurement: ${mid.request_counts.completed}/${BATCH} answered`);
  console.log(`p99 TTFT ratio (batch / none): ${(during / alone).toFixed(2)}x`);
  let done;
  for (;;) {
    done = await json(`${base}/v1/batches/${batch.id}`);
    if (['completed', 'failed', 'expired', 'cancelled'].includes(done.status)) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  console.log(`batch ${done.status}: ${done.request_counts.completed} answered, ${done.request_counts.failed} failed, ` +
              `${((performance.now() - batchStarted) / 1000).toFixed(1)} s from create; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
} finally {
  gateway.kill('SIGTERM');
  engine.close();
  engine.closeAllConnections?.();
  rmSync(dir, {recursive: true, force: true});
}
process.exit(0);
