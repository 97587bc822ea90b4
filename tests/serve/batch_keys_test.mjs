// The Batch API on a gateway with API keys (docs/serve.md, "Batches", "Keys and batches"), through
// the `openai` npm client: `overhead serve --api-keys` over its default SQLite store, the simulated
// decoder, keys made with `overhead keys create`.
//
//   1. Files and batches belong to the key that made them: another key gets 404 for each of them
//      (retrieve, content, delete, cancel, batches.create on the file) and an empty batch list.
//   2. A batch's answers are charged to its key: /v1/usage counts its lines and their cost, and
//      the batch's cost_usd equals the usage's.
//   3. A key limited to some models: a line naming another fails the batch at validating with
//      model_not_allowed on that line.
//   4. A key whose budget is spent cannot create a batch (429 insufficient_quota).
//
// Run: CTest sets OVERHEAD_BINARY and OPENAI_NODE_MODULES.
import {spawnSync} from 'node:child_process';
import {createRequire} from 'node:module';
import {mkdtempSync, rmSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {listeningUrl, startOverhead} from './overhead_process.mjs';

const BINARY = process.env.OVERHEAD_BINARY;
const MODULES = process.env.OPENAI_NODE_MODULES;
if (!BINARY || !MODULES) throw new Error('set OVERHEAD_BINARY and OPENAI_NODE_MODULES');
const require = createRequire(path.join(path.resolve(MODULES), 'noop.js'));
const OpenAI = require('openai').default;
const {toFile} = require('openai');

const MODEL = 'llama-3.3-70b-instruct';
const OTHER_MODEL = 'phi-4';
const dir = mkdtempSync(path.join(os.tmpdir(), 'overhead-batch-keys-'));
const STORE = `sqlite:${path.join(dir, 'serve.db')}`;
const secrets = {};
let gateway;
const children = [];

function createKey(name, ...limits) {
  const r = spawnSync(BINARY, ['keys', 'create', '--store', STORE, '--name', name, ...limits], {encoding: 'utf8'});
  if (r.status !== 0) throw new Error(`overhead keys create: ${r.stderr}`);
  const out = r.stdout.trim().split('\n');
  secrets[name] = out[out.length - 1].trim();
}
const client = (name) => new OpenAI({apiKey: secrets[name], baseURL: gateway.url + '/v1', maxRetries: 0});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  createKey('alice');
  createKey('bob');
  createKey('narrow', '--models', MODEL);
  createKey('spent', '--budget-usd', '0.0000001');
  const child = startOverhead(BINARY, ['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, OTHER_MODEL, '--out', dir, '--api-keys',
                                       '--key-refresh', '0.5', '--spend-refresh', '0.5', '--decoder', 'sim:prefill=200000,decode=20000',
                                       '--price-cpu-usd-per-hour', '0.1', '--price-gpu-usd-per-hour', '4'], children);
  gateway = {child, url: await listeningUrl(child)};
});

after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(dir, {recursive: true, force: true});
});

const line = (id, model = MODEL) => JSON.stringify({custom_id: id, method: 'POST', url: '/v1/chat/completions',
  body: {model, messages: [{role: 'user', content: `Say something about ${id}.`}], max_tokens: 4}});
const upload = async (who, lines) => client(who).files.create({file: await toFile(Buffer.from(lines.join('\n') + '\n'), 'in.jsonl'), purpose: 'batch'});

async function finished(who, id) {
  const deadline = Date.now() + 60000;
  for (;;) {
    const b = await client(who).batches.retrieve(id);
    if (['completed', 'failed', 'expired', 'cancelled'].includes(b.status)) return b;
    assert.ok(Date.now() < deadline, `batch ${id} still ${b.status} after 60 s`);
    await sleep(200);
  }
}

let aliceFile, aliceBatch;

test('a key\'s files and batches are its own', async () => {
  aliceFile = await upload('alice', Array.from({length: 12}, (_, i) => line(`a-${i}`)));
  aliceBatch = await client('alice').batches.create({input_file_id: aliceFile.id, endpoint: '/v1/chat/completions', completion_window: '24h'});
  const bob = client('bob');
  const notFound = (code) => (e) => e.status === 404 && e.code === code;
  await assert.rejects(bob.files.retrieve(aliceFile.id), notFound('file_not_found'));
  await assert.rejects(bob.files.content(aliceFile.id), notFound('file_not_found'));
  await assert.rejects(bob.files.del ? bob.files.del(aliceFile.id) : bob.files.delete(aliceFile.id), notFound('file_not_found'));
  await assert.rejects(bob.batches.create({input_file_id: aliceFile.id, endpoint: '/v1/chat/completions', completion_window: '24h'}),
                       notFound('file_not_found'));
  await assert.rejects(bob.batches.retrieve(aliceBatch.id), notFound('batch_not_found'));
  await assert.rejects(bob.batches.cancel(aliceBatch.id), notFound('batch_not_found'));
  const bobs = await bob.batches.list();
  assert.equal(bobs.data.length, 0);
  const alices = await client('alice').batches.list();
  assert.deepEqual(alices.data.map((b) => b.id), [aliceBatch.id]);
  // Alice's own requests still work on her file.
  assert.equal((await client('alice').files.retrieve(aliceFile.id)).id, aliceFile.id);
});

test('a batch\'s answers are charged to its key', async () => {
  const done = await finished('alice', aliceBatch.id);
  assert.equal(done.status, 'completed', JSON.stringify(done.errors));
  assert.equal(done.request_counts.completed, 12);
  // The output file is the key's too.
  const output = await (await client('alice').files.content(done.output_file_id)).text();
  assert.equal(output.trim().split('\n').length, 12);
  await assert.rejects(client('bob').files.content(done.output_file_id), (e) => e.status === 404);
  assert.ok(done.cost_usd > 0, 'the batch is priced');
  const usage = await (await fetch(gateway.url + '/v1/usage', {headers: {Authorization: `Bearer ${secrets.alice}`}})).json();
  assert.equal(usage.key, 'alice');
  assert.equal(usage.requests, 12);
  assert.ok(Math.abs(usage.cost_usd - done.cost_usd) <= 1e-12 * Math.max(1, done.cost_usd), `${usage.cost_usd} vs ${done.cost_usd}`);
  const bobUsage = await (await fetch(gateway.url + '/v1/usage', {headers: {Authorization: `Bearer ${secrets.bob}`}})).json();
  assert.equal(bobUsage.requests, 0);
});

test('a line naming a model its key may not use fails the batch at validating', async () => {
  const file = await upload('narrow', [line('n-0'), line('n-1', OTHER_MODEL), line('n-2')]);
  const b = await client('narrow').batches.create({input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h'});
  const done = await finished('narrow', b.id);
  assert.equal(done.status, 'failed');
  assert.equal(done.errors.data.length, 1);
  assert.equal(done.errors.data[0].code, 'model_not_allowed');
  assert.equal(done.errors.data[0].line, 2);
  assert.equal(done.errors.data[0].param, 'body.model');
});

test('a key whose budget is spent cannot create a batch', async () => {
  // One answer spends the tiny budget; the next request and a batch are refused.
  const chat = client('spent');
  await chat.chat.completions.create({model: MODEL, messages: [{role: 'user', content: 'Hi'}], max_tokens: 2});
  const file = await upload('spent', [line('s-0')]);
  await assert.rejects(chat.batches.create({input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h'}),
                       (e) => e.status === 429 && e.code === 'insufficient_quota');
  assert.equal((await chat.batches.list()).data.length, 0);
});

test('no secret in the gateway\'s output', () => {
  for (const [name, secret] of Object.entries(secrets)) assert.ok(!gateway.child.output().includes(secret), `the secret of ${name} is printed`);
});
