// Keys, limits and budgets across two gateways (docs/serve.md, "Keys, limits and budgets"): two
// `overhead serve --api-keys` processes over one PostgreSQL (the keys and the records) and one
// Redis (the rate counters, --limits, and the shared input and log queues), each with its
// in-process worker and consumer storing into PostgreSQL.
//
//   1. One key's requests per minute, offered at 3x its limit through both gateways at once: the
//      requests admitted are the limit's rate over the run (plus at most one window's burst),
//      within 5%; and likewise its tokens per minute, counted exactly at admission.
//   2. The `openai` client sees OpenAI's x-ratelimit-* headers on an answer, and a 429 that names
//      the limit.
//   3. A key over its budget is refused with insufficient_quota, after spending at least its
//      budget: one request past it at most through one gateway; on both gateways once each has
//      read the other's spend.
//   4. GET /v1/usage sums equal the stored records (read with psql) and the client's own tally.
//   5. `overhead keys revoke` takes effect on both gateways within the refresh interval.
//   6. A gateway SIGKILLed mid-admission: the shared counters drain within two windows (an
//      admission it counted and never answered holds no place for longer), and the key's usage
//      still equals its stored records, each once.
//   7. No secret in the gateways' output, /metrics, the records or the keys table.
//
// Run: CTest sets OVERHEAD_BINARY, OPENAI_NODE_MODULES, OVERHEAD_REDIS_ENV, OVERHEAD_POSTGRES_ENV.
import {spawnSync} from 'node:child_process';
import {createRequire} from 'node:module';
import {mkdtempSync, rmSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {dropRedisKeys, listeningUrl, readEnvFile, startOverhead} from './overhead_process.mjs';

const BINARY = process.env.OVERHEAD_BINARY;
const MODULES = process.env.OPENAI_NODE_MODULES;
if (!BINARY || !MODULES || !process.env.OVERHEAD_REDIS_ENV || !process.env.OVERHEAD_POSTGRES_ENV)
  throw new Error('set OVERHEAD_BINARY, OPENAI_NODE_MODULES, OVERHEAD_REDIS_ENV and OVERHEAD_POSTGRES_ENV');
const require = createRequire(path.join(path.resolve(MODULES), 'noop.js'));
const OpenAI = require('openai').default;

const redis = readEnvFile(process.env.OVERHEAD_REDIS_ENV);
const pg = readEnvFile(process.env.OVERHEAD_POSTGRES_ENV);

const MODEL = 'llama-3.3-70b-instruct';
const tag = `keys${process.pid}`;
const STORE = `${pg.PG_URL}?table=${tag}`;
const LIMITS = `${redis.REDIS_URL}/${tag}:`;
const QUEUE = `${redis.REDIS_URL}/${tag}-in?visibility_ms=2000`;
const LOG_QUEUE = `${redis.REDIS_URL}/${tag}-log?visibility_ms=2000`;
const WINDOW_S = 2;        // --limit-window: the rate holds over seconds, so the run can be short
const REFRESH_S = 0.5;     // --key-refresh
const PRICE = ['--price-cpu-usd-per-hour', '0.1', '--price-gpu-usd-per-hour', '4'];
const BUDGET = 0.00001;   // a few requests' worth at these prices (E: a vCPU-second, D: the sim engine's time)

const dir = mkdtempSync(path.join(os.tmpdir(), 'overhead-keys-'));
const children = [];
const gateways = [];
const secrets = {};

function overhead(args) {
  const r = spawnSync(BINARY, args, {encoding: 'utf8'});
  if (r.status !== 0) throw new Error(`overhead ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
function psql(sql) {
  const r = spawnSync('psql', ['-h', pg.PG_HOST, '-p', pg.PG_PORT, '-U', pg.PG_USER, '-d', pg.PG_DB, '-Atqc', sql],
                      {encoding: 'utf8', env: {...process.env, PGPASSWORD: pg.PG_PASSWORD}});
  if (r.status !== 0) throw new Error(`psql ${sql}: ${r.stderr}`);
  return r.stdout.trim();
}
function createKey(name, ...limits) {
  const out = overhead(['keys', 'create', '--store', STORE, '--name', name, ...limits]).trim().split('\n');
  secrets[name] = out[out.length - 1].trim();
  assert.match(secrets[name], /^sk-ovh-[A-Za-z0-9_-]{43}$/);
}

async function startGateway(name) {
  const child = startOverhead(BINARY, ['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--api-keys', '--store', STORE,
                                       '--limits', LIMITS, '--limit-window', String(WINDOW_S), '--key-refresh', String(REFRESH_S),
                                       '--spend-refresh', String(REFRESH_S),
                                       '--queue', QUEUE, '--log-queue', LOG_QUEUE,
                                       '--decoder', 'sim:prefill=200000,decode=20000', '--max-queued', '100000',
                                       '--out', path.join(dir, name), '--shutdown-timeout', '2', ...PRICE], children);
  return {child, url: await listeningUrl(child)};
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Polls `read` until `done` holds of its value (the consumers store records with a lag that a loaded
// machine stretches), failing after 30 s with what it waited for; returns the last value.
async function until(read, done, what) {
  const deadline = Date.now() + 30000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    assert.ok(Date.now() < deadline, `waited 30 s for ${what}: ${JSON.stringify(value)}`);
    await sleep(200);
  }
}
const body = (content, extra = {}) => JSON.stringify({model: MODEL, messages: [{role: 'user', content}], max_tokens: 2, ...extra});

async function chat(url, key, content = 'Hello there, how are you?') {
  const res = await fetch(url + '/v1/chat/completions', {
    method: 'POST', headers: {'Content-Type': 'application/json', Authorization: `Bearer ${key}`}, body: body(content)});
  const json = await res.json();
  return {status: res.status, json, headers: res.headers};
}

// Offers `rate` requests per second for `seconds`, alternating between the gateways, without
// waiting for answers; returns the answers and the span over which they were offered.
async function offer(key, rate, seconds, content) {
  const started = Date.now();
  const pending = [];
  for (let i = 0; i < rate * seconds; ++i) {
    const due = started + (i * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    pending.push(chat(gateways[i % 2].url, key, content));
  }
  const span = (Date.now() - started) / 1000;
  return {answers: await Promise.all(pending), span};
}

before(async () => {
  createKey('rpm-key', '--rpm', '1200');         // 40 per 2 s window
  createKey('tpm-key', '--tpm', '30000');        // 1000 tokens per 2 s window
  createKey('budget-key', '--budget-usd', String(BUDGET));
  createKey('budget-one-key', '--budget-usd', String(BUDGET));
  createKey('plain-key');
  gateways.push(await startGateway('a'), await startGateway('b'));
});

after(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  try {
    psql(`DROP TABLE IF EXISTS ${tag}; DROP TABLE IF EXISTS ${tag}_keys`);
    dropRedisKeys(redis, `${tag}:*`);
    dropRedisKeys(redis, `${tag}-*`);
  } catch {
    // the fixtures' servers are cleaned up with them
  }
  rmSync(dir, {recursive: true, force: true});
});

test('requests per minute hold across two gateways at 3x the limit', async () => {
  const perSecond = 1200 / 60;
  const {answers, span} = await offer(secrets['rpm-key'], 3 * perSecond, 6);
  const admitted = answers.filter((a) => a.status === 200).length;
  const refused = answers.filter((a) => a.status === 429);
  assert.equal(admitted + refused.length, answers.length, 'every request admitted or refused with 429');
  const expected = perSecond * span;
  console.log(`rpm: offered ${answers.length} over ${span.toFixed(2)} s, admitted ${admitted}, expected ${expected.toFixed(1)} (+ one window ${perSecond * WINDOW_S})`);
  assert.ok(admitted >= 0.95 * expected, `admitted ${admitted} < 95% of ${expected}`);
  assert.ok(admitted <= 1.05 * (expected + perSecond * WINDOW_S), `admitted ${admitted} > 105% of ${expected} + one window`);
  const e = refused[0].json.error;
  assert.equal(e.code, 'rate_limit_exceeded');
  assert.equal(e.type, 'requests');
  assert.match(e.message, /requests per min \(RPM\): Limit 1200/);
  assert.ok(Number(refused[0].headers.get('retry-after')) >= 1);
});

test('tokens per minute hold across two gateways, counted exactly at admission', async () => {
  const content = 'Count the tokens of this prompt exactly, as the engine will read it.';
  // The prompt as the engine reads it: rendered with its generation prompt, nothing added.
  const counted = await (await fetch(gateways[0].url + '/v1/tokenize', {method: 'POST', headers: {'Content-Type': 'application/json',
    Authorization: `Bearer ${secrets['plain-key']}`}, body: JSON.stringify({model: MODEL, messages: [{role: 'user', content}],
    add_generation_prompt: true, add_special_tokens: false})})).json();
  const promptTokens = counted.count;
  assert.ok(promptTokens > 5, JSON.stringify(counted));
  const tokensPerSecond = 30000 / 60;
  const rate = Math.ceil((3 * tokensPerSecond) / promptTokens);
  const {answers, span} = await offer(secrets['tpm-key'], rate, 6, content);
  const ok = answers.filter((a) => a.status === 200);
  // Completion tokens count too (charged after each answer): the window holds prompt + completion.
  const admittedTokens = ok.length * promptTokens;
  const completion = ok.reduce((s, a) => s + a.json.usage.completion_tokens, 0);
  const expected = tokensPerSecond * span;
  console.log(`tpm: ${promptTokens} tokens/request at ${rate}/s over ${span.toFixed(2)} s: admitted ${ok.length} = ${admittedTokens} prompt + ${completion} completion tokens, expected ${expected.toFixed(0)}`);
  assert.ok(admittedTokens + completion >= 0.95 * (expected - tokensPerSecond), `${admittedTokens + completion} tokens admitted`);
  assert.ok(admittedTokens <= 1.05 * (expected + tokensPerSecond * WINDOW_S), `${admittedTokens} tokens admitted`);
  const refused = answers.find((a) => a.status === 429);
  assert.equal(refused.json.error.type, 'tokens');
  assert.match(refused.json.error.message, /tokens per min \(TPM\): Limit 30000/);
});

test('the openai client sees the rate-limit headers', async () => {
  const client = new OpenAI({apiKey: secrets['rpm-key'], baseURL: gateways[1].url + '/v1', maxRetries: 0});
  await sleep(2100 * WINDOW_S);  // the windows drain
  const {response} = await client.chat.completions.create({model: MODEL, messages: [{role: 'user', content: 'Hi'}], max_tokens: 2})
    .withResponse();
  assert.equal(response.headers.get('x-ratelimit-limit-requests'), '1200');
  assert.ok(Number(response.headers.get('x-ratelimit-remaining-requests')) >= 0);
  assert.match(response.headers.get('x-ratelimit-reset-requests'), /^\d+(\.\d+)?(ms|s)$/);
  // A key without limits gets no rate headers.
  const plain = new OpenAI({apiKey: secrets['plain-key'], baseURL: gateways[0].url + '/v1', maxRetries: 0});
  const {response: r2} = await plain.chat.completions.create({model: MODEL, messages: [{role: 'user', content: 'Hi'}], max_tokens: 2})
    .withResponse();
  assert.equal(r2.headers.get('x-ratelimit-limit-requests'), null);
  await assert.rejects(new OpenAI({apiKey: 'sk-ovh-not-a-key', baseURL: gateways[0].url + '/v1', maxRetries: 0}).models.list(),
                       (e) => e.status === 401 && e.code === 'invalid_api_key');
});

// One request at a time: the budget is spent before the key is refused, and a gateway counts its
// own answers at once, so through one gateway the key spends at most one request past its budget.
// Through two, each also counts the other's answers once the store has them (within
// --spend-refresh plus the consumer's lag): until then each may spend up to the budget alone.
async function spendUntilRefused(key, urls) {
  let answered = 0;
  for (let i = 0; i < 400; ++i) {
    const a = await chat(urls[i % urls.length], secrets[key]);
    if (a.status === 200) ++answered;
    else return {answered, refusal: a};
  }
  return {answered, refusal: null};
}
function spendOf(key) {
  // A request's price follows its measured CPU time, so the bounds below use the dearest one.
  const [rows, spent, dearest] = psql(`SELECT COUNT(*), COALESCE(SUM(cost_usd), 0), COALESCE(MAX(cost_usd), 0) FROM ${tag} WHERE key_name = '${key}'`)
    .split('|').map(Number);
  return {rows, spent, dearest, perRequest: spent / rows};
}

test('a budget stops its key: through one gateway, and on both', async () => {
  const one = await spendUntilRefused('budget-one-key', [gateways[0].url]);
  assert.ok(one.refusal, `the budget never stopped the key (${one.answered} answered)`);
  assert.equal(one.refusal.status, 429);
  assert.equal(one.refusal.json.error.code, 'insufficient_quota');
  assert.equal(one.refusal.headers.get('x-should-retry'), 'false');
  let s = await until(() => spendOf('budget-one-key'), (v) => v.rows >= one.answered, 'the records reach the store');
  console.log(`budget, one gateway: ${one.answered} answered, $${s.spent.toExponential(3)} of $${BUDGET} ($${s.perRequest.toExponential(3)} a request)`);
  assert.equal(s.rows, one.answered);
  assert.ok(s.spent >= BUDGET, 'stopped before its budget was spent');
  assert.ok(s.spent <= BUDGET + s.dearest, `spent ${s.spent}`);

  const two = await spendUntilRefused('budget-key', gateways.map((g) => g.url));
  assert.ok(two.refusal, `the budget never stopped the key (${two.answered} answered)`);
  assert.equal(two.refusal.json.error.code, 'insufficient_quota');
  // Once the store holds every answer and both have read it, both refuse.
  // (A probe the other gateway still admits, not having read the spend yet, is an answer too.)
  let probesAnswered = 0;
  await until(async () => Promise.all(gateways.map(async (g) => (await chat(g.url, secrets['budget-key'])).status)),
              (statuses) => {
                probesAnswered += statuses.filter((st) => st === 200).length;
                return statuses.every((st) => st === 429);
              }, 'both gateways refuse the spent key');
  const answered = two.answered + probesAnswered;
  s = await until(() => spendOf('budget-key'), (v) => v.rows >= answered, 'the records reach the store');
  assert.equal(s.rows, answered);
  console.log(`budget, two gateways: ${answered} answered, $${s.spent.toExponential(3)} of $${BUDGET}`);
  assert.ok(s.spent >= BUDGET, 'stopped before its budget was spent');
  assert.ok(s.spent <= 2 * (BUDGET + s.dearest), `spent ${s.spent} (the dearest request $${s.dearest})`);
});

test('/v1/usage sums equal the stored records and the client\'s tally', async () => {
  // The records of the answers above reach the store through each gateway's consumer.
  const key = 'plain-key';
  for (let i = 0; i < 10; ++i) {
    const a = await chat(gateways[i % 2].url, secrets[key], `usage ${i}`);
    assert.equal(a.status, 200);
  }
  // One earlier answer of plain-key (the header test) plus these ten.
  const usage = await until(async () => (await fetch(gateways[0].url + '/v1/usage', {headers: {Authorization: `Bearer ${secrets[key]}`}})).json(),
                            (u) => u.requests >= 11, 'the eleven answers in /v1/usage');
  const [requests, prompt, completion, cost] = psql(
    `SELECT COUNT(*), SUM(token_count), SUM(output_tokens), SUM(cost_usd) FROM ${tag} WHERE key_name = '${key}'`).split('|').map(Number);
  assert.equal(usage.key, key);
  assert.equal(usage.requests, 11);
  assert.equal(usage.requests, requests);
  assert.equal(usage.prompt_tokens, prompt);
  assert.equal(usage.completion_tokens, completion);
  assert.ok(Math.abs(usage.cost_usd - cost) <= 1e-12 * Math.max(1, cost));
  assert.ok(usage.cost_usd > 0, 'priced');
  assert.equal(usage.by_model.length, 1);
  assert.equal(usage.by_model[0].model, MODEL);
  assert.equal(usage.by_model[0].requests, 11);
  assert.equal(usage.by_day.reduce((s, d) => s + d.requests, 0), 11);
});

test('a revoked key is refused by both gateways within the refresh interval', async () => {
  for (const g of gateways) assert.equal((await chat(g.url, secrets['plain-key'])).status, 200);
  overhead(['keys', 'revoke', '--store', STORE, '--name', 'plain-key']);
  const revokedAt = Date.now();
  const seen = [];
  for (const g of gateways) {
    for (;;) {
      const a = await chat(g.url, secrets['plain-key']);
      if (a.status === 401) {
        assert.equal(a.json.error.code, 'invalid_api_key');
        assert.match(a.json.error.message, /revoked/);
        break;
      }
      assert.ok(Date.now() - revokedAt < 5000, 'still admitted 5 s after the revoke');
      await sleep(20);
    }
    seen.push(Date.now() - revokedAt);
  }
  console.log(`revoke: refused after ${seen.join(' and ')} ms (refresh ${REFRESH_S * 1000} ms)`);
  assert.ok(Math.max(...seen) <= REFRESH_S * 1000 + 1000);
});

test('a gateway killed mid-admission leaves the counters and the spend consistent', async () => {
  createKey('kill-key', '--rpm', '1200');  // 40 per window
  await sleep(1000 * (REFRESH_S + 0.5));  // both gateways have read it
  const victim = gateways[0];
  const burst = [];
  for (let i = 0; i < 60; ++i) burst.push(chat(victim.url, secrets['kill-key']).catch(() => ({status: 'cut'})));
  await sleep(30);
  victim.child.kill('SIGKILL');
  const answers = await Promise.all(burst);
  const answered = answers.filter((a) => a.status === 200).length;
  console.log(`kill: ${answered} of 60 answered before the kill, ${answers.filter((a) => a.status === 'cut').length} cut`);
  gateways[0] = await startGateway('a2');
  // Two windows on, nothing the killed gateway counted holds a place: the whole window is free.
  // The 50 are offered at once, so they fall in one window unless the burst straddles a window's
  // end, which frees places in proportion to the time it spans (the sliding window's rule).
  await sleep(2100 * WINDOW_S);
  const burstStarted = Date.now();
  const fresh = await Promise.all(Array.from({length: 50}, (_, i) => chat(gateways[i % 2].url, secrets['kill-key'])));
  const burstSpan = (Date.now() - burstStarted) / 1000;
  const admitted = fresh.filter((a) => a.status === 200).length;
  const slack = Math.ceil((40 * burstSpan) / WINDOW_S);
  console.log(`kill: then ${admitted} of 50 admitted in a fresh window of 40 (burst over ${burstSpan.toFixed(2)} s)`);
  assert.ok(admitted >= 40 && admitted <= 40 + slack, `${admitted} admitted in a fresh window of 40 (burst over ${burstSpan} s)`);
  // The spend: every stored record of the key once (the killed gateway's items come back to the
  // other's worker after the visibility timeout), and /v1/usage agrees with them once the records
  // stop arriving.
  const recordsOf = () => psql(`SELECT COUNT(*), COUNT(DISTINCT id), COALESCE(SUM(cost_usd), 0) FROM ${tag} WHERE key_name = 'kill-key'`)
    .split('|').map(Number);
  await until(recordsOf, ([rows]) => rows >= answered + admitted, 'the records of every answer reach the store');
  const [rows, ids, cost, usage] = await until(async () => {
    const before = recordsOf();
    const u = await (await fetch(gateways[1].url + '/v1/usage', {headers: {Authorization: `Bearer ${secrets['kill-key']}`}})).json();
    const after = recordsOf();
    return [...after, u, before[0]];
  }, ([rowsAfter, , , u, rowsBefore]) => rowsAfter === rowsBefore && u.requests === rowsAfter, '/v1/usage agrees with a settled store');
  assert.equal(rows, ids, 'a record stored twice');
  assert.ok(rows >= answered + admitted, `${rows} records for ${answered + admitted} answers`);
  assert.equal(usage.requests, rows);
  assert.ok(Math.abs(usage.cost_usd - cost) <= 1e-12 * Math.max(1, cost));
});

test('no secret in the output, /metrics, the records or the keys table', async () => {
  // Gateway b has run since the start (a was restarted by the kill test).
  const metrics = await (await fetch(gateways[1].url + '/metrics', {headers: {Authorization: `Bearer ${secrets['rpm-key']}`}})).text();
  assert.match(metrics, /overhead_key_requests_total\{key="rpm-key",outcome="refused_requests"\} [1-9]/);
  const dump = psql(`SELECT * FROM ${tag}`) + psql(`SELECT * FROM ${tag}_keys`);
  for (const [name, secret] of Object.entries(secrets)) {
    for (const [where, text] of [['gateway a', gateways[0].child.output()], ['gateway b', gateways[1].child.output()],
                                 ['gateways before', children.map((c) => c.output()).join('\n')],
                                 ['/metrics', metrics], ['the store', dump]])
      assert.ok(!text.includes(secret) && !text.includes(secret.slice(7)), `the secret of ${name} is in ${where}`);
  }
});
