// CPU per generated token in the worker and in the gateway, at an engine's pace, with N streams in
// flight (issue 22's target: <= 5 us each). The engine is bench/serve/paced_engine.mjs (a fake:
// one " tok" chunk per 1000/PACE ms per stream, its own process, not counted). Two set-ups, same run:
//   mem:   one `overhead serve --decoder openai:<engine>` process (gateway and in-process worker:
//          one figure for both, plus its decoder-loop thread apart)
//   redis: a routing-only gateway (`serve --workers 0`) and one `overhead worker`, on a private
//          redis-server (scripts/services/redis.sh): two processes, two figures
// For each N, N streamed chat completions of TOKENS tokens start at once (Node fetch clients, this
// process, not counted). CPU is each process's on-CPU time, summed over its threads from
// /proc/PID/task/*/schedstat (nanoseconds; user and kernel), sampled over the steady part of the
// run (from 0.3 s after every stream had its first token until the first stream ends: every stream
// open and generating), divided by the tokens the clients received meanwhile; the pace reached in
// that window is printed too (a busy machine may not keep the engine's). "whole" is the same from the
// first request to the last [DONE] (request set-up included). Also printed: the gateway's thread
// count at the middle of the run (no thread per stream), and the load average.
//
//   node bench/serve/stream_cpu.mjs build/overhead [streams=1,16,256] [tokens=300] [pace=50] [modes=mem,redis] [decoder_extra]
// decoder_extra is appended to the openai decoder's parameters, e.g. ,coalesce_us=0 (no gathering window).
import {spawn, execFileSync} from 'node:child_process';
import {mkdtempSync, readFileSync, readdirSync, rmSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {stopChild} from '../../tests/support/stop_child.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const [binary, streamsArg = '1,16,256', tokensArg = '300', paceArg = '50', modesArg = 'mem,redis', decoderExtra = ''] = process.argv.slice(2);
if (!binary) throw new Error('usage: node bench/serve/stream_cpu.mjs OVERHEAD_BINARY [streams] [tokens] [pace] [modes]');
const STREAMS = streamsArg.split(',').map(Number);
const TOKENS = Number(tokensArg);
const PACE = Number(paceArg);
const MODEL = 'llama-3.3-70b-instruct';
const TOKEN_BYTES = ' tok'.length;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function cpuNs(pid) {
  let sum = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      sum += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch { /* the thread ended meanwhile */ }
  }
  return sum;
}
function threadCpuNs(pid, name) {
  let sum = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      if (readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() !== name) continue;
      sum += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch { /* ended */ }
  }
  return sum;
}
const threads = (pid) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/Threads:\s+(\d+)/)[1]);

function start(args, ready) {
  const child = spawn(args[0], args.slice(1), {stdio: ['ignore', 'pipe', 'pipe']});
  let out = '';
  return new Promise((resolve, reject) => {
    const look = (d) => {
      out += d;
      const m = out.match(ready);
      if (m) resolve({child, match: m});
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.output = () => out;
    child.on('exit', (code) => reject(new Error(`${args.slice(0, 2).join(' ')} exited ${code}: ${out.slice(-2000)}`)));
  });
}
const stop = (child) => stopChild(child, 15000);

// One streamed chat completion; adds its tokens to `counter` as they arrive. Kept cheap (no JSON
// parse per event: the engine's only text is " tok"), so that a client on a busy machine keeps up
// with 256 streams; an error event or a short answer still fails the run.
async function stream(base, counter, mark) {
  const r = await fetch(base + '/v1/chat/completions', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({model: MODEL, messages: [{role: 'user', content: 'Count.'}], max_tokens: TOKENS, stream: true})});
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
  const decoder = new TextDecoder();
  let tail = '', tokens = 0, all = '';
  for await (const chunk of r.body) {
    const text = tail + decoder.decode(chunk, {stream: true});
    let n = 0;
    for (let at = text.indexOf(' tok'); at >= 0; at = text.indexOf(' tok', at + 4)) ++n;
    if (n > 0 && tokens === 0) ++mark.started;
    tokens += n;
    counter.bytes += n * TOKEN_BYTES;
    tail = text.slice(-3);  // a " tok" cut between two reads
    if (text.includes('"error"')) throw new Error('stream error: ' + text.slice(text.indexOf('"error"'), 400));
    all = (all + text).slice(-30);
  }
  ++mark.finished;
  if (tokens !== TOKENS || !all.includes('[DONE]')) throw new Error(`a stream carried ${tokens} tokens, not ${TOKENS}, or no [DONE]`);
}

async function until(test) {
  while (!test()) await sleep(5);
}

async function round(base, procs, n) {
  const counter = {bytes: 0};
  const mark = {started: 0, finished: 0};
  const t0 = performance.now();
  const cpu0 = procs.map((p) => cpuNs(p.pid));
  const all = Promise.all(Array.from({length: n}, () => stream(base, counter, mark).catch((e) => {
    throw new Error(`${n} streams: one failed ${((performance.now() - t0) / 1000).toFixed(2)} s in, ${counter.bytes / TOKEN_BYTES} tokens received in all: ${e.cause ?? e}`);
  })));
  let failed = false;
  all.catch(() => { failed = true; });  // awaited below
  const sample = () => ({t: performance.now(), bytes: counter.bytes, cpu: procs.map((p) => cpuNs(p.pid)),
                         loop: procs.map((p) => threadCpuNs(p.pid, 'decoder-loop'))});
  // The steady part: from every stream's first token (plus 0.3 s) to the first stream's end.
  await until(() => failed || mark.started === n);
  await sleep(300);
  const steady0 = sample();
  const gatewayThreads = threads(procs[0].pid);
  await until(() => failed || mark.finished > 0 || counter.bytes >= n * TOKENS * TOKEN_BYTES * 0.95);
  const steady1 = sample();
  await all;
  const cpu1 = procs.map((p) => cpuNs(p.pid));
  const wallS = (performance.now() - t0) / 1000;
  const steadyTokens = (steady1.bytes - steady0.bytes) / TOKEN_BYTES;
  const steadyS = (steady1.t - steady0.t) / 1000;
  const out = {streams: n, window_s: +steadyS.toFixed(2), tokens_in_window: steadyTokens,
               tokens_per_s_per_stream: +(steadyTokens / steadyS / n).toFixed(1), whole_s: +wallS.toFixed(2),
               gateway_threads: gatewayThreads};
  procs.forEach((p, i) => {
    out[p.name] = {
      us_per_token: +((steady1.cpu[i] - steady0.cpu[i]) / 1000 / steadyTokens).toFixed(2),
      core_share: +((steady1.cpu[i] - steady0.cpu[i]) / 1e9 / steadyS).toFixed(3),
      whole_us_per_token: +((cpu1[i] - cpu0[i]) / 1000 / (n * TOKENS)).toFixed(2),
    };
    const loop = steady1.loop[i] - steady0.loop[i];
    if (loop > 0) out[p.name].decoder_loop_us_per_token = +(loop / 1000 / steadyTokens).toFixed(2);
  });
  return out;
}

const tmp = mkdtempSync(path.join(os.tmpdir(), 'overhead-stream-cpu-'));
const children = [];
const results = [];
let redisStarted = false;
try {
  const {child: engine, match} = await start([process.execPath, path.join(here, 'paced_engine.mjs'), String(PACE)], /listening on (http:\/\/\S+)/);
  children.push(engine);
  const decoder = `openai:${match[1]}/v1,model=bench${decoderExtra}`;
  for (const mode of modesArg.split(',')) {
    const procs = [];
    const listen = /listening on (http:\/\/127\.0\.0\.1:\d+)/;
    const common = ['--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--out', path.join(tmp, mode), '--request-timeout', '600',
                    '--max-queued', '4096'];
    let base;
    if (mode === 'mem') {
      const {child, match: m} = await start([binary, 'serve', ...common, '--decoder', decoder, '--max-decodes', '1024'], listen);
      children.push(child);
      procs.push({name: 'gateway_and_worker', pid: child.pid});
      base = m[1];
    } else {
      execFileSync('bash', [path.join(root, 'scripts/services/redis.sh'), 'start', tmp], {stdio: 'ignore'});
      redisStarted = true;
      const url = readFileSync(path.join(tmp, 'redis.env'), 'utf8').match(/REDIS_URL=(\S+)/)[1];
      const q = ['--queue', `${url}/bench-in`, '--log-queue', `${url}/bench-log`];
      const {child: gw, match: m} = await start([binary, 'serve', ...common, '--workers', '0', ...q], listen);
      children.push(gw);
      procs.push({name: 'gateway', pid: gw.pid});
      base = m[1];
      const worker = spawn(binary, ['worker', ...q, '--tokenizers', MODEL, '--decoder', decoder, '--max-decodes', '1024',
                                    '--max-in-flight', '1024', '--idle-exit', '86400', '--experiment', 'bench', '--no-progress',
                                    '--out', path.join(tmp, 'worker')], {stdio: ['ignore', 'ignore', 'inherit']});
      children.push(worker);
      procs.push({name: 'worker', pid: worker.pid});
    }
    // Warm-up: the tokenizer loaded, the connections to the engine made.
    await Promise.all(Array.from({length: 4}, () => stream(base, {bytes: 0}, {started: 0, finished: 0})));
    for (const n of STREAMS) {
      const r = await round(base, procs, n);
      r.mode = mode;
      r.load = os.loadavg().map((x) => +x.toFixed(2));
      console.log(JSON.stringify(r));
      results.push(r);
    }
  }
} catch (e) {
  for (const c of children) if (c.output) console.error(`--- ${c.spawnargs.slice(0, 2).join(' ')} (exit ${c.exitCode}):\n${c.output().slice(-3000)}`);
  throw e;
} finally {
  for (const c of children.reverse()) await stop(c);
  if (redisStarted) execFileSync('bash', [path.join(root, 'scripts/services/redis.sh'), 'clean', tmp], {stdio: 'ignore'});
  rmSync(tmp, {recursive: true, force: true});
}
