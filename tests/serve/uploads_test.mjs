// OpenAI's Uploads API through the official `openai` npm client (`client.uploads`): a batch input
// larger than the gateway's --max-file-bytes (which POST /v1/files refuses, 413) sent as parts of
// at most --max-part-bytes, in parallel and named out of arrival order at completion, with the
// file's MD5. The file the upload makes is byte for byte the input (downloaded with
// files.content, which streams a file past one 1 MiB piece), and a batch made from it completes with
// one output line per custom_id. Refused: parts whose bytes do not add up to the upload's, a wrong
// MD5 (no file is made), a part of another upload, a part past --max-part-bytes, parts added to or
// completion of a cancelled upload; the same completion asked twice gets the same file. And
// `overhead batch submit --part-bytes` sends a file past it as such an upload, then follows it.
// A batch larger than --batch-lane-window is sent a window at a time: the lane never holds more,
// and request_counts moves while the batch is still being sent.
//
// UPLOAD_STORE=s3: the gateway's --file-store on the S3 emulator (s3rver), so that the parts are
// put together through the S3 adapter's writer; the CLI and the lane window, which do not touch
// the object store's kind, run on file: only.
//
// Run: CTest sets OVERHEAD_BINARY, OPENAI_NODE_MODULES and, over S3, OVERHEAD_AWS_ENV.
import {createHash} from 'node:crypto';
import {createRequire} from 'node:module';
import {spawnSync} from 'node:child_process';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {listeningUrl, readEnvFile, startOverhead} from './overhead_process.mjs';

const BINARY = process.env.OVERHEAD_BINARY;
const MODULES = process.env.OPENAI_NODE_MODULES;
if (!BINARY || !MODULES) throw new Error('set OVERHEAD_BINARY and OPENAI_NODE_MODULES');
const require = createRequire(path.join(path.resolve(MODULES), 'noop.js'));
const OpenAI = require('openai').default;
const {toFile} = require('openai');

const MODEL = 'llama-3.3-70b-instruct';
const MAX_FILE = 256 * 1024;  // --max-file-bytes: the input below is past it
const MAX_PART = 128 * 1024;  // --max-part-bytes
const LINES = 400;

const dir = mkdtempSync(path.join(os.tmpdir(), 'overhead-uploads-'));
const children = [];
let base;
const ON_S3 = process.env.UPLOAD_STORE === 's3';

before(async () => {
  let fileStore = `file:${path.join(dir, 'files')}`;
  if (ON_S3) {
    const aws = readEnvFile(process.env.OVERHEAD_AWS_ENV);
    fileStore = `s3://${aws.AWS_S3_BUCKET}/uploads-${process.pid}?endpoint=${aws.AWS_S3_ENDPOINT}&region=us-east-1`;
  }
  base = await listeningUrl(startOverhead(BINARY, ['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--out', dir,
                                                   '--file-store', fileStore, '--decoder', 'sim:prefill=200000,decode=20000',
                                                   '--max-file-bytes', String(MAX_FILE), '--max-part-bytes', String(MAX_PART),
                                                   '--shutdown-timeout', '2'], children));
});

after(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dir, {recursive: true, force: true});
});

function client() {
  return new OpenAI({apiKey: 'unused', baseURL: base + '/v1', maxRetries: 0, timeout: 60000});
}

// LINES chat requests, each with a long prompt so the file is past --max-file-bytes.
function input_bytes() {
  const lines = [];
  for (let i = 0; i < LINES; ++i) {
    const words = Array.from({length: 400}, (_, k) => `word${(i * 31 + k) % 997}`).join(' ');
    lines.push(JSON.stringify({custom_id: `u-${i}`, method: 'POST', url: '/v1/chat/completions',
                               body: {model: MODEL, messages: [{role: 'user', content: `Question ${i}: ${words}`}], max_tokens: 8}}));
  }
  return Buffer.from(lines.join('\n') + '\n');
}

// Cuts `bytes` into parts of at most `size`.
function cut(bytes, size) {
  const parts = [];
  for (let at = 0; at < bytes.length; at += size) parts.push(bytes.subarray(at, Math.min(at + size, bytes.length)));
  return parts;
}

async function sendParts(openai, uploadId, parts) {
  // All at once, as a client may: their order is the one named at completion, not arrival.
  return Promise.all(parts.map((p, i) => openai.uploads.parts.create(uploadId, {data: new File([p], `part${i}`)})));
}

async function refusal(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail('expected a refusal');
}

test('a file past --max-file-bytes goes in as parts, comes out byte for byte, and a batch reads it', async () => {
  const openai = client();
  const bytes = input_bytes();
  assert.ok(bytes.length > MAX_FILE, `the input (${bytes.length} bytes) is past --max-file-bytes`);
  const direct = await refusal(openai.files.create({file: await toFile(bytes, 'big.jsonl'), purpose: 'batch'}));
  assert.equal(direct.status, 413, 'POST /v1/files refuses it');

  const upload = await openai.uploads.create({bytes: bytes.length, filename: 'big.jsonl', mime_type: 'application/jsonl', purpose: 'batch'});
  assert.equal(upload.object, 'upload');
  assert.equal(upload.status, 'pending');
  assert.match(upload.id, /^upload_/);
  assert.equal(upload.expires_at - upload.created_at, 3600);
  const parts = cut(bytes, MAX_PART);
  assert.ok(parts.length >= 3);
  const sent = await sendParts(openai, upload.id, parts);
  for (const p of sent) {
    assert.equal(p.object, 'upload.part');
    assert.equal(p.upload_id, upload.id);
  }
  const md5 = createHash('md5').update(bytes).digest('hex');
  const done = await openai.uploads.complete(upload.id, {part_ids: sent.map((p) => p.id), md5});
  assert.equal(done.status, 'completed');
  assert.equal(done.file.object, 'file');
  assert.equal(done.file.bytes, bytes.length);
  assert.equal(done.file.filename, 'big.jsonl');
  assert.equal(done.file.purpose, 'batch');
  const again = await openai.uploads.complete(upload.id, {part_ids: sent.map((p) => p.id), md5});
  assert.equal(again.file.id, done.file.id, 'completing again gives the same file');

  assert.ok(bytes.length > 1 << 20, 'past one piece: the content is streamed');
  const back = Buffer.from(await (await openai.files.content(done.file.id)).arrayBuffer());
  assert.equal(back.length, bytes.length);
  assert.ok(back.equals(bytes), 'the file is the input, byte for byte');

  const batch = await openai.batches.create({input_file_id: done.file.id, endpoint: '/v1/chat/completions', completion_window: '24h'});
  const end = Date.now() + 120000;
  let b = batch;
  while (!['completed', 'failed', 'expired', 'cancelled'].includes(b.status)) {
    assert.ok(Date.now() < end, `batch still ${b.status}: ${JSON.stringify(b.request_counts)}`);
    await new Promise((r) => setTimeout(r, 200));
    b = await openai.batches.retrieve(batch.id);
  }
  assert.equal(b.status, 'completed', JSON.stringify(b.errors));
  assert.deepEqual(b.request_counts, {total: LINES, completed: LINES, failed: 0});
  const out = (await (await openai.files.content(b.output_file_id)).text()).trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(out.length, LINES);
  assert.deepEqual(new Set(out.map((l) => l.custom_id)).size, LINES, 'one line per custom_id');
  assert.ok(out.every((l) => l.response.status_code === 200));
});

test('an upload is refused when its parts do not add up, their MD5 is wrong or a part is not its own', async () => {
  const openai = client();
  const bytes = Buffer.from('{"custom_id":"a"}\n'.repeat(1000));
  const up = await openai.uploads.create({bytes: bytes.length, filename: 'x.jsonl', mime_type: 'application/jsonl', purpose: 'batch'});
  const parts = await sendParts(openai, up.id, cut(bytes, 4000));

  const short = await refusal(openai.uploads.complete(up.id, {part_ids: parts.slice(1).map((p) => p.id)}));
  assert.equal(short.status, 400);
  assert.match(short.message, /bytes/);

  const wrong = await refusal(openai.uploads.complete(up.id, {part_ids: parts.map((p) => p.id), md5: 'a'.repeat(32)}));
  assert.equal(wrong.status, 400);
  assert.equal(wrong.param, 'md5');
  assert.equal((await openai.uploads.complete(up.id, {part_ids: parts.map((p) => p.id)}).catch((e) => e)).status, 'completed',
               'still pending after the refusals: the right parts complete it');

  const other = await openai.uploads.create({bytes: 10, filename: 'y.jsonl', mime_type: 'application/jsonl', purpose: 'batch'});
  const foreign = await refusal(openai.uploads.complete(other.id, {part_ids: [parts[0].id]}));
  assert.equal(foreign.status, 400);
  assert.match(foreign.message, /No part/);

  const tooBig = await refusal(openai.uploads.parts.create(other.id, {data: new File([Buffer.alloc(MAX_PART + 1024)], 'p')}));
  assert.ok([400, 413].includes(tooBig.status), `a part past --max-part-bytes: ${tooBig.status}`);

  const announced = await refusal(openai.uploads.create({bytes: 1e15, filename: 'z.jsonl', mime_type: 'application/jsonl', purpose: 'batch'}));
  assert.equal(announced.status, 400);
  assert.equal(announced.param, 'bytes');
  const purpose = await refusal(openai.uploads.create({bytes: 10, filename: 'z.jsonl', mime_type: 'application/jsonl', purpose: 'fine-tune'}));
  assert.equal(purpose.param, 'purpose');
});

test('a cancelled upload takes no part and cannot be completed; an unknown one is 404', async () => {
  const openai = client();
  const up = await openai.uploads.create({bytes: 6, filename: 'c.jsonl', mime_type: 'text/plain', purpose: 'batch'});
  const part = await openai.uploads.parts.create(up.id, {data: new File(['abcdef'], 'p')});
  const cancelled = await openai.uploads.cancel(up.id);
  assert.equal(cancelled.status, 'cancelled');
  assert.equal((await refusal(openai.uploads.parts.create(up.id, {data: new File(['x'], 'p')}))).status, 400);
  assert.equal((await refusal(openai.uploads.complete(up.id, {part_ids: [part.id]}))).status, 400);
  assert.equal((await refusal(openai.uploads.cancel('upload_000000000000'))).status, 404);
  // An upload is not a file: it cannot be read or batched as one.
  assert.equal((await refusal(openai.files.retrieve(up.id))).status, 404);
  assert.equal((await refusal(openai.batches.create({input_file_id: up.id, endpoint: '/v1/chat/completions', completion_window: '24h'}))).status,
               404);
});

test('overhead batch submit sends a file past --part-bytes as an upload of parts and follows the batch', {skip: ON_S3}, () => {
  const input = path.join(dir, 'cli.jsonl');
  const bytes = input_bytes();
  writeFileSync(input, bytes);
  const run = spawnSync(BINARY, ['batch', 'submit', input, '--part-bytes', String(MAX_PART), '--wait', '--url', base],
                        {encoding: 'utf8', timeout: 120000});
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stderr, new RegExp(`upload upload_[0-9a-f]+: ${(bytes.length / 1048576).toFixed(1)}/${(bytes.length / 1048576).toFixed(1)} MiB`), 'the bytes sent');
  assert.match(run.stderr, new RegExp(`${LINES}/${LINES} answered, 0 failed`), 'the progress bar');
  const b = JSON.parse(run.stdout);
  assert.equal(b.status, 'completed');
  assert.deepEqual(b.request_counts, {total: LINES, completed: LINES, failed: 0});
});

test('a batch past --batch-lane-window is sent a window at a time while its counts move', {skip: ON_S3}, async () => {
  const WINDOW = 200, LINES_BIG = 600, DECODES = 8;
  const url = await listeningUrl(startOverhead(BINARY, ['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL,
                                                        '--out', path.join(dir, 'window'), '--decoder', 'sim:prefill=200000,decode=20000',
                                                        '--max-decodes', String(DECODES), '--batch-lane-window', String(WINDOW),
                                                        '--shutdown-timeout', '2'], children));
  const openai = new OpenAI({apiKey: 'unused', baseURL: url + '/v1', maxRetries: 0, timeout: 60000});
  const text = Array.from({length: LINES_BIG}, (_, i) => JSON.stringify({custom_id: `w-${i}`, method: 'POST', url: '/v1/chat/completions',
    body: {model: MODEL, messages: [{role: 'user', content: `Window ${i}.`}], max_tokens: 4}})).join('\n') + '\n';
  const file = await openai.files.create({file: await toFile(Buffer.from(text), 'w.jsonl'), purpose: 'batch'});
  const batch = await openai.batches.create({input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h'});
  const sentOf = async () => Number((await (await fetch(url + '/metrics')).text()).match(/^overhead_batch_lines_sent_total (\d+)$/m)[1]);
  let b = batch, widest = 0, movedWhileSending = false;
  const end = Date.now() + 120000;
  while (b.status !== 'completed') {
    assert.ok(Date.now() < end && ['validating', 'in_progress', 'finalizing'].includes(b.status), `${b.status}: ${JSON.stringify(b.request_counts)}`);
    const answered = b.request_counts.completed + b.request_counts.failed;
    const sent = await sentOf();
    // Sent but not counted answered when the counts were read: waiting in the lane, in the
    // workers, or answered since the counts' last update (once a second).
    widest = Math.max(widest, sent - answered);
    if (answered > 0 && sent < LINES_BIG) movedWhileSending = true;
    await new Promise((r) => setTimeout(r, 100));
    b = await openai.batches.retrieve(batch.id);
  }
  assert.deepEqual(b.request_counts, {total: LINES_BIG, completed: LINES_BIG, failed: 0});
  assert.equal(await sentOf(), LINES_BIG, 'every line sent once');
  assert.ok(movedWhileSending, 'request_counts moved while the batch was still being sent');
  // The window, the lines of one checkpoint past it, and what the workers answered in the second
  // between two counts (about 40 lines a second here: DECODES / 2 batch items at a time).
  assert.ok(widest <= WINDOW + 200 + 250, `at most a window waited at once: ${widest}`);
});
