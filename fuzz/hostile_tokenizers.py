#!/usr/bin/env python3
"""Writes hostile tokenizer.json seeds for tokenizer_json_fuzz, each the bytelevel_tiny fixture with
one part replaced by what an attacker's file could hold: normalizers that grow text without bound
(a Sequence of Replace "a" -> 10 x "a", a huge Prepend, NFKD then Replace), the same growth reached
through a normalized added token, deep nesting of normalizer and pre-tokenizer Sequences, and long
Sequences of Split regexes. The loader must refuse them (LoadError) or encode within bounded
memory (or refuse a text with EncodeError); run.sh passes them to libFuzzer as seeds.

Usage: python3 fuzz/hostile_tokenizers.py FIXTURE_JSON OUT_DIR   (deterministic)
"""
import copy
import json
import os
import sys


def replace(pattern, content, regex=False):
    return {"type": "Replace", "pattern": {"Regex" if regex else "String": pattern}, "content": content}


def nested(kind, key, inner, depth):
    for _ in range(depth):
        inner = {"type": "Sequence", key: [inner]}
    return inner


def main():
    base = json.load(open(sys.argv[1], encoding="utf-8"))
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    split = {"type": "Split", "pattern": {"Regex": r"\s+|\p{L}+|\d"}, "behavior": "Isolated", "invert": False}
    variants = {
        "replace_growth": {"normalizer": {"type": "Sequence", "normalizers": [replace("a", "a" * 10)] * 5}},
        "replace_growth_regex": {"normalizer": {"type": "Sequence", "normalizers": [replace("", "xy", True)] * 6}},
        "prepend_huge": {"normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "p" * 4096}] * 8}},
        "nfkd_then_replace": {"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKD"}, replace(" ", "  "), {"type": "NFKC"}] * 4}},
        "nested_normalizers": {"normalizer": nested("normalizer", "normalizers", {"type": "Lowercase"}, 300)},
        "nested_pre_tokenizers": {"pre_tokenizer": nested("pre_tokenizer", "pretokenizers", split, 300)},
        "many_splits": {"pre_tokenizer": {"type": "Sequence", "pretokenizers": [split] * 64 + [{"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}},
        "metaspace_digits": {"pre_tokenizer": {"type": "Sequence", "pretokenizers": [split, {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}, {"type": "Digits", "individual_digits": True}]}},
    }
    for name, change in variants.items():
        doc = copy.deepcopy(base)
        doc.update(change)
        with open(os.path.join(out, "hostile_" + name + ".json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
    # The growth reached through an added token the normalizer applies to at load.
    doc = copy.deepcopy(base)
    doc["normalizer"] = variants["replace_growth"]["normalizer"]
    doc["added_tokens"] = doc["added_tokens"] + [{"id": 400, "content": "a" * 64, "single_word": False, "lstrip": False,
                                                  "rstrip": False, "normalized": True, "special": False}]
    with open(os.path.join(out, "hostile_added_token_growth.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))


if __name__ == "__main__":
    main()
