// The remote-worker deployment as docs/serve.md writes it, over a shared SQLite queue: a
// routing-only gateway (`--workers 0`), an `overhead worker` and an `overhead consume` started
// without --idle-exit, and a second worker with `--idle-exit 0`. After a quiet spell longer than
// the old default idle exit (5 s) all of them still run, and the next chat request is answered
// (not a 504 after --request-timeout) and its record stored. SIGTERM then stops them, exit 0.
//
// Run: CTest sets OVERHEAD_BINARY.
import {spawn, spawnSync} from 'node:child_process';
import {mkdtempSync, rmSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {test, after} from 'node:test';
import assert from 'node:assert/strict';

const BINARY = process.env.OVERHEAD_BINARY;
if (!BINARY) throw new Error('set OVERHEAD_BINARY');

const QUIET_MS = 6500;  // past the old default --idle-exit of 5 s
const dir = mkdtempSync(path.join(os.tmpdir(), 'overhead-idle-'));
const children = [];

after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(dir, {recursive: true, force: true});
});

function start(name, args) {
  const child = spawn(BINARY, args, {stdio: ['ignore', 'ignore', 'pipe']});
  child.name = name;
  child.log = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => { child.log += d; });
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({code, signal})));
  children.push(child);
  return child;
}

test('workers and a consumer serving a gateway stay through a quiet spell; --idle-exit 0 means never', async () => {
  const q = (name) => `sqlite-queue:${path.join(dir, 'queues.db')}?name=${name}`;
  const store = path.join(dir, 'records.db');
  const gateway = start('gateway', ['serve', '--listen', '127.0.0.1:0', '--tokenizers', 'phi-4', '--workers', '0',
                                    '--queue', q('chat-in'), '--log-queue', q('chat-log'), '--out', path.join(dir, 'gw'),
                                    '--request-timeout', '20']);
  const base = await new Promise((resolve, reject) => {
    gateway.stderr.on('data', () => {
      const m = gateway.log.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) resolve(m[1]);
    });
    gateway.exited.then(({code}) => reject(new Error('overhead serve exited ' + code + ': ' + gateway.log)));
  });
  const workers = [
    start('worker', ['worker', '--queue', q('chat-in'), '--log-queue', q('chat-log'), '--tokenizers', 'phi-4',
                     '--experiment', 'serve', '--no-progress', '--out', path.join(dir, 'w1')]),
    start('worker --idle-exit 0', ['worker', '--queue', q('chat-in'), '--log-queue', q('chat-log'), '--tokenizers', 'phi-4',
                                   '--experiment', 'serve', '--no-progress', '--idle-exit', '0', '--out', path.join(dir, 'w2')]),
  ];
  const consumer = start('consume', ['consume', '--log-queue', q('chat-log'), '--store', `sqlite:${store}`, '--no-progress',
                                     '--out', path.join(dir, 'c')]);

  await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
  for (const c of [...workers, consumer])
    assert.equal(c.exitCode ?? c.signalCode, null, `${c.name} left during a quiet spell: ${c.log}`);

  const r = await fetch(base + '/v1/chat/completions', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({model: 'phi-4', messages: [{role: 'user', content: 'Hello after a quiet spell'}]})});
  const body = await r.text();
  assert.equal(r.status, 200, body);
  const {id} = JSON.parse(body);
  let stored = '';
  for (let i = 0; i < 200 && stored !== '1'; ++i) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    stored = spawnSync('sqlite3', [store, `select count(*) from records where id = '${id}'`], {encoding: 'utf8'}).stdout.trim();
  }
  assert.equal(stored, '1', 'the consumer stored the answered request');

  for (const c of [...workers, consumer, gateway]) c.kill('SIGTERM');
  for (const c of [...workers, consumer, gateway]) assert.deepEqual(await c.exited, {code: 0, signal: null}, `${c.name}: ${c.log}`);
});
