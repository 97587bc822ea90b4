// Structured outputs end to end with real generated tokens: the official `openai` npm client
// against `overhead serve --decoder openai:<engine>,dialect=llamacpp` in front of the real engine
// (tests/engine/llama_server.mjs: llama.cpp through node-llama-cpp, constraining generation with a
// grammar made from the request's json_schema, as llama.cpp's server does). tool_choice
// "required", a named function and response_format json_schema (through the client's `parse`
// helper) return calls and objects that validate against the schema. The model is a tiny
// random-weight one: the schemas are small (enums, booleans) so the answers end. The same through
// Redis: a routing-only gateway (`--workers 0`) and a remote `overhead worker`, the constraint
// carried in the queue's work item.
//
// Run: CTest sets OVERHEAD_BINARY, OPENAI_NODE_MODULES, OVERHEAD_REDIS_ENV and the engine's variables.
import {spawn, spawnSync} from 'node:child_process';
import {createRequire} from 'node:module';
import {mkdtempSync, readFileSync, rmSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startLlamaEngine} from '../engine/llama_engine.mjs';

const BINARY = process.env.OVERHEAD_BINARY;
const MODULES = process.env.OPENAI_NODE_MODULES;
const REDIS_ENV = process.env.OVERHEAD_REDIS_ENV;
if (!BINARY || !MODULES || !REDIS_ENV) throw new Error('set OVERHEAD_BINARY, OPENAI_NODE_MODULES and OVERHEAD_REDIS_ENV');
const require = createRequire(path.join(path.resolve(MODULES), 'noop.js'));
const OpenAI = require('openai').default;

const MODEL = 'llama-3.3-70b-instruct';
const MESSAGES = [{role: 'user', content: 'What time is it in Paris?'}];
const TOOLS = [
  {type: 'function', function: {name: 'get_time', parameters: {type: 'object', properties: {zone: {type: 'string', enum: ['CET', 'UTC']}},
                                                                required: ['zone'], additionalProperties: false}}},
  {type: 'function', function: {name: 'set_alarm', parameters: {type: 'object', properties: {on: {type: 'boolean'}},
                                                                 required: ['on'], additionalProperties: false}}},
];

const dir = mkdtempSync(path.join(os.tmpdir(), 'overhead-structured-'));
const redis = Object.fromEntries(readFileSync(REDIS_ENV, 'utf8').split('\n').filter((l) => l.includes('='))
  .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
const tag = `structured${process.pid}`;
const inUrl = `${redis.REDIS_URL}/${tag}-in?visibility_ms=5000`;
const logUrl = `${redis.REDIS_URL}/${tag}-log?visibility_ms=5000`;
const children = [];
let engine, base, redisBase;

// Starts `overhead ARGS`; resolves the URL it prints as listening on, or at once when `listens` is false.
function start(args, listens = true) {
  const child = spawn(BINARY, args, {stdio: ['ignore', 'ignore', 'pipe']});
  children.push(child);
  child.stderr.setEncoding('utf8');
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  if (!listens) return Promise.resolve('');
  return new Promise((resolve, reject) => {
    child.stderr.on('data', () => {
      const m = stderr.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`overhead ${args[0]} exited ${code}: ${stderr}`)));
  });
}

before(async () => {
  engine = await startLlamaEngine({sequences: 2});
  const decoder = `openai:${engine.baseUrl},model=${engine.modelName},dialect=llamacpp`;
  base = await start(['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--out', dir, '--decoder', decoder,
                      '--shutdown-timeout', '5']);
  redisBase = await start(['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--workers', '0', '--queue', inUrl,
                           '--log-queue', logUrl, '--out', path.join(dir, 'gateway'), '--shutdown-timeout', '2']);
  await start(['worker', '--queue', inUrl, '--log-queue', logUrl, '--tokenizers', MODEL, '--experiment', 'serve',
               '--decoder', decoder, '--name', 'remote', '--out', path.join(dir, 'worker'), '--no-progress', '--idle-exit', '600'],
              false);
});

after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (engine) await engine.stop();
  // This test's streams on the shared Redis (its input, log and reply queues).
  const cli = (...args) => spawnSync('redis-cli', ['-h', redis.REDIS_HOST, '-p', redis.REDIS_PORT, '--no-auth-warning', ...args],
                                     {encoding: 'utf8', env: {...process.env, REDISCLI_AUTH: redis.REDIS_PASSWORD}}).stdout ?? '';
  for (const key of cli('--scan', '--pattern', `${tag}-*`).split('\n').filter(Boolean)) cli('DEL', key);
  rmSync(dir, {recursive: true, force: true});
});

const client = (url = base) => new OpenAI({apiKey: 'unused', baseURL: url + '/v1', maxRetries: 0, timeout: 60000});

function checkTime(args) {
  assert.deepEqual(Object.keys(args), ['zone']);
  assert.ok(['CET', 'UTC'].includes(args.zone), JSON.stringify(args));
}

test('a named function: one call of it whose arguments validate, from real tokens', async () => {
  const c = await client().chat.completions.create({model: MODEL, messages: MESSAGES, tools: TOOLS, max_tokens: 200,
                                                    temperature: 0, tool_choice: {type: 'function', function: {name: 'get_time'}}});
  const choice = c.choices[0];
  assert.equal(choice.finish_reason, 'tool_calls', JSON.stringify(choice));
  assert.equal(choice.message.tool_calls.length, 1);
  assert.equal(choice.message.tool_calls[0].function.name, 'get_time');
  checkTime(JSON.parse(choice.message.tool_calls[0].function.arguments));
  assert.ok(c.usage.completion_tokens > 0);
});

test('tool_choice required: calls of the tools, whole and streamed alike', async () => {
  const request = {model: MODEL, messages: MESSAGES, tools: TOOLS, max_tokens: 300, temperature: 0, tool_choice: 'required',
                   parallel_tool_calls: false};
  const c = await client().chat.completions.create(request);
  const choice = c.choices[0];
  assert.equal(choice.finish_reason, 'tool_calls', JSON.stringify(choice));
  assert.equal(choice.message.tool_calls.length, 1);
  const call = choice.message.tool_calls[0];
  const args = JSON.parse(call.function.arguments);
  if (call.function.name === 'get_time') checkTime(args);
  else assert.equal(typeof args.on, 'boolean');
  const stream = await client().chat.completions.create({...request, stream: true});
  const calls = [];
  let finish;
  for await (const chunk of stream) {
    const ch = chunk.choices[0];
    if (!ch) continue;
    for (const tc of ch.delta.tool_calls ?? []) calls.push(tc.function);
    if (ch.finish_reason) finish = ch.finish_reason;
  }
  assert.equal(finish, 'tool_calls');
  assert.deepEqual(calls, [{name: call.function.name, arguments: call.function.arguments}]);
});

test('response_format json_schema through the client parse helper: an object that validates', async () => {
  const schema = {type: 'object', properties: {zone: {type: 'string', enum: ['CET', 'UTC']}, open: {type: 'boolean'}},
                  required: ['zone', 'open'], additionalProperties: false};
  const c = await client().chat.completions.parse({model: MODEL, messages: MESSAGES, max_tokens: 200, temperature: 0,
                                                   response_format: {type: 'json_schema', json_schema: {name: 'clock', schema, strict: true}}});
  const parsed = c.choices[0].message.parsed;
  assert.ok(parsed, JSON.stringify(c.choices[0]));
  assert.ok(['CET', 'UTC'].includes(parsed.zone));
  assert.equal(typeof parsed.open, 'boolean');
});

test('over Redis with a remote worker: a named function and json_schema as over mem:', async () => {
  const c = await client(redisBase).chat.completions.create({model: MODEL, messages: MESSAGES, tools: TOOLS, max_tokens: 200,
                                                             temperature: 0, tool_choice: {type: 'function', function: {name: 'get_time'}}});
  assert.equal(c.choices[0].finish_reason, 'tool_calls', JSON.stringify(c.choices[0]));
  assert.equal(c.choices[0].message.tool_calls[0].function.name, 'get_time');
  checkTime(JSON.parse(c.choices[0].message.tool_calls[0].function.arguments));
  assert.equal(c.system_fingerprint, 'overhead-decoder-openai', 'the remote worker generated it');
  const schema = {type: 'object', properties: {zone: {type: 'string', enum: ['CET', 'UTC']}}, required: ['zone'],
                  additionalProperties: false};
  const p = await client(redisBase).chat.completions.parse({model: MODEL, messages: MESSAGES, max_tokens: 200, temperature: 0,
                                                            response_format: {type: 'json_schema', json_schema: {name: 'z', schema, strict: true}}});
  assert.ok(['CET', 'UTC'].includes(p.choices[0].message.parsed?.zone), JSON.stringify(p.choices[0]));
});
