#!/usr/bin/python3
"""Regenerates data/chat/goldens/expressions.jsonl, the expected output of every template in
data/chat/expressions.txt, from the reference: Python Jinja2 set up as transformers'
apply_chat_template sets it up (the environment of scripts/make_chat_goldens.py).

Run with Debian's Jinja2:  /usr/bin/python3 scripts/make_chat_expr_goldens.py

The first output line is {"context": ...}, the variables every template sees; then one line per
template, {"template", "text"} or {"template", "error"} where the reference fails to compile or
to render (error is the reference's exception as "Type: message", for the reader: the test
checks only that the engine fails too).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_chat_goldens import DATA, make_env  # noqa: E402

CONTEXT = {
    "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi <there>"},
                 {"role": "assistant", "content": "Hello."}],
    "d": {"a": 1, "b": "two"},
}


def main():
    env = make_env()
    src = os.path.join(DATA, "chat", "expressions.txt")
    out_path = os.path.join(DATA, "chat", "goldens", "expressions.jsonl")
    rows = [json.dumps({"context": CONTEXT}, ensure_ascii=False)]
    with open(src, encoding="utf-8") as f:
        for line in f:
            template = line.rstrip("\n")
            if not template or template.startswith("#"):
                continue
            try:
                row = {"template": template, "text": env.from_string(template).render(**CONTEXT)}
            except Exception as e:  # the reference's failure is the expected result
                row = {"template": template, "error": f"{type(e).__name__}: {e}"}
            rows.append(json.dumps(row, ensure_ascii=False))
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")
    print(f"{len(rows) - 1} templates -> {out_path}")


if __name__ == "__main__":
    main()
