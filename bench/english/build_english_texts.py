#!/usr/bin/env python3
"""Builds bench/english/texts.jsonl.gz: an English benchmark corpus shaped like the Japanese
MT-Bench message contents (data/jmtbench/records.jsonl.gz): as many texts, each as long as the
Japanese text at the same position (cut at the next space; the rest opens the next text), about
the same bytes in all.

The English comes from the documentation of a Debian system's packages (all from Debian main, so
free to redistribute), paragraphs de-duplicated, taken round-robin from four kinds of text:
  licenses   /usr/share/common-licenses/* (license texts, verbatim copies permitted)
  copyright  /usr/share/doc/*/copyright   (each package's copyright and license notice)
  changelog  /usr/share/doc/*/changelog.Debian.gz (maintainers' change notes)
  readme     /usr/share/doc/*/{README,NEWS}*  (plain-text package documentation)
Only paragraphs of at least 60 characters, 97% printable ASCII and half letters, are kept.

    python3 bench/english/build_english_texts.py [RECORDS.jsonl.gz] [OUT.jsonl.gz]

The committed file is what benchmarks use; rebuilding on another system gives a similar corpus,
not the same bytes.
"""
import glob
import gzip
import hashlib
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
records = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "data/jmtbench/records.jsonl.gz")
out_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "bench/english/texts.jsonl.gz")


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, OSError, EOFError):
        return ""


def english(p):
    printable = sum(1 for ch in p if ch.isascii() and (ch.isprintable() or ch in "\n\t"))
    return len(p) >= 60 and printable >= 0.97 * len(p) and sum(ch.isalpha() for ch in p) >= 0.5 * len(p)


seen = set()


def paragraphs(paths):
    for path in paths:
        for p in re.split(r"\n\s*\n", read(path)):
            p = p.strip("\n")
            if not english(p):
                continue
            h = hashlib.sha1(re.sub(r"\s+", " ", p).encode()).digest()
            if h in seen:
                continue
            seen.add(h)
            yield p


docs = "/usr/share/doc"
sources = [
    paragraphs(sorted(glob.glob("/usr/share/common-licenses/*"))),
    paragraphs(sorted(glob.glob(f"{docs}/*/copyright"))),
    paragraphs(sorted(glob.glob(f"{docs}/*/changelog.Debian.gz"))),
    paragraphs(sorted(p for pat in ("README*", "NEWS*") for p in glob.glob(f"{docs}/*/{pat}")
                      if not p.endswith((".html", ".pdf", ".png")))),
]


def round_robin():
    live = list(sources)
    while live:
        for s in list(live):
            try:
                yield next(s)
            except StopIteration:
                live.remove(s)


lengths = []
with gzip.open(records, "rt", encoding="utf-8") as f:
    for line in f:
        if line.strip():
            lengths += [len(m["content"].encode()) for m in json.loads(line)["prompt"]]

stream = round_robin()
texts, total, rest = [], 0, ""
for want in lengths:
    if want == 0:  # an empty message has no English counterpart
        continue
    text, rest = rest, ""
    while len(text) < want:
        p = next(stream, None)
        if p is None:
            break
        text = p if not text else text + "\n\n" + p
    if not text:
        break
    # Cut at the first space at or after `want` bytes; the rest opens the next text.
    cut = text.find(" ", want)
    if cut > 0:
        text, rest = text[:cut].rstrip(), text[cut + 1:].lstrip()
    texts.append(text)
    total += len(text.encode())

with gzip.GzipFile(out_path, "wb", mtime=0) as out:
    for t in texts:
        out.write((json.dumps({"text": t}, ensure_ascii=False) + "\n").encode())
print(f"{out_path}: {len(texts)} texts, {total} bytes (Japanese: {len(lengths)} texts, {sum(lengths)} bytes)")
