// What the gateway's real-engine tests share: a JSON POST that must answer 200, the reference
// every answer through the front is compared with (the engine's own temperature-0 completion of
// the prompt `overhead` renders and counts for the same messages), and a streamed completion read
// whole.
import assert from 'node:assert/strict';

export async function postJson(url, body) {
  const r = await fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
  const text = await r.text();
  assert.equal(r.status, 200, `${url}: ${text}`);
  return JSON.parse(text);
}

// {prompt, text, finish_reason, completion_tokens}: `engine` (tests/engine/llama_engine.mjs)
// completing what the gateway at `front` renders for `messages`: as text, or with `ids` as the
// token ids the gateway counts for it (special tokens parsed, none added), as a gateway with
// --decoder openai:URL,dialect=llamacpp sends it (the engine then adds no second BOS).
export async function engineCompletion(front, engine, {model, messages, maxTokens, ids = false}) {
  let prompt;
  if (ids) {
    prompt = (await postJson(front + '/v1/tokenize', {model, messages, add_generation_prompt: true, add_special_tokens: false})).tokens;
  } else {
    prompt = (await postJson(front + '/v1/render', {model, messages, add_generation_prompt: true})).prompt;
  }
  const c = await postJson(engine.baseUrl + '/completions', {model: engine.modelName, prompt, max_tokens: maxTokens, temperature: 0});
  const choice = c.choices[0];
  assert.ok(choice.text.length > 0, 'the engine generated text');
  return {prompt, text: choice.text, finish_reason: choice.finish_reason, completion_tokens: c.usage.completion_tokens};
}

// Reads an `openai` client's chat completion stream to its end: {ids (each chunk's), deltas
// ([ms since `started`, text] per content delta), finish (the finish_reason), usage}.
export async function collectStream(stream, started) {
  const out = {ids: [], deltas: [], finish: undefined, usage: undefined};
  for await (const chunk of stream) {
    out.ids.push(chunk.id);
    const choice = chunk.choices[0];
    if (choice?.delta?.content) out.deltas.push([performance.now() - started, choice.delta.content]);
    if (choice?.finish_reason) out.finish = choice.finish_reason;
    if (chunk.usage) out.usage = chunk.usage;
  }
  return out;
}

// The engine's own stream of `prompt` at temperature 0: milliseconds from its first text event to
// its last, the time the generation spreads its tokens over.
export async function engineStreamSpan(engine, prompt, maxTokens) {
  const r = await fetch(engine.baseUrl + '/completions', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({model: engine.modelName, prompt, max_tokens: maxTokens, temperature: 0, stream: true})});
  assert.equal(r.status, 200);
  const decoder = new TextDecoder();
  let pending = '', first = 0, last = 0;
  for await (const bytes of r.body) {
    pending += decoder.decode(bytes, {stream: true});
    for (let at; (at = pending.indexOf('\n\n')) >= 0; pending = pending.slice(at + 2)) {
      const line = pending.slice(0, at);
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      if (JSON.parse(line.slice(6)).choices?.[0]?.text) {
        last = performance.now();
        first ||= last;
      }
    }
  }
  return last - first;
}
