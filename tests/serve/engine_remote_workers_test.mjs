// The official `openai` npm client against a routing-only gateway over Redis (`overhead serve
// --workers 0 --queue redis://...`) with two remote `overhead worker --decoder openai:<engine>`
// processes in front of the real engine (tests/engine: llama.cpp serving the tiny
// Llama-3-tokenizer model), and one `overhead consume` storing the records in SQLite.
//
//   1. Sync, stream and async, one at a time: the content, the finish reason and completion_tokens
//      equal the engine's own completion of the prompt `overhead` renders (/v1/render), at
//      temperature 0; the stream's deltas concatenate to it and the first arrives well before the
//      last (they come through the reply stream while the engine generates).
//   2. A worker SIGKILLed while it holds two streams that already got text, one stream that got
//      none yet, a synchronous and an asynchronous request: every request gets exactly one answer;
//      the streams with text end with the documented `stream_interrupted` error event (never a
//      silent cut, never a repeated prefix); the others complete on the surviving worker (the
//      items come back after the visibility timeout); every request's record is stored exactly
//      once, and a completed stream's deltas are its stored text.
//   3. Cancellation reaches the remote worker (docs/serve.md, "Cancellation"): a client that
//      disconnects mid-stream, a synchronous client that disconnects, a request that is cancelled
//      before any worker took it up, and --request-timeout: the engine's /engine/stats sees the
//      generation cancelled and the record says finish_reason "cancelled".
//
// Run: CTest sets OVERHEAD_BINARY, OPENAI_NODE_MODULES, OVERHEAD_REDIS_ENV (the redis fixture's
// env file) and the engine's variables (tests/CMakeLists.txt: OVERHEAD_LLAMA_ENGINE_ENV).
import {spawnSync} from 'node:child_process';
import {createRequire} from 'node:module';
import {existsSync, mkdtempSync, rmSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startLlamaEngine} from '../engine/llama_engine.mjs';
import {collectStream, engineCompletion, engineStreamSpan} from './engine_front.mjs';
import {listeningUrl, readEnvFile, startOverhead} from './overhead_process.mjs';

const BINARY = process.env.OVERHEAD_BINARY;
const MODULES = process.env.OPENAI_NODE_MODULES;
const REDIS_ENV = process.env.OVERHEAD_REDIS_ENV;
if (!BINARY || !MODULES || !REDIS_ENV) throw new Error('set OVERHEAD_BINARY, OPENAI_NODE_MODULES and OVERHEAD_REDIS_ENV');
const require = createRequire(path.join(path.resolve(MODULES), 'noop.js'));
const OpenAI = require('openai').default;

const MODEL = 'llama-3.3-70b-instruct';  // overhead's binding: the engine's tokenizer (the Llama-3 set)
const MAX_TOKENS = 120;  // long enough for several reply batches (ReplyBatching: 50 ms)
const MESSAGES = [
  {role: 'system', content: 'Answer briefly.'},
  {role: 'user', content: 'こんにちは、世界! Tell me about the sea.'},
];
const VISIBILITY_MS = 2000;  // how soon a killed worker's items come back
const LONG = 1500;           // far more tokens than a generation makes before it is cancelled
const KILLED = 3500;         // the streams of the killed worker: they outlast the set-up of the kill, even on a loaded machine

const redis = readEnvFile(REDIS_ENV);
const tag = `engine${process.pid}`;
const IN = `${tag}-in`;
const params = `visibility_ms=${VISIBILITY_MS}&max_receives=10`;
const inUrl = `${redis.REDIS_URL}/${IN}?${params}`;
const logUrl = `${redis.REDIS_URL}/${tag}-log?${params}`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'overhead-engine-remote-'));
const db = path.join(dir, 'records.db');
const children = [];
let engine;
let base;
const workers = {};

function redisCli(...args) {
  const r = spawnSync('redis-cli', ['-h', redis.REDIS_HOST, '-p', redis.REDIS_PORT, '--no-auth-warning', ...args],
                      {encoding: 'utf8', env: {...process.env, REDISCLI_AUTH: redis.REDIS_PASSWORD}});
  if (r.status !== 0) throw new Error(`redis-cli ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}
// Entries of the input stream received by a worker and not yet settled.
const pending = () => Number(redisCli('XPENDING', IN, 'overhead').split('\n')[0] || 0);

const run = (args) => startOverhead(BINARY, args, children);

async function startGateway(extra = []) {
  const child = run(['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--workers', '0', '--queue', inUrl,
                     '--log-queue', logUrl, '--out', dir, '--shutdown-timeout', '2', ...extra]);
  const url = await listeningUrl(child);
  return {child, url};
}

// A remote worker. The engine runs two generations at once (the others wait in it, in arrival
// order), so a worker can hold streams that have text and streams that have none yet.
function startWorker(name) {
  return run(['worker', '--queue', inUrl, '--log-queue', logUrl, '--tokenizers', MODEL, '--experiment', 'serve',
              '--decoder', `openai:${engine.baseUrl},model=${engine.modelName}`, '--max-decodes', '8', '--store-text',
              '--name', name, '--out', dir, '--no-progress', '--idle-exit', '600']);
}

before(async () => {
  engine = await startLlamaEngine({sequences: 2, context: 4096});
  ({url: base} = await startGateway(['--request-timeout', '60']));
  workers.w1 = startWorker('w1');
  workers.w2 = startWorker('w2');
  run(['consume', '--log-queue', logUrl, '--store', `sqlite:${db}`, '--out', dir, '--no-progress', '--idle-exit', '600']);
});

after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (engine) await engine.stop();
  try {
    for (const suffix of ['in', 'log', 'in-dlq', 'log-dlq']) redisCli('DEL', `${tag}-${suffix}`);
    for (const key of redisCli('--scan', '--pattern', `${IN}-*`).split('\n').filter(Boolean)) redisCli('DEL', key);
  } catch {
    // the fixture's server is cleaned up with it
  }
  rmSync(dir, {recursive: true, force: true});
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const engineStats = async () => (await fetch(engine.url + '/engine/stats')).json();
function client(url = base) {
  return new OpenAI({apiKey: 'unused', baseURL: url + '/v1', maxRetries: 0, timeout: 60000});
}

// The engine's own completion of the prompt `overhead` renders and counts, at temperature 0.
let expected;
async function engineAnswer() {
  if (expected) return expected;
  expected = await engineCompletion(base, engine, {model: MODEL, messages: MESSAGES, maxTokens: MAX_TOKENS});
  return expected;
}

const request = {model: MODEL, messages: MESSAGES, max_tokens: MAX_TOKENS, temperature: 0};

async function pollAsync(url, id, timeoutMs = 60000) {
  let s;
  const end = Date.now() + timeoutMs;
  do {
    await sleep(20);
    s = await (await fetch(url + '/v1/requests/' + id)).json();
  } while (s.status === 'queued' && Date.now() < end);
  return s;
}

// The stored records: id -> [{finish_reason, text}] (a list, to see a record stored twice).
function storedRecords() {
  const r = spawnSync('sqlite3', ['-json', db, 'SELECT id, finish_reason, text FROM records'], {encoding: 'utf8'});
  const rows = r.status === 0 && r.stdout.trim() ? JSON.parse(r.stdout) : [];
  const byId = new Map();
  for (const row of rows) byId.set(row.id, [...(byId.get(row.id) ?? []), row]);
  return byId;
}
async function untilStored(ids, timeoutMs = 20000) {
  let byId;
  const end = Date.now() + timeoutMs;
  do {
    byId = storedRecords();
    if (ids.every((id) => byId.has(id))) return byId;
    await sleep(50);
  } while (Date.now() < end);
  return byId;
}

test('over Redis: sync, stream and async carry the engine\'s own text from a remote worker', async () => {
  const want = await engineAnswer();
  const ids = [];

  const c = await client().chat.completions.create(request);
  ids.push(c.id);
  assert.equal(c.choices[0].message.content, want.text);
  assert.equal(c.choices[0].finish_reason, want.finish_reason);
  assert.equal(c.usage.completion_tokens, want.completion_tokens);
  assert.equal(c.usage.total_tokens, c.usage.prompt_tokens + c.usage.completion_tokens);
  // The remote worker's decoder generated it, and says so (the gateway has none of its own); the
  // gateway stores nothing, so it opened no store.
  assert.equal(c.system_fingerprint, 'overhead-decoder-openai');
  assert.ok(!existsSync(path.join(dir, 'serve.db')), 'a routing-only gateway made no serve.db');

  const started = performance.now();
  const stream = await client().chat.completions.create({...request, stream: true, stream_options: {include_usage: true}});
  const {ids: chunkIds, deltas, finish, usage} = await collectStream(stream, started);  // deltas: [ms since the request, text]
  ids.push(...chunkIds);
  assert.equal(deltas.map(([, t]) => t).join(''), want.text);
  assert.equal(finish, want.finish_reason);
  assert.equal(usage.completion_tokens, want.completion_tokens);
  console.log('stream deltas (ms, bytes):', JSON.stringify(deltas.map(([t, x]) => [Math.round(t), x.length])));
  assert.ok(deltas.length >= 3, `${deltas.length} content deltas`);
  // Streamed while generated, through the reply stream: the first delta and the end leave the
  // worker at once, so the deltas spread over about the engine's own stream's span (a text sent
  // after the generation would come in one piece). Measured against the engine's own stream, not
  // the request's start, which a slow front (a sanitizer build) can make longer than the generation.
  const span = deltas.at(-1)[0] - deltas[0][0];
  const engineSpan = await engineStreamSpan(engine, want.prompt, MAX_TOKENS);
  assert.ok(span >= engineSpan / 2, `the deltas spread over ${span.toFixed(1)} ms, the engine's own stream over ${engineSpan.toFixed(1)} ms`);

  const posted = await fetch(base + '/v1/requests', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(request)});
  assert.equal(posted.status, 202);
  const {id} = await posted.json();
  ids.push(id);
  const s = await pollAsync(base, id);
  assert.equal(s.status, 'done', JSON.stringify(s));
  assert.equal(s.response.choices[0].message.content, want.text);
  assert.equal(s.response.choices[0].finish_reason, want.finish_reason);
  assert.equal(s.response.usage.completion_tokens, want.completion_tokens);

  const stored = await untilStored([...new Set(ids)]);
  for (const rid of new Set(ids)) {
    assert.equal(stored.get(rid)?.length, 1, `request ${rid} stored once`);
    assert.equal(stored.get(rid)[0].text, want.text);
  }
});

// Reads a stream to its end: {id, text, finish, error} (error: the error event's code).
async function readStream(stream, onText = () => {}) {
  const out = {id: '', text: '', finish: null, error: null, pieces: 0};
  try {
    for await (const chunk of stream) {
      out.id ||= chunk.id;
      const piece = chunk.choices[0]?.delta?.content;
      if (piece) {
        out.text += piece;
        ++out.pieces;
        onText(out);
      }
      if (chunk.choices[0]?.finish_reason) out.finish = chunk.choices[0].finish_reason;
    }
  } catch (e) {
    out.error = e.code ?? e.error?.code ?? String(e);
  }
  return out;
}

test('a worker SIGKILLed mid-stream: one answer per request, an error event for streams with text, redelivery for the rest', async () => {
  // Only w1 takes items up while the requests go out, so that it holds all of them when killed.
  workers.w2.kill('SIGTERM');
  await new Promise((r) => workers.w2.once('exit', r));
  assert.equal(pending(), 0);

  // Sampled (temperature 1): a greedy answer of the random model may end at once on an
  // end-of-generation token, and these generations must outlast the kill.
  const sampled = {...request, temperature: 1, seed: 7};
  const stats0 = await engineStats();
  const withText = [];
  const gotText = [];
  for (let i = 0; i < 2; ++i) {
    let seen;
    gotText.push(new Promise((r) => { seen = r; }));
    withText.push(client().chat.completions.create({...sampled, messages: [{role: 'user', content: `Story ${i}`}], max_tokens: KILLED,
                                                    stream: true})
      .then((stream) => readStream(stream, (o) => { if (o.pieces === 2) seen(); })));
  }
  // Both streams hold the engine's two sequences before anything else is sent.
  for (let i = 0; i < 400 && (await engineStats()).started < stats0.started + 2; ++i) await sleep(25);
  // A stream, a synchronous and an asynchronous request that w1 takes up and the engine cannot
  // start yet: they get no text before the kill.
  const waiting = client().chat.completions.create({...sampled, messages: [{role: 'user', content: 'Waiting stream'}], stream: true})
    .then((s) => readStream(s));
  const sync = client().chat.completions.create({...sampled, messages: [{role: 'user', content: 'Waiting sync'}]})
    .then((c) => ({c}), (e) => ({e}));
  const posted = await (await fetch(base + '/v1/requests', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                                            body: JSON.stringify({...sampled, messages: [{role: 'user', content: 'Waiting async'}]})})).json();
  await Promise.all(gotText);
  for (let i = 0; i < 400 && (pending() < 5 || (await engineStats()).waiting < 3); ++i) await sleep(25);
  assert.equal(pending(), 5, 'w1 holds the five items');
  const held = await engineStats();
  assert.equal(held.active, 2, JSON.stringify(held));
  assert.equal(held.waiting, 3, JSON.stringify(held));

  workers.w2 = startWorker('w2-survivor');
  await sleep(200);
  workers.w1.kill('SIGKILL');
  await new Promise((r) => workers.w1.once('exit', r));

  const interrupted = await Promise.all(withText);
  for (const s of interrupted) {
    assert.equal(s.error, 'stream_interrupted', `a stream with text ends with the error event: ${JSON.stringify(s).slice(0, 300)}`);
    assert.equal(s.finish, null);
    assert.ok(s.pieces >= 2);
  }
  const w = await waiting;
  assert.equal(w.error, null, JSON.stringify(w));
  assert.ok(w.finish === 'length' || w.finish === 'stop');
  assert.ok(w.text.length > 0);
  const {c, e} = await sync;
  assert.ok(c, `the synchronous request completes on the surviving worker: ${e}`);
  assert.ok(c.choices[0].message.content.length > 0);
  const a = await pollAsync(base, posted.id);
  assert.equal(a.status, 'done', JSON.stringify(a));

  // Every request's record exactly once; the completed ones hold the text their client got.
  const ids = [...interrupted.map((s) => s.id), w.id, c.id, posted.id];
  const stored = await untilStored(ids);
  for (const id of ids) assert.equal(stored.get(id)?.length, 1, `request ${id} stored once: ${JSON.stringify(stored.get(id))}`);
  assert.equal(stored.get(w.id)[0].text, w.text, 'the completed stream\'s deltas are its whole stored text');
  assert.equal(stored.get(c.id)[0].text, c.choices[0].message.content);
  assert.equal(stored.get(posted.id)[0].text, a.response.choices[0].message.content);
  workers.w1 = workers.w2;
});

// Cancellation reaching a remote worker: the engine's /engine/stats counts a generation cancelled
// when its request closed; the stored record says finish_reason "cancelled".

async function untilCancelled(before) {
  let now;
  for (let i = 0; i < 400; ++i) {
    now = await engineStats();
    if (now.cancelled > before.cancelled && now.active === 0) return now;
    await sleep(25);
  }
  assert.fail('the engine did not see the generation cancelled: ' + JSON.stringify({before, now}));
}

function cancelledCount() {
  const r = spawnSync('sqlite3', [db, "SELECT count(*) FROM records WHERE finish_reason = 'cancelled'"], {encoding: 'utf8'});
  return Number(r.stdout.trim() || 0);
}
async function untilCancelledRecords(n) {
  for (let i = 0; i < 400 && cancelledCount() < n; ++i) await sleep(25);
  return cancelledCount();
}

test('a streaming client that disconnects cancels the remote worker\'s generation', async () => {
  const before = await engineStats();
  const records = cancelledCount();
  const controller = new AbortController();
  const stream = await client().chat.completions.create({...request, max_tokens: LONG, stream: true}, {signal: controller.signal});
  let pieces = 0;
  let id;
  for await (const chunk of stream) {
    id ??= chunk.id;
    if (chunk.choices[0]?.delta?.content && ++pieces === 2) {
      controller.abort();  // the connection closes: the client has gone mid-stream
      break;
    }
  }
  const aborted = performance.now();
  let stopped;
  for (let i = 0; i < 2000 && !stopped; ++i) {
    if ((await engineStats()).cancelled > before.cancelled) stopped = performance.now();
  }
  console.log(`the engine saw the cancel ${(stopped - aborted).toFixed(1)} ms after the client went away`);
  const now = await untilCancelled(before);
  const generated = now.generated_tokens - before.generated_tokens;
  assert.ok(generated < LONG, `stopped after ${generated} of ${LONG} tokens`);
  const stored = await untilStored([id]);
  assert.equal(stored.get(id)?.[0]?.finish_reason, 'cancelled');
  assert.equal(await untilCancelledRecords(records + 1), records + 1);
});

test('a synchronous client that disconnects cancels the remote worker\'s generation', async () => {
  const before = await engineStats();
  const records = cancelledCount();
  const controller = new AbortController();
  const call = client().chat.completions.create({...request, max_tokens: LONG}, {signal: controller.signal});
  for (let i = 0; i < 400 && (await engineStats()).active === 0; ++i) await sleep(10);
  controller.abort();
  await assert.rejects(call);
  const now = await untilCancelled(before);
  assert.ok(now.generated_tokens - before.generated_tokens < LONG);
  assert.equal(await untilCancelledRecords(records + 1), records + 1, 'its record says cancelled');
});

test('a request cancelled before any worker took it up is cancelled as a worker takes it', async () => {
  workers.w1.kill('SIGTERM');  // no worker: the item waits on the input stream
  await new Promise((r) => workers.w1.once('exit', r));
  const before = await engineStats();
  const records = cancelledCount();
  const controller = new AbortController();
  const call = client().chat.completions.create({...request, max_tokens: LONG}, {signal: controller.signal});
  call.catch(() => {});
  await sleep(300);
  controller.abort();
  await assert.rejects(call);
  workers.w1 = startWorker('w3');
  assert.equal(await untilCancelledRecords(records + 1), records + 1, 'its record says cancelled');
  const now = await engineStats();
  assert.ok(now.generated_tokens - before.generated_tokens < LONG, JSON.stringify({before, now}));
});

test('--request-timeout answers 504 and cancels the remote worker\'s generation', async () => {
  const {child, url} = await startGateway(['--request-timeout', '1']);
  const before = await engineStats();
  const records = cancelledCount();
  const r = await fetch(url + '/v1/chat/completions', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                                       body: JSON.stringify({...request, max_tokens: LONG})});
  assert.equal(r.status, 504, await r.text());
  const now = await untilCancelled(before);
  assert.ok(now.generated_tokens - before.generated_tokens < LONG);
  assert.equal(await untilCancelledRecords(records + 1), records + 1, 'its record says cancelled');
  child.kill('SIGTERM');
});
