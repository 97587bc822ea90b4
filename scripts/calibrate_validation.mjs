// Regenerates tests/engine/fixtures/calibrate_validation.{json,md}: `overhead calibrate` against
// the real engine of the tests (llama.cpp through tests/engine/llama_server.mjs, the tiny
// random-weight model, this machine's CPU), then configurations the calibration did not run
// (other concurrency levels, prompt and output lengths) predicted by `overhead cost
// --engine-profile` and measured on the same engine; and a second calibration, whose predictions
// must agree with the first's (the fit's stability). The machine's load is recorded before and
// after each phase.
//
//   node scripts/calibrate_validation.mjs --overhead build/overhead \
//     --model build/engine/tiny-llama3.gguf --tokenizer models/llama-3.3-70b-instruct \
//     [--out tests/engine/fixtures] [--budget-s 90] [--slots 8] [--seconds 20] [--passes 4]
//     [--engine-warm-up-s 120]
//
// Needs LLAMA_ENGINE_NODE_MODULES (scripts/install_llama_engine.sh prints it). Each configuration
// runs `concurrency` clients in a closed loop (each sends its next request when its answer ends)
// for --seconds in all, in --passes slices that take turns with the other configurations', each
// after one warm-up request per client, the clients starting spread over a request's time; output
// tokens/s is the sum over clients of the tokens each received over the time it spent, TTFT from
// sending a request to its first token, TPOT the time after the first token over the tokens after
// it. Before the first calibration the freshly started
// engine serves the same mix of lone prompts and waves for --engine-warm-up-s, unmeasured (a
// calibration of that budget whose profile is thrown away): the tests' engine answers lone prompts
// 4-8 ms slower for its first 100 s or so of such a mix and about 3 ms after, so without it the
// first calibration measured a different engine from the configurations and the second one.
import {execFileSync} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {startLlamaEngine} from "../tests/engine/llama_engine.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = {out: path.join(here, "..", "tests", "engine", "fixtures"), budget: 90, slots: 8, seconds: 20,
  overhead: "", model: process.env.LLAMA_ENGINE_MODEL ?? "", tokenizer: "", threads: 1, passes: 4, engineWarmUp: 120};
for (let i = 2; i < process.argv.length; i += 2) {
  const k = process.argv[i], v = process.argv[i + 1];
  if (k === "--overhead") args.overhead = v;
  else if (k === "--model") args.model = v;
  else if (k === "--tokenizer") args.tokenizer = v;
  else if (k === "--out") args.out = v;
  else if (k === "--budget-s") args.budget = Number(v);
  else if (k === "--slots") args.slots = Number(v);
  else if (k === "--seconds") args.seconds = Number(v);
  else if (k === "--passes") args.passes = Number(v);
  else if (k === "--engine-warm-up-s") args.engineWarmUp = Number(v);
  else throw new Error(`unknown argument ${k}`);
}
if (!args.overhead || !args.model || !args.tokenizer) throw new Error("give --overhead, --model and --tokenizer");

// Calibrated: concurrency 1, 2, 4, 8 at prompts of 32 and 512 tokens and 32 output tokens
// (decode), prompts 16 to 1024 tokens alone with 16 output tokens (prefill, and a lone decode).
// None of these is.
const configs = [
  {concurrency: 3, prompt_tokens: 256, output_tokens: 64},
  {concurrency: 6, prompt_tokens: 128, output_tokens: 48},
  {concurrency: 1, prompt_tokens: 768, output_tokens: 96},
  {concurrency: 5, prompt_tokens: 64, output_tokens: 128},
  {concurrency: 2, prompt_tokens: 384, output_tokens: 80},
  {concurrency: 7, prompt_tokens: 192, output_tokens: 40},
  {concurrency: 8, prompt_tokens: 1024, output_tokens: 48},
];
const targets = {output_tokens_per_s: 0.15, tpot_s_mean: 0.15, ttft_s_mean: 0.25};

const load = () => ({at: new Date().toISOString(), loadavg: os.loadavg().map((x) => Number(x.toFixed(2))), cpus: os.cpus().length});

function calibrate(engine, out, budget = args.budget) {
  const argv = ["calibrate", "--engine", `${engine.baseUrl},model=${engine.modelName}`, "--tokenizer", args.tokenizer,
    "--out", out, "--max-concurrency", String(args.slots), "--budget-s", String(budget)];
  const before = load();
  const summary = execFileSync(args.overhead, argv, {encoding: "utf8", stdio: ["ignore", "pipe", "inherit"]});
  const shown = argv.map((a) => (a === out ? path.relative(process.cwd(), out) : a)).join(" ");
  return {command: `overhead ${shown.replace(engine.baseUrl, "http://127.0.0.1:PORT/v1")}`, summary,
    load_before: before, load_after: load()};
}

function predict(profile, c) {
  const argv = ["cost", "--engine-profile", profile, "--gpu-usd-per-hour", "1", "--e-us", "0,0", "--concurrency",
    String(c.concurrency), "--workload", `in=${c.prompt_tokens},out=${c.output_tokens}`, "--json"];
  const j = JSON.parse(execFileSync(args.overhead, argv, {encoding: "utf8"}));
  return {output_tokens_per_s: j.output_tokens_per_s, tpot_s_mean: j.tpot_s.mean, ttft_s_mean: j.ttft_s.mean};
}

// One streamed request: the stamps of sending, the first token and the end, and the usage.
async function request(engine, prompt, maxTokens) {
  const t0 = performance.now();
  const res = await fetch(`${engine.baseUrl}/completions`, {method: "POST", headers: {"content-type": "application/json"},
    body: JSON.stringify({model: engine.modelName, prompt, max_tokens: maxTokens, stream: true,
      stream_options: {include_usage: true}})});
  if (res.status !== 200) throw new Error(`engine answered ${res.status}: ${await res.text()}`);
  let first = 0, usage = null, buffer = "";
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk, {stream: true});
    let at;
    while ((at = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      if (!event.startsWith("data: ") || event === "data: [DONE]") continue;
      const j = JSON.parse(event.slice(6));
      if (!first && j.choices?.[0]?.text) first = performance.now();
      if (j.usage) usage = j.usage;
    }
  }
  const end = performance.now();
  if (!usage || !first) throw new Error("a stream without usage or without text");
  return {ttft_s: (first - t0) / 1e3, e2e_s: (end - t0) / 1e3, decode_s: (end - first) / 1e3,
    prompt_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens};
}

// One slice of a configuration: `concurrency` clients in a closed loop for `seconds`, each after
// one warm-up request. The clients start one after another, spread over one request's time as
// predicted (`cycle_s`), as the clients of a loop that has run for a while are: started together
// they stay in step on an engine that decodes every running sequence in each step (their requests
// end in the same step and their prompts meet again), and a loop of 7 clients, 192 -> 40 tokens,
// had a mean TTFT of 77 ms in its first 5 s and 19 to 24 ms after 15 s; started spread over
// 300 ms, 19 to 26 ms from the start. Returns each client's requests and the seconds it spent on them.
async function measureSlice(engine, c, seconds, cycle_s) {
  const prompt = Array(c.prompt_tokens - 1).fill("hello").join(" ");  // + the BOS
  return Promise.all(Array.from({length: c.concurrency}, async (_, i) => {
    await new Promise((resolve) => setTimeout(resolve, (1e3 * cycle_s * i) / c.concurrency));
    await request(engine, prompt, c.output_tokens);
    const done = [];
    const start = performance.now();
    while (performance.now() - start < seconds * 1e3) done.push(await request(engine, prompt, c.output_tokens));
    return {done, seconds: (performance.now() - start) / 1e3};
  }));
}

// A configuration's figures over its slices: output tokens/s is the sum over clients of the tokens
// each received over the time it spent (slices added), TTFT and TPOT the means over requests.
function summarize(slices) {
  const clients = slices.flat();
  const all = clients.flatMap((x) => x.done);
  const mean = (f) => all.reduce((s, r) => s + f(r), 0) / all.length;
  const perClient = clients.length / slices.length;
  return {
    requests: all.length,
    slices: slices.length,
    prompt_tokens_seen: [...new Set(all.map((r) => r.prompt_tokens))],
    output_tokens_mean: mean((r) => r.output_tokens),
    output_tokens_per_s: perClient * clients.reduce((s, x) => s + x.done.reduce((t, r) => t + r.output_tokens, 0), 0) /
      clients.reduce((s, x) => s + x.seconds, 0),
    tpot_s_mean: mean((r) => r.decode_s / Math.max(1, r.output_tokens - 1)),
    ttft_s_mean: mean((r) => r.ttft_s),
  };
}

const rel = (p, m) => (p - m) / m;

fs.mkdirSync(args.out, {recursive: true});
const profileA = path.join(args.out, "calibrate_validation_profile.json");
const profileB = path.join(args.out, "calibrate_validation_profile_b.json");
const engine = await startLlamaEngine({model: args.model, sequences: args.slots, threads: args.threads});
try {
  let engineWarmUp = null;
  if (args.engineWarmUp > 0) {
    const thrownAway = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "calibrate-warm-up-")), "profile.json");
    const w = calibrate(engine, thrownAway, args.engineWarmUp);
    fs.rmSync(path.dirname(thrownAway), {recursive: true, force: true});
    engineWarmUp = {seconds: args.engineWarmUp, load_before: w.load_before, load_after: w.load_after};
    process.stderr.write(`engine warmed up for ${args.engineWarmUp} s\n`);
  }
  const calibrationA = calibrate(engine, profileA);
  process.stderr.write(calibrationA.summary);
  // Each configuration is measured in --passes slices, the configurations taking turns, so that
  // all of them see the shared machine's slow and fast minutes alike.
  const slices = configs.map(() => []), loads = configs.map(() => []);
  const cycles = configs.map((c) => {
    const p = predict(profileA, c);
    return p.ttft_s_mean + (c.output_tokens - 1) * p.tpot_s_mean;
  });
  for (let pass = 0; pass < args.passes; ++pass)
    for (const [i, c] of configs.entries()) {
      const before = load();
      slices[i].push(await measureSlice(engine, c, args.seconds / args.passes, cycles[i]));
      loads[i].push({before, after: load()});
      process.stderr.write(`pass ${pass + 1}/${args.passes}: x${c.concurrency} ${c.prompt_tokens} -> ${c.output_tokens}\n`);
    }
  const rows = configs.map((c, i) => {
    const predicted = predict(profileA, c);
    const measured = summarize(slices[i]);
    const error = Object.fromEntries(Object.keys(targets).map((k) => [k, rel(predicted[k], measured[k])]));
    // The highest 1-minute load average seen before any of its slices.
    const worst = loads[i].reduce((w, l) => (l.before.loadavg[0] > w.before.loadavg[0] ? l : w));
    return {...c, predicted, measured, error, load_before: worst.before, load_after: loads[i].at(-1).after};
  });
  for (const r of rows) process.stderr.write(`${JSON.stringify(r)}\n`);
  const calibrationB = calibrate(engine, profileB);
  const stability = configs.map((c) => {
    const a = predict(profileA, c), b = predict(profileB, c);
    return {...c, difference: Object.fromEntries(Object.keys(targets).map((k) => [k, rel(b[k], a[k])]))};
  });
  const fixture = {
    what: "overhead calibrate against the tests' llama.cpp engine, then configurations it did not run, predicted and measured",
    regenerate: "node scripts/calibrate_validation.mjs --overhead build/overhead --model build/engine/tiny-llama3.gguf " +
      `--tokenizer models/llama-3.3-70b-instruct --budget-s ${args.budget} --slots ${args.slots} --seconds ${args.seconds} ` +
      `--passes ${args.passes} --engine-warm-up-s ${args.engineWarmUp}`,
    host: {hostname: os.hostname(), cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model ?? ""},
    engine: {server: "tests/engine/llama_server.mjs", model: "tiny-llama3 (scripts/make_tiny_gguf.py)", slots: args.slots,
      threads: args.threads},
    targets,
    engine_warm_up: engineWarmUp,
    profile: path.basename(profileA),
    calibration: {command: calibrationA.command, load_before: calibrationA.load_before, load_after: calibrationA.load_after},
    configurations: rows,
    stability: {profile: path.basename(profileB), command: calibrationB.command, load_before: calibrationB.load_before,
      load_after: calibrationB.load_after, target: 0.05, configurations: stability},
  };
  fs.writeFileSync(path.join(args.out, "calibrate_validation.json"), `${JSON.stringify(fixture, null, 2)}\n`);
  const pct = (x) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)}%`;
  const md = [
    "# `overhead calibrate`: predicted against measured",
    "",
    `Generated by \`${fixture.regenerate}\` on ${calibrationA.load_before.at} (${fixture.host.cpus} CPUs, ` +
      `load average ${calibrationA.load_before.loadavg.join(", ")} at the start). The engine: ${fixture.engine.model} on ` +
      `llama.cpp, ${args.slots} slots, ${args.threads} thread` +
      (engineWarmUp ? `, warmed up for ${engineWarmUp.seconds} s before the first calibration (unmeasured)` : "") +
      `. Targets: output tokens/s and mean TPOT within 15%, mean TTFT within 25%.`,
    "",
    "| concurrency | prompt | output | tokens/s measured | predicted | error | TPOT ms measured | predicted | error | TTFT ms measured | predicted | error | load |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.concurrency} | ${r.prompt_tokens} | ${r.output_tokens} | ${r.measured.output_tokens_per_s.toFixed(1)} | ` +
      `${r.predicted.output_tokens_per_s.toFixed(1)} | ${pct(r.error.output_tokens_per_s)} | ${(r.measured.tpot_s_mean * 1e3).toFixed(2)} | ` +
      `${(r.predicted.tpot_s_mean * 1e3).toFixed(2)} | ${pct(r.error.tpot_s_mean)} | ${(r.measured.ttft_s_mean * 1e3).toFixed(1)} | ` +
      `${(r.predicted.ttft_s_mean * 1e3).toFixed(1)} | ${pct(r.error.ttft_s_mean)} | ${r.load_before.loadavg[0]} |`),
    "",
    `Stability: a second calibration (${calibrationB.load_before.at}, load ${calibrationB.load_before.loadavg.join(", ")}) ` +
      "predicts the same configurations; the largest difference from the first: " +
      `${pct(Math.max(...stability.flatMap((s) => Object.values(s.difference).map(Math.abs))))} (target 5%).`,
    "",
  ].join("\n");
  fs.writeFileSync(path.join(args.out, "calibrate_validation.md"), md);
  process.stdout.write(md);
} finally {
  await engine.stop();
}
