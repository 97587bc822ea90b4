// Renders the MT-Bench prompts with @huggingface/jinja (template compiled once) and prints one JSON
// line: microseconds per render (median of passes) and MB/s of output.
//   node template_hf_jinja.mjs <tokenizer_config.json> <records.jsonl.gz> <field> <passes> <date>
import fs from "node:fs";
import zlib from "node:zlib";
import { createRequire } from "node:module";

const [configPath, inputPath, field, passesArg] = process.argv.slice(2);
const require = createRequire(process.env.REF_NODE_MODULES + "/");
const { Template } = require("@huggingface/jinja");

const cfg = JSON.parse(fs.readFileSync(configPath, "utf8"));
let src = cfg.chat_template;
if (Array.isArray(src)) src = src.find((t) => t.name === "default").template;
const tokens = {};
for (const k of ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]) {
  const v = cfg[k];
  if (typeof v === "string") tokens[k] = v;
  else if (v && typeof v.content === "string") tokens[k] = v.content;
}
let raw = fs.readFileSync(inputPath);
if (inputPath.endsWith(".gz")) raw = zlib.gunzipSync(raw);
const rows = raw.toString("utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l)[field]);
const template = new Template(src);
const render = (m) => template.render({ messages: m, tools: null, documents: null, add_generation_prompt: false, ...tokens });
const ok = [];
let bytes = 0;
for (const m of rows) {
  try {
    bytes += Buffer.byteLength(render(m));
    ok.push(m);
  } catch (e) {}
}
const times = [];
for (let p = 0; p < Number(passesArg); p++) {
  const t0 = process.hrtime.bigint();
  for (const m of ok) render(m);
  times.push(Number(process.hrtime.bigint() - t0) / 1e9);
}
times.sort((a, b) => a - b);
const med = times[Math.floor(times.length / 2)];
console.log(JSON.stringify({ renders: ok.length, bytes, us_per_render: (med * 1e6) / ok.length, mb_per_s: bytes / med / 1e6 }));
