// The dashboard in headless Chromium, against `overhead serve` as a real process with a bearer
// token: the page loads without the token and asks for it; given it, the figures fill from
// /metrics; then, in the same page load, the test sends chat requests (and one that fails) and the
// page's own polls must show them: the request count equal to the requests made, a throughput
// above zero that falls back to zero when the requests stop, stage latencies with mean, p50 and
// p99, the failure by status, a drawn sparkline, the per-key table. No script error and no Content-Security-Policy
// violation may happen on the way.
//
// Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: NUL-separated
// JSON on fds 3 and 4), so the test needs no npm package and no debugging port.
//
// Run: OVERHEAD_BINARY=build/overhead node tests/serve/dashboard_browser_test.mjs
// (CHROMIUM may name the browser; else chromium or chromium-browser on PATH.)
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

const BINARY = process.env.OVERHEAD_BINARY;
if (!BINARY) throw new Error('set OVERHEAD_BINARY to the overhead binary');

function findBrowser() {
  const names = process.env.CHROMIUM ? [process.env.CHROMIUM] : ['chromium', 'chromium-browser'];
  for (const name of names) {
    const candidates = name.includes('/') ? [name] : (process.env.PATH || '').split(':').map((d) => path.join(d, name));
    for (const c of candidates) {
      try { accessSync(c, constants.X_OK); return c; } catch { /* next */ }
    }
  }
  return null;
}
const BROWSER = findBrowser();
if (!BROWSER) {
  console.error('FAIL: chromium not found (Debian package chromium): run scripts/setup.sh, or set CHROMIUM');
  process.exit(1);
}

// Nothing here may hang CTest: past this the processes are killed and the test fails.
const WATCHDOG_MS = 90000;
const TOKEN = 'dash-token-' + Math.random().toString(16).slice(2);
const dir = mkdtempSync(path.join(os.tmpdir(), 'overhead-dash-'));
let server;
let serverLog = '';
let base;
let browser;
let browserLog = '';
let cdp;      // the DevTools connection
let session;  // the page's session id
const problems = [];  // script exceptions and CSP violations seen in the page

const watchdog = setTimeout(() => {
  console.error('FAIL: the test ran past ' + WATCHDOG_MS + ' ms\n' + serverLog + browserLog.slice(-2000));
  cleanUp();
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();

function cleanUp() {
  // The whole group, even when the browser itself has exited, so no renderer or helper it
  // started outlives the test; then our ends of its pipes.
  if (browser) {
    try { process.kill(-browser.pid, 'SIGKILL'); } catch { /* all gone */ }
    for (const stream of browser.stdio) if (stream) stream.destroy();
  }
  if (server && server.exitCode === null && server.signalCode === null) {
    try { server.kill('SIGKILL'); } catch { /* gone */ }
  }
  rmSync(dir, { recursive: true, force: true });
}

// Whatever way this script ends, the server and the browser end with it.
process.on('exit', cleanUp);

// A DevTools protocol client over Chromium's pipe.
function connect(child) {
  const pending = new Map();
  const listeners = [];
  let nextId = 1;
  let buffer = '';
  child.stdio[4].setEncoding('utf8');
  child.stdio[4].on('data', (chunk) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\0'); end >= 0; end = buffer.indexOf('\0')) {
      const message = JSON.parse(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
      if (message.id && pending.has(message.id)) {
        const { resolve, reject, method } = pending.get(message.id);
        pending.delete(message.id);
        if (message.error) reject(new Error(method + ': ' + message.error.message));
        else resolve(message.result);
      } else if (message.method) {
        for (const l of listeners) l(message);
      }
    }
  });
  child.on('exit', () => {
    for (const { reject, method } of pending.values()) reject(new Error(method + ': the browser exited\n' + browserLog.slice(-2000)));
    pending.clear();
  });
  return {
    send(method, params = {}, sessionId = undefined) {
      const id = nextId++;
      child.stdio[3].write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
    },
    on(listener) { listeners.push(listener); },
  };
}

async function evaluate(expression) {
  const r = await cdp.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, session);
  if (r.exceptionDetails) throw new Error('in the page: ' + JSON.stringify(r.exceptionDetails).slice(0, 500));
  return r.result.value;
}

// What the page shows, read off its DOM.
const SNAPSHOT = `(() => {
  const text = (id) => { const e = document.getElementById(id); return e ? e.textContent : null; };
  const rows = (id) => [...document.querySelectorAll('#' + id + ' tr')].map((tr) => [...tr.cells].map((c) => c.textContent));
  const ids = ['status', 'throughput', 'throughput-window', 'requests-total', 'in-flight', 'awaiting-reply', 'queue-depth',
               'queue-taken', 'spark-peak', 'updated', 'stage-total-count-window', 'stage-total-mean-window', 'stage-total-p50',
               'stage-total-p99', 'stage-total-count', 'stage-total-mean', 'stage-encode-mean-window'];
  return {
    state: document.body.dataset.state,
    polls: Number(document.body.dataset.polls),
    formHidden: document.getElementById('token-form').hidden,
    marker: window.__dashboardTestMarker || null,
    text: Object.fromEntries(ids.map((id) => [id, text(id)])),
    stages: rows('stages-body'),
    errors: rows('errors-body'),
    keys: rows('keys-body'),
    spark: document.getElementById('spark-line').getAttribute('points'),
  };
})()`;

const snapshot = () => evaluate(SNAPSHOT);
const number = (s) => (s === null || s === '\u2014' ? NaN : Number(String(s).replace(/,/g, '')));
const latency = /^[0-9.]+ (\u00b5s|ms|s)$/;

async function waitFor(what, predicate, ms = 20000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = await snapshot();
    if (predicate(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('timed out waiting for ' + what + '; the page shows ' + JSON.stringify(last, null, 1));
}

let loaded;  // resolves on the page's load event

// A wait that does not keep node running once everything else is done.
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());

const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
async function chat(model) {
  const r = await fetch(base + '/v1/chat/completions', {
    method: 'POST', headers, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'What is 2+2?' }] }),
  });
  await r.arrayBuffer();
  return r.status;
}

before(async () => {
  const tokenFile = path.join(dir, 'token');
  writeFileSync(tokenFile, TOKEN + '\n');
  server = spawn(BINARY, ['serve', '--listen', '127.0.0.1:0', '--tokenizers', 'phi-4', '--auth-token-file', tokenFile,
                          '--out', path.join(dir, 'out')], { stdio: ['ignore', 'ignore', 'pipe'] });
  server.stderr.setEncoding('utf8');
  base = await new Promise((resolve, reject) => {
    server.stderr.on('data', (d) => {
      serverLog += d;
      const m = serverLog.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) resolve(m[1]);
    });
    server.on('exit', (code) => reject(new Error('overhead serve exited ' + code + ': ' + serverLog)));
  });

  // Its own process group, so the renderer and the other helpers go with it at the end.
  browser = spawn(BROWSER, ['--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-pipe', '--no-first-run',
                            '--no-default-browser-check', '--disable-background-networking', '--disable-component-update',
                            '--disable-sync', '--disable-extensions', '--user-data-dir=' + path.join(dir, 'profile'), 'about:blank'],
                  { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true });
  browser.stderr.setEncoding('utf8');
  browser.stderr.on('data', (d) => { browserLog += d; });
  cdp = connect(browser);
  let onLoad;
  loaded = new Promise((resolve) => { onLoad = resolve; });
  cdp.on((m) => {
    if (m.sessionId !== session) return;
    if (m.method === 'Page.loadEventFired') onLoad();
    if (m.method === 'Runtime.exceptionThrown') problems.push('exception: ' + JSON.stringify(m.params.exceptionDetails).slice(0, 400));
    if (m.method === 'Log.entryAdded' && /Content.Security.Policy/i.test(m.params.entry.text)) problems.push('CSP: ' + m.params.entry.text);
    if (m.method === 'Runtime.consoleAPICalled' && m.params.type === 'error') problems.push('console.error: ' + JSON.stringify(m.params.args));
  });
  const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank' });
  ({ sessionId: session } = await cdp.send('Target.attachToTarget', { targetId, flatten: true }));
  await cdp.send('Runtime.enable', {}, session);
  await cdp.send('Log.enable', {}, session);
  await cdp.send('Page.enable', {}, session);
  const nav = await cdp.send('Page.navigate', { url: base + '/' }, session);
  if (nav.errorText) throw new Error('loading ' + base + '/: ' + nav.errorText);
  let timer;
  const timedOut = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error('the page did not load in 30 s\n' + browserLog.slice(-2000))), 30000);
  });
  try { await Promise.race([loaded, timedOut]); } finally { clearTimeout(timer); }
});

after(async () => {
  if (browser && browser.exitCode === null) {
    const exited = new Promise((resolve) => browser.once('exit', resolve));
    cdp.send('Browser.close').catch(() => {});
    await Promise.race([exited, delay(5000)]);
  }
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await Promise.race([exited, delay(15000)]);
  }
  cleanUp();
});

test('without a token the page loads and asks for one', async () => {
  const s = await waitFor('the page to ask for the token', (p) => p.state === 'auth');
  assert.equal(s.formHidden, false);
  assert.match(s.text.status, /bearer token/);
  assert.equal(s.polls, 0);
  // Marks this page load: a reload would lose it.
  await evaluate('window.__dashboardTestMarker = "one load"');
});

let idle;
test('given the token, the figures fill from /metrics', async () => {
  await evaluate(`(() => { document.getElementById('token').value = ${JSON.stringify(TOKEN)};
                           document.getElementById('token-form').requestSubmit(); })()`);
  // Two polls give a first throughput (a change between scrapes).
  idle = await waitFor('two polls with the token', (p) => p.state === 'live' && p.polls >= 2);
  assert.equal(idle.formHidden, true);
  assert.equal(idle.text['requests-total'], '0');
  assert.equal(idle.text.throughput, '0.00');
  assert.equal(idle.text['in-flight'], '0');
  assert.equal(idle.text['awaiting-reply'], '0');
  assert.equal(idle.text['queue-depth'], '0');
  assert.match(idle.text.updated, /^\d\d:\d\d:\d\d$/);
  assert.deepEqual(idle.stages, [['No chat request yet.']]);
  assert.deepEqual(idle.keys, [['No API key used yet.']]);
  // The page's first scrape, before the token, was refused: the one error so far.
  assert.deepEqual(idle.errors.map((r) => [r[0], r[2]]), [['HTTP 401 on /metrics', '1']]);
  // The token is nowhere in the page.
  assert.equal(await evaluate('document.documentElement.outerHTML.includes(' + JSON.stringify(TOKEN) + ')'), false);
});

const SENT = 40;
test('requests made while the page is open show in its figures', async () => {
  // Spread over about two seconds in four lanes, so several polls see requests arrive.
  let ok = 0;
  const lane = async (n) => {
    for (let i = 0; i < n; i++) {
      if ((await chat('phi-4')) === 200) ok++;
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  await Promise.all([lane(SENT / 4), lane(SENT / 4), lane(SENT / 4), lane(SENT / 4)]);
  assert.equal(ok, SENT);
  assert.equal(await chat('no-such-model'), 404);

  const busy = await waitFor('the page to count every request', (p) => number(p.text['requests-total']) === SENT + 1 &&
                             number(p.text['stage-total-count']) === SENT && number(p.text['throughput-window']) > 0);
  assert.equal(busy.marker, 'one load');
  assert.ok(busy.polls > idle.polls, `polls ${idle.polls} -> ${busy.polls}`);
  // Stage latencies over the last 10 s (the requests took a few seconds, so most or all of them
  // are inside the window), with mean and quantiles.
  const inWindow = number(busy.text['stage-total-count-window']);
  assert.ok(inWindow > 0 && inWindow <= SENT, busy.text['stage-total-count-window']);
  for (const id of ['stage-total-mean-window', 'stage-total-p50', 'stage-total-p99', 'stage-total-mean', 'stage-encode-mean-window'])
    assert.match(busy.text[id], latency, id);
  assert.deepEqual(busy.stages.map((r) => r[0]), ['queue', 'render', 'encode', 'publish', 'total']);
  // The failure by its status and route.
  const failed = busy.errors.find((r) => r[0] === 'HTTP 404 on /v1/chat/completions');
  assert.ok(failed, JSON.stringify(busy.errors));
  assert.equal(failed[2], '1');
  // The per-key table: the token is the key named "default"; the 404 was refused before admission.
  const keyRow = busy.keys.find((r) => r[0] === 'default');
  assert.ok(keyRow, JSON.stringify(busy.keys));
  assert.equal(number(keyRow[2]), SENT, 'admitted, all');
  assert.equal(number(keyRow[3]), 0, 'refused');
  // The sparkline rose above its baseline somewhere.
  assert.ok(number(busy.text['spark-peak']) > 0, busy.text['spark-peak']);
  assert.ok(busy.spark.split(' ').some((p) => Number(p.split(',')[1]) < 47), busy.spark);
  // The page agrees with the server: the same count as /metrics gives.
  const text = await (await fetch(base + '/metrics', { headers })).text();
  const count = text.split('\n').find((l) => l.startsWith('overhead_stage_duration_seconds_count{stage="total"}'));
  assert.equal(Number(count.split(' ')[1]), SENT);
});

test('with the requests over, throughput per poll falls back to zero', async () => {
  const quiet = await waitFor('throughput to fall to zero', (p) => p.text.throughput === '0.00');
  assert.equal(number(quiet.text['requests-total']), SENT + 1);
  assert.equal(quiet.text['in-flight'], '0');
  assert.equal(quiet.marker, 'one load');
});

test('no script error and no Content-Security-Policy violation', () => {
  assert.deepEqual(problems, []);
});
