#!/usr/bin/env node
// The HF side of bench/tokenize_vs_hf.sh: HF tokenizers (Rust core through @anush008/tokenizers),
// single-threaded (TOKENIZERS_PARALLELISM=false, RAYON_NUM_THREADS=1), one encodeBatch() call over
// all texts per pass, add_special_tokens=true; the tokenizer is loaded once, one warm-up pass
// (timed apart: the fresh process's first pass, first_mb_per_s), then the median of --passes
// timed passes. CPU figures (cpu_mb_per_s, first_cpu_mb_per_s) are the process's CPU time.
//
//   node bench/hf_tokenize_bench.mjs --dir TOKENIZER_DIR --input TEXTS.jsonl [--field text] [--passes 5]
//
// Prints one JSON object with the keys `overhead bench tokenize --json` prints:
// mb_per_s, tokens_per_s, us_per_item, items, bytes, tokens (MB = 10^6 bytes of UTF-8 input).
import fs from "node:fs";
import path from "node:path";
import { loadHfTokenizerClass, hfVersion } from "../scripts/ref/hf_tokenizers.mjs";

function parseArgs(argv) {
  const a = { field: "text", passes: 5 };
  for (let i = 0; i < argv.length; i++) {
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`missing value for ${argv[i]}`);
      return argv[++i];
    };
    switch (argv[i]) {
      case "--dir": a.dir = v(); break;
      case "--input": a.input = v(); break;
      case "--field": a.field = v(); break;
      case "--passes": a.passes = parseInt(v(), 10); break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (!a.dir || !a.input) throw new Error("--dir and --input are required");
  if (!(a.passes > 0)) throw new Error("--passes must be a positive integer");
  return a;
}

const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const texts = fs.readFileSync(a.input, "utf8").split("\n").filter((l) => l !== "").map((l, i) => {
    const t = JSON.parse(l)[a.field];
    if (typeof t !== "string") throw new Error(`${a.input}: line ${i + 1}: field "${a.field}" is not a string`);
    return t;
  });
  const bytes = texts.reduce((s, t) => s + Buffer.byteLength(t, "utf8"), 0);
  const Tokenizer = loadHfTokenizerClass();
  const tok = Tokenizer.fromFile(path.join(a.dir, "tokenizer.json"));
  const opts = { addSpecialTokens: true };
  let tokens = -1;
  const times = [], cpuTimes = [];
  let first = 0, firstCpu = 0;
  for (let p = 0; p <= a.passes; p++) {  // pass 0 warms up
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const encs = await tok.encodeBatch(texts, opts);
    let n = 0;
    for (const e of encs) n += e.getIds().length;
    const dt = Number(process.hrtime.bigint() - t0) / 1e9;
    const c1 = process.cpuUsage(c0);
    const cpu = (c1.user + c1.system) / 1e6;
    if (tokens >= 0 && n !== tokens) throw new Error("token count changed between passes");
    tokens = n;
    if (p > 0) {
      times.push(dt);
      cpuTimes.push(cpu);
    } else {
      first = dt;
      firstCpu = cpu;
    }
  }
  const t = median(times);
  const tc = median(cpuTimes);
  console.log(JSON.stringify({
    impl: hfVersion(), mb_per_s: bytes / t / 1e6, tokens_per_s: tokens / t, us_per_item: (t * 1e6) / texts.length,
    items: texts.length, bytes, tokens, passes: a.passes, cpu_mb_per_s: bytes / tc / 1e6,
    first_mb_per_s: bytes / first / 1e6, first_cpu_mb_per_s: bytes / firstCpu / 1e6,
  }));
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
