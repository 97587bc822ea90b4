#!/usr/bin/python3
"""Renders the MT-Bench prompts with Python Jinja2 set up as transformers sets it up (template
compiled once) and prints one JSON line: microseconds per render (median of passes), MB/s.
  /usr/bin/python3 template_py_jinja2.py <tokenizer_config.json> <records.jsonl.gz> <field> <passes> <date>"""
import gzip, json, os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import make_chat_goldens as ref

config_path, input_path, field, passes, date = sys.argv[1:6]
ref.PINNED_DATE = date
with open(config_path, encoding="utf-8") as f:
    cfg = json.load(f)
r = ref.Renderer(ref.make_env(), cfg)
opener = gzip.open if input_path.endswith(".gz") else open
with opener(input_path, "rt", encoding="utf-8") as f:
    rows = [json.loads(l)[field] for l in f if l.strip()]
ok, nbytes = [], 0
for m in rows:
    text, err = r.render(m, False, {})
    if err is None:
        ok.append(m)
        nbytes += len(text.encode())
times = []
for _ in range(int(passes)):
    t0 = time.perf_counter()
    for m in ok:
        r.render(m, False, {})
    times.append(time.perf_counter() - t0)
times.sort()
med = times[len(times) // 2]
print(json.dumps({"renders": len(ok), "bytes": nbytes, "us_per_render": med * 1e6 / len(ok), "mb_per_s": nbytes / med / 1e6}))
