// The Batch API through the official `openai` npm client against `overhead serve --decoder
// openai:<engine>,dialect=llamacpp` in front of the real engine (tests/engine: llama.cpp serving the tiny
// Llama-3-tokenizer model): a JSONL uploaded with files.create(purpose=batch), a batch created,
// polled to completed, its output file downloaded. Each output line's content equals the engine's
// own temperature-0 completion of the prompt `overhead` renders for that line's messages; there is
// exactly one line per custom_id. Lines with tools and a tool_choice come back with the same
// tool_calls as the chat route's answer to the same request. Also: validation up front (a malformed line, a duplicate
// custom_id, a url that is not the endpoint: failed at validating with the lines named, nothing
// sent), paging of GET /v1/batches, and cancel.
//
// BATCH_QUEUE=redis: the same over Redis, a routing-only gateway (--workers 0) with two remote
// `overhead worker` processes and an `overhead consume` into the store the gateway reads.
//
// Run: CTest sets OVERHEAD_BINARY, OPENAI_NODE_MODULES, the engine's variables and, over Redis,
// OVERHEAD_REDIS_ENV.
import {createRequire} from 'node:module';
import {mkdtempSync, rmSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startLlamaEngine} from '../engine/llama_engine.mjs';
import {engineCompletion} from './engine_front.mjs';
import {listeningUrl, readEnvFile, startOverhead} from './overhead_process.mjs';

const BINARY = process.env.OVERHEAD_BINARY;
const MODULES = process.env.OPENAI_NODE_MODULES;
if (!BINARY || !MODULES) throw new Error('set OVERHEAD_BINARY and OPENAI_NODE_MODULES');
const OVER_REDIS = process.env.BATCH_QUEUE === 'redis';
const require = createRequire(path.join(path.resolve(MODULES), 'noop.js'));
const OpenAI = require('openai').default;

const MODEL = 'llama-3.3-70b-instruct';
const MAX_TOKENS = 24;
const QUESTIONS = ['Tell me about the sea.', 'Name three colours.', 'What is a prime number?', 'Say hello in French.',
                   'Count to five.', 'What do cats eat?'];

const dir = mkdtempSync(path.join(os.tmpdir(), 'overhead-batches-'));
const children = [];
let engine;
let base;

const run = (args) => startOverhead(BINARY, args, children);
const listening = listeningUrl;

before(async () => {
  engine = await startLlamaEngine({sequences: 2});
  // dialect=llamacpp: token ids in, and JSON-schema constraints for the tool-call lines.
  const decoder = `openai:${engine.baseUrl},model=${engine.modelName},dialect=llamacpp`;
  // Every answer priced by its worker (docs/cost-model.md, "Every request priced"): the batch's
  // cost_usd is the sum of its records'.
  const PRICES = ['--price-cpu-usd-per-hour', '0.05', '--price-gpu-usd-per-hour', '2'];
  if (!OVER_REDIS) {
    // One generation at a time: batched with others the random model's greedy answer may change.
    base = await listening(run(['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--out', dir, '--decoder', decoder,
                                '--max-decodes', '1', '--shutdown-timeout', '2', ...PRICES]));
    return;
  }
  const redis = readEnvFile(process.env.OVERHEAD_REDIS_ENV);
  const tag = `batches${process.pid}`;
  const inUrl = `${redis.REDIS_URL}/${tag}-in?visibility_ms=5000`;
  const logUrl = `${redis.REDIS_URL}/${tag}-log?visibility_ms=5000`;
  const store = `sqlite:${path.join(dir, 'records.db')}`;
  base = await listening(run(['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--workers', '0', '--queue', inUrl,
                              '--log-queue', logUrl, '--store', store, '--out', dir, '--shutdown-timeout', '2']));
  for (const name of ['w1', 'w2'])
    run(['worker', '--queue', inUrl, '--log-queue', logUrl, '--tokenizers', MODEL, '--decoder', decoder, '--max-decodes', '1',
         '--name', name, '--out', dir, '--no-progress', '--idle-exit', '600', ...PRICES]);
  run(['consume', '--log-queue', logUrl, '--store', store, '--out', dir, '--no-progress', '--idle-exit', '600']);
});

after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (engine) await engine.stop();
  rmSync(dir, {recursive: true, force: true});
});

function client() {
  return new OpenAI({apiKey: 'unused', baseURL: base + '/v1', maxRetries: 0, timeout: 60000});
}

function line(customId, question, extra = {}) {
  return {custom_id: customId, method: 'POST', url: '/v1/chat/completions',
          body: {model: MODEL, messages: [{role: 'user', content: question}], max_tokens: MAX_TOKENS, temperature: 0}, ...extra};
}

async function upload(openai, lines) {
  const text = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n';
  return openai.files.create({file: new File([text], 'input.jsonl', {type: 'application/jsonl'}), purpose: 'batch'});
}

async function waitFor(openai, id, done, ms = 120000) {
  const end = Date.now() + ms;
  for (;;) {
    const b = await openai.batches.retrieve(id);
    if (done(b)) return b;
    if (Date.now() > end) throw new Error(`batch ${id} still ${b.status}: ${JSON.stringify(b.request_counts)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const FINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);

test('a batch through the openai client: one output line per custom_id, each the engine\'s own answer', async () => {
  const openai = client();
  const file = await upload(openai, QUESTIONS.map((q, i) => line(`q-${i}`, q)));
  assert.equal(file.object, 'file');
  assert.equal(file.purpose, 'batch');
  assert.equal((await openai.files.retrieve(file.id)).id, file.id);
  const batch = await openai.batches.create({input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h',
                                             metadata: {suite: 'engine_batches'}});
  assert.equal(batch.object, 'batch');
  assert.ok(['validating', 'in_progress'].includes(batch.status), batch.status);
  const done = await waitFor(openai, batch.id, (b) => FINAL.has(b.status));
  assert.equal(done.status, 'completed', JSON.stringify(done));
  assert.deepEqual(done.request_counts, {total: QUESTIONS.length, completed: QUESTIONS.length, failed: 0});
  assert.equal(done.metadata.suite, 'engine_batches');
  assert.ok(done.cost_usd > 0, `the batch is priced: ${done.cost_usd}`);
  assert.ok(done.completed_at >= done.in_progress_at);
  assert.equal(done.error_file_id, null);
  const text = await (await openai.files.content(done.output_file_id)).text();
  const lines = text.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, QUESTIONS.length);
  assert.deepEqual(lines.map((l) => l.custom_id).sort(), QUESTIONS.map((_, i) => `q-${i}`).sort(), 'each custom_id exactly once');
  for (const l of lines) {
    assert.equal(l.error, null);
    assert.equal(l.response.status_code, 200);
    assert.match(l.id, /^batch_req_/);
    const body = l.response.body;
    assert.equal(body.object, 'chat.completion');
    const question = QUESTIONS[Number(l.custom_id.slice(2))];
    const expected = await engineCompletion(base, engine, {model: MODEL, messages: [{role: 'user', content: question}], maxTokens: MAX_TOKENS,
                                                                ids: true});
    assert.equal(body.choices[0].message.content, expected.text, `${l.custom_id}: the engine's own answer`);
    assert.equal(body.choices[0].finish_reason, expected.finish_reason);
    assert.equal(body.usage.completion_tokens, expected.completion_tokens);
  }
});

// Tool calls: a line with tools and a tool_choice reads as the same request does on the chat route
// (the engine constrained to the call's JSON, the text parsed into tool_calls): the batch's calls
// equal the interactive answer's, name and arguments, and finish_reason is tool_calls.
const TOOLS = [
  {type: 'function', function: {name: 'get_time', parameters: {type: 'object', properties: {zone: {type: 'string', enum: ['CET', 'UTC']}},
                                                                required: ['zone'], additionalProperties: false}}},
  {type: 'function', function: {name: 'set_alarm', parameters: {type: 'object', properties: {on: {type: 'boolean'}},
                                                                 required: ['on'], additionalProperties: false}}},
];
test('tool calls in a batch\'s output, as the chat route answers the same request', async () => {
  const openai = client();
  const bodies = {
    named: {model: MODEL, messages: [{role: 'user', content: 'What time is it in Paris?'}], tools: TOOLS, max_tokens: 200, temperature: 0,
            tool_choice: {type: 'function', function: {name: 'get_time'}}},
    required: {model: MODEL, messages: [{role: 'user', content: 'Wake me up.'}], tools: TOOLS, max_tokens: 200, temperature: 0,
               tool_choice: 'required', parallel_tool_calls: false},
  };
  const file = await upload(openai, Object.entries(bodies).map(([id, body]) => ({custom_id: id, method: 'POST', url: '/v1/chat/completions', body})));
  const batch = await openai.batches.create({input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h'});
  const done = await waitFor(openai, batch.id, (b) => FINAL.has(b.status));
  assert.equal(done.status, 'completed', JSON.stringify(done));
  const errors = done.error_file_id ? await (await openai.files.content(done.error_file_id)).text() : '';
  assert.equal(done.request_counts.completed, 2, `${JSON.stringify(done.request_counts)}: ${errors}`);
  const lines = (await (await openai.files.content(done.output_file_id)).text()).trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, 2);
  for (const l of lines) {
    const choice = l.response.body.choices[0];
    const interactive = (await openai.chat.completions.create(bodies[l.custom_id])).choices[0];
    assert.equal(choice.finish_reason, 'tool_calls', `${l.custom_id}: ${JSON.stringify(choice)}`);
    assert.equal(choice.finish_reason, interactive.finish_reason);
    assert.ok(choice.message.tool_calls.length >= 1);
    assert.deepEqual(choice.message.tool_calls.map((c) => c.function), interactive.message.tool_calls.map((c) => c.function),
                     `${l.custom_id}: the batch's calls are the chat route's`);
    for (const c of choice.message.tool_calls) assert.match(c.id, /\S/);
  }
  assert.equal(lines.find((l) => l.custom_id === 'named').response.body.choices[0].message.tool_calls[0].function.name, 'get_time');
});

test('a /v1/completions batch: each line the engine\'s own continuation of its prompt text', async () => {
  const openai = client();
  const prompts = ['The river runs', 'In the morning the baker'];
  const file = await upload(openai, prompts.map((p, i) => ({custom_id: `t-${i}`, method: 'POST', url: '/v1/completions',
                                                            body: {model: MODEL, prompt: p, max_tokens: MAX_TOKENS, temperature: 0}})));
  const batch = await openai.batches.create({input_file_id: file.id, endpoint: '/v1/completions', completion_window: '24h'});
  const done = await waitFor(openai, batch.id, (b) => FINAL.has(b.status));
  assert.equal(done.status, 'completed', JSON.stringify(done));
  assert.deepEqual(done.request_counts, {total: 2, completed: 2, failed: 0});
  const lines = (await (await openai.files.content(done.output_file_id)).text()).trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, 2);
  for (const l of lines) {
    const body = l.response.body;
    assert.equal(body.object, 'text_completion');
    const c = await (await fetch(engine.baseUrl + '/completions', {method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({model: engine.modelName, prompt: prompts[Number(l.custom_id.slice(2))], max_tokens: MAX_TOKENS, temperature: 0})})).json();
    assert.equal(body.choices[0].text, c.choices[0].text, `${l.custom_id}: the engine's own continuation`);
    assert.equal(body.usage.prompt_tokens, c.usage.prompt_tokens);
    assert.equal(body.usage.completion_tokens, c.usage.completion_tokens);
  }
});

test('validation up front: every bad line named, the batch failed at validating, nothing sent', async () => {
  const openai = client();
  const file = await upload(openai, [
    line('a', 'One.'),
    '{not json',
    line('a', 'Two.'),
    line('c', 'Three.', {url: '/v1/completions'}),
    {custom_id: 'd', method: 'POST', url: '/v1/chat/completions', body: {model: MODEL, messages: 'nope'}},
  ]);
  const batch = await openai.batches.create({input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h'});
  const done = await waitFor(openai, batch.id, (b) => FINAL.has(b.status));
  assert.equal(done.status, 'failed');
  assert.equal(done.errors.object, 'list');
  const byLine = Object.fromEntries(done.errors.data.map((e) => [e.line, e]));
  assert.equal(byLine[2].code, 'invalid_json_line');
  assert.equal(byLine[3].code, 'duplicate_custom_id');
  assert.equal(byLine[3].param, 'custom_id');
  assert.equal(byLine[4].code, 'mismatched_endpoint');
  assert.equal(byLine[4].param, 'url');
  assert.match(byLine[5].param, /^body\.messages/);
  assert.equal(done.request_counts.total, 0);
  assert.equal(done.output_file_id, null);
  await assert.rejects(openai.batches.create({input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h'}),
                       (e) => e.status === 400 && e.param === 'endpoint');
  await assert.rejects(openai.batches.create({input_file_id: 'file-none', endpoint: '/v1/chat/completions', completion_window: '24h'}),
                       (e) => e.status === 404);
  await assert.rejects(openai.batches.create({input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '1w'}),
                       (e) => e.status === 400 && e.param === 'completion_window');
});

test('batches are listed newest first, paged with after and limit', async () => {
  const openai = client();
  const file = await upload(openai, ['{bad']);
  const ids = [];
  for (let i = 0; i < 3; ++i)
    ids.push((await openai.batches.create({input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h'})).id);
  const first = await openai.batches.list({limit: 2});
  assert.equal(first.data.length, 2);
  assert.equal(first.has_more, true);
  const seen = [];
  for await (const b of openai.batches.list({limit: 2})) seen.push(b.id);
  for (const id of ids) assert.equal(seen.filter((s) => s === id).length, 1, `${id} listed once`);
  assert.equal(new Set(seen).size, seen.length, 'no batch twice across pages');
});

test('cancel: cancelling then cancelled, what finished is written', async () => {
  const openai = client();
  const many = Array.from({length: 40}, (_, i) => line(`c-${i}`, QUESTIONS[i % QUESTIONS.length] + ` (${i})`));
  const file = await upload(openai, many);
  const batch = await openai.batches.create({input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h'});
  await waitFor(openai, batch.id, (b) => b.status === 'in_progress' || FINAL.has(b.status));
  const cancelling = await openai.batches.cancel(batch.id);
  assert.ok(['cancelling', 'cancelled'].includes(cancelling.status), cancelling.status);
  const done = await waitFor(openai, batch.id, (b) => FINAL.has(b.status));
  assert.equal(done.status, 'cancelled');
  assert.ok(done.cancelled_at >= done.cancelling_at);
  if (done.output_file_id) {
    const text = await (await openai.files.content(done.output_file_id)).text();
    const ids = text.trim().split('\n').map((l) => JSON.parse(l).custom_id);
    assert.equal(new Set(ids).size, ids.length, 'no custom_id twice');
    assert.equal(ids.length, done.request_counts.completed);
  }
  const deleted = await openai.files.delete(file.id);
  assert.equal(deleted.deleted, true);
  await assert.rejects(openai.files.retrieve(file.id), (e) => e.status === 404);
});
