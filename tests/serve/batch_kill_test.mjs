// The Batch API survives its gateway being killed: a batch of LINES requests runs on `overhead serve`
// (in-process workers, the simulated decoder, the default sqlite store and file: objects); the
// gateway is SIGKILLed mid-batch KILLS times and started again on the same --out each time; the
// batch still completes with one output line per input line: lines in = out, 0 duplicated, 0 lost.
// The figures are printed for docs/reliability.md. Then `overhead batch` (the CLI) against the last
// gateway: status and results of that batch, and a new one submitted with --wait.
//
// BATCH_KILL_LINES (default 120) and BATCH_KILL_KILLS (default 1): `make test` runs the short one,
// the test labeled `faults` a longer one (tests/serve/CMakeLists.txt). BATCH_KILL_STORE=postgres
// keeps the records and the batch state in PostgreSQL instead (--store PG_URL?table=<fresh>, the
// server of the env file named by OVERHEAD_POSTGRES_ENV), so the restarted gateway resumes from there.
//
// Run: CTest sets OVERHEAD_BINARY (and for postgres OVERHEAD_POSTGRES_ENV).
import {spawnSync} from 'node:child_process';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {test, after} from 'node:test';
import assert from 'node:assert/strict';
import {listeningUrl, readEnvFile, startOverhead} from './overhead_process.mjs';

const BINARY = process.env.OVERHEAD_BINARY;
if (!BINARY) throw new Error('set OVERHEAD_BINARY');
const LINES = Number(process.env.BATCH_KILL_LINES || 120);
const KILLS = Number(process.env.BATCH_KILL_KILLS || 1);
const MODEL = 'llama-3.3-70b-instruct';
const STORE_ARGS = (() => {
  if (!process.env.BATCH_KILL_STORE) return [];
  if (process.env.BATCH_KILL_STORE !== 'postgres' || !process.env.OVERHEAD_POSTGRES_ENV)
    throw new Error('BATCH_KILL_STORE is postgres, with OVERHEAD_POSTGRES_ENV set');
  const pgUrl = readEnvFile(process.env.OVERHEAD_POSTGRES_ENV).PG_URL;
  return ['--store', `${pgUrl}?table=batchkill${process.pid}`];
})();

const dir = mkdtempSync(path.join(os.tmpdir(), 'overhead-batch-kill-'));
const children = [];
let lastGateway;  // {url, batch, lines} for the CLI test

after(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dir, {recursive: true, force: true});
});

async function startGateway() {
  // 40 output tokens at 400 tokens/s: 0.1 s per item, 2 at a time (half of --max-decodes).
  const child = startOverhead(BINARY, ['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--out', dir,
                                       '--decoder', 'sim:prefill=100000,decode=400', '--max-decodes', '4', ...STORE_ARGS], children);
  return {child, url: await listeningUrl(child)};
}

async function json(url, init) {
  const r = await fetch(url, init);
  const text = await r.text();
  assert.equal(r.status, 200, `${url}: ${text}`);
  return JSON.parse(text);
}

test(`a batch of ${LINES} lines completes exactly once through ${KILLS} gateway kill(s)`, async () => {
  let {child, url} = await startGateway();
  const lines = Array.from({length: LINES}, (_, i) => JSON.stringify({custom_id: `k-${i}`, method: 'POST', url: '/v1/chat/completions',
    body: {model: MODEL, messages: [{role: 'user', content: `Request number ${i}.`}], max_tokens: 40}}));
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([lines.join('\n') + '\n']), 'kill.jsonl');
  const file = await json(url + '/v1/files', {method: 'POST', body: form});
  const batch = await json(url + '/v1/batches', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h'})});
  const started = performance.now();
  const killedAt = [];
  for (let k = 0; k < KILLS; ++k) {
    // Kill once a share of the lines is answered, then start again on the same store.
    const target = Math.floor((LINES * (k + 1)) / (KILLS + 2));
    for (;;) {
      const b = await json(`${url}/v1/batches/${batch.id}`);
      if (b.request_counts.completed >= target || b.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    killedAt.push(target);
    ({child, url} = await startGateway());
  }
  let done;
  for (const end = Date.now() + 300000; ;) {
    done = await json(`${url}/v1/batches/${batch.id}`);
    if (['completed', 'failed', 'expired', 'cancelled'].includes(done.status)) break;
    assert.ok(Date.now() < end, `still ${done.status}: ${JSON.stringify(done.request_counts)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(done.status, 'completed', JSON.stringify(done));
  const r = await fetch(`${url}/v1/files/${done.output_file_id}/content`);
  const out = (await r.text()).trim().split('\n').map((l) => JSON.parse(l));
  let errored = 0;
  if (done.error_file_id) errored = (await (await fetch(`${url}/v1/files/${done.error_file_id}/content`)).text()).trim().split('\n').length;
  const ids = out.map((l) => l.custom_id);
  const unique = new Set(ids);
  const duplicated = ids.length - unique.size;
  const lost = lines.filter((_, i) => !unique.has(`k-${i}`)).length - errored;
  console.log(`batch kill: ${KILLS} kill(s) at ${killedAt.join(', ')} answered; lines in ${LINES}, out ${out.length}, ` +
              `errored ${errored}, duplicated ${duplicated}, lost ${lost}; ${((performance.now() - started) / 1000).toFixed(1)} s`);
  assert.equal(duplicated, 0);
  assert.equal(lost, 0);
  assert.equal(out.length + errored, LINES);
  assert.deepEqual(done.request_counts, {total: LINES, completed: out.length, failed: errored});
  for (const l of out) assert.equal(l.response.status_code, 200);
  lastGateway = {url, batch: batch.id, lines: out.length};
});

test('overhead batch: status, results, and submit --wait with its progress bar', () => {
  assert.ok(lastGateway, 'the kill test ran first');
  const cli = (...args) => spawnSync(BINARY, ['batch', ...args, '--url', lastGateway.url], {encoding: 'utf8', timeout: 120000});
  const status = cli('status', lastGateway.batch);
  assert.equal(status.status, 0, status.stderr);
  assert.equal(JSON.parse(status.stdout).status, 'completed');
  const results = cli('results', lastGateway.batch);
  assert.equal(results.status, 0, results.stderr);
  assert.equal(results.stdout.trim().split('\n').length, lastGateway.lines);
  const input = path.join(dir, 'cli.jsonl');
  writeFileSync(input, Array.from({length: 5}, (_, i) => JSON.stringify({custom_id: `cli-${i}`, method: 'POST', url: '/v1/chat/completions',
    body: {model: MODEL, messages: [{role: 'user', content: `CLI ${i}.`}], max_tokens: 8}})).join('\n') + '\n');
  const submitted = cli('submit', input, '--wait');
  assert.equal(submitted.status, 0, submitted.stderr);
  const b = JSON.parse(submitted.stdout);
  assert.equal(b.status, 'completed');
  assert.deepEqual(b.request_counts, {total: 5, completed: 5, failed: 0});
  assert.match(submitted.stderr, /\[#+\] 5\/5 answered, 0 failed/, 'the progress bar on stderr');
  const missing = spawnSync(BINARY, ['batch', 'status', 'batch_none', '--url', lastGateway.url], {encoding: 'utf8'});
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /404 No such batch: batch_none/);
});
