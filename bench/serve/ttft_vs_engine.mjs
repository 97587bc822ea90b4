// TTFT added by the front: the time to the first content byte of a streamed chat completion through
// `overhead serve --decoder openai:<engine>` (mem: queues, SQLite store, in-process worker) minus
// the same for the engine's /v1/completions called directly with the prompt overhead renders, same
// run, one request at a time, alternating the two so that both see the same machine. Prints p50,
// p90 and mean of each and of the difference, as JSON.
//
//   LLAMA_ENGINE_MODEL=build/engine/tiny-llama3.gguf \
//   LLAMA_ENGINE_NODE_MODULES=.cache/llama_engine/node_modules \
//   node bench/serve/ttft_vs_engine.mjs build/overhead [requests=200] [max_tokens=8]
import {spawn} from 'node:child_process';
import {mkdtempSync, rmSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {startLlamaEngine} from '../../tests/engine/llama_engine.mjs';

const [binary, requestsArg = '200', maxTokensArg = '8'] = process.argv.slice(2);
if (!binary) throw new Error('usage: node bench/serve/ttft_vs_engine.mjs OVERHEAD_BINARY [requests] [max_tokens]');
const REQUESTS = Number(requestsArg);
const MAX_TOKENS = Number(maxTokensArg);
const MODEL = 'llama-3.3-70b-instruct';
const MESSAGES = [{role: 'system', content: 'Answer briefly.'}, {role: 'user', content: 'What is the capital of France?'}];

// ms from sending the request to the first `data:` event that carries text.
async function firstTextMs(url, body, hasText) {
  const t0 = performance.now();
  const r = await fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  const decoder = new TextDecoder();
  let buffered = '';
  let first = -1;
  for await (const bytes of r.body) {
    buffered += decoder.decode(bytes, {stream: true});
    let end;
    while (first < 0 && (end = buffered.indexOf('\n\n')) >= 0) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
      if (hasText(JSON.parse(event.slice(6)))) first = performance.now() - t0;
    }
  }
  if (first < 0) throw new Error(`${url}: no text`);
  return first;
}

function summary(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return {p50: +q(0.5).toFixed(3), p90: +q(0.9).toFixed(3), mean: +(s.reduce((a, b) => a + b, 0) / s.length).toFixed(3)};
}

const engine = await startLlamaEngine({sequences: 4});
const out = mkdtempSync(path.join(os.tmpdir(), 'overhead-ttft-'));
const serve = spawn(binary, ['serve', '--listen', '127.0.0.1:0', '--tokenizers', MODEL, '--out', out,
                             '--decoder', `openai:${engine.baseUrl},model=${engine.modelName}`],
                    {stdio: ['ignore', 'ignore', 'pipe']});
try {
  let stderr = '';
  serve.stderr.setEncoding('utf8');
  const base = await new Promise((resolve, reject) => {
    serve.stderr.on('data', (d) => {
      stderr += d;
      const m = stderr.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) resolve(m[1]);
    });
    serve.on('exit', (code) => reject(new Error('overhead serve exited ' + code + ': ' + stderr)));
  });
  const rendered = await (await fetch(base + '/v1/render', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({model: MODEL, messages: MESSAGES, add_generation_prompt: true})})).json();
  const direct = () => firstTextMs(engine.baseUrl + '/completions',
    {model: engine.modelName, prompt: rendered.prompt, max_tokens: MAX_TOKENS, temperature: 0, stream: true},
    (e) => e.choices?.[0]?.text);
  const front = () => firstTextMs(base + '/v1/chat/completions',
    {model: MODEL, messages: MESSAGES, max_tokens: MAX_TOKENS, temperature: 0, stream: true},
    (e) => e.choices?.[0]?.delta?.content);
  for (let i = 0; i < 10; ++i) { await direct(); await front(); }  // warm-up
  const d = [], f = [], diff = [];
  for (let i = 0; i < REQUESTS; ++i) {
    const a = await direct();
    const b = await front();
    d.push(a);
    f.push(b);
    diff.push(b - a);
  }
  console.log(JSON.stringify({requests: REQUESTS, max_tokens: MAX_TOKENS, ttft_ms: {direct: summary(d), through_overhead: summary(f),
    added: summary(diff)}, load: os.loadavg().map((x) => +x.toFixed(2))}, null, 1));
} finally {
  serve.kill('SIGTERM');
  await engine.stop();
  rmSync(out, {recursive: true, force: true});
}
