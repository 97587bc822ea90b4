// The real engine tokenizes exactly as `overhead` does: the tiny model's GGUF carries the Llama-3
// tokenizer (scripts/make_tiny_gguf.py), and llama.cpp's ids for every text of the tokenizer corpus
// (data/tok/corpus.jsonl) equal `overhead tokenize`'s; for the chat conversations
// (data/chat/conversations.jsonl) rendered with the generation prompt, the engine's ids of the
// rendered text equal `overhead tokenize --chat`'s, so the engine's usage.prompt_tokens is our
// token_count.
//
// Known difference, asserted as such: texts with letters of the scripts Unicode 16.0 added (Todhri,
// Garay, Sunuwar, Kirat Rai, Ol Onal; the corpus has six) split differently, because llama.cpp's
// Unicode tables predate them and `overhead` follows Unicode 16 as HF's tokenizers do.
import {test, before, after} from "node:test";
import assert from "node:assert/strict";
import {execFileSync} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {startLlamaEngine} from "./llama_engine.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const overhead = process.env.OVERHEAD_BINARY;
const tokenizer = path.join(process.env.OVERHEAD_MODELS_DIR || path.join(root, "models"), "llama-3.3-70b-instruct");

let engine;
before(async () => {
  engine = await startLlamaEngine({sequences: 1});
});
after(async () => engine?.stop());

// Our lines of output; a line that failed is an {"error"} line (the exit code is then 1).
function ours(args) {
  let out;
  try {
    out = execFileSync(overhead, args, {maxBuffer: 256 << 20}).toString();
  } catch (e) {
    if (e.status !== 1 || !e.stdout) throw e;
    out = e.stdout.toString();
  }
  return out.trimEnd().split("\n").map((l) => JSON.parse(l));
}

async function engineIds(texts) {
  const res = await fetch(`${engine.url}/tokenize`, {method: "POST", body: JSON.stringify({content: texts, add_special: true})});
  assert.equal(res.status, 200);
  return (await res.json()).tokens;
}

const unicode16 = /[\u{105C0}-\u{105FF}\u{10D40}-\u{10D8F}\u{11BC0}-\u{11BFF}\u{16D40}-\u{16D7F}\u{1E5D0}-\u{1E5FF}]/u;

// The lines (1-based) where the engine's ids differ from ours.
async function differing(texts, want, what) {
  assert.equal(want.length, texts.length);
  const got = await engineIds(texts);
  const differ = [];
  for (let i = 0; i < texts.length; ++i) {
    assert.ok(want[i].ids, `${what} line ${i + 1}: ${JSON.stringify(want[i])}`);
    if (JSON.stringify(got[i]) !== JSON.stringify(want[i].ids)) differ.push(i + 1);
  }
  return differ;
}

test("the tokenizer corpus: the engine's ids are ours", async () => {
  const corpus = path.join(root, "data/tok/corpus.jsonl");
  const texts = fs.readFileSync(corpus, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l).text);
  const differ = await differing(texts, ours(["tokenize", "--tokenizer", tokenizer, "--input", corpus]), "corpus");
  const newScripts = texts.map((t, i) => [t, i + 1]).filter(([t]) => unicode16.test(t)).map(([, line]) => line);
  assert.ok(texts.length > 1000 && newScripts.length <= 10);
  assert.deepEqual(differ.filter((line) => !newScripts.includes(line)), [],
    "only texts with Unicode 16 letters may differ: " + differ.map((l) => `${l}: ${JSON.stringify(texts[l - 1].slice(0, 60))}`).join("; "));
});

test("rendered conversations: the engine's ids are tokenize --chat's", async () => {
  const conversations = path.join(root, "data/chat/conversations.jsonl");
  const common = ["--tokenizer", tokenizer, "--input", conversations, "--add-generation-prompt", "--date", "2026-01-15"];
  const rendered = ours(["template", ...common]);
  const ok = rendered.map((r, i) => [r, i]).filter(([r]) => typeof r.text === "string").map(([, i]) => i);
  assert.ok(ok.length >= 20, "most conversations render");
  const ids = ours(["tokenize", "--chat", ...common]);
  assert.deepEqual(await differing(ok.map((i) => rendered[i].text), ok.map((i) => ids[i]), "conversations"), []);
});
