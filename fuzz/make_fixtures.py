#!/usr/bin/env python3
"""Writes the small tokenizers the fuzz targets use (fuzz/tokenizers/<kind>/tokenizer.json), cut
down from the real files so they exercise the same code paths at a size a fuzzer can mutate:

  bytelevel       Llama-3.1 (raw/llama3_1): ByteLevel BPE, its Split regex, ignore_merges,
                  TemplateProcessing BOS; 256 byte tokens + the first 2000 usable merges.
  bytelevel_tiny  the same with 40 merges, and its special tokens given lstrip/rstrip as Phi-4's are.
  spm             Gemma-2 (gemma-2-27b-it): Replace normalizer, byte_fallback BPE, Gemma's
                  whitespace/HTML added tokens; byte tokens + a small alphabet + 2000 merges.
  spm_tiny        the same with 40 merges.

Vocabulary ids are renumbered densely; merges keep their order (rank). Deterministic.
Usage: python3 fuzz/make_fixtures.py MODELS_DIR [OUT_DIR]   (OUT_DIR default: fuzz/tokenizers)
"""
import json
import os
import sys


def bytes_to_unicode():
    """GPT-2's byte -> printable character table (ByteLevel pre-tokenizer)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def take_merges(merges, vocab, real_vocab, limit):
    kept = []
    for m in merges:
        a, b = m.split(" ", 1) if isinstance(m, str) else m
        if a in vocab and b in vocab and (a + b) in real_vocab:
            if a + b not in vocab:
                vocab[a + b] = len(vocab)
            kept.append(m)
            if len(kept) == limit:
                break
    return kept


def with_added(tok, vocab, added, strip):
    """Adds the chosen added tokens (into the model vocabulary too, as the real files have them)."""
    out = []
    by_content = {a["content"]: a for a in tok["added_tokens"]}
    for content in added:
        a = dict(by_content[content])
        if content not in vocab:
            vocab[content] = len(vocab)
        a["id"] = vocab[content]
        if strip and a["special"]:
            a["lstrip"] = a["rstrip"] = True
        out.append(a)
    return out


def fix_template_ids(post, vocab):
    if post is None:
        return None
    if post.get("type") == "Sequence":
        return dict(post, processors=[fix_template_ids(p, vocab) for p in post["processors"]])
    if post.get("type") == "TemplateProcessing":
        st = {k: dict(v, ids=[vocab[t] for t in v["tokens"]]) for k, v in post["special_tokens"].items()}
        return dict(post, special_tokens=st)
    return post


def bytelevel(models, n_merges, strip):
    tok = json.load(open(os.path.join(models, "raw", "llama3_1", "tokenizer.json"), encoding="utf-8"))
    real = tok["model"]["vocab"]
    b2u = bytes_to_unicode()
    vocab = {b2u[b]: b for b in range(256)}
    merges = take_merges(tok["model"]["merges"], vocab, real, n_merges)
    added = with_added(tok, vocab, ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                                    "<|end_header_id|>", "<|eot_id|>"], strip)
    post = fix_template_ids(tok["post_processor"], vocab)
    if strip:  # Phi-4 style: ByteLevel post-processor only, no BOS
        post = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True}
    model = dict(tok["model"], vocab=vocab, merges=merges)
    return dict(tok, added_tokens=added, post_processor=post, model=model)


def spm(models, n_merges):
    tok = json.load(open(os.path.join(models, "gemma-2-27b-it", "tokenizer.json"), encoding="utf-8"))
    real = tok["model"]["vocab"]
    vocab = {}
    for t in ["<pad>", "<eos>", "<bos>", "<unk>"] + ["<0x%02X>" % b for b in range(256)]:
        vocab[t] = len(vocab)
    alphabet = ["\u2581", "\n", "\t"] + [chr(c) for c in range(0x21, 0x7F)] + list("あいうえおかきくけこのはをにでがとすてしたるアイウエオ日本語東京")
    for ch in alphabet:
        if ch in real and ch not in vocab:
            vocab[ch] = len(vocab)
    merges = take_merges(tok["model"]["merges"], vocab, real, n_merges)
    added = with_added(tok, vocab, ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "[@BOS@]", "<start_of_turn>",
                                    "<end_of_turn>", "\n", "\n\n", "\n\n\n", "\u2581\u2581", "\u2581\u2581\u2581",
                                    "<table>", "</table>", "<tr>", "<td>", "</td>", "</tr>"], False)
    post = fix_template_ids(tok["post_processor"], vocab)
    model = dict(tok["model"], vocab=vocab, merges=merges)
    return dict(tok, added_tokens=added, post_processor=post, model=model)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    models = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "tokenizers")
    kinds = {
        "bytelevel": bytelevel(models, 2000, False),
        "bytelevel_tiny": bytelevel(models, 40, True),
        "spm": spm(models, 2000),
        "spm_tiny": spm(models, 40),
    }
    for kind, tok in kinds.items():
        os.makedirs(os.path.join(out, kind), exist_ok=True)
        path = os.path.join(out, kind, "tokenizer.json")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            json.dump(tok, f, ensure_ascii=False, indent=None, separators=(",", ":"))
            f.write("\n")
        print("make_fixtures: %s: %d vocab, %d merges -> %s" % (kind, len(tok["model"]["vocab"]), len(tok["model"]["merges"]), path))


if __name__ == "__main__":
    main()
