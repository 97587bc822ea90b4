#!/usr/bin/python3
"""Regenerates the chat-template goldens in data/chat/goldens/ from the reference: Python Jinja2
set up the way transformers' apply_chat_template sets it up (ImmutableSandboxedEnvironment,
trim_blocks, lstrip_blocks, the loopcontrols extension and transformers' {% generation %} tag,
tojson with ensure_ascii=False / indent / sort_keys=False, raise_exception, strftime_now).
strftime_now is pinned to PINNED_DATE so that renders are reproducible.

Run with Debian's Jinja2:  /usr/bin/python3 scripts/make_chat_goldens.py [NAME ...]
With names, only those templates' goldens are rewritten (index.json always lists every template);
the .gz files carry no timestamp, so an unchanged golden regenerates byte-identical.
Templates: the tokenizer sets in $OVERHEAD_MODELS (default: models/ of the clone) and the fixtures
in data/chat/templates/*.json. Inputs: data/chat/conversations.jsonl (each with and without
add_generation_prompt), each fixture's own example, and the MT-Bench prompts
(data/jmtbench/records.jsonl.gz, field "prompt", add_generation_prompt=False as the seed ran it).

Outputs:
  data/chat/goldens/conversations/<template>.jsonl   {"id", "agp", "text"} or {"id", "agp", "error"}
  data/chat/goldens/mtbench/<template>.jsonl.gz      {"n", "len", "fnv"} per record ("text" for every
                                                     SAMPLE_EVERY-th) or {"n", "error"}
  data/chat/goldens/index.json                       template name -> where its source comes from
len is the UTF-8 byte length; fnv is FNV-1a 64 of the UTF-8 bytes as 16 hex digits.
"""
import gzip
import io
import json
import os
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "data")
MODELS = os.environ.get("OVERHEAD_MODELS", os.path.join(ROOT, "models"))
OUT = os.path.join(DATA, "chat", "goldens")
PINNED_DATE = "2025-01-15"
SAMPLE_EVERY = 400
TOKEN_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")

# Tokenizer sets whose tokenizer_config.json carries a chat template: golden name -> folder.
TOKENIZER_TEMPLATES = {
    "llama-3.3-70b-instruct": "llama-3.3-70b-instruct",
    "gemma-2-27b-it": "gemma-2-27b-it",
    "phi-4": "phi-4",
    "gemma-3": "raw/gemma3",
    "llama-3": "raw/llama3",
    "llama-3.1": "raw/llama3_1",
    "gemini": "raw/gemini",
}


class GenerationTag(jinja2.ext.Extension):
    """transformers' AssistantTracker: {% generation %}...{% endgeneration %} renders its body."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def make_env():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.strptime(PINNED_DATE, "%Y-%m-%d").strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def token_text(t):
    if isinstance(t, str):
        return t
    if isinstance(t, dict) and isinstance(t.get("content"), str):
        return t["content"]
    return None


def template_source(cfg):
    src = cfg.get("chat_template")
    if isinstance(src, list):
        src = next((x["template"] for x in src if x.get("name") == "default"), None)
    return src


def special_tokens(cfg):
    ctx = {}
    for k in TOKEN_KEYS:
        s = token_text(cfg.get(k))
        if s is not None:
            ctx[k] = s
    if isinstance(cfg.get("additional_special_tokens"), list):
        ctx["additional_special_tokens"] = [token_text(x) for x in cfg["additional_special_tokens"]]
    return ctx


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


class Renderer:
    def __init__(self, env, cfg):
        self.tokens = special_tokens(cfg)
        self.compile_error = None
        try:
            self.template = env.from_string(template_source(cfg))
        except jinja2.exceptions.TemplateSyntaxError as e:
            self.compile_error = e.message

    def render(self, messages, agp, extra):
        """(text, None) or (None, error message), as apply_chat_template would see it."""
        if self.compile_error is not None:
            return None, self.compile_error
        ctx = {"messages": messages, "tools": None, "documents": None, "add_generation_prompt": agp}
        ctx.update(self.tokens)
        ctx.update(extra)
        try:
            return self.template.render(**ctx), None
        except Exception as e:  # the message is what the engine must reproduce
            return None, str(e)


def load_templates():
    templates = {}
    for name, folder in TOKENIZER_TEMPLATES.items():
        path = os.path.join(MODELS, folder, "tokenizer_config.json")
        with open(path, encoding="utf-8") as f:
            templates[name] = ("tokenizer:" + folder, json.load(f))
    fixtures = os.path.join(DATA, "chat", "templates")
    for fn in sorted(os.listdir(fixtures)):
        if fn.endswith(".json"):
            with open(os.path.join(fixtures, fn), encoding="utf-8") as f:
                templates[fn[:-5]] = ("fixture:" + fn, json.load(f))
    return templates


def split_conversation(rec):
    extra = {k: v for k, v in rec.items() if k not in ("id", "messages")}
    return rec["messages"], extra


def main():
    env = make_env()
    templates = load_templates()
    with open(os.path.join(DATA, "chat", "conversations.jsonl"), encoding="utf-8") as f:
        conversations = [json.loads(l) for l in f if l.strip()]
    with gzip.open(os.path.join(DATA, "jmtbench", "records.jsonl.gz"), "rt", encoding="utf-8") as f:
        mtbench = [json.loads(l)["prompt"] for l in f if l.strip()]
    os.makedirs(os.path.join(OUT, "conversations"), exist_ok=True)
    os.makedirs(os.path.join(OUT, "mtbench"), exist_ok=True)
    only = set(sys.argv[1:])
    unknown = only - set(templates)
    if unknown:
        sys.exit("make_chat_goldens: unknown template name(s): " + ", ".join(sorted(unknown)))
    index = {}
    for name, (origin, cfg) in templates.items():
        index[name] = origin
        if only and name not in only:
            continue
        r = Renderer(env, cfg)
        lines = []
        cases = list(conversations)
        if "example" in cfg:
            cases.append(dict(cfg["example"], id="example"))
        for rec in cases:
            messages, extra = split_conversation(rec)
            fixed_agp = extra.pop("add_generation_prompt", None)
            for agp in ([fixed_agp] if fixed_agp is not None else [False, True]):
                text, err = r.render(messages, agp, extra)
                row = {"id": rec["id"], "agp": agp}
                row.update({"text": text} if err is None else {"error": err})
                lines.append(json.dumps(row, ensure_ascii=False))
        with open(os.path.join(OUT, "conversations", name + ".jsonl"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        ok = 0
        with gzip.GzipFile(os.path.join(OUT, "mtbench", name + ".jsonl.gz"), "wb", compresslevel=9, mtime=0) as raw, \
                io.TextIOWrapper(raw, encoding="utf-8") as f:
            for n, messages in enumerate(mtbench, 1):
                text, err = r.render(messages, False, {})
                if err is not None:
                    row = {"n": n, "error": err}
                else:
                    ok += 1
                    b = text.encode("utf-8")
                    row = {"n": n, "len": len(b), "fnv": fnv1a64(b)}
                    if n % SAMPLE_EVERY == 1:
                        row["text"] = text
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{name:50} {len(lines):4} conversation renders, MT-Bench {ok}/{len(mtbench)} ok", file=sys.stderr)
    with open(os.path.join(OUT, "index.json"), "w", encoding="utf-8") as f:
        json.dump({"jinja2": jinja2.__version__, "pinned_date": PINNED_DATE, "templates": index}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
