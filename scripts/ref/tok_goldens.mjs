#!/usr/bin/env node
// Writes the tokenizer goldens of one tokenizer from the HF reference (run by
// scripts/make_tok_goldens.sh, which names every tokenizer and compresses the output):
//
//   node scripts/ref/tok_goldens.mjs --name NAME --dir TOKENIZER_DIR --corpus data/tok/corpus.jsonl
//        --records data/jmtbench/records.jsonl.gz --out OUT_DIR [--sample-every 50]
//
// OUT_DIR/NAME.corpus.jsonl        per corpus line: {"line", "text_digest", "ids" (add_special_tokens=true),
//                                  "ids_no_special", "decoded", "decoded_skip_special"}; the decodes are of
//                                  "ids", i.e. tokenizer.decode(ids, skip_special_tokens=false/true).
// OUT_DIR/NAME.mtbench.tsv         "#" header lines, then per MT-Bench message "count<TAB>digest" of its
//                                  ids (add_special_tokens=true); digest as src/util/hash.hpp ids_digest.
// OUT_DIR/NAME.mtbench-sample.jsonl  full ids of every Nth message: {"index", "record", "message", "ids"}.
import fs from "node:fs";
import path from "node:path";
import { loadHfTokenizerClass, hfVersion, mtbenchMessages } from "./hf_tokenizers.mjs";
import { idsDigest } from "./ids_digest.mjs";

function parseArgs(argv) {
  const a = { sampleEvery: 50 };
  for (let i = 0; i < argv.length; i++) {
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`missing value for ${argv[i]}`);
      return argv[++i];
    };
    switch (argv[i]) {
      case "--name": a.name = v(); break;
      case "--dir": a.dir = v(); break;
      case "--corpus": a.corpus = v(); break;
      case "--records": a.records = v(); break;
      case "--out": a.out = v(); break;
      case "--sample-every": a.sampleEvery = parseInt(v(), 10); break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  for (const k of ["name", "dir", "corpus", "records", "out"]) if (!a[k]) throw new Error(`--${k} is required`);
  if (!(a.sampleEvery > 0)) throw new Error("--sample-every must be a positive integer");
  return a;
}

// FNV-1a 64 of the UTF-8 bytes of a text (overhead::util::text_digest), to detect a corpus line
// that changed without the goldens being regenerated.
function textDigest(text) {
  const bytes = Buffer.from(text, "utf8");
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, "0");
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const Tokenizer = loadHfTokenizerClass();
  const tok = Tokenizer.fromFile(path.join(a.dir, "tokenizer.json"));
  const withSpecial = { addSpecialTokens: true };
  const noSpecial = { addSpecialTokens: false };
  fs.mkdirSync(a.out, { recursive: true });

  // The limb arithmetic of idsDigest checked against the plain BigInt FNV of textDigest.
  if (idsDigest([]) !== "cbf29ce484222325") throw new Error("idsDigest([]) is wrong");
  for (let n = 1; n < 2000; n += 97) {
    const ids = Array.from({ length: n }, (_, k) => (k * 2654435761) % 200000);
    if (idsDigest(ids) !== textDigest(ids.join(","))) throw new Error("idsDigest and textDigest disagree");
  }

  // 1. The corpus, full ids and decodes.
  const corpus = fs.readFileSync(a.corpus, "utf8").split("\n").filter((l) => l !== "");
  const out = [];
  for (let i = 0; i < corpus.length; i++) {
    const text = JSON.parse(corpus[i]).text;
    if (typeof text !== "string") throw new Error(`${a.corpus}: line ${i + 1}: "text" is not a string`);
    const ids = (await tok.encode(text, null, withSpecial)).getIds();
    const idsNo = (await tok.encode(text, null, noSpecial)).getIds();
    const decoded = await tok.decode(ids, false);
    const decodedSkip = await tok.decode(ids, true);
    out.push(JSON.stringify({ line: i + 1, text_digest: textDigest(text), ids, ids_no_special: idsNo,
                              decoded, decoded_skip_special: decodedSkip }));
  }
  fs.writeFileSync(path.join(a.out, `${a.name}.corpus.jsonl`), out.join("\n") + "\n");

  // 2. Every MT-Bench message: count + digest, and full ids for a sample.
  const msgs = mtbenchMessages(a.records);
  const tsv = [
    `# tokenizer=${a.name} reference=${hfVersion()} add_special_tokens=true`,
    `# one line per message content of data/jmtbench/records.jsonl.gz (record by record, message by message): count<TAB>ids_digest`,
  ];
  const sample = [];
  const CHUNK = 512;
  for (let start = 0; start < msgs.length; start += CHUNK) {
    const part = msgs.slice(start, start + CHUNK);
    const encs = await tok.encodeBatch(part.map((m) => m.text), withSpecial);
    encs.forEach((e, k) => {
      const ids = e.getIds();
      const index = start + k;
      tsv.push(`${ids.length}\t${idsDigest(ids)}`);
      if (index % a.sampleEvery === 0) {
        sample.push(JSON.stringify({ index, record: part[k].record, message: part[k].message, ids }));
      }
    });
  }
  fs.writeFileSync(path.join(a.out, `${a.name}.mtbench.tsv`), tsv.join("\n") + "\n");
  fs.writeFileSync(path.join(a.out, `${a.name}.mtbench-sample.jsonl`), sample.join("\n") + "\n");
  console.log(`tok_goldens: ${a.name}: ${corpus.length} corpus lines, ${msgs.length} MT-Bench messages, ${sample.length} sampled`);
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
