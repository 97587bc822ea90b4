// Loads the reference HF tokenizers (Rust core through the @anush008/tokenizers N-API binding)
// from the reference install (scripts/install_ref.sh), shared by the golden and benchmark scripts.
// Where the modules are: $REF_NODE_MODULES, else $REF_PREFIX/node_modules, else .cache/ref/node_modules
// of this clone.

// Single-threaded and deterministic: must be set before the native module starts its thread pool.
process.env.TOKENIZERS_PARALLELISM ??= "false";
process.env.RAYON_NUM_THREADS ??= "1";

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export function refNodeModules() {
  const dir = process.env.REF_NODE_MODULES ||
    path.join(process.env.REF_PREFIX || path.join(root, ".cache", "ref"), "node_modules");
  if (!fs.existsSync(dir)) throw new Error(`no reference modules in ${dir}: run scripts/install_ref.sh`);
  return dir;
}

const PACKAGE = "@anush008/tokenizers";

export function loadHfTokenizerClass() {
  const req = createRequire(path.join(refNodeModules(), "..", "resolve-from-here.js"));
  return req(PACKAGE).Tokenizer;
}

// "@anush008/tokenizers 0.6.0": written into golden headers so a change of reference shows in diffs.
export function hfVersion() {
  const pj = path.join(refNodeModules(), PACKAGE, "package.json");
  return `${PACKAGE} ${JSON.parse(fs.readFileSync(pj, "utf8")).version}`;
}

// Every message content of data/jmtbench/records.jsonl.gz in file order (record by record,
// message by message), as {record, message, text}.
export function mtbenchMessages(recordsGz) {
  const zlib = createRequire(import.meta.url)("node:zlib");
  const lines = zlib.gunzipSync(fs.readFileSync(recordsGz)).toString("utf8").split("\n");
  const out = [];
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    const rec = JSON.parse(line);
    if (!Array.isArray(rec.prompt)) throw new Error(`${recordsGz}: line ${i + 1}: no "prompt" array`);
    rec.prompt.forEach((m, j) => {
      if (typeof m.content !== "string") throw new Error(`${recordsGz}: line ${i + 1}: prompt[${j}].content is not a string`);
      out.push({ record: rec.id, message: j, text: m.content });
    });
  });
  return out;
}
