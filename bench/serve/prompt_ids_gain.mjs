// Tokenize once, the gain measured: the tests' real engine (llama.cpp via node-llama-cpp, the tiny
// Llama-3-vocabulary model) given the same prompt as text (it tokenizes it itself) and as the token
// ids `overhead` encoded (prompt=ids: it evaluates them as they are), for prompts of about 100,
// 1,000 and 8,000 tokens, same run, the two forms alternating request by request. Per request:
//   engine CPU  the engine process's CPU time over a request that generates nothing (max_tokens
//               0: the engine reads the request and prepares the prompt; every thread's time, from
//               /proc/PID/task/*/schedstat, in ns; one request at a time so it is this request's),
//               so the prefill, which is the same for both forms and far larger, does not drown it;
//   TTFT        from sending a request with max_tokens 1 to its first streamed text (the prefill
//               included; fewer rounds above 2,000 tokens, where the tiny model's CPU prefill takes
//               seconds).
// The difference text - ids is E moved out of the engine: its tokenizer's work on the prompt,
// printed per request and per prompt token, with p50 of each. Both forms carry the same tokens:
// the ids are `overhead tokenize` of the text with the model's BOS added, which is what the engine
// reads from the text (checked: usage.prompt_tokens is equal).
//
//   LLAMA_ENGINE_MODEL=build/engine/tiny-llama3.gguf \
//   LLAMA_ENGINE_NODE_MODULES=.cache/llama_engine/node_modules \
//   node bench/serve/prompt_ids_gain.mjs build/overhead [rounds=20] [sizes=100,1000,8000]
import {execFileSync} from 'node:child_process';
import {mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {startLlamaEngine} from '../../tests/engine/llama_engine.mjs';

const [binary, roundsArg = '20', sizesArg = '100,1000,8000'] = process.argv.slice(2);
if (!binary) throw new Error('usage: node bench/serve/prompt_ids_gain.mjs OVERHEAD_BINARY [rounds] [sizes]');
const ROUNDS = Number(roundsArg);
const SIZES = sizesArg.split(',').map(Number);
const TOKENIZER = 'llama-3.3-70b-instruct';
// Plain English prose, repeated to length: the engine's tokenizer does the same work per token as
// on a real prompt of this kind.
const SENTENCE = 'The queue hands each request to a worker, which renders the chat template, counts the tokens ' +
  'and sends the prompt on to the engine; the record of every stage goes to the store. ';

function cpuNs(pid) {
  let sum = 0n;
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      sum += BigInt(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return sum;
}

const work = mkdtempSync(path.join(os.tmpdir(), 'overhead-ids-gain-'));
const prompts = SIZES.map((size) => {
  // About `size` tokens: the sentence is ~36 tokens.
  const text = SENTENCE.repeat(Math.max(1, Math.round(size / 36)));
  writeFileSync(path.join(work, 'in.jsonl'), JSON.stringify({text}) + '\n');
  const out = execFileSync(binary, ['tokenize', '--tokenizer', TOKENIZER, '--input', path.join(work, 'in.jsonl')], {encoding: 'utf8'});
  return {size, text, ids: JSON.parse(out.trim()).ids};
});
rmSync(work, {recursive: true, force: true});

const maxIds = Math.max(...prompts.map((p) => p.ids.length));
const engine = await startLlamaEngine({sequences: 1, context: maxIds + 64});
const pid = engine.process.pid;

async function timed(prompt, maxTokens) {
  const body = {model: engine.modelName, prompt, max_tokens: maxTokens, temperature: 0, stream: true,
    stream_options: {include_usage: true}};
  const cpu0 = cpuNs(pid);
  const sent = process.hrtime.bigint();
  const res = await fetch(`${engine.baseUrl}/completions`, {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify(body)});
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  let ttft = 0, buffer = '', promptTokens = -1;
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk, {stream: true});
    let nl;
    while ((nl = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, nl).replace(/^data: /, '');
      buffer = buffer.slice(nl + 2);
      if (event === '[DONE]') continue;
      const e = JSON.parse(event);
      if (!ttft && e.choices?.[0]?.text) ttft = Number(process.hrtime.bigint() - sent) / 1e6;
      if (e.usage) promptTokens = e.usage.prompt_tokens;
    }
  }
  // The engine's work on this request ends before its last event is written.
  return {cpuUs: Number(cpuNs(pid) - cpu0) / 1e3, ttft, promptTokens};
}

const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`== load before: ${os.loadavg().map((x) => x.toFixed(2)).join(', ')}; ${ROUNDS} rounds per size, prompt forms alternating`);
console.log('| prompt tokens | engine CPU before the prefill, text (µs) | the same, ids (µs) | saved per request (µs) | saved per prompt token (µs) | TTFT text (ms) | TTFT ids (ms) |');
console.log('|---:|---:|---:|---:|---:|---:|---:|');
try {
  for (const p of prompts) {
    await timed(p.text, 1);  // warm-up: the engine's first request of a size allocates
    await timed(p.ids, 1);
    const text = [], ids = [], ttftText = [], ttftIds = [];
    for (let r = 0; r < ROUNDS; ++r) {
      const a = await timed(p.text, 0);
      const b = await timed(p.ids, 0);
      if (a.promptTokens !== b.promptTokens)
        throw new Error(`the forms differ at the engine: ${a.promptTokens} tokens from the text, ${b.promptTokens} from the ids`);
      text.push(a);
      ids.push(b);
    }
    for (let r = 0; r < (p.ids.length > 2000 ? Math.min(ROUNDS, 3) : ROUNDS); ++r) {
      ttftText.push((await timed(p.text, 1)).ttft);
      ttftIds.push((await timed(p.ids, 1)).ttft);
    }
    const cpuText = p50(text.map((x) => x.cpuUs)), cpuIds = p50(ids.map((x) => x.cpuUs));
    const saved = cpuText - cpuIds;
    console.log(`| ${p.ids.length} | ${cpuText.toFixed(0)} | ${cpuIds.toFixed(0)} | ${saved.toFixed(0)} | ` +
      `${(saved / p.ids.length).toFixed(3)} | ${p50(ttftText).toFixed(2)} | ${p50(ttftIds).toFixed(2)} |`);
  }
} finally {
  await engine.stop();
}
console.log(`== load after: ${os.loadavg().map((x) => x.toFixed(2)).join(', ')}`);
