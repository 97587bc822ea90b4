// A small OpenAI-compatible server around a real engine: llama.cpp through node-llama-cpp (installed
// by scripts/install_llama_engine.sh), serving a GGUF model (scripts/make_tiny_gguf.py makes a tiny
// one). The tests put `overhead` in front of it (or call it directly) so real tokens come from a
// real engine on this machine's CPU, batched across requests as a serving engine does.
//
//   node tests/engine/llama_server.mjs --model tiny.gguf [--port 0] [--port-file F]
//        [--model-name NAME]... [--sequences 8] [--context 2048] [--threads 1]
//
// When listening it prints one line `llama_server: listening on http://127.0.0.1:PORT` on stdout
// (and writes PORT to --port-file). Routes:
//   GET  /health          200 {"status":"ok"}
//   GET  /v1/models       the served names (--model-name, repeatable; default tiny-llama3), with
//                         meta n_ctx, sequences (slots) and n_batch (tokens evaluated per step)
//   POST /v1/completions  prompt (a string, special tokens in it parsed, the model's BOS put first;
//                         or a list of token ids, evaluated as they are, nothing added, as
//                         llama.cpp's server and vLLM take them: an id outside the vocabulary is
//                         a 400 "Token id N is out of vocabulary"),
//                         max_tokens (default 16), temperature (default 1; 0 = greedy,
//                         deterministic), top_p, seed, stop (a string or up to 4), presence_penalty,
//                         frequency_penalty, user, stream, stream_options.include_usage,
//                         return_token_ids (as vLLM: each streamed choice carries `token_ids`, the
//                         ids generated since the previous chunk, end-of-generation included; the
//                         unstreamed choice all of them). A text
//                         prompt gets the model's BOS first (see tokenizePrompt; --no-add-bos: not).
//                         finish_reason "stop" (an end-of-generation token or a stop string) or
//                         "length" (max_tokens or the context's end). usage.completion_tokens
//                         counts every generated token, the end-of-generation one included (as vLLM
//                         does). Streamed deltas are whole UTF-8 characters. A client that
//                         disconnects stops its generation.
//                         Constrained generation as llama.cpp's server takes it: `json_schema` (a
//                         JSON Schema object, converted to a grammar by node-llama-cpp's
//                         createGrammarForJsonSchema, anyOf read as oneOf; it knows a subset of JSON
//                         Schema, e.g. not `maximum`, which the gateway then catches: a schema
//                         it cannot convert is a 400 naming json_schema) or `grammar` (a GBNF
//                         text, LlamaGrammar), not both; each generation gets its own
//                         LlamaGrammarEvaluationState passed to sequence.evaluate, so every sampled
//                         token is one the grammar allows and the end of generation comes once the
//                         grammar's root is complete, or at the grammar's stop trigger (the JSON
//                         grammar's four newlines, the whitespace tail then dropped, finish_reason
//                         "stop"), as node-llama-cpp's LlamaCompletion ends it. The tiny random model then writes valid JSON
//                         by construction, but may take many tokens: give such requests a large
//                         max_tokens and small schemas (enums, short maxLength strings).
//   POST /tokenize        {"content" (a text or texts), "add_special"} -> {"tokens"}: the engine's tokenizer.
//   GET  /engine/stats    {"active","waiting","started","completed","cancelled","generated_tokens",
//                         "decode_batches","decoded_sequences"}: what tests check to see that a
//                         cancelled generation stopped, and that a step decodes every running one.
// Up to --sequences generations run at once (slots; each step decodes all of them in one batch,
// with the prompts that are waiting); more wait in arrival order. Greedy answers are the same run after run when generations do not overlap;
// overlapping ones (batched with others, on sequences handed over while others run) were seen to
// differ now and then from the same prompt's answer alone: the random model's top logits are close,
// and batching changes the engine's rounding. Tests compare texts of generations run alone. Errors are OpenAI-shaped: {"error":{"message","type","param","code"}}.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const a = {noAddBos: false, port: 0, portFile: "", names: [], sequences: 8, context: 2048, threads: 1, model: "", modules: ""};
  for (let i = 0; i < argv.length; ++i) {
    const k = argv[i], v = () => {
      if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
      return argv[++i];
    };
    if (k === "--model") a.model = v();
    else if (k === "--port") a.port = Number(v());
    else if (k === "--port-file") a.portFile = v();
    else if (k === "--model-name") a.names.push(v());
    else if (k === "--sequences") a.sequences = Number(v());
    else if (k === "--context") a.context = Number(v());
    else if (k === "--threads") a.threads = Number(v());
    else if (k === "--node-modules") a.modules = v();
    else if (k === "--no-add-bos") a.noAddBos = true;
    else throw new Error(`unknown argument ${k}`);
  }
  if (!a.model) throw new Error("--model PATH is required");
  if (!a.names.length) a.names.push("tiny-llama3");
  a.modules ||= process.env.LLAMA_ENGINE_NODE_MODULES || path.join(here, "../../.cache/llama_engine/node_modules");
  return a;
}

const args = parseArgs(process.argv.slice(2));
const {getLlama, LlamaGrammar, LlamaGrammarEvaluationState} =
  await import(pathToFileURL(path.join(args.modules, "node-llama-cpp/dist/index.js")).href);
// build "never": the prebuilt CPU binary or nothing. Few threads: ggml's spinning thread pool is
// very slow on a machine with fewer free cores than threads.
const llama = await getLlama({gpu: false, build: "never", logLevel: "error", maxThreads: args.threads});
const model = await llama.loadModel({modelPath: args.model});
// Twice as many context sequences as slots: a finished request's sequence is given back (disposed,
// so the next request starts from an empty KV cache) while the slot already serves the next one
// on a spare sequence. Disposing takes the context's lock, which node-llama-cpp's decode loop holds
// while any sequence has a token queued; a give-back waits for a step boundary and stalls nobody.
// Only when a request waits with a slot free and no spare sequence ready (all being given back)
// do the running generations hold their next token (pausedForRelease) until one is: the loop runs
// dry and lets the lock go. (With one sequence per slot and a pause at every give-back, a closed
// loop of three clients spent 15% of its time paused.)
const context = await model.createContext({sequences: args.sequences * 2, contextSize: args.context, threads: args.threads});
// The ids a prompt may hold: the GGUF's token list.
const vocabularySize = model.fileInfo.metadata?.tokenizer?.ggml?.tokens?.length ?? 0;
const stats = {active: 0, waiting: 0, started: 0, completed: 0, cancelled: 0, generated_tokens: 0,
  decode_batches: 0, decoded_sequences: 0};
countDecodeBatches(context, stats);

const spare = [];  // fresh sequences (empty KV caches)
for (let i = 0; i < args.sequences * 2; ++i) spare.push(context.getSequence());
let slotsFree = args.sequences, givingBack = 0;
const waiting = [];  // {resolve, gone} of requests waiting for a slot, in arrival order
let pause = null, endPause = () => {};

function acquire(gone) {
  if (slotsFree > 0 && spare.length) {
    --slotsFree;
    return Promise.resolve(spare.pop());
  }
  return new Promise((resolve) => {
    waiting.push({resolve, gone});
    stats.waiting = waiting.length;
    updatePause();
  });
}

function handOut() {
  while (waiting.length && slotsFree > 0 && spare.length) {
    const next = waiting.shift();
    stats.waiting = waiting.length;
    if (next.gone()) continue;
    --slotsFree;
    next.resolve(spare.pop());
  }
  updatePause();
}

function updatePause() {
  const needed = waiting.length > 0 && slotsFree > 0 && spare.length === 0 && givingBack > 0;
  if (needed && !pause) {
    pause = new Promise((resolve) => { endPause = resolve; });
  } else if (!needed && pause) {
    pause = null;
    endPause();
  }
}
const pausedForRelease = () => pause;

async function release(used) {
  ++slotsFree;
  ++givingBack;
  handOut();
  try {
    await used.dispose();
  } finally {
    --givingBack;
  }
  spare.push(context.getSequence());
  handOut();
}

// One step for every running generation, as a serving engine's loop does (llama.cpp's server
// samples every slot, then decodes one batch with all of them). node-llama-cpp's loop starts the
// next batch with whatever tokens are queued the moment the last one ends, and a sequence queues
// its next token only after its sampling (on a worker thread) and our per-token work are done: at
// three generations its batches held 1.96 sequences on average, each generation in two of every
// three steps, and a closed loop and waves of the same size decoded at different rates. So a
// running generation waits here with its token until every other has its own, and all queue
// their next together, in one batch. A generation joins at its first token and leaves when it
// ends (finished, stopped, cancelled or failed).
const step = {members: 0, arrived: 0, open: null, release: () => {}};
function releaseStepIfAllArrived() {
  if (step.open && step.arrived >= step.members) {
    const release = step.release;
    step.open = null;
    step.arrived = 0;
    release();
  }
}
function arriveAtStep() {
  if (!step.open) step.open = new Promise((resolve) => { step.release = resolve; });
  const open = step.open;
  ++step.arrived;
  releaseStepIfAllArrived();
  return open;
}
function leaveSteps() {
  --step.members;
  releaseStepIfAllArrived();
}

// /engine/stats counts the engine's decode batches and the sequences in them (their mean is how
// many generations a step serves), read at node-llama-cpp's native context (`_ctx`, internal to
// the 3.21.1 that scripts/install_llama_engine.sh pins), which has no counter of its own.
function countDecodeBatches(ctx, counts) {
  const native = ctx._ctx;
  let sequencesInBatch = 0;
  const wrapped = {
    addToBatch: (...a) => {
      ++sequencesInBatch;
      return native.addToBatch(...a);
    },
    decodeBatch: async () => {
      try {
        return await native.decodeBatch();
      } finally {
        ++counts.decode_batches;
        counts.decoded_sequences += sequencesInBatch;
        sequencesInBatch = 0;
      }
    },
  };
  ctx._ctx = new Proxy(native, {get(target, key) {
    if (key in wrapped) return wrapped[key];
    const v = target[key];
    return typeof v === "function" ? v.bind(target) : v;
  }});
}

class HttpError extends Error {
  constructor(status, message, param = null) {
    super(message);
    this.status = status;
    this.param = param;
  }
}

function sendJson(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, {"Content-Type": "application/json", "Content-Length": Buffer.byteLength(text)});
  res.end(text);
}

function sendError(res, e) {
  const status = e.status ?? 500;
  const type = status === 404 ? "NotFoundError" : status < 500 ? "invalid_request_error" : "server_error";
  if (res.headersSent) return res.destroy();
  sendJson(res, status, {error: {message: e.message, type, param: e.param ?? null, code: status}});
}

function readBody(req, limit = 1 << 20) {
  return new Promise((resolve, reject) => {
    const parts = [];
    let size = 0;
    req.on("data", (c) => {
      size += c.length;
      if (size > limit) reject(new HttpError(413, `the body is over ${limit} bytes`));
      else parts.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function optionalNumber(body, name, lo, hi) {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v) || v < lo || v > hi)
    throw new HttpError(400, `'${name}' must be a number in [${lo}, ${hi}]`, name);
  return v;
}

function parseCompletionRequest(text) {
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, "the body is not JSON");
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new HttpError(400, "the body is not a JSON object");
  if (!args.names.includes(body.model))
    throw new HttpError(404, `The model \`${body.model}\` does not exist.`, "model");
  const ids = Array.isArray(body.prompt);
  if (ids ? !body.prompt.length || body.prompt.some((t) => !Number.isInteger(t)) : typeof body.prompt !== "string")
    throw new HttpError(400, "'prompt' must be a string or a non-empty list of token ids", "prompt");
  if (ids) {
    const bad = body.prompt.find((t) => t < 0 || t >= vocabularySize);
    if (bad !== undefined) throw new HttpError(400, `Token id ${bad} is out of vocabulary (${vocabularySize} tokens)`, "prompt");
  }
  const maxTokens = body.max_tokens ?? 16;
  if (!Number.isInteger(maxTokens) || maxTokens < 0) throw new HttpError(400, "'max_tokens' must be an integer >= 0", "max_tokens");
  if (body.n !== undefined && body.n !== 1) throw new HttpError(400, "only n = 1 is served", "n");
  let stop = body.stop ?? [];
  if (typeof stop === "string") stop = [stop];
  if (!Array.isArray(stop) || stop.length > 4 || stop.some((s) => typeof s !== "string" || !s.length))
    throw new HttpError(400, "'stop' must be a non-empty string or up to 4 of them", "stop");
  const seed = body.seed ?? undefined;
  if (seed !== undefined && !Number.isInteger(seed)) throw new HttpError(400, "'seed' must be an integer", "seed");
  const jsonSchema = body.json_schema ?? undefined, grammar = body.grammar ?? undefined;
  if (jsonSchema !== undefined && (typeof jsonSchema !== "object" || Array.isArray(jsonSchema)) && typeof jsonSchema !== "boolean")
    throw new HttpError(400, "'json_schema' must be a JSON Schema (an object)", "json_schema");
  if (grammar !== undefined && typeof grammar !== "string") throw new HttpError(400, "'grammar' must be a GBNF text", "grammar");
  if (jsonSchema !== undefined && grammar !== undefined)
    throw new HttpError(400, "either 'json_schema' or 'grammar', not both", "grammar");
  return {
    prompt: body.prompt,
    maxTokens,
    temperature: optionalNumber(body, "temperature", 0, 2) ?? 1,
    topP: optionalNumber(body, "top_p", 0, 1),
    presencePenalty: optionalNumber(body, "presence_penalty", -2, 2) ?? 0,
    frequencyPenalty: optionalNumber(body, "frequency_penalty", -2, 2) ?? 0,
    seed,
    stop,
    stream: body.stream === true,
    returnTokenIds: body.return_token_ids === true,
    includeUsage: body.stream === true && body.stream_options?.include_usage === true,
    model: body.model,
    jsonSchema: jsonSchema === true ? {} : jsonSchema,
    grammarText: grammar,
  };
}

// node-llama-cpp's converter knows `oneOf` and not `anyOf` (it reads an unknown schema as any
// value): as a grammar the two give the same texts (a grammar cannot check "exactly one"), so
// anyOf is read as oneOf, as llama.cpp's own converter reads both.
function anyOfAsOneOf(schema) {
  if (Array.isArray(schema)) return schema.map(anyOfAsOneOf);
  if (!schema || typeof schema !== "object") return schema;
  const out = {};
  for (const [k, v] of Object.entries(schema)) out[k === "anyOf" && !("oneOf" in schema) ? "oneOf" : k] = anyOfAsOneOf(v);
  return out;
}

// The request's constraint as a node-llama-cpp grammar, or undefined.
async function requestGrammar(r) {
  try {
    if (r.jsonSchema !== undefined) return await llama.createGrammarForJsonSchema(anyOfAsOneOf(r.jsonSchema));
    if (r.grammarText !== undefined) return new LlamaGrammar(llama, {grammar: r.grammarText});
  } catch (e) {
    const field = r.jsonSchema !== undefined ? "json_schema" : "grammar";
    throw new HttpError(400, `'${field}' cannot be used as a grammar: ${e.message}`, field);
  }
  return undefined;
}

// A grammar's stop trigger as text (a string, or a LlamaText of strings), else null.
function triggerText(t) {
  if (typeof t === "string") return t;
  if (Array.isArray(t?.values) && t.values.every((v) => typeof v === "string")) return t.values.join("");
  return null;
}

// Where a stop string starts in `text` (searched from `from`), else -1.
function findStop(text, stops, from) {
  let best = -1;
  for (const s of stops) {
    const i = text.indexOf(s, Math.max(0, from));
    if (i >= 0 && (best < 0 || i < best)) best = i;
  }
  return best;
}

// How many characters at the end of `text` could be the start of a stop string (held back).
function stopPrefixAtEnd(text, stops) {
  let keep = 0;
  for (const s of stops)
    for (let n = Math.min(s.length - 1, text.length); n > keep; --n)
      if (text.endsWith(s.slice(0, n))) {
        keep = n;
        break;
      }
  return keep;
}

// As llama.cpp's server and vLLM do: special tokens written in the prompt are parsed, and the
// model's BOS is put first when its tokenizer says so (add_bos_token), even when the prompt
// already starts with one; that is also how `overhead` counts a rendered prompt (its
// token_count), so usage.prompt_tokens equals ours. --no-add-bos leaves it out.
function tokenizePrompt(text, addSpecial = !args.noAddBos) {
  const tokens = model.tokenize(text, true);
  if (addSpecial && model.tokens.shouldPrependBosToken && model.tokens.bos !== null) tokens.unshift(model.tokens.bos);
  return tokens;
}

let nextId = 1;

// Runs one generation; onText(delta, ids) for each new whole-character piece, with the ids
// generated since the previous call. Resolves {text, finishReason, completionTokens,
// promptTokens, tokens, unsentIds} (unsentIds: generated after the last onText), or {cancelled: true}.
async function generate(r, seq, isGone, onText) {
  const promptTokens = Array.isArray(r.prompt) ? r.prompt : tokenizePrompt(r.prompt);
  if (promptTokens.length === 0) throw new HttpError(400, "'prompt' is empty", "prompt");
  const room = seq.contextSize - promptTokens.length;
  if (room <= 0 || r.maxTokens > room)
    throw new HttpError(400, `This model's maximum context length is ${seq.contextSize} tokens; the prompt has ` +
      `${promptTokens.length} and max_tokens is ${r.maxTokens}`, "max_tokens");
  const generated = [];
  let emitted = 0, idsSent = 0, text = "", finishReason = "length";
  const newIds = () => {
    const ids = generated.slice(idsSent);
    idsSent = generated.length;
    return ids;
  };
  const penalties = r.presencePenalty || r.frequencyPenalty
    ? {punishTokens: () => generated, penalty: 1, presencePenalty: r.presencePenalty, frequencyPenalty: r.frequencyPenalty}
    : undefined;
  if (r.maxTokens > 0) {
    const grammarEvaluationState = r.grammar ? new LlamaGrammarEvaluationState({model, grammar: r.grammar}) : undefined;
    // A grammar's stop triggers end the generation like stop strings (the JSON grammar allows
    // any run of trailing newlines, which a random model may never leave).
    const stops = [...r.stop, ...(r.grammar?.stopGenerationTriggers ?? []).map(triggerText).filter((t) => t)];
    const it = seq.evaluate(promptTokens, {
      temperature: r.temperature, topP: r.topP, seed: r.seed, repeatPenalty: penalties, yieldEogToken: true, grammarEvaluationState,
    });
    let inSteps = false;
    try {
      for await (const token of it) {
        if (!inSteps) {
          inSteps = true;
          ++step.members;
        }
        const pause = pausedForRelease();
        if (pause) await pause;
        if (isGone()) return {cancelled: true};
        generated.push(token);
        ++stats.generated_tokens;
        if (model.isEogToken(token)) {
          finishReason = "stop";
          break;
        }
        const full = model.detokenize(generated.filter((t) => !model.isEogToken(t)));
        // A token may end inside a UTF-8 character: its bytes decode to U+FFFD until the rest comes.
        let whole = full.length;
        while (whole > 0 && full.charCodeAt(whole - 1) === 0xfffd) --whole;
        const stopAt = stops.length ? findStop(full.slice(0, whole), stops, emitted - 64) : -1;
        if (stopAt >= 0) {
          text = full.slice(0, stopAt);
          // A grammar's own stop (the JSON grammar's run of newlines) ends the document: its
          // whitespace tail is dropped, as node-llama-cpp's LlamaCompletion does.
          if (r.grammar?.trimWhitespaceSuffix) text = text.slice(0, Math.max(emitted, text.trimEnd().length));
          finishReason = "stop";
          break;
        }
        text = full;
        const safe = whole - (stops.length ? stopPrefixAtEnd(full.slice(0, whole), stops) : 0);
        if (safe > emitted) {
          onText(full.slice(emitted, safe), newIds());
          emitted = safe;
        }
        if (generated.length >= r.maxTokens) break;
        await arriveAtStep();
      }
    } finally {
      if (inSteps) leaveSteps();
    }
    if (isGone()) return {cancelled: true};
  }
  if (text.length > emitted) onText(text.slice(emitted), newIds());
  return {text, finishReason, completionTokens: generated.length, promptTokens: promptTokens.length, tokens: generated,
    unsentIds: newIds()};
}

async function completions(req, res) {
  const r = parseCompletionRequest(await readBody(req));
  r.grammar = await requestGrammar(r);
  let gone = false;
  res.on("close", () => {
    if (!res.writableFinished) gone = true;
  });
  const isGone = () => gone;
  const seq = await acquire(isGone);
  if (gone) return release(seq);
  ++stats.active;
  ++stats.started;
  const id = `cmpl-${nextId++}`, created = Math.floor(Date.now() / 1000);
  const chunk = (choices, usage) => ({id, object: "text_completion", created, model: r.model, choices, usage});
  const usageOf = (o) => ({prompt_tokens: o.promptTokens, completion_tokens: o.completionTokens,
    total_tokens: o.promptTokens + o.completionTokens});
  let out;
  try {
    if (r.stream) {
      let started = false;
      const start = () => {
        if (started) return;
        started = true;
        res.writeHead(200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "Connection": "keep-alive"});
      };
      const event = (obj) => {
        start();
        res.write(`data: ${JSON.stringify(obj)}\n\n`);
      };
      // As vLLM: "usage": null in every chunk when the usage was asked for, the numbers at the end.
      const nullUsage = r.includeUsage ? null : undefined;
      const withIds = (choice, ids) => (r.returnTokenIds ? {...choice, token_ids: ids} : choice);
      out = await generate(r, seq, isGone, (delta, ids) =>
        event(chunk([withIds({index: 0, text: delta, logprobs: null, finish_reason: null}, ids)], nullUsage)));
      if (!out.cancelled) {
        event(chunk([withIds({index: 0, text: "", logprobs: null, finish_reason: out.finishReason}, out.unsentIds)], nullUsage));
        if (r.includeUsage) event(chunk([], usageOf(out)));
        res.end("data: [DONE]\n\n");
      }
    } else {
      out = await generate(r, seq, isGone, () => {});
      if (!out.cancelled)
        sendJson(res, 200, chunk([{index: 0, text: out.text, logprobs: null, finish_reason: out.finishReason,
          ...(r.returnTokenIds ? {token_ids: out.tokens} : {})}], usageOf(out)));
    }
    if (out.cancelled) ++stats.cancelled;
    else ++stats.completed;
  } finally {
    --stats.active;
    await release(seq);
  }
}

// POST /tokenize {"content": TEXT, "add_special": false}: the engine's ids for TEXT (an array of
// texts: an array of id lists; special
// tokens written in it parsed; BOS first when add_special and the model adds one), as llama.cpp's
// server answers it. Tests compare them with `overhead tokenize`.
function tokenizeRoute(text) {
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, "the body is not JSON");
  }
  const many = Array.isArray(body?.content);
  const contents = many ? body.content : [body?.content];
  if (contents.some((c) => typeof c !== "string")) throw new HttpError(400, "'content' must be a string or strings", "content");
  const tokens = contents.map((c) => tokenizePrompt(c, body.add_special === true));
  return {tokens: many ? tokens : tokens[0]};
}

const server = http.createServer(async (req, res) => {
  try {
    const url = req.url.split("?")[0];
    if (req.method === "GET" && url === "/health") return sendJson(res, 200, {status: "ok"});
    if (req.method === "GET" && url === "/engine/stats") return sendJson(res, 200, stats);
    if (req.method === "GET" && url === "/v1/models")
      return sendJson(res, 200, {object: "list", data: args.names.map((id) => ({id, object: "model", created: 0,
        owned_by: "llama.cpp", meta: {n_ctx: context.contextSize, sequences: args.sequences,
        n_batch: context.batchSize}}))});
    if (req.method === "POST" && url === "/v1/completions") return await completions(req, res);
    if (req.method === "POST" && url === "/tokenize") return sendJson(res, 200, tokenizeRoute(await readBody(req)));
    throw new HttpError(404, `no route ${req.method} ${url}`);
  } catch (e) {
    if (!(e instanceof HttpError)) console.error("llama_server:", e);
    sendError(res, e);
  }
});
server.keepAliveTimeout = 60000;
server.listen(args.port, "127.0.0.1", () => {
  const port = server.address().port;
  if (args.portFile) fs.writeFileSync(args.portFile, `${port}\n`);
  process.stdout.write(`llama_server: listening on http://127.0.0.1:${port}\n`);
});
const stop = () => server.close(() => process.exit(0)) && setTimeout(() => process.exit(0), 2000).unref();
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
