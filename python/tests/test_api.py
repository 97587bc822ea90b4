"""The Python API's behaviour beyond the goldens: transformers' apply_chat_template options
(tokenize, return_dict, batches, continue_final_message, chat_template=, extra variables), the
batch and thread paths, vocabulary lookups, and the type stubs matching the module."""
import ast
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import overhead
from conftest import DATA, SEED_TOKENIZERS, mtbench_records, read_jsonl, require_set, tokenizer

PHI = "phi-4"


@pytest.fixture(scope="module")
def phi():
    require_set(PHI)
    return tokenizer(PHI)


@pytest.mark.parametrize("short", list(SEED_TOKENIZERS.values()))
def test_tokenize_cases(short):
    """tok(apply_chat_template(tokenize=False)) and apply_chat_template(tokenize=True) give the
    reference pipeline's full ids (data/chat/goldens/tokenize/<name>.cases*.jsonl)."""
    require_set(short)
    lines = (DATA / "chat" / "tokenize_cases.jsonl").read_text(encoding="utf-8").splitlines()
    for suffix in ("cases", "cases-agp"):
        header, *rows = read_jsonl(DATA / "chat" / "goldens" / "tokenize" / f"{short}.{suffix}.jsonl")
        tok = tokenizer(short, date=header["date"])
        agp = header["add_generation_prompt"]
        assert len(rows) == len(lines)
        for line, row in zip(lines, rows):
            if row.get("stage") == "input":
                continue  # a line the command refuses before any template runs (not JSON, no messages)
            field = json.loads(line)[header["field"]]
            messages, extra = (field, {}) if isinstance(field, list) else (
                field["messages"], {k: v for k, v in field.items() if k != "messages"})
            if "error" in row:
                with pytest.raises(overhead.TemplateError) as raised:
                    tok.apply_chat_template(messages, add_generation_prompt=agp, **extra)
                assert raised.value.message == row["error"]
                continue
            text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=agp, **extra)
            assert tok(text)["input_ids"] == row["ids"], f"{short} {suffix} {row['n']}"
            assert tok.apply_chat_template(messages, add_generation_prompt=agp, **extra) == row["ids_no_special"]


def test_call_returns_what_transformers_returns(phi):
    out = phi("Hello world")
    assert list(out) == ["input_ids", "attention_mask"]
    assert out["attention_mask"] == [1] * len(out["input_ids"])
    batch = phi(["Hello world", "", "こんにちは"])
    assert batch["input_ids"] == [phi.encode("Hello world"), phi.encode(""), phi.encode("こんにちは")]
    assert [len(m) for m in batch["attention_mask"]] == [len(i) for i in batch["input_ids"]]


def test_encode_batch_is_encode_on_every_thread_count(phi):
    texts = [m["content"] for r in mtbench_records()[:300] for m in r["prompt"]]
    one_by_one = [phi.encode(t) for t in texts]
    for threads in (0, 1, 2, 4):
        assert phi.encode_batch(texts, threads=threads) == one_by_one
    assert phi.encode_batch(tuple(texts[:3]), add_special_tokens=False) == [phi.encode(t, False) for t in texts[:3]]
    assert phi.encode_batch([]) == []


def test_encode_batch_of_many_parts_from_a_generator(phi):
    # Over 256 KB of text: encoded in parts, each part's lists made while the next one encodes.
    texts = [m["content"] for r in mtbench_records()[:2000] for m in r["prompt"]]
    assert sum(len(t.encode()) for t in texts) > 3 * 256 * 1024
    one_by_one = [phi.encode(t) for t in texts]
    assert phi.encode_batch((t for t in texts), threads=2) == one_by_one
    assert phi(texts)["input_ids"] == one_by_one


def test_encode_batch_in_a_forked_child(phi):
    # The tokenizer keeps its batch threads between calls; a child forked after they started has
    # none of them, and its batches must still finish (on threads of its own), with the same ids.
    import os
    import time
    texts = [m["content"] for r in mtbench_records()[:100] for m in r["prompt"]]
    expected = phi.encode_batch(texts, threads=2)
    pid = os.fork()
    if pid == 0:
        ok = phi.encode_batch(texts, threads=2) == expected and phi.encode_batch(texts, threads=0) == expected
        os._exit(0 if ok else 1)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("encode_batch in a forked child did not finish in 60 s")
        time.sleep(0.05)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_encode_batch_caps_a_huge_thread_count(phi):
    # threads=10**6 for two texts once started 32,222 threads (the host's limit); the pool is now
    # capped at the cores and the texts, and a count beyond any C integer is capped the same way.
    texts = ["one text", "another"]
    for threads in (2**32 + 1, 10**30):
        assert phi.encode_batch(texts, threads=threads) == [phi.encode(t) for t in texts]


def test_python_threads_encode_in_parallel_with_the_same_result(phi):
    texts = [m["content"] for r in mtbench_records()[:200] for m in r["prompt"]]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(phi.encode, texts)) == [phi.encode(t) for t in texts]


def test_count_decode_and_vocabulary(phi):
    text = "Tokenizers: fast, exact. 速い！"
    ids = phi.encode(text, add_special_tokens=False)
    assert phi.count(text, add_special_tokens=False) == len(ids)
    assert phi.decode(ids) == text
    assert phi.decode(tuple(ids)) == text
    assert phi.decode([]) == ""
    assert len(phi) == phi.vocab_size > 100000
    assert phi.token_to_id(phi.id_to_token(ids[0])) == ids[0]
    assert phi.token_to_id("no such token, surely") is None
    assert phi.id_to_token(phi.vocab_size + 10) is None
    assert phi.id_to_token(-1) is None
    im_start = phi.token_to_id("<|im_start|>")
    assert phi.is_special(im_start) and not phi.is_special(ids[0])
    assert phi.decode([im_start] + ids, skip_special_tokens=True) == text


def test_decode_of_a_cut_character_is_replaced(phi):
    ids = phi.encode("日", add_special_tokens=False)
    if len(ids) > 1:  # a byte-level piece of a character alone decodes to U+FFFD, as HF gives
        assert "\ufffd" in phi.decode(ids[:1])


def test_from_pretrained_forms(phi):
    require_set(PHI)
    by_id = overhead.AutoTokenizer.from_pretrained("microsoft/phi-4")
    by_folder = overhead.Tokenizer.from_pretrained(Path(phi.source_dir))
    assert by_id.encode("same ids") == by_folder.encode("same ids") == phi.encode("same ids")
    assert by_id.name_or_path == "microsoft/phi-4"
    assert isinstance(by_id, overhead.Tokenizer)


def test_apply_chat_template_options(phi):
    require_set(PHI)
    tok = tokenizer(PHI, date="2025-01-15")
    chat = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello there  "}]
    text = tok.apply_chat_template(chat, tokenize=False)
    assert tok.apply_chat_template(chat) == tok.encode(text, add_special_tokens=False)  # tokenize=True by default
    as_dict = tok.apply_chat_template(chat, return_dict=True)
    assert as_dict["input_ids"] == tok.encode(text, add_special_tokens=False)
    assert tok.apply_chat_template([chat, chat[:1]], tokenize=False) == [
        text, tok.apply_chat_template(chat[:1], tokenize=False)]
    assert tok.apply_chat_template([chat, chat], tokenize=True) == [tok.encode(text, False)] * 2
    # continue_final_message: the render stops where the final message's text stops.
    # A template that keeps the message's spacing keeps it; one that trims it cuts after the trimmed text.
    cont = tok.apply_chat_template(chat, tokenize=False, continue_final_message=True)
    assert cont.endswith("<|im_sep|>Hello there  ") and text.startswith(cont)
    trims = "{% for m in messages %}<{{ m.role }}>{{ m.content | trim }}</{{ m.role }}>{% endfor %}"
    assert tok.apply_chat_template(chat, chat_template=trims, tokenize=False, continue_final_message=True) == (
        "<user>Hi</user><assistant>Hello there")
    with pytest.raises(ValueError, match="not compatible"):
        tok.apply_chat_template(chat, continue_final_message=True, add_generation_prompt=True)
    # chat_template= and extra keyword arguments, which reach the template as variables.
    custom = "{{ bos_token }}{% for m in messages %}[{{ m.role }}|{{ greeting }}]{% endfor %}{{ tools | length }}"
    assert tok.apply_chat_template(chat, chat_template=custom, tokenize=False, greeting="hey",
                                   tools=[{"type": "function"}]) == f"{tok.bos_token or ''}[user|hey][assistant|hey]1"
    with pytest.raises(NotImplementedError):
        tok.apply_chat_template(chat, padding=True)


def test_key_order_reaches_the_template():
    template = overhead.ChatTemplate("{{ messages[0] | tojson }}|{% for k in messages[0] %}{{ k }}{% endfor %}")
    message = {"z": 1, "a": [1.5, None, True], "m": "ü"}
    assert template.render([message]) == json.dumps(message, ensure_ascii=False) + "|zam"


def test_strftime_now_is_pinned_by_date():
    template = overhead.ChatTemplate("{{ strftime_now('%d %b %Y') }}", date="2024-07-26")
    assert template.render([]) == "26 Jul 2024"
    assert template.date == "2024-07-26"


def test_the_stubs_name_what_the_module_has():
    stub = ast.parse((Path(overhead.__file__).parent / "_overhead.pyi").read_text(encoding="utf-8"))
    classes = {n.name: n for n in stub.body if isinstance(n, ast.ClassDef)}
    assert set(classes) == {"LoadError", "TemplateError", "ChatTemplate", "Tokenizer"}
    for name, node in classes.items():
        native = getattr(overhead._overhead, name)
        stubbed = {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
        public = {a for a in vars(native) if not a.startswith("__") or a in ("__init__", "__call__", "__len__")}
        public -= {"__init__"} if name in ("LoadError", "TemplateError") else set()
        if name in ("LoadError", "TemplateError"):
            continue
        assert public - {"_pybind11_conduit_v1_"} == stubbed, name
    assert (Path(overhead.__file__).parent / "py.typed").is_file()
