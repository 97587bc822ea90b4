#!/usr/bin/env python3
"""Builds the seed's three tokenizer sets from the npm-extracted raw files and the committed overlays.

    build_tokenizer_sets.py RAW_DIR OVERLAY_DIR OUT_DIR

Standard library only, deterministic (the output hashes are pinned in data/tokenizers/SHA256SUMS):
- llama-3.3-70b-instruct: raw llama3_1 tokenizer.json (vocab, merges, regex, BOS post-processor) with the
  Llama-3.1 names of the 256 added tokens taken from the overlay tokenizer_config.json; config = overlay.
- gemma-2-27b-it: raw gemini files unchanged (Gemma-2 vocabulary, Gemma-2-it template).
- phi-4: cl100k_base BPE from raw gpt35turbo (first 100,256 ids) plus phi-4's 96 added tokens
  (ids 100256..100351, lstrip/rstrip set) from the overlay config; config = overlay.
See data/tokenizers/PROVENANCE.md for the source and verification status of each piece.
"""
import json
import os
import sys

CL100K_BASE_SIZE = 100256


def load_json(path):
    with open(path, "rb") as f:
        return json.loads(f.read())


def save(path, data: bytes):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def hf_serialise(obj) -> bytes:
    # The layout HF tokenizers writes with pretty=True: two-space indent, raw UTF-8, no final newline.
    return json.dumps(obj, indent=2, ensure_ascii=False).encode("utf-8")


def copy_file(src, dst):
    with open(src, "rb") as f:
        save(dst, f.read())


def llama33(raw, overlay, out):
    cfg_path = os.path.join(overlay, "llama-3.3-70b-instruct", "tokenizer_config.json")
    names = load_json(cfg_path)["added_tokens_decoder"]
    tok = load_json(os.path.join(raw, "llama3_1", "tokenizer.json"))
    if len(tok["added_tokens"]) != 256 or len(names) != 256:
        sys.exit("llama-3.3: expected 256 added tokens in both the raw file and the overlay")
    for token in tok["added_tokens"]:
        want = names[str(token["id"])]
        for flag in ("lstrip", "rstrip", "normalized", "single_word", "special"):
            if token[flag] != want[flag]:
                sys.exit(f"llama-3.3: added token {token['id']} flag {flag} differs from the overlay")
        token["content"] = want["content"]
    save(os.path.join(out, "tokenizer.json"), hf_serialise(tok))
    copy_file(cfg_path, os.path.join(out, "tokenizer_config.json"))


def gemma2(raw, overlay, out):
    for name in ("tokenizer.json", "tokenizer_config.json"):
        copy_file(os.path.join(raw, "gemini", name), os.path.join(out, name))


def phi4(raw, overlay, out):
    cfg_path = os.path.join(overlay, "phi-4", "tokenizer_config.json")
    decoder = load_json(cfg_path)["added_tokens_decoder"]
    base = load_json(os.path.join(raw, "gpt35turbo", "tokenizer.json"))
    model = base["model"]
    vocab = {piece: i for piece, i in model["vocab"].items() if i < CL100K_BASE_SIZE}
    if sorted(vocab.values()) != list(range(CL100K_BASE_SIZE)):
        sys.exit("phi-4: raw cl100k vocabulary is not dense over 0..100255")
    added_ids = sorted(int(k) for k in decoder)
    if added_ids != list(range(CL100K_BASE_SIZE, CL100K_BASE_SIZE + 96)):
        sys.exit("phi-4: overlay added tokens are not ids 100256..100351")
    added = []
    for i in added_ids:
        d = decoder[str(i)]
        added.append({"id": i, "content": d["content"], "single_word": d["single_word"], "lstrip": d["lstrip"],
                      "rstrip": d["rstrip"], "normalized": d["normalized"], "special": d["special"]})
    tok = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": base["pre_tokenizer"],
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": base["decoder"],
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None,
            "continuing_subword_prefix": "", "end_of_word_suffix": "",
            "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": vocab, "merges": model["merges"],
        },
    }
    save(os.path.join(out, "tokenizer.json"), hf_serialise(tok))
    copy_file(cfg_path, os.path.join(out, "tokenizer_config.json"))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    raw, overlay, out = sys.argv[1:]
    for name, build in (("llama-3.3-70b-instruct", llama33), ("gemma-2-27b-it", gemma2), ("phi-4", phi4)):
        build(raw, overlay, os.path.join(out, name))
        print(f"build_tokenizer_sets: built {name}")


if __name__ == "__main__":
    main()
