#!/usr/bin/env node
// How far @huggingface/jinja agrees with the Python Jinja2 goldens of data/chat/goldens/ (which the
// project's engine matches byte for byte): every template of index.json, every conversation of
// data/chat/conversations.jsonl (+ the template's own example) and every MT-Bench record.
//
//   node scripts/ref/crosscheck_hf_jinja.mjs [--markdown]
//
// A case agrees when both render the same bytes, or both refuse it (error messages are not compared:
// the engines word them differently). Prints one line per template and the totals. Env as the other
// reference scripts (REF_NODE_MODULES / REF_PREFIX; OVERHEAD_MODELS for the tokenizer sets).
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { fileURLToPath } from "node:url";
import { textDigest } from "./ids_digest.mjs";
import { loadHfJinja, pinClock, specialTokens, templateSource } from "./hf_jinja.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const data = path.join(root, "data");
const models = process.env.OVERHEAD_MODELS || path.join(root, "models");
const goldens = path.join(data, "chat", "goldens");
const markdown = process.argv.includes("--markdown");

const readLines = (p) => {
  let raw = fs.readFileSync(p);
  if (p.endsWith(".gz")) raw = zlib.gunzipSync(raw);
  return raw.toString("utf8").split("\n").filter((l) => l.trim() !== "");
};

const index = JSON.parse(fs.readFileSync(path.join(goldens, "index.json"), "utf8"));
pinClock(index.pinned_date);
const { Template, version } = loadHfJinja();
const conversations = new Map(readLines(path.join(data, "chat", "conversations.jsonl")).map((l) => {
  const c = JSON.parse(l);
  return [c.id, c];
}));
const mtbench = readLines(path.join(data, "jmtbench", "records.jsonl.gz")).map((l) => JSON.parse(l).prompt);

function loadConfig(origin) {
  const [kind, where] = [origin.slice(0, origin.indexOf(":")), origin.slice(origin.indexOf(":") + 1)];
  const p = kind === "tokenizer" ? path.join(models, where, "tokenizer_config.json") : path.join(data, "chat", "templates", where);
  return fs.existsSync(p) ? JSON.parse(fs.readFileSync(p, "utf8")) : null;
}

const rows = [];
const total = { conv: 0, convOk: 0, mt: 0, mtOk: 0, compileFail: 0 };
for (const [name, origin] of Object.entries(index.templates)) {
  const cfg = loadConfig(origin);
  if (!cfg) continue;
  let template = null;
  try {
    template = new Template(templateSource(cfg));
  } catch (e) {
    total.compileFail++;
  }
  const tokens = specialTokens(cfg);
  const render = (messages, agp, extra) => {
    if (!template) return { error: "compile" };
    try {
      return { text: template.render({ messages, tools: null, documents: null, add_generation_prompt: agp, ...tokens, ...extra }) };
    } catch (e) {
      return { error: String(e.message) };
    }
  };
  const r = { name, conv: 0, convOk: 0, mt: 0, mtOk: 0 };
  for (const line of readLines(path.join(goldens, "conversations", `${name}.jsonl`))) {
    const g = JSON.parse(line);
    const c = g.id === "example" ? cfg.example : conversations.get(g.id);
    const extra = {};
    for (const [k, v] of Object.entries(c)) if (!["id", "messages", "add_generation_prompt"].includes(k)) extra[k] = v;
    const got = render(c.messages, g.agp, extra);
    r.conv++;
    if ("text" in g ? got.text === g.text : "error" in got) r.convOk++;
  }
  for (const line of readLines(path.join(goldens, "mtbench", `${name}.jsonl.gz`))) {
    const g = JSON.parse(line);
    const got = render(mtbench[g.n - 1], false, {});
    r.mt++;
    if ("error" in g ? "error" in got : got.text !== undefined && Buffer.byteLength(got.text) === g.len && textDigest(got.text) === g.fnv)
      r.mtOk++;
  }
  for (const k of ["conv", "convOk", "mt", "mtOk"]) total[k] += r[k];
  rows.push(r);
}

const pct = (a, b) => (b ? ((100 * a) / b).toFixed(1) : "-");
if (markdown) {
  console.log(`| template | conversations agree | MT-Bench agree |\n|---|---:|---:|`);
  for (const r of rows) console.log(`| ${r.name} | ${r.convOk}/${r.conv} | ${r.mtOk}/${r.mt} |`);
} else {
  for (const r of rows) console.log(`${r.name.padEnd(52)} conversations ${r.convOk}/${r.conv}  MT-Bench ${r.mtOk}/${r.mt}`);
}
const exact = rows.filter((r) => r.convOk === r.conv && r.mtOk === r.mt).length;
console.log(`\n@huggingface/jinja ${version} vs Python Jinja2 ${index.jinja2} goldens: ${rows.length} templates, ` +
  `${exact} agree on every case, ${total.compileFail} fail to compile; conversations ${total.convOk}/${total.conv} ` +
  `(${pct(total.convOk, total.conv)}%), MT-Bench ${total.mtOk}/${total.mt} (${pct(total.mtOk, total.mt)}%)`);
