// The `openai` npm client's tool loop against `overhead serve` (a real process) in front of a
// scripted engine (tool_call_engine.mjs) serving Llama 3.3, whose template detects llama3_json:
// a request with tools gets message.tool_calls and finish_reason "tool_calls"; the client answers
// with a `tool` message holding the result; the final answer is text. Non-streamed, streamed (the
// SDK folds our delta.tool_calls) and through the SDK's own runTools() loop.
//
// Run: node tests/serve/openai_tool_loop_test.mjs (CTest sets OVERHEAD_BINARY and OPENAI_NODE_MODULES).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { startToolCallEngine, TOOL_RESULT, FINAL_TEXT } from './tool_call_engine.mjs';

const BINARY = process.env.OVERHEAD_BINARY;
const MODULES = process.env.OPENAI_NODE_MODULES;
if (!BINARY || !MODULES) throw new Error('set OVERHEAD_BINARY and OPENAI_NODE_MODULES');
const require = createRequire(path.join(path.resolve(MODULES), 'noop.js'));
const OpenAI = require('openai').default;

const MODEL = 'llama-3.3-70b-instruct';
const dir = mkdtempSync(path.join(os.tmpdir(), 'overhead-tool-loop-'));
let engine;
let server;
let stderr = '';
let client;

const TOOLS = [{
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: {type: 'object', properties: {city: {type: 'string'}, unit: {type: 'string'}}, required: ['city']},
  },
}];
const QUESTION = [{role: 'user', content: 'What is the weather in Paris?'}];

before(async () => {
  engine = await startToolCallEngine();
  server = spawn(BINARY, ['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--out', dir,
                          '--decoder', 'openai:' + engine.baseUrl], {stdio: ['ignore', 'ignore', 'pipe']});
  server.stderr.setEncoding('utf8');
  const base = await new Promise((resolve, reject) => {
    server.stderr.on('data', (d) => {
      stderr += d;
      const m = stderr.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) resolve(m[1]);
    });
    server.on('exit', (code) => reject(new Error('overhead serve exited ' + code + ': ' + stderr)));
  });
  client = new OpenAI({apiKey: 'unused', baseURL: base + '/v1', maxRetries: 0, timeout: 60000});
});

after(async () => {
  if (server && server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
  if (engine) await engine.close();
  rmSync(dir, {recursive: true, force: true});
});

function checkCall(message) {
  assert.equal(message.content, null, 'an answer of calls only has null content');
  assert.equal(message.tool_calls.length, 1, JSON.stringify(message));
  const call = message.tool_calls[0];
  assert.equal(call.type, 'function');
  assert.match(call.id, /^call_chatcmpl-[0-9a-f]+_0$/);
  assert.equal(call.function.name, 'get_weather');
  assert.deepEqual(JSON.parse(call.function.arguments), {city: 'Paris', unit: 'celsius'});
  return call;
}

function toolMessage(call) {
  return {role: 'tool', tool_call_id: call.id, content: JSON.stringify({forecast: TOOL_RESULT})};
}

test('the tool loop, not streamed: a call, the tool result, the final answer', async () => {
  const first = await client.chat.completions.create({model: MODEL, messages: QUESTION, tools: TOOLS});
  assert.equal(first.choices[0].finish_reason, 'tool_calls');
  const message = first.choices[0].message;
  const call = checkCall(message);
  const final = await client.chat.completions.create({
    model: MODEL, tools: TOOLS, messages: [...QUESTION, message, toolMessage(call)],
  });
  assert.equal(final.choices[0].finish_reason, 'stop');
  assert.equal(final.choices[0].message.content, FINAL_TEXT);
  assert.equal(final.choices[0].message.tool_calls, undefined);
  assert.ok(engine.prompts.at(-1).includes(TOOL_RESULT), 'the tool result reached the prompt');
});

test('the tool loop, streamed: the SDK folds delta.tool_calls into the same call', async () => {
  const stream = client.chat.completions.stream({model: MODEL, messages: QUESTION, tools: TOOLS});
  const first = await stream.finalChatCompletion();
  assert.equal(first.choices[0].finish_reason, 'tool_calls');
  const message = first.choices[0].message;
  const call = checkCall({...message, content: message.content || null});
  const finalStream = client.chat.completions.stream({
    model: MODEL, tools: TOOLS, messages: [...QUESTION, {role: 'assistant', content: null, tool_calls: message.tool_calls}, toolMessage(call)],
  });
  const final = await finalStream.finalChatCompletion();
  assert.equal(final.choices[0].message.content, FINAL_TEXT);
  assert.equal(final.choices[0].finish_reason, 'stop');
});

test("the SDK's own runTools loop runs the function and ends with the text", async () => {
  const calls = [];
  const runner = client.chat.completions.runTools({
    model: MODEL,
    messages: QUESTION,
    tools: [{type: 'function', function: {...TOOLS[0].function, parse: JSON.parse,
                                           function: (args) => { calls.push(args); return {forecast: TOOL_RESULT}; }}}],
  });
  assert.equal(await runner.finalContent(), FINAL_TEXT);
  assert.deepEqual(calls, [{city: 'Paris', unit: 'celsius'}]);
});
