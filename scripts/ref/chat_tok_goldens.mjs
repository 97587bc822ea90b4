#!/usr/bin/env node
// Reference for `overhead tokenize --chat`: renders each conversation with the tokenizer's chat
// template through @huggingface/jinja (compiled once) and encodes the text with HF tokenizers,
// both ways the project offers:
//   ids            = tokenizer(apply_chat_template(msgs, tokenize=False), add_special_tokens=True)  (the seed)
//   ids_no_special = the same text with add_special_tokens=False  (apply_chat_template(tokenize=True))
// Run by scripts/make_chat_tok_goldens.sh:
//
//   node scripts/ref/chat_tok_goldens.mjs --dir TOKENIZER_DIR --input FILE.jsonl[.gz] --field prompt
//        [--date 2024-07-26] [--add-generation-prompt] [--full]
//
// Prints a header line {"reference", "tokenizer", "field", "add_generation_prompt", "date"} and then,
// per input line, {"n", "count", "ids", "count_no_special", "ids_no_special"} where ids are digests
// (src/util/hash.hpp ids_digest), or with --full the id arrays themselves; a line whose JSON, field
// or render fails gives {"n", "stage": "input" or "render", "error"} with the reference's message (a
// render error is the template's own message, e.g. raise_exception's).
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { loadHfTokenizerClass, hfVersion } from "./hf_tokenizers.mjs";
import { idsDigest } from "./ids_digest.mjs";
import { loadHfJinja, pinClock, specialTokens, templateSource } from "./hf_jinja.mjs";

function parseArgs(argv) {
  const a = { field: "messages", date: "2024-07-26", agp: false, full: false };
  for (let i = 0; i < argv.length; i++) {
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`missing value for ${argv[i]}`);
      return argv[++i];
    };
    switch (argv[i]) {
      case "--dir": a.dir = v(); break;
      case "--input": a.input = v(); break;
      case "--field": a.field = v(); break;
      case "--date": a.date = v(); break;
      case "--add-generation-prompt": a.agp = true; break;
      case "--full": a.full = true; break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  for (const k of ["dir", "input"]) if (!a[k]) throw new Error(`--${k} is required`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(a.date)) throw new Error(`--date ${a.date}: not YYYY-MM-DD`);
  return a;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const { Template, version: jinjaVersion } = loadHfJinja();
  const cfg = JSON.parse(fs.readFileSync(path.join(a.dir, "tokenizer_config.json"), "utf8"));
  const template = new Template(templateSource(cfg));
  const tokens = specialTokens(cfg);
  pinClock(a.date);
  const tok = loadHfTokenizerClass().fromFile(path.join(a.dir, "tokenizer.json"));

  let raw = fs.readFileSync(a.input);
  if (a.input.endsWith(".gz")) raw = zlib.gunzipSync(raw);
  const lines = raw.toString("utf8").split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();

  const out = [JSON.stringify({
    reference: `@huggingface/jinja ${jinjaVersion} + ${hfVersion()}`, tokenizer: path.basename(a.dir),
    field: a.field, add_generation_prompt: a.agp, date: a.date,
  })];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const n = i + 1;
    let ctx;
    try {
      const rec = JSON.parse(line);
      const f = rec[a.field];
      if (Array.isArray(f)) ctx = { messages: f };
      else if (f && typeof f === "object" && Array.isArray(f.messages)) ctx = { ...f };
      else throw new Error(`field "${a.field}" holds no messages`);
    } catch (e) {
      out.push(JSON.stringify({ n, stage: "input", error: e.message }));
      continue;
    }
    let text;
    try {
      text = template.render({
        tools: null, documents: null, add_generation_prompt: a.agp, ...tokens, ...ctx,
      });
    } catch (e) {
      out.push(JSON.stringify({ n, stage: "render", error: e.message }));
      continue;
    }
    const ids = Array.from((await tok.encode(text, null, { addSpecialTokens: true })).getIds());
    const ns = Array.from((await tok.encode(text, null, { addSpecialTokens: false })).getIds());
    out.push(JSON.stringify(a.full
      ? { n, ids, ids_no_special: ns }
      : { n, count: ids.length, ids: idsDigest(ids), count_no_special: ns.length, ids_no_special: idsDigest(ns) }));
  }
  fs.writeSync(1, out.join("\n") + "\n");
}

main().catch((e) => {
  console.error(`chat_tok_goldens: ${e.message}`);
  process.exit(1);
});
