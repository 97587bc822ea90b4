// SIGTERM while `overhead serve` is under load, with each decoder (`none`, and `openai:` in front
// of the real engine, tests/engine): the process exits 0 after the requests in flight finish, every
// request answered 200 (synchronous, or a stream that ended with [DONE]) has its record in the
// store, and every stream that began ends with [DONE] or an error event, never a silent cut.
// Eight clients send synchronous and streamed chat completions without pause; SIGTERM comes once
// a dozen have been answered, so some are mid-generation when it lands.
//
// Run: CTest sets OVERHEAD_BINARY and the engine's variables (tests/CMakeLists.txt:
// OVERHEAD_LLAMA_ENGINE_ENV).
import {spawn, spawnSync} from 'node:child_process';
import {mkdtempSync, rmSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {test, after} from 'node:test';
import assert from 'node:assert/strict';
import {startLlamaEngine} from '../engine/llama_engine.mjs';

const BINARY = process.env.OVERHEAD_BINARY;
if (!BINARY) throw new Error('set OVERHEAD_BINARY');

const CLIENTS = 8;
const ANSWERED_BEFORE_SIGTERM = 12;
const children = [];
const dirs = [];
let engine;

after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  if (engine) await engine.stop();
  for (const d of dirs) rmSync(d, {recursive: true, force: true});
});

async function startServe(model, extra) {
  const out = mkdtempSync(path.join(os.tmpdir(), 'overhead-sigterm-'));
  dirs.push(out);
  const child = spawn(BINARY, ['serve', '--listen', '127.0.0.1:0', '--tokenizers', model, '--out', out,
                               '--shutdown-timeout', '10', ...extra], {stdio: ['ignore', 'ignore', 'pipe']});
  children.push(child);
  let stderr = '';
  child.stderr.setEncoding('utf8');
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({code, signal})));
  const base = await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = stderr.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) resolve(m[1]);
    });
    exited.then(({code, signal}) => reject(new Error(`overhead serve exited ${code ?? signal}: ${stderr}`)));
  });
  return {child, base, out, exited, stderr: () => stderr};
}

// One request: {kind, status, id, ended} where ended says how a 200 stream ended ('done', 'error',
// or 'cut'); null when the connection was refused or reset before an answer (the server stopped
// accepting, which is allowed).
async function ask(base, model, stream) {
  let r;
  try {
    r = await fetch(base + '/v1/chat/completions', {method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({model, stream, max_tokens: 16, messages: [{role: 'user', content: 'Tell me about the sea.'}]})});
  } catch {
    return null;
  }
  let text;
  try {
    text = await r.text();
  } catch {
    return {kind: stream ? 'stream' : 'sync', status: r.status, ended: 'cut'};
  }
  if (!stream || r.status !== 200) {
    const body = r.status === 200 ? JSON.parse(text) : undefined;
    return {kind: 'sync', status: r.status, id: body?.id};
  }
  const events = text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
  const last = events.at(-1);
  const first = events.length > 0 && events[0] !== '[DONE]' ? JSON.parse(events[0]) : {};
  let ended = 'cut';
  if (last === '[DONE]') ended = 'done';
  else if (last !== undefined && JSON.parse(last).error) ended = 'error';
  return {kind: 'stream', status: 200, id: first.id, ended};
}

async function sigtermUnderLoad(model, extra) {
  const serve = await startServe(model, extra);
  const results = [];
  let answered = 0;
  let stopped = false;
  const clients = Array.from({length: CLIENTS}, async (_, c) => {
    for (let i = 0; !stopped; ++i) {
      const res = await ask(serve.base, model, (c + i) % 2 === 1);
      if (res === null) {
        if (serve.child.exitCode !== null || serve.child.signalCode !== null) return;
        await new Promise((resolve) => setTimeout(resolve, 20));  // refused: the server stopped accepting
        continue;
      }
      results.push(res);
      if (res.status === 200) ++answered;
    }
  });
  while (answered < ANSWERED_BEFORE_SIGTERM && serve.child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 10));
  serve.child.kill('SIGTERM');
  const {code, signal} = await serve.exited;
  stopped = true;
  await Promise.all(clients);
  assert.equal(signal, null, `overhead serve was killed by ${signal} instead of shutting down: ${serve.stderr()}`);
  assert.equal(code, 0, serve.stderr());

  const cut = results.filter((r) => r.kind === 'stream' && r.status === 200 && r.ended === 'cut');
  assert.deepEqual(cut, [], 'every stream that began ended with [DONE] or an error event');
  const ok = results.filter((r) => r.status === 200 && (r.kind === 'sync' || r.ended === 'done'));
  assert.ok(ok.length >= ANSWERED_BEFORE_SIGTERM, `answered: ${ok.length}`);
  const q = spawnSync('sqlite3', [path.join(serve.out, 'serve.db'), "select id from records where experiment = 'serve'"],
                      {encoding: 'utf8'});
  assert.equal(q.status, 0, q.stderr);
  const stored = new Set(q.stdout.trim().split('\n'));
  const lost = ok.filter((r) => !stored.has(r.id)).map((r) => `${r.kind} ${r.id}`);
  assert.deepEqual(lost, [], `every request answered 200 is stored (${ok.length} answered, ${stored.size} stored)`);
}

test('SIGTERM under load, --decoder none: exit 0, every answered request stored, no stream cut', async () => {
  await sigtermUnderLoad('phi-4', []);
});

test('SIGTERM under load, --decoder openai: (the real engine): exit 0, every answered request stored, no stream cut', async () => {
  engine = await startLlamaEngine({sequences: 4});
  await sigtermUnderLoad('llama-3.3-70b-instruct',
                         ['--decoder', `openai:${engine.baseUrl},model=${engine.modelName}`, '--max-decodes', '8']);
});
