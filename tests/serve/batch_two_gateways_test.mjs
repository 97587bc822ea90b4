// Two gateways on one store share the Batch API: a batch created through either is driven by one
// of them at a time (its lease, docs/serve.md "Batches"), so its lines are sent once between them;
// and when the gateway driving it is killed for good, the other takes the batch over once the
// lease lapses and finishes it, one output line per input line.
//
// Two routing-only gateways (`serve --workers 0`, each with its own --out) over one Redis (input
// queue, batch lane, log queue), one SQLite store and one --file-store, two remote `overhead worker`
// processes (the simulated decoder) and an `overhead consume`.
//
// BATCH_TWO_LANE=mem: each gateway with its own in-process queues and workers (the lane dies with
// its gateway), the same store and files: the gateway that takes the batch over sends again the
// lines that have no record.
//
// Run: CTest sets OVERHEAD_BINARY and OVERHEAD_REDIS_ENV.
import {mkdtempSync, rmSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {test, after} from 'node:test';
import assert from 'node:assert/strict';
import {dropRedisKeys, listeningUrl, readEnvFile, startOverhead} from './overhead_process.mjs';

const BINARY = process.env.OVERHEAD_BINARY;
if (!BINARY || !process.env.OVERHEAD_REDIS_ENV) throw new Error('set OVERHEAD_BINARY and OVERHEAD_REDIS_ENV');
const MODEL = 'llama-3.3-70b-instruct';
const LINES = 160;
const LEASE_S = 3;

const redis = readEnvFile(process.env.OVERHEAD_REDIS_ENV);
const tag = `batchtwo${process.pid}`;
const IN = `${redis.REDIS_URL}/${tag}-in?visibility_ms=2000`;
const LOG = `${redis.REDIS_URL}/${tag}-log?visibility_ms=2000`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'overhead-batch-two-'));
const STORE = `sqlite:${path.join(dir, 'records.db')}`;
// 40 output tokens at 400 tokens/s: 0.1 s an item, 2 batch items at a time per worker.
const DECODER = 'sim:prefill=100000,decode=400';
const MEM_LANE = process.env.BATCH_TWO_LANE === 'mem';
const children = [];

after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  dropRedisKeys(redis, `${tag}-*`);
  rmSync(dir, {recursive: true, force: true});
});

const run = (args) => startOverhead(BINARY, args, children);

async function gateway(name) {
  const queues = MEM_LANE ? ['--decoder', DECODER, '--max-decodes', '4'] : ['--workers', '0', '--queue', IN, '--log-queue', LOG];
  const child = run(['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, ...queues,
                     '--store', STORE, '--file-store', `file:${path.join(dir, 'files')}`, '--out', path.join(dir, name),
                     '--batch-lease', String(LEASE_S), '--shutdown-timeout', '2']);
  return {child, url: await listeningUrl(child)};
}

async function json(url, init) {
  const r = await fetch(url, init);
  const text = await r.text();
  assert.equal(r.status, 200, `${url}: ${text}`);
  return JSON.parse(text);
}
const linesSent = async (g) => Number((await (await fetch(g.url + '/metrics')).text()).match(/^overhead_batch_lines_sent_total (\d+)$/m)[1]);

test('two gateways on one store: a batch\'s lines sent once between them, and finished by the other when its driver dies', async () => {
  const a = await gateway('a');
  const b = await gateway('b');
  for (const name of MEM_LANE ? [] : ['w1', 'w2'])
    run(['worker', '--queue', IN, '--log-queue', LOG, '--tokenizers', MODEL, '--decoder', DECODER, '--max-decodes', '4', '--name', name,
         '--out', path.join(dir, name), '--no-progress', '--idle-exit', '600']);
  if (!MEM_LANE)
    run(['consume', '--log-queue', LOG, '--store', STORE, '--out', path.join(dir, 'consume'), '--no-progress', '--idle-exit', '600']);

  const lines = Array.from({length: LINES}, (_, i) => JSON.stringify({custom_id: `two-${i}`, method: 'POST', url: '/v1/chat/completions',
    body: {model: MODEL, messages: [{role: 'user', content: `Request number ${i}.`}], max_tokens: 40}}));
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([lines.join('\n') + '\n']), 'two.jsonl');
  const file = await json(a.url + '/v1/files', {method: 'POST', body: form});
  const batch = await json(a.url + '/v1/batches', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h'})});
  // Both gateways see it; once it is sent, its lines went to the lane once between them.
  for (const end = Date.now() + 60000; ;) {
    const seen = await json(`${b.url}/v1/batches/${batch.id}`);
    if (seen.status === 'in_progress' && (await linesSent(a)) + (await linesSent(b)) >= LINES) break;
    assert.ok(Date.now() < end, `not sent: ${JSON.stringify(seen)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const sent = [await linesSent(a), await linesSent(b)];
  console.log(`two gateways: lines sent by a ${sent[0]}, by b ${sent[1]} (${LINES} lines)`);
  assert.equal(sent[0] + sent[1], LINES, 'each line sent once between the two gateways');
  const [driver, other] = sent[0] > 0 ? [a, b] : [b, a];
  assert.equal(Math.min(...sent), 0, 'one gateway drove the batch');

  // The driver dies for good while the batch runs: the other takes it over and finishes it.
  const progress = await json(`${other.url}/v1/batches/${batch.id}`);
  assert.ok(progress.request_counts.completed < LINES, 'killed before the batch finished');
  const killedAt = Date.now();
  driver.child.kill('SIGKILL');
  let done;
  for (const end = Date.now() + 120000; ;) {
    done = await json(`${other.url}/v1/batches/${batch.id}`);
    if (['completed', 'failed', 'expired', 'cancelled'].includes(done.status)) break;
    assert.ok(Date.now() < end, `still ${done.status}: ${JSON.stringify(done.request_counts)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  console.log(`two gateways${MEM_LANE ? ' (in-process lanes)' : ''}: the driver killed at ${progress.request_counts.completed} answered; the other finished the batch ` +
              `${((Date.now() - killedAt) / 1000).toFixed(1)} s later (lease ${LEASE_S} s)`);
  assert.equal(done.status, 'completed', JSON.stringify(done));
  const out = (await (await fetch(`${other.url}/v1/files/${done.output_file_id}/content`)).text()).trim().split('\n').map((l) => JSON.parse(l));
  const ids = new Set(out.map((l) => l.custom_id));
  assert.equal(out.length, LINES);
  assert.equal(ids.size, LINES, 'no line twice');
  assert.deepEqual(done.request_counts, {total: LINES, completed: LINES, failed: 0});
});
