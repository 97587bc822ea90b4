// The official `openai` npm client against `overhead serve --decoder openai:<engine>` in front of
// the real engine (tests/engine: llama.cpp serving the tiny Llama-3-tokenizer model): synchronous,
// streaming and asynchronous answers carry the engine's own text. The reference is the engine
// asked directly (/v1/completions) with the prompt `overhead` renders (/v1/render) at
// temperature 0: the content, the finish reason and completion_tokens equal it; the stream's
// deltas concatenate to it byte for byte, and the first arrives well before the last (the text
// streams while the engine generates it, not after). Generations run one at a time: batched with
// others the random model's greedy answer may change (tests/engine/llama_server.mjs).
//
// Run: CTest sets OVERHEAD_BINARY, OPENAI_NODE_MODULES and the engine's variables
// (tests/CMakeLists.txt: OVERHEAD_LLAMA_ENGINE_ENV).
//
// Tokenize once: a gateway whose decoder sends the prompt as our ids and reads the answer as the
// engine's token ids (dialect=vllm, output=ids: the worker detokenizes them and matches the stop
// strings itself) answers the engine's own completion of those ids, whole, streamed and cut by a
// stop string; its records say the engine read exactly the tokens sent.
import {spawn, spawnSync} from 'node:child_process';
import {createRequire} from 'node:module';
import {mkdtempSync, rmSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startLlamaEngine} from '../engine/llama_engine.mjs';
import {collectStream, engineCompletion, engineStreamSpan, postJson} from './engine_front.mjs';

const BINARY = process.env.OVERHEAD_BINARY;
const MODULES = process.env.OPENAI_NODE_MODULES;
if (!BINARY || !MODULES) throw new Error('set OVERHEAD_BINARY and OPENAI_NODE_MODULES');
const require = createRequire(path.join(path.resolve(MODULES), 'noop.js'));
const OpenAI = require('openai').default;

const MODEL = 'llama-3.3-70b-instruct';  // overhead's binding: the engine's tokenizer (the Llama-3 set)
const MAX_TOKENS = 40;
const MESSAGES = [
  {role: 'system', content: 'Answer briefly.'},
  {role: 'user', content: 'こんにちは、世界! Tell me about the sea.'},
];

const dir = mkdtempSync(path.join(os.tmpdir(), 'overhead-engine-'));
let engine;
let server;
let base;
const servers = [];

// `overhead serve` in front of the engine, storing its records in `out`; `decoderParams` is added
// to its --decoder (e.g. ",dialect=vllm,output=ids").
async function startServe(out, extra = [], decoderParams = '') {
  const child = spawn(BINARY, ['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--out', out,
                               '--decoder', `openai:${engine.baseUrl},model=${engine.modelName}${decoderParams}`, '--max-decodes', '8',
                               '--shutdown-timeout', '5', ...extra],
                      {stdio: ['ignore', 'ignore', 'pipe']});
  servers.push(child);
  child.stderr.setEncoding('utf8');
  let stderr = '';
  const url = await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = stderr.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error('overhead serve exited ' + code + ': ' + stderr)));
  });
  return {child, url};
}

before(async () => {
  engine = await startLlamaEngine({sequences: 4});
  ({child: server, url: base} = await startServe(dir));
});

after(async () => {
  for (const child of servers) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (engine) await engine.stop();
  rmSync(dir, {recursive: true, force: true});
});

function client() {
  return new OpenAI({apiKey: 'unused', baseURL: base + '/v1', maxRetries: 0, timeout: 60000});
}

// The engine's own completion of the prompt `overhead` renders and counts, at temperature 0.
let expected;
async function engineAnswer() {
  if (expected) return expected;
  expected = await engineCompletion(base, engine, {model: MODEL, messages: MESSAGES, maxTokens: MAX_TOKENS});
  assert.match(expected.prompt, /<\|start_header_id\|>assistant<\|end_header_id\|>\n\n$/);
  return expected;
}

const request = {model: MODEL, messages: MESSAGES, max_tokens: MAX_TOKENS, temperature: 0};

test('sync: message.content, finish_reason and completion_tokens are the engine\'s own', async () => {
  const want = await engineAnswer();
  const c = await client().chat.completions.create(request);
  assert.equal(c.choices[0].message.content, want.text);
  assert.equal(c.choices[0].finish_reason, want.finish_reason);
  assert.equal(c.usage.completion_tokens, want.completion_tokens);
  assert.ok(c.usage.prompt_tokens > 10);
  assert.equal(c.usage.total_tokens, c.usage.prompt_tokens + c.usage.completion_tokens);
});

test('stream: the deltas concatenate to the engine\'s text and arrive while it generates', async () => {
  const want = await engineAnswer();
  const started = performance.now();
  const stream = await client().chat.completions.create({...request, stream: true, stream_options: {include_usage: true}});
  const {deltas, finish, usage} = await collectStream(stream, started);  // deltas: [ms since the request, text]
  assert.equal(deltas.map(([, t]) => t).join(''), want.text);
  assert.equal(finish, want.finish_reason);
  assert.equal(usage.completion_tokens, want.completion_tokens);
  assert.ok(deltas.length >= 5, `${deltas.length} content deltas`);
  // Streamed while generated: the deltas spread over about the time the engine spreads its tokens
  // over (a text sent after the generation would come in one piece, its deltas within a
  // millisecond). Measured against the engine's own stream, not the request's start: a slow front
  // (a sanitizer build) may take longer to the first token than the whole generation lasts.
  const span = deltas.at(-1)[0] - deltas[0][0];
  const engineSpan = await engineStreamSpan(engine, want.prompt, MAX_TOKENS);
  assert.ok(span >= engineSpan / 2, `the deltas spread over ${span.toFixed(1)} ms, the engine's own stream over ${engineSpan.toFixed(1)} ms`);
});

test('async: /v1/requests keeps the engine\'s text in its response', async () => {
  const want = await engineAnswer();
  const posted = await fetch(base + '/v1/requests', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(request)});
  assert.equal(posted.status, 202);
  const {id} = await posted.json();
  let s;
  const end = Date.now() + 30000;
  do {
    await new Promise((res) => setTimeout(res, 20));
    s = await (await fetch(base + '/v1/requests/' + id)).json();
  } while (s.status === 'queued' && Date.now() < end);
  assert.equal(s.status, 'done', JSON.stringify(s));
  assert.equal(s.response.choices[0].message.content, want.text);
  assert.equal(s.response.choices[0].finish_reason, want.finish_reason);
  assert.equal(s.response.usage.completion_tokens, want.completion_tokens);
  assert.equal(s.record.finish_reason, want.finish_reason);
});

// Cancellation: the engine's /engine/stats counts a generation cancelled when its request closed.
const engineStats = async () => (await fetch(engine.url + '/engine/stats')).json();

async function untilCancelled(before) {
  let now;
  for (let i = 0; i < 200; ++i) {
    now = await engineStats();
    if (now.cancelled > before.cancelled && now.active === 0) return now;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail('the engine did not see the generation cancelled: ' + JSON.stringify({before, now}));
}

// The records a store holds whose finish_reason is "cancelled" (the consumer stores them shortly
// after the worker published them).
async function cancelledRecords(out, atLeast) {
  let n = 0;
  for (let i = 0; i < 200; ++i) {
    const r = spawnSync('sqlite3', [path.join(out, 'serve.db'), "SELECT count(*) FROM records WHERE finish_reason = 'cancelled'"],
                        {encoding: 'utf8'});
    n = Number(r.stdout.trim() || 0);
    if (n >= atLeast) return n;
    await new Promise((res) => setTimeout(res, 25));
  }
  return n;
}

const LONG = 1500;  // far more tokens than a cancelled generation makes before it is stopped

test('a streaming client that disconnects cancels the engine\'s generation; the record says cancelled', async () => {
  const before = await engineStats();
  const controller = new AbortController();
  const stream = await client().chat.completions.create({...request, max_tokens: LONG, stream: true}, {signal: controller.signal});
  let pieces = 0;
  for await (const chunk of stream) {
    if (chunk.choices[0]?.delta?.content && ++pieces === 3) {
      controller.abort();  // the connection closes: the client has gone mid-stream
      break;
    }
  }
  assert.equal(pieces, 3);
  const now = await untilCancelled(before);
  assert.equal(now.cancelled, before.cancelled + 1);
  const generated = now.generated_tokens - before.generated_tokens;
  assert.ok(generated < LONG, `stopped after ${generated} of ${LONG} tokens`);
  assert.ok(await cancelledRecords(dir, 1) >= 1, 'a record with finish_reason "cancelled"');
});

test('a synchronous client that disconnects cancels the engine\'s generation', async () => {
  const before = await engineStats();
  const controller = new AbortController();
  const call = client().chat.completions.create({...request, max_tokens: LONG}, {signal: controller.signal});
  for (let i = 0; i < 400 && (await engineStats()).active === 0; ++i) await new Promise((r) => setTimeout(r, 10));
  controller.abort();
  await assert.rejects(call);
  const now = await untilCancelled(before);
  assert.ok(now.generated_tokens - before.generated_tokens < LONG);
  assert.ok(await cancelledRecords(dir, 2) >= 2, 'both records say cancelled');
});

test('--request-timeout answers 504 and cancels the engine\'s generation', async () => {
  const out = mkdtempSync(path.join(os.tmpdir(), 'overhead-engine-timeout-'));
  try {
    const {child, url} = await startServe(out, ['--request-timeout', '0.5']);
    const before = await engineStats();
    const r = await fetch(url + '/v1/chat/completions', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                                         body: JSON.stringify({...request, max_tokens: LONG})});
    assert.equal(r.status, 504, await r.text());
    const now = await untilCancelled(before);
    assert.ok(now.generated_tokens - before.generated_tokens < LONG);
    assert.equal(await cancelledRecords(out, 1), 1, 'its record says cancelled');
    child.kill('SIGKILL');
  } finally {
    rmSync(out, {recursive: true, force: true});
  }
});

// The engine's own completion of the ids `overhead` encodes for the rendered prompt (the template's
// tokens, nothing added), at temperature 0; with `stop`, cut by the engine at it.
async function engineCompletionOfIds(front, {maxTokens, stop}) {
  const {prompt} = await postJson(front + '/v1/render', {model: MODEL, messages: MESSAGES, add_generation_prompt: true});
  const {tokens} = await postJson(front + '/v1/tokenize', {model: MODEL, prompt, add_special_tokens: false});
  assert.equal(tokens.filter((t) => t === 128000).length, 1, 'one BOS: the template\'s');
  const c = await postJson(engine.baseUrl + '/completions',
                           {model: engine.modelName, prompt: tokens, max_tokens: maxTokens, temperature: 0, ...(stop ? {stop} : {})});
  return {ids: tokens, text: c.choices[0].text, finish_reason: c.choices[0].finish_reason,
          prompt_tokens: c.usage.prompt_tokens};
}

test('tokenize once: ids in, the engine\'s token ids out, detokenized and cut by the stop strings at the front', async () => {
  const out = mkdtempSync(path.join(os.tmpdir(), 'overhead-engine-ids-'));
  try {
    const {child, url} = await startServe(out, [], ',dialect=vllm,output=ids');
    const ids = new OpenAI({apiKey: 'unused', baseURL: url + '/v1', maxRetries: 0, timeout: 60000});
    const want = await engineCompletionOfIds(url, {maxTokens: MAX_TOKENS});
    assert.equal(want.prompt_tokens, want.ids.length);
    const c = await ids.chat.completions.create(request);
    assert.equal(c.choices[0].message.content, want.text, 'the text we detokenized is the engine\'s own');
    assert.equal(c.choices[0].finish_reason, want.finish_reason);
    const streamed = await collectStream(await ids.chat.completions.create({...request, stream: true}), performance.now());
    assert.equal(streamed.deltas.map(([, d]) => d).join(''), want.text, 'the stream concatenates to it');
    assert.ok(streamed.deltas.length > 3, 'streamed as the ids arrive');
    // A stop string from the middle of the answer (whole characters): the engine's cut, ours.
    const chars = [...want.text];
    const stop = chars.slice(Math.floor(chars.length / 2), Math.floor(chars.length / 2) + 3).join('');
    const cut = await engineCompletionOfIds(url, {maxTokens: MAX_TOKENS, stop: [stop]});
    const stopped = await ids.chat.completions.create({...request, stop: [stop]});
    assert.equal(stopped.choices[0].message.content, cut.text);
    assert.equal(stopped.choices[0].finish_reason, 'stop');
    const stoppedStream = await collectStream(await ids.chat.completions.create({...request, stop: [stop], stream: true}),
                                              performance.now());
    assert.equal(stoppedStream.deltas.map(([, d]) => d).join(''), cut.text, 'the held-back tail never reached the client');
    assert.equal(stoppedStream.finish, 'stop');
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    // The records: the engine read what was sent, answer after answer (an answer cut at our stop
    // string closed the engine's stream before its usage came: no engine count, null).
    const rows = spawnSync('sqlite3', [path.join(out, 'serve.db'),
      'SELECT prompt_tokens_sent, engine_prompt_tokens FROM records'], {encoding: 'utf8'}).stdout.trim().split('\n');
    assert.ok(rows.length >= 4, rows.join(';'));
    for (const row of rows) assert.match(row, new RegExp(`^${want.ids.length}\\|(${want.ids.length})?$`));
    assert.ok(rows.filter((row) => row === `${want.ids.length}|${want.ids.length}`).length >= 2, rows.join(';'));
  } finally {
    rmSync(out, {recursive: true, force: true});
  }
});

// /v1/completions: the prompt text through no template, as the engines' completions take it. The
// reference is the engine's own completion of the same text (it adds its BOS, as we do); on a
// gateway that sends ids (dialect=vllm) the engine reads exactly our ids, BOS included.
const TEXT = 'The sea is wide and deep, and in the evening';
async function engineTextCompletion(maxTokens) {
  const c = await postJson(engine.baseUrl + '/completions', {model: engine.modelName, prompt: TEXT, max_tokens: maxTokens, temperature: 0});
  return {text: c.choices[0].text, finish_reason: c.choices[0].finish_reason, prompt_tokens: c.usage.prompt_tokens,
          completion_tokens: c.usage.completion_tokens};
}
async function checkTextCompletions(openai, want) {
  const c = await openai.completions.create({model: MODEL, prompt: TEXT, max_tokens: MAX_TOKENS, temperature: 0});
  assert.equal(c.object, 'text_completion');
  assert.match(c.id, /^cmpl-/);
  assert.equal(c.choices[0].text, want.text);
  assert.equal(c.choices[0].finish_reason, want.finish_reason);
  assert.equal(c.usage.prompt_tokens, want.prompt_tokens, 'the prompt counted as the engine counts it, its BOS included');
  assert.equal(c.usage.completion_tokens, want.completion_tokens);
  let streamed = '';
  let finish;
  let usage;
  for await (const chunk of await openai.completions.create({model: MODEL, prompt: TEXT, max_tokens: MAX_TOKENS, temperature: 0,
                                                              stream: true, stream_options: {include_usage: true}})) {
    assert.equal(chunk.object, 'text_completion');
    if (chunk.choices[0]) {
      streamed += chunk.choices[0].text;
      finish = chunk.choices[0].finish_reason ?? finish;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(streamed, want.text);
  assert.equal(finish, want.finish_reason);
  assert.equal(usage.completion_tokens, want.completion_tokens);
  await assert.rejects(openai.completions.create({model: MODEL, prompt: [TEXT, TEXT], max_tokens: 4}),
                       (e) => e.status === 400 && e.param === 'prompt' && e.code === 'unsupported_value');
}

test('/v1/completions: the engine\'s own continuation of the text, whole and streamed, as text and as ids', async () => {
  const want = await engineTextCompletion(MAX_TOKENS);
  assert.ok(want.text.length > 0);
  await checkTextCompletions(client(), want);
  const out = mkdtempSync(path.join(os.tmpdir(), 'overhead-engine-text-ids-'));
  try {
    const {child, url} = await startServe(out, [], ',dialect=vllm');
    await checkTextCompletions(new OpenAI({apiKey: 'unused', baseURL: url + '/v1', maxRetries: 0, timeout: 60000}), want);
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    // The engine read exactly the ids sent (its BOS and the text's tokens).
    const rows = spawnSync('sqlite3', [path.join(out, 'serve.db'), 'SELECT prompt_tokens_sent, engine_prompt_tokens FROM records'],
                           {encoding: 'utf8'}).stdout.trim().split('\n');
    assert.ok(rows.includes(`${want.prompt_tokens}|${want.prompt_tokens}`), rows.join(';'));
  } finally {
    rmSync(out, {recursive: true, force: true});
  }
});
