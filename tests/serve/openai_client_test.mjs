// `overhead serve` driven by the official `openai` npm client, a client no one here wrote: a real
// server process on a free loopback port (embedded default: mem: queues, a SQLite store), then
// synchronous, streaming and asynchronous calls, each error path as the client's own error
// class, bearer auth, 429 with Retry-After, and a SIGTERM that lets the request in flight finish
// before the process exits 0.
//
// Run: node tests/serve/openai_client_test.mjs (CTest sets OVERHEAD_BINARY and OPENAI_NODE_MODULES).
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

const BINARY = process.env.OVERHEAD_BINARY;
const MODULES = process.env.OPENAI_NODE_MODULES;
if (!BINARY || !MODULES) throw new Error('set OVERHEAD_BINARY and OPENAI_NODE_MODULES');
const require = createRequire(path.join(path.resolve(MODULES), 'noop.js'));
const OpenAI = require('openai').default;
const { NotFoundError, BadRequestError, AuthenticationError, RateLimitError } = require('openai');

const TOKEN = 'test-token-' + Math.random().toString(16).slice(2);
const dir = mkdtempSync(path.join(os.tmpdir(), 'overhead-openai-'));
let server;       // the child process
let stderr = '';  // everything it printed
let base;         // http://127.0.0.1:PORT
let exited;       // resolves with the exit code

const MESSAGES = [
  { role: 'system', content: 'Answer briefly.' },
  { role: 'user', content: 'こんにちは、世界! What is 2+2?' },
];

// `overhead tokenize --chat` on the same messages: the count the gateway must report.
function cliChatCount(tokenizer, messages) {
  const input = path.join(dir, 'conversation.jsonl');
  writeFileSync(input, JSON.stringify({ messages }) + '\n');
  const r = spawnSync(BINARY, ['tokenize', '--chat', '--tokenizer', tokenizer, '--input', input], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout).ids.length;
}

// Each request waits for the gateway to settle first (settledFetch, below); the limit's own test
// passes the plain fetch.
function client(opts = {}) {
  return new OpenAI({ apiKey: TOKEN, baseURL: base + '/v1', maxRetries: 0, timeout: 60000, fetch: settledFetch, ...opts });
}

// A connection that sends the headers of a request and holds back its body, so the test decides
// when the request may finish.
function heldRequest(urlPath, body) {
  const { port } = new URL(base);
  const socket = net.connect(port, '127.0.0.1');
  let answer = '';
  socket.setEncoding('utf8');
  socket.on('data', (d) => { answer += d; });
  const closed = new Promise((resolve) => socket.on('close', () => resolve(answer)));
  socket.write(`POST ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer ${TOKEN}\r\n` +
               `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
  return { release: () => { socket.write(body); return closed; } };
}

async function inFlight() {
  const r = await fetch(base + '/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } });
  const m = (await r.text()).match(/^overhead_http_requests_in_flight (\d+)$/m);
  return m ? Number(m[1]) : -1;
}

// A request counts in flight until its answer is written, so one sent the moment the previous
// answer arrives can meet that one still counted, and --max-inflight 1 refuses it. Tests of other
// things send each request once the gateway has settled; the limit's own test does not.
async function settled() {
  await waitFor(async () => (await inFlight()) === 0, 'the previous request to leave the in-flight count');
}
const settledFetch = async (url, init) => {
  await settled();
  return fetch(url, init);
};

async function waitFor(predicate, what, ms = 10000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('timed out waiting for ' + what);
}

before(async () => {
  const tokenFile = path.join(dir, 'token');
  writeFileSync(tokenFile, TOKEN + '\n');
  server = spawn(BINARY, ['serve', '--listen', '127.0.0.1:0', '--tokenizers', 'phi-4', 'google/gemma-2-27b-it',
                          '--auth-token-file', tokenFile, '--max-inflight', '1', '--out', dir, '--shutdown-timeout', '20'],
                 { stdio: ['ignore', 'ignore', 'pipe'] });
  exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve(code ?? signal)));
  server.stderr.setEncoding('utf8');
  base = await new Promise((resolve, reject) => {
    server.stderr.on('data', (d) => {
      stderr += d;
      const m = stderr.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) resolve(m[1]);
    });
    server.on('exit', (code) => reject(new Error('overhead serve exited ' + code + ': ' + stderr)));
  });
});

after(() => {
  if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

test('a synchronous completion counts the prompt as `overhead tokenize --chat` does', async () => {
  const c = await client().chat.completions.create({ model: 'microsoft/phi-4', messages: MESSAGES });
  assert.equal(c.object, 'chat.completion');
  assert.match(c.id, /^chatcmpl-/);
  assert.equal(c.model, 'microsoft/phi-4');
  assert.equal(c.choices.length, 1);
  assert.equal(c.choices[0].message.role, 'assistant');
  // --decoder none: no answer is made up.
  assert.equal(c.choices[0].message.content, '');
  assert.equal(c.choices[0].finish_reason, 'length');
  assert.equal(c.system_fingerprint, 'overhead-decoder-none');
  const expected = cliChatCount('phi-4', MESSAGES);
  assert.ok(expected > 5);
  assert.equal(c.usage.prompt_tokens, expected);
  assert.equal(c.usage.completion_tokens, 0);
  assert.equal(c.usage.total_tokens, expected);
  // The Gemma-2 binding by its HF id, without the system turn its template refuses.
  const g = await client().chat.completions.create({ model: 'google/gemma-2-27b-it', messages: MESSAGES.slice(1) });
  assert.equal(g.usage.prompt_tokens, cliChatCount('gemma-2-27b-it', MESSAGES.slice(1)));
});

test('a stream is chunks with a role delta, a finish_reason and a usage chunk', async () => {
  const stream = await client().chat.completions.create({
    model: 'phi-4', messages: MESSAGES, stream: true, stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.ok(chunks.length >= 3, JSON.stringify(chunks));
  for (const ch of chunks) {
    assert.equal(ch.object, 'chat.completion.chunk');
    assert.equal(ch.id, chunks[0].id);
  }
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  const finish = chunks.find((ch) => ch.choices.length && ch.choices[0].finish_reason);
  assert.equal(finish.choices[0].finish_reason, 'length');
  const last = chunks.at(-1);
  assert.deepEqual(last.choices, []);
  assert.equal(last.usage.prompt_tokens, cliChatCount('phi-4', MESSAGES));
  const content = chunks.map((ch) => ch.choices[0]?.delta?.content ?? '').join('');
  assert.equal(content, '');
  // The client's own accumulator agrees.
  const runner = client().chat.completions.stream({ model: 'phi-4', messages: MESSAGES });
  const final = await runner.finalChatCompletion();
  assert.equal(final.choices[0].finish_reason, 'length');
});

test('an asynchronous request: 202 with an id, then polled until done', async () => {
  const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
  const r = await fetch(base + '/v1/requests', { method: 'POST', headers, body: JSON.stringify({ model: 'phi-4', messages: MESSAGES }) });
  assert.equal(r.status, 202);
  const { id, status } = await r.json();
  assert.equal(status, 'queued');
  assert.equal(r.headers.get('location'), '/v1/requests/' + id);
  let s;
  await waitFor(async () => {
    s = await (await settledFetch(base + '/v1/requests/' + id, { headers })).json();
    return s.status !== 'queued';
  }, 'the request to finish');
  assert.equal(s.status, 'done');
  assert.equal(s.record.id, id);
  assert.equal(s.record.experiment_tokenizer, 'serve#phi-4');
  assert.equal(s.record.token_count, cliChatCount('phi-4', MESSAGES));
  assert.equal(s.response.usage.prompt_tokens, s.record.token_count);
  const missing = await settledFetch(base + '/v1/requests/req_nothere', { headers });
  assert.equal(missing.status, 404);
  assert.equal((await missing.json()).error.code, 'not_found');
});

test('errors are the client\'s own error classes, naming the field', async () => {
  await assert.rejects(client().chat.completions.create({ model: 'gpt-9', messages: MESSAGES }), (e) => {
    assert.ok(e instanceof NotFoundError, String(e));
    assert.equal(e.status, 404);
    assert.equal(e.code, 'model_not_found');
    assert.equal(e.param, 'model');
    return true;
  });
  await assert.rejects(client().chat.completions.create({ model: 'phi-4', messages: [] }), (e) => {
    assert.ok(e instanceof BadRequestError, String(e));
    assert.equal(e.param, 'messages');
    return true;
  });
  await assert.rejects(client().chat.completions.create({ model: 'phi-4', messages: [{ role: 'wizard', content: 'x' }] }), (e) => {
    assert.ok(e instanceof BadRequestError, String(e));
    assert.equal(e.param, 'messages[0].role');
    return true;
  });
  // Gemma-2's template refuses a system turn: the worker's refusal, as a 400.
  await assert.rejects(client().chat.completions.create({ model: 'gemma-2-27b-it', messages: MESSAGES }), (e) => {
    assert.ok(e instanceof BadRequestError, String(e));
    assert.equal(e.code, 'template_error');
    assert.match(e.message, /System role not supported/);
    return true;
  });
  // ... also when streaming: the prompt is encoded before the stream starts.
  await assert.rejects(client().chat.completions.create({ model: 'gemma-2-27b-it', messages: MESSAGES, stream: true }),
                       (e) => e instanceof BadRequestError);
});

test('a wrong or missing bearer token is an AuthenticationError; the token is never printed', async () => {
  await assert.rejects(client({ apiKey: 'wrong' }).chat.completions.create({ model: 'phi-4', messages: MESSAGES }),
                       (e) => e instanceof AuthenticationError && e.status === 401);
  const r = await fetch(base + '/v1/models');
  assert.equal(r.status, 401);
  const models = await client().models.list();
  assert.deepEqual(models.data.map((m) => m.id), ['phi-4', 'google/gemma-2-27b-it']);
  assert.ok(!stderr.includes(TOKEN));
});

test('past --max-inflight the client gets a RateLimitError with Retry-After', async () => {
  const body = JSON.stringify({ model: 'phi-4', messages: MESSAGES });
  await settled();  // else the held request may meet the last test's answer still counted, and be refused itself
  const held = heldRequest('/v1/chat/completions', body);
  await waitFor(async () => (await inFlight()) === 1, 'the held request to be in flight');
  await assert.rejects(client({ fetch }).chat.completions.create({ model: 'phi-4', messages: MESSAGES }), (e) => {
    assert.ok(e instanceof RateLimitError, String(e));
    assert.equal(e.status, 429);
    assert.equal(e.headers.get('retry-after'), '1');
    assert.equal(e.code, 'rate_limit_exceeded');
    return true;
  });
  const answer = await held.release();
  assert.match(answer, /^HTTP\/1\.1 200/);
  assert.match(answer, /"object":"chat.completion"/);
  const c = await client().chat.completions.create({ model: 'phi-4', messages: MESSAGES });  // once the slot is free
  assert.equal(c.object, 'chat.completion');
});

test('SIGTERM: the request in flight is answered, then the process exits 0 and the records are stored', async () => {
  const body = JSON.stringify({ model: 'phi-4', messages: MESSAGES });
  await settled();
  const held = heldRequest('/v1/chat/completions', body);
  await waitFor(async () => (await inFlight()) === 1, 'the held request to be in flight');
  server.kill('SIGTERM');
  await waitFor(async () => stderr.includes('SIGTERM'), 'the server to see SIGTERM');
  // No new connections are taken (the listening socket is closed)...
  await waitFor(() => new Promise((resolve) => {
    const s = net.connect(new URL(base).port, '127.0.0.1');
    s.on('error', () => resolve(true));
    s.on('connect', () => { s.destroy(); resolve(false); });
  }), 'the listening socket to close');
  // ... but the one in flight finishes.
  const answer = await held.release();
  assert.match(answer, /^HTTP\/1\.1 200/);
  assert.match(answer, /"prompt_tokens":\d+/);
  assert.equal(await exited, 0, stderr);
  // Every answered completion and the asynchronous request left a record in the store.
  const db = path.join(dir, 'serve.db');
  const q = spawnSync('sqlite3', [db, "select count(*), sum(publish_acked > 0), sum(input_deleted > 0) from records where experiment = 'serve'"],
                      { encoding: 'utf8' });
  assert.equal(q.status, 0, q.stderr);
  const [n, acked, deleted] = q.stdout.trim().split('|').map(Number);
  assert.ok(n >= 8, q.stdout);
  assert.equal(acked, n);
  assert.equal(deleted, n);
});
