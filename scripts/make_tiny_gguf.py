#!/usr/bin/env python3
"""Writes a tiny random-weight llama-architecture model as GGUF, with the tokenizer of a Hugging Face
tokenizer.json, for the real engine the tests run (llama.cpp, tests/engine): the engine then
tokenizes exactly as `overhead tokenize` does, while its weights are a few MB of seeded noise (its
text is gibberish, but real tokens come out at a real engine's pace, deterministically at
temperature 0).

    make_tiny_gguf.py --tokenizer models/llama-3.3-70b-instruct/tokenizer.json --out tiny.gguf

Only byte-level BPE tokenizers (Llama-3's: tokenizer.ggml.model "gpt2", pre-tokenizer
"llama-bpe") are supported. The GGUF file format (version 3) is written here directly from its
specification (ggml's docs/gguf.md): a header, typed key/value metadata, tensor descriptors,
then the 32-byte-aligned tensor data. The weights are Q8_0 (blocks of 32 int8 with one f16
scale), so the 128k-entry embedding and output layer stay small.
"""

import argparse
import json
import os
import random
import struct
import sys

# gguf metadata value types
U32, I32, F32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9
# ggml tensor types
GGML_F32, GGML_Q8_0 = 0, 8
ALIGN = 32
# llama.cpp token types
NORMAL, CONTROL = 1, 3


def gguf_string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, value):
    out = gguf_string(key) + struct.pack("<I", vtype)
    if vtype == U32:
        out += struct.pack("<I", value)
    elif vtype == I32:
        out += struct.pack("<i", value)
    elif vtype == F32:
        out += struct.pack("<f", value)
    elif vtype == BOOL:
        out += struct.pack("<?", value)
    elif vtype == STRING:
        out += gguf_string(value)
    else:
        raise ValueError(vtype)
    return out


def kv_array(key, etype, values):
    parts = [gguf_string(key), struct.pack("<IIQ", ARRAY, etype, len(values))]
    if etype == STRING:
        parts.extend(gguf_string(v) for v in values)
    elif etype == I32:
        parts.append(struct.pack("<%di" % len(values), *values))
    else:
        raise ValueError(etype)
    return b"".join(parts)


def q8_0(rng, rows, cols, scale):
    """rows x cols random weights, uniform in [-scale, scale], as Q8_0 blocks along the row."""
    assert cols % 32 == 0, "Q8_0 rows must be a multiple of 32"
    d = struct.pack("<e", scale / 127.0)
    blocks = rows * cols // 32
    quants = rng.randbytes(blocks * 32)
    out = bytearray(blocks * 34)
    for i in range(blocks):
        out[i * 34 : i * 34 + 2] = d
        out[i * 34 + 2 : i * 34 + 34] = quants[i * 32 : i * 32 + 32]
    return bytes(out)


def ones_f32(n):
    return struct.pack("<%df" % n, *([1.0] * n))


def read_tokenizer(path):
    with open(path, encoding="utf-8") as f:
        tok = json.load(f)
    model = tok["model"]
    if model.get("type") != "BPE":
        sys.exit(f"{path}: model.type is {model.get('type')!r}, only byte-level BPE is supported")
    vocab = dict(model["vocab"])
    special = set()
    for added in tok.get("added_tokens", []):
        vocab[added["content"]] = added["id"]
        if added.get("special"):
            special.add(added["id"])
    n = max(vocab.values()) + 1
    tokens = [None] * n
    for text, i in vocab.items():
        tokens[i] = text
    for i, t in enumerate(tokens):
        if t is None:  # a hole in the ids: a placeholder llama.cpp treats as unused
            tokens[i] = f"[PAD{i}]"
    types = [CONTROL if i in special else NORMAL for i in range(n)]
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    return tokens, types, merges


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokenizer", required=True, help="a Hugging Face tokenizer.json (byte-level BPE)")
    ap.add_argument("--config", help="its tokenizer_config.json (bos/eos names, chat template); default: next to --tokenizer")
    ap.add_argument("--out", required=True)
    ap.add_argument("--n-embd", type=int, default=32)
    ap.add_argument("--n-layer", type=int, default=2)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--n-ff", type=int, default=128)
    ap.add_argument("--context", type=int, default=4096)
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--name", default="tiny-llama3")
    a = ap.parse_args()

    tokens, types, merges = read_tokenizer(a.tokenizer)
    config_path = a.config or os.path.join(os.path.dirname(a.tokenizer), "tokenizer_config.json")
    config = {}
    if os.path.exists(config_path):
        with open(config_path, encoding="utf-8") as f:
            config = json.load(f)

    def token_id(name, fallback):
        value = config.get(name)
        if isinstance(value, dict):
            value = value.get("content")
        return tokens.index(value) if value in tokens else tokens.index(fallback)

    bos = token_id("bos_token", "<|begin_of_text|>")
    eos = token_id("eos_token", "<|eot_id|>")

    e, layers, heads, ff = a.n_embd, a.n_layer, a.n_head, a.n_ff
    if e % heads or e % 32 or ff % 32:
        sys.exit("--n-embd must be a multiple of 32 and of --n-head; --n-ff a multiple of 32")
    vocab = len(tokens)
    rng = random.Random(a.seed)

    # (name, dims as ggml's ne: the row length first, type, bytes)
    tensors = [("token_embd.weight", [e, vocab], GGML_Q8_0, q8_0(rng, vocab, e, 1.0)),
               ("output_norm.weight", [e], GGML_F32, ones_f32(e)),
               # Untied: with the embedding as the output layer a random model's residual stream
               # mostly predicts the token it just read (an end-of-turn prompt would end at once).
               ("output.weight", [e, vocab], GGML_Q8_0, q8_0(rng, vocab, e, 1.0))]
    w = 1.0 / (e ** 0.5)
    for i in range(layers):
        b = f"blk.{i}."
        tensors += [(b + "attn_norm.weight", [e], GGML_F32, ones_f32(e)),
                    (b + "attn_q.weight", [e, e], GGML_Q8_0, q8_0(rng, e, e, w)),
                    (b + "attn_k.weight", [e, e], GGML_Q8_0, q8_0(rng, e, e, w)),
                    (b + "attn_v.weight", [e, e], GGML_Q8_0, q8_0(rng, e, e, w)),
                    (b + "attn_output.weight", [e, e], GGML_Q8_0, q8_0(rng, e, e, w)),
                    (b + "ffn_norm.weight", [e], GGML_F32, ones_f32(e)),
                    (b + "ffn_gate.weight", [e, ff], GGML_Q8_0, q8_0(rng, ff, e, w)),
                    (b + "ffn_up.weight", [e, ff], GGML_Q8_0, q8_0(rng, ff, e, w)),
                    (b + "ffn_down.weight", [ff, e], GGML_Q8_0, q8_0(rng, e, ff, 1.0 / (ff ** 0.5)))]

    meta = [kv("general.architecture", STRING, "llama"),
            kv("general.name", STRING, a.name),
            kv("general.file_type", U32, 7),  # mostly Q8_0
            kv("general.alignment", U32, ALIGN),
            kv("llama.context_length", U32, a.context),
            kv("llama.embedding_length", U32, e),
            kv("llama.block_count", U32, layers),
            kv("llama.feed_forward_length", U32, ff),
            kv("llama.attention.head_count", U32, heads),
            kv("llama.attention.head_count_kv", U32, heads),
            kv("llama.rope.dimension_count", U32, e // heads),
            kv("llama.rope.freq_base", F32, 500000.0),
            kv("llama.attention.layer_norm_rms_epsilon", F32, 1e-5),
            kv("llama.vocab_size", U32, vocab),
            kv("tokenizer.ggml.model", STRING, "gpt2"),
            kv("tokenizer.ggml.pre", STRING, "llama-bpe"),
            kv_array("tokenizer.ggml.tokens", STRING, tokens),
            kv_array("tokenizer.ggml.token_type", I32, types),
            kv_array("tokenizer.ggml.merges", STRING, merges),
            kv("tokenizer.ggml.bos_token_id", U32, bos),
            kv("tokenizer.ggml.eos_token_id", U32, eos),
            kv("tokenizer.ggml.add_bos_token", BOOL, True)]
    if isinstance(config.get("chat_template"), str):
        meta.append(kv("tokenizer.chat_template", STRING, config["chat_template"]))

    infos, offset = [], 0
    for name, dims, ttype, data in tensors:
        infos.append(gguf_string(name) + struct.pack("<I", len(dims)) + struct.pack("<%dQ" % len(dims), *dims) +
                     struct.pack("<IQ", ttype, offset))
        offset += (len(data) + ALIGN - 1) // ALIGN * ALIGN

    tmp = a.out + ".tmp%d" % os.getpid()
    with open(tmp, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta)))
        for m in meta:
            f.write(m)
        for info in infos:
            f.write(info)
        f.write(b"\0" * (-f.tell() % ALIGN))
        for _, _, _, data in tensors:
            f.write(data)
            f.write(b"\0" * (-len(data) % ALIGN))
    os.replace(tmp, a.out)  # whole or not at all, also when two builds race
    print(f"make_tiny_gguf: {a.out}: llama, {layers} layers, n_embd {e}, vocab {vocab}, "
          f"{offset / 1e6:.1f} MB of weights, bos {bos}, eos {eos}")


if __name__ == "__main__":
    main()
