// @huggingface/jinja from the reference install (scripts/install_ref.sh), set up as the project's
// reference scripts use it: the template of a tokenizer_config.json, its special tokens, a pinned clock.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { refNodeModules } from "./hf_tokenizers.mjs";

export function loadHfJinja() {
  const req = createRequire(path.join(refNodeModules(), "..", "resolve-from-here.js"));
  const { Template } = req("@huggingface/jinja");
  const pj = path.join(refNodeModules(), "@huggingface/jinja/package.json");
  return { Template, version: JSON.parse(fs.readFileSync(pj, "utf8")).version };
}

// The chat template of a tokenizer_config.json (the "default" one when it holds a list).
export function templateSource(cfg) {
  let src = cfg.chat_template;
  if (Array.isArray(src)) src = (src.find((t) => t.name === "default") || {}).template;
  if (typeof src !== "string") throw new Error("no chat_template");
  return src;
}

// @huggingface/jinja's strftime_now reads `new Date()` (a template may not override the global), so
// the clock itself is pinned to local midnight of --date, as the project's --date pins it.
export function pinClock(date) {
  const [y, m, d] = date.split("-").map(Number);
  const RealDate = Date;
  const pinned = new RealDate(y, m - 1, d).getTime();
  globalThis.Date = class extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(pinned);
      else super(...args);
    }
    static now() { return pinned; }
  };
}

export function specialTokens(cfg) {
  const out = {};
  for (const k of ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]) {
    const v = cfg[k];
    if (typeof v === "string") out[k] = v;
    else if (v && typeof v.content === "string") out[k] = v.content;
  }
  if (Array.isArray(cfg.additional_special_tokens))
    out.additional_special_tokens = cfg.additional_special_tokens.map((x) => (typeof x === "string" ? x : x.content));
  return out;
}

