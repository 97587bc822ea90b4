// The Batch API survives every process of the system being killed, over Redis: a routing-only
// gateway (`serve --workers 0`), two remote `overhead worker` processes and an `overhead consume`
// into the SQLite store the gateway reads, all on one Redis (the input queue, its batch lane and
// the log queue; the simulated decoder). During a batch of LINES lines, one process after another
// is SIGKILLed and started again (a worker, the consumer, the gateway, in turn, ROUNDS kills in
// all); the batch still completes with one output line per input line: lines in = out, 0
// duplicated, 0 lost. A worker killed holding items: the lane gives them to the other worker after
// the visibility timeout; the consumer killed: the log queue keeps the records; the gateway
// killed: it resumes the batch from its stored state.
//
// BATCH_KILL_LINES (default 200) and BATCH_KILL_ROUNDS (default 3): `make test` runs the short one,
// the test labeled `faults` a longer one (tests/serve/CMakeLists.txt).
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
const LINES = Number(process.env.BATCH_KILL_LINES || 200);
const ROUNDS = Number(process.env.BATCH_KILL_ROUNDS || 3);
const MODEL = 'llama-3.3-70b-instruct';

const redis = readEnvFile(process.env.OVERHEAD_REDIS_ENV);
const tag = `batchkill${process.pid}`;
const IN = `${redis.REDIS_URL}/${tag}-in?visibility_ms=2000`;
const LOG = `${redis.REDIS_URL}/${tag}-log?visibility_ms=2000`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'overhead-batch-kill-redis-'));
const STORE = `sqlite:${path.join(dir, 'records.db')}`;
// 40 output tokens at 400 tokens/s: 0.1 s per item; each worker holds 2 batch items at once.
const DECODER = 'sim:prefill=100000,decode=400';
const processes = {};
const children = [];

after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  dropRedisKeys(redis, `${tag}-*`);
  rmSync(dir, {recursive: true, force: true});
});

const ARGS = {
  gateway: ['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--workers', '0', '--queue', IN, '--log-queue', LOG,
            '--store', STORE, '--out', dir, '--shutdown-timeout', '2'],
  w1: ['worker', '--queue', IN, '--log-queue', LOG, '--tokenizers', MODEL, '--decoder', DECODER, '--max-decodes', '4', '--name', 'w1',
       '--out', path.join(dir, 'w1'), '--no-progress', '--idle-exit', '600'],
  w2: ['worker', '--queue', IN, '--log-queue', LOG, '--tokenizers', MODEL, '--decoder', DECODER, '--max-decodes', '4', '--name', 'w2',
       '--out', path.join(dir, 'w2'), '--no-progress', '--idle-exit', '600'],
  consume: ['consume', '--log-queue', LOG, '--store', STORE, '--out', path.join(dir, 'consume'), '--no-progress', '--idle-exit', '600'],
};

// Starts process `name`; for the gateway, resolves once it listens.
async function start(name) {
  const child = startOverhead(BINARY, ARGS[name], children);
  processes[name] = {child};
  if (name === 'gateway') processes.gateway.url = await listeningUrl(child);
}

async function kill(name) {
  const {child} = processes[name];
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

async function json(url, init) {
  const r = await fetch(url, init);
  const text = await r.text();
  assert.equal(r.status, 200, `${url}: ${text}`);
  return JSON.parse(text);
}

test(`a batch of ${LINES} lines over Redis completes exactly once through ${ROUNDS} kills of its workers, consumer and gateway`, async () => {
  for (const name of ['gateway', 'w1', 'w2', 'consume']) await start(name);
  const lines = Array.from({length: LINES}, (_, i) => JSON.stringify({custom_id: `r-${i}`, method: 'POST', url: '/v1/chat/completions',
    body: {model: MODEL, messages: [{role: 'user', content: `Request number ${i}.`}], max_tokens: 40}}));
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([lines.join('\n') + '\n']), 'kill.jsonl');
  const file = await json(processes.gateway.url + '/v1/files', {method: 'POST', body: form});
  const batch = await json(processes.gateway.url + '/v1/batches', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h'})});
  const started = performance.now();
  const victims = ['w1', 'consume', 'gateway'];
  const killed = [];
  for (let k = 0; k < ROUNDS; ++k) {
    // Kill once a share of the lines is answered, then start the process again.
    const target = Math.floor((LINES * (k + 1)) / (ROUNDS + 2));
    for (const end = Date.now() + 120000; ;) {
      const b = await json(`${processes.gateway.url}/v1/batches/${batch.id}`);
      if (b.request_counts.completed >= target || b.status === 'completed') break;
      assert.ok(Date.now() < end, `no progress past ${b.request_counts.completed} answered`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const victim = victims[k % victims.length];
    await kill(victim);
    killed.push(`${victim} at ${target}`);
    await start(victim);
  }
  let done;
  for (const end = Date.now() + 300000; ;) {
    done = await json(`${processes.gateway.url}/v1/batches/${batch.id}`);
    if (['completed', 'failed', 'expired', 'cancelled'].includes(done.status)) break;
    assert.ok(Date.now() < end, `still ${done.status}: ${JSON.stringify(done.request_counts)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(done.status, 'completed', JSON.stringify(done));
  const url = processes.gateway.url;
  const out = (await (await fetch(`${url}/v1/files/${done.output_file_id}/content`)).text()).trim().split('\n').map((l) => JSON.parse(l));
  let errored = 0;
  if (done.error_file_id) errored = (await (await fetch(`${url}/v1/files/${done.error_file_id}/content`)).text()).trim().split('\n').length;
  const ids = out.map((l) => l.custom_id);
  const unique = new Set(ids);
  const duplicated = ids.length - unique.size;
  const lost = lines.filter((_, i) => !unique.has(`r-${i}`)).length - errored;
  console.log(`batch kill over Redis: killed ${killed.join(', ')} answered; lines in ${LINES}, out ${out.length}, errored ${errored}, ` +
              `duplicated ${duplicated}, lost ${lost}; ${((performance.now() - started) / 1000).toFixed(1)} s`);
  assert.equal(duplicated, 0);
  assert.equal(lost, 0);
  assert.equal(errored, 0, 'no line refused');
  assert.equal(out.length, LINES);
  assert.deepEqual(done.request_counts, {total: LINES, completed: LINES, failed: 0});
  for (const l of out) assert.equal(l.response.status_code, 200);
});
