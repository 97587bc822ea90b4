// TTFT and TPOT added by the front: a streamed request to the real engine of the tests (llama.cpp
// via node-llama-cpp, /v1/completions with the prompt overhead renders) against the same request
// through `overhead serve --decoder openai:<engine>` (/v1/chat/completions), same run, same prompt,
// temperature 0, one request at a time, the three kinds in turn so that all see the same machine:
//   direct  the engine itself
//   mem     `overhead serve` with mem: queues, a SQLite store and 1 in-process worker
//   redis   a routing-only gateway (`serve --workers 0`) and one remote `overhead worker` on a
//           private redis-server (scripts/services/redis.sh), answering on the gateway's reply queue
// TTFT: from sending the request to the first text-carrying `data:` event. TPOT: from the first
// text event to the last, over (completion_tokens - 1). "added" is each front's figure minus the
// direct call's just before it (paired). Prints p50, p90 and mean of each, as JSON.
// "stages" splits each front's TTFT where it goes, from the stored records' stamps (the worker's
// CLOCK_MONOTONIC, the same clock as this process's hrtime on one host): to_worker (request sent
// -> the worker took the item: HTTP, gateway, queue), in_worker (took it -> called the engine:
// render, tokenize), engine (called -> first token arrived; beside it, the direct call's TTFT) and
// back (first token -> the client read it: reply path, gateway, HTTP).
//
//   LLAMA_ENGINE_MODEL=build/engine/tiny-llama3.gguf \
//   LLAMA_ENGINE_NODE_MODULES=.cache/llama_engine/node_modules \
//   node bench/serve/ttft_vs_engine.mjs build/overhead [requests=200] [max_tokens=16] [modes=mem,redis] [decoder params]
// The decoder params are added to the fronts' --decoder, e.g. ",dialect=llamacpp" (the prompt as
// token ids: tokenize once) or ",dialect=vllm,output=ids" (and the answer as ids, detokenized by the worker).
import {spawn, execFileSync} from 'node:child_process';
import {mkdtempSync, readFileSync, readdirSync, rmSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {startLlamaEngine} from '../../tests/engine/llama_engine.mjs';
import {stopChild} from '../../tests/support/stop_child.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const [binary, requestsArg = '200', maxTokensArg = '16', modesArg = 'mem,redis', decoderParams = ''] = process.argv.slice(2);
if (!binary) throw new Error('usage: node bench/serve/ttft_vs_engine.mjs OVERHEAD_BINARY [requests] [max_tokens] [modes]');
const REQUESTS = Number(requestsArg);
const MAX_TOKENS = Number(maxTokensArg);
const MODES = modesArg.split(',').filter(Boolean);
const MODEL = 'llama-3.3-70b-instruct';
const MESSAGES = [{role: 'system', content: 'Answer briefly.'}, {role: 'user', content: 'What is the capital of France?'}];

// {ttft, tpot} in ms for one streamed request.
async function timeStream(url, body, textOf) {
  const sentNs = process.hrtime.bigint();
  const t0 = performance.now();
  const r = await fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  const decoder = new TextDecoder();
  let buffered = '', first = -1, last = -1, tokens = -1, id = '', firstNs = 0n;
  for await (const bytes of r.body) {
    buffered += decoder.decode(bytes, {stream: true});
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
      const j = JSON.parse(event.slice(6));
      if (j.error) throw new Error(`${url}: ${JSON.stringify(j.error)}`);
      if (textOf(j)) {
        last = performance.now() - t0;
        if (first < 0) {
          first = last;
          firstNs = process.hrtime.bigint();
          id = j.id ?? '';
        }
      }
      if (j.usage?.completion_tokens) tokens = j.usage.completion_tokens;
    }
  }
  if (first < 0) throw new Error(`${url}: no text`);
  return {ttft: first, tpot: tokens > 1 ? (last - first) / (tokens - 1) : NaN, id, sentNs, firstNs};
}

// id -> the record's stamps (ns, as text: BigInt-safe), from every SQLite store under `dir`.
function storedStamps(dir) {
  const found = new Map();
  const walk = (d) => {
    for (const e of readdirSync(d, {withFileTypes: true})) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.db')) {
        const out = execFileSync('sqlite3', ['-separator', ' ', p,
          'SELECT id, received, decode_start, first_token FROM records'], {encoding: 'utf8'});
        for (const line of out.split('\n').filter(Boolean)) {
          const [id, received, decode_start, first_token] = line.split(' ');
          found.set(id, {received, decode_start, first_token});
        }
      }
    }
  };
  walk(dir);
  return found;
}

function summary(xs) {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length === 0) return null;
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return {p50: +q(0.5).toFixed(3), p90: +q(0.9).toFixed(3), mean: +(s.reduce((a, b) => a + b, 0) / s.length).toFixed(3)};
}

function startProcess(args, ready) {
  const child = spawn(args[0], args.slice(1), {stdio: ['ignore', 'ignore', 'pipe']});
  let err = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => { err += d; });
  if (!ready) return {child, up: Promise.resolve()};
  const up = new Promise((resolve, reject) => {
    child.stderr.on('data', () => {
      const m = err.match(ready);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`${args[1]} exited ${code}: ${err.slice(-2000)}`)));
  });
  return {child, up};
}
const stop = (child) => stopChild(child, 15000);

const engine = await startLlamaEngine({sequences: 4});
const tmp = mkdtempSync(path.join(os.tmpdir(), 'overhead-ttft-'));
const children = [];
let redis = false;
let logQueue = '';
try {
  const decoder = `openai:${engine.baseUrl},model=${engine.modelName}${decoderParams}`;
  const listen = /listening on (http:\/\/127\.0\.0\.1:\d+)/;
  const fronts = {};
  if (MODES.includes('mem')) {
    const s = startProcess([binary, 'serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--out', path.join(tmp, 'mem'),
                            '--decoder', decoder], listen);
    children.push(s.child);
    fronts.mem = await s.up;
  }
  if (MODES.includes('redis')) {
    execFileSync('bash', [path.join(root, 'scripts/services/redis.sh'), 'start', tmp], {stdio: 'ignore'});
    redis = true;
    const url = readFileSync(path.join(tmp, 'redis.env'), 'utf8').match(/REDIS_URL=(\S+)/)[1];
    logQueue = `${url}/ttft-log`;
    const q = ['--queue', `${url}/ttft-in`, '--log-queue', logQueue];
    const g = startProcess([binary, 'serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--out', path.join(tmp, 'gw'),
                            '--workers', '0', ...q], listen);
    children.push(g.child);
    fronts.redis = await g.up;
    const w = startProcess([binary, 'worker', ...q, '--tokenizers', MODEL, '--decoder', decoder, '--max-decodes', '64',
                            '--idle-exit', '86400', '--experiment', 'ttft', '--no-progress', '--out', path.join(tmp, 'worker')]);
    children.push(w.child);
  }
  const anyFront = Object.values(fronts)[0];
  const rendered = await (await fetch(anyFront + '/v1/render', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({model: MODEL, messages: MESSAGES, add_generation_prompt: true})})).json();
  const direct = () => timeStream(engine.baseUrl + '/completions',
    {model: engine.modelName, prompt: rendered.prompt, max_tokens: MAX_TOKENS, temperature: 0, stream: true,
     stream_options: {include_usage: true}},
    (e) => e.choices?.[0]?.text);
  const front = (base) => timeStream(base + '/v1/chat/completions',
    {model: MODEL, messages: MESSAGES, max_tokens: MAX_TOKENS, temperature: 0, stream: true, stream_options: {include_usage: true}},
    (e) => e.choices?.[0]?.delta?.content);
  for (let i = 0; i < 10; ++i) {  // warm-up
    await direct();
    for (const base of Object.values(fronts)) await front(base);
  }
  const runs = {direct: []};
  const added = {};
  for (const m of Object.keys(fronts)) {
    runs[m] = [];
    added[m] = [];
  }
  for (let i = 0; i < REQUESTS; ++i) {
    for (const [m, base] of Object.entries(fronts)) {
      const d = await direct();
      const f = await front(base);
      runs.direct.push(d);
      runs[m].push(f);
      added[m].push({ttft: f.ttft - d.ttft, tpot: f.tpot - d.tpot});
    }
  }
  const table = (xs) => ({ttft_ms: summary(xs.map((x) => x.ttft)), tpot_ms: summary(xs.map((x) => x.tpot))});
  const load = os.loadavg().map((x) => +x.toFixed(2));
  // The records reach their stores once the consumers drain: stop the fronts first (a graceful stop
  // drains), then read every store under the run's directory.
  for (const c of children.reverse()) await stop(c);
  children.length = 0;
  // The routing-only gateway stores nothing: its worker's records wait on the log queue.
  if (logQueue) execFileSync(binary, ['consume', '--log-queue', logQueue, '--out', path.join(tmp, 'consumed'), '--idle-exit', '1', '--no-progress']);
  const stages = {};
  const stamps = storedStamps(tmp);
  for (const m of Object.keys(fronts)) {
    const rows = runs[m].map((f) => ({f, r: stamps.get(f.id)})).filter(({r}) => r && r.received > 0 && r.first_token > 0);
    const ms = (ns) => Number(ns) / 1e6;
    stages[m] = {
      matched: rows.length,
      to_worker_ms: summary(rows.map(({f, r}) => ms(BigInt(r.received) - f.sentNs))),
      in_worker_ms: summary(rows.map(({r}) => ms(BigInt(r.decode_start) - BigInt(r.received)))),
      engine_ms: summary(rows.map(({r}) => ms(BigInt(r.first_token) - BigInt(r.decode_start)))),
      back_ms: summary(rows.map(({f, r}) => ms(f.firstNs - BigInt(r.first_token)))),
    };
  }
  stages.direct_ttft_ms = summary(runs.direct.map((d) => d.ttft));
  const out = {requests: REQUESTS, max_tokens: MAX_TOKENS, engine: 'llama.cpp (node-llama-cpp), tiny random-weight Llama-3 model',
    measured: Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, table(v)])),
    added: Object.fromEntries(Object.entries(added).map(([k, v]) => [k, table(v)])),
    stages, load};
  console.log(JSON.stringify(out, null, 1));
} finally {
  for (const c of children.reverse()) await stop(c);
  if (redis) execFileSync('bash', [path.join(root, 'scripts/services/redis.sh'), 'clean', tmp], {stdio: 'ignore'});
  await engine.stop();
  rmSync(tmp, {recursive: true, force: true});
}
