// The real engine the tests use (llama.cpp through node-llama-cpp, tests/engine/llama_server.mjs,
// a tiny random-weight model): its OpenAI API does what `overhead`'s decoder relies on.
// Temperature 0 is deterministic and a stream's deltas concatenate to the unstreamed text; usage
// and finish_reason come as vLLM sends them; stop strings, max_tokens; a client that disconnects
// stops its generation; several generations run at once.
import {test, before, after} from "node:test";
import assert from "node:assert/strict";
import {startLlamaEngine} from "./llama_engine.mjs";

let engine;
before(async () => {
  engine = await startLlamaEngine({sequences: 4, modelName: ["tiny-llama3", "llama-3.3-70b-instruct"]});
});
after(async () => engine?.stop());

const prompt = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nSay something.<|eot_id|>" +
  "<|start_header_id|>assistant<|end_header_id|>\n\n";

async function complete(body) {
  const res = await fetch(`${engine.baseUrl}/completions`, {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({model: engine.modelName, prompt, ...body})});
  return {status: res.status, body: await res.json()};
}

// The data lines of a stream, parsed; `onEvent` may return true to stop reading (disconnect).
async function stream(body, onEvent = () => false, signal = undefined) {
  const res = await fetch(`${engine.baseUrl}/completions`, {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({model: engine.modelName, prompt, stream: true, ...body}), signal});
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type"), /text\/event-stream/);
  const events = [];
  const decoder = new TextDecoder();
  let pending = "";
  for await (const bytes of res.body) {
    pending += decoder.decode(bytes, {stream: true});
    let nl;
    while ((nl = pending.indexOf("\n\n")) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 2);
      assert.ok(line.startsWith("data: "), line);
      const data = line.slice(6);
      const ev = data === "[DONE]" ? "[DONE]" : JSON.parse(data);
      events.push(ev);
      if (onEvent(ev)) return events;
    }
  }
  return events;
}

const stats = async () => (await fetch(`${engine.url}/engine/stats`)).json();

test("GET /v1/models lists the served names; another name is a 404", async () => {
  const models = await (await fetch(`${engine.baseUrl}/models`)).json();
  assert.deepEqual(models.data.map((m) => m.id), ["tiny-llama3", "llama-3.3-70b-instruct"]);
  const r = await complete({model: "gpt-4", max_tokens: 1});
  assert.equal(r.status, 404);
  assert.match(r.body.error.message, /gpt-4/);
});

test("temperature 0 is deterministic; the stream's deltas concatenate to the unstreamed text", async () => {
  const a = await complete({max_tokens: 24, temperature: 0});
  const b = await complete({max_tokens: 24, temperature: 0});
  assert.equal(a.status, 200);
  assert.equal(a.body.choices[0].text, b.body.choices[0].text);
  assert.ok(a.body.choices[0].text.length > 0);
  assert.equal(a.body.choices[0].finish_reason, "length");
  assert.equal(a.body.usage.completion_tokens, 24);
  assert.equal(a.body.usage.prompt_tokens, 14, "the prompt's 13 tokens and the BOS the model adds (as overhead counts it)");

  const events = await stream({max_tokens: 24, temperature: 0, stream_options: {include_usage: true}});
  assert.equal(events.at(-1), "[DONE]");
  const chunks = events.slice(0, -1);
  const usage = chunks.at(-1);
  assert.deepEqual(usage.choices, []);
  assert.deepEqual(usage.usage, a.body.usage);
  const texts = chunks.slice(0, -1);
  assert.ok(texts.length > 2, "one chunk per token or so, not one at the end");
  assert.equal(texts.map((c) => c.choices[0].text).join(""), a.body.choices[0].text);
  assert.equal(texts.at(-1).choices[0].finish_reason, "length");
  for (const c of texts) assert.equal(c.usage, null, "as vLLM: null until the usage chunk");
  // Without include_usage: no usage chunk.
  const plain = await stream({max_tokens: 3, temperature: 0});
  assert.ok(plain.every((c) => c === "[DONE]" || (c.usage === undefined && c.choices.length === 1)));
});

test("a stop string ends the text before it, with finish_reason stop", async () => {
  const full = (await complete({max_tokens: 24, temperature: 0})).body.choices[0].text;
  const stop = full.slice(Math.floor(full.length / 2), Math.floor(full.length / 2) + 3);
  const cut = full.slice(0, full.indexOf(stop));
  const r = await complete({max_tokens: 24, temperature: 0, stop: [stop, "never-in-it"]});
  assert.equal(r.body.choices[0].text, cut);
  assert.equal(r.body.choices[0].finish_reason, "stop");
  assert.ok(r.body.usage.completion_tokens < 24);
  const events = await stream({max_tokens: 24, temperature: 0, stop});
  assert.equal(events.slice(0, -1).map((c) => c.choices[0].text).join(""), cut, "no held-back part of the stop leaks");
});

test("bad sampling fields are 400s naming the field", async () => {
  for (const [body, field] of [[{temperature: 3}, "temperature"], [{max_tokens: -1}, "max_tokens"],
    [{stop: ["a", "b", "c", "d", "e"]}, "stop"], [{seed: 1.5}, "seed"], [{max_tokens: 100000}, "max_tokens"]]) {
    const r = await complete(body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error.param, field);
  }
});

test("a seed makes sampling at temperature 1 repeatable", async () => {
  const a = await complete({max_tokens: 12, temperature: 1, seed: 7});
  const b = await complete({max_tokens: 12, temperature: 1, seed: 7});
  assert.equal(a.body.choices[0].text, b.body.choices[0].text);
});

test("a client that disconnects stops its generation", async () => {
  const before = await stats();
  const controller = new AbortController();
  let seen = 0;
  await assert.rejects(stream({max_tokens: 1500, temperature: 0}, () => {
    if (++seen === 3) controller.abort();
    return false;
  }, controller.signal));
  let now;
  for (let i = 0; i < 100; ++i) {
    now = await stats();
    if (now.cancelled > before.cancelled && now.active === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(now.cancelled, before.cancelled + 1);
  assert.equal(now.active, 0);
  const generated = now.generated_tokens - before.generated_tokens;
  assert.ok(generated < 1500, `it stopped after ${generated} of 1500 tokens`);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await stats()).generated_tokens, now.generated_tokens, "and generates no more");
});

test("generations run at once (more than the sequences wait their turn) and each gets its whole answer", async () => {
  const before = await stats();
  const all = await Promise.all(Array.from({length: 6}, () => complete({max_tokens: 16, temperature: 0})));
  for (const r of all) {
    assert.equal(r.status, 200);
    assert.equal(r.body.usage.completion_tokens, 16);
    assert.equal(r.body.choices[0].finish_reason, "length");
  }
  const after = await stats();
  assert.equal(after.completed - before.completed, 6);
  // A generation alone afterwards is the greedy answer again (the sequences handed over are clean).
  const a = await complete({max_tokens: 16, temperature: 0}), b = await complete({max_tokens: 16, temperature: 0});
  assert.equal(a.body.choices[0].text, b.body.choices[0].text);
});

// Continuous batching: a finished request's slot serves the next one while others still generate
// (the slot once stayed taken until every running generation had ended).
test("a finished request's slot serves the next one while long generations run", async () => {
  const controller = new AbortController();
  let longDone = 0, longTokens = 0;
  // Three of the four sequences generate long answers; the short requests share the fourth.
  const longs = Array.from({length: 3}, () => stream({max_tokens: 1500, temperature: 0}, () => {
    ++longTokens;
    return false;
  }, controller.signal).catch(() => null).finally(() => { ++longDone; }));
  while (longTokens < 6) await new Promise((r) => setTimeout(r, 5));
  for (let i = 0; i < 6; ++i) {
    const r = await complete({max_tokens: 4, temperature: 0});
    assert.equal(r.status, 200);
    assert.equal(longDone, 0, `short request ${i + 1} waited for the long generations to end`);
  }
  controller.abort();
  await Promise.all(longs);
});

// Every running generation is in every step: the engine's batches hold all of them (node-llama-cpp
// alone started each batch with the sequences whose sampling had ended, 1.96 of three on average).
test("each step decodes every running generation in one batch", async () => {
  const before = await stats();
  const all = await Promise.all(Array.from({length: 4}, () => complete({max_tokens: 48, temperature: 0})));
  for (const r of all) assert.equal(r.body.usage.completion_tokens, 48);
  const after = await stats();
  const batches = after.decode_batches - before.decode_batches;
  const perBatch = (after.decoded_sequences - before.decoded_sequences) / batches;
  // 47 steps of four, and the prompts' batches (one to four of them, as the requests arrive).
  assert.ok(perBatch >= 3.5, `${batches} batches held ${perBatch.toFixed(2)} generations each, of 4`);
});
