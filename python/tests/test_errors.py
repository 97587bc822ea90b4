"""Errors reach Python as exceptions carrying the message the `overhead` command prints for the
same mistake; bad arguments are TypeError / ValueError naming where the bad value sits."""
import json
import os
import subprocess

import pytest

import overhead
from conftest import BINARY, require_set, set_dir, tokenizer


def cli_error(*args, stdin=""):
    """What `overhead ARGS` reports: its stderr message after "overhead: ", or the "error" of its
    first JSONL output line."""
    if not BINARY.is_file():
        pytest.skip(f"{BINARY} not built")
    r = subprocess.run([str(BINARY), *args], input=stdin, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    if r.stdout.strip():
        return json.loads(r.stdout.splitlines()[0])["error"]
    return r.stderr.strip().removeprefix("overhead: ")


def test_unknown_tokenizer_is_a_load_error_worded_as_the_cli_words_it():
    with pytest.raises(overhead.LoadError) as raised:
        overhead.Tokenizer.from_pretrained("no-such-tokenizer")
    assert isinstance(raised.value, OSError)
    assert str(raised.value) == cli_error("tokenize", "--tokenizer", "no-such-tokenizer", "--input", "-")
    assert "no-such-tokenizer" in str(raised.value)


@pytest.fixture(autouse=True)
def no_compiled_cache(monkeypatch):
    """Folders made here are loaded from JSON: their compiled caches would only pile up."""
    monkeypatch.setenv("OVERHEAD_TOKENIZER_CACHE", "off")


def test_broken_tokenizer_json_names_the_file(tmp_path):
    (tmp_path / "tokenizer.json").write_text('{"model": {"type": "Unigram"}}', encoding="utf-8")
    with pytest.raises(overhead.LoadError) as raised:
        overhead.Tokenizer.from_pretrained(str(tmp_path))
    assert "tokenizer.json" in str(raised.value)
    assert str(raised.value) == cli_error("tokenize", "--tokenizer", str(tmp_path), "--input", "-")


def template_folder(tmp_path, template):
    """A tokenizer folder: phi-4's tokenizer.json with a chat template of our own."""
    require_set("phi-4")
    os.symlink(set_dir("phi-4") / "tokenizer.json", tmp_path / "tokenizer.json")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}), encoding="utf-8")
    return str(tmp_path)


@pytest.mark.parametrize("template", [
    "{% for m in messages %}{{ raise_exception('no ' + m.role + ' here') }}{% endfor %}",
    "{{ messages[0].content | no_such_filter }}",
    "{% if %}",
])
def test_template_errors_are_worded_as_the_cli_words_them(tmp_path, template):
    folder = template_folder(tmp_path, template)
    tok = overhead.Tokenizer.from_pretrained(folder)
    with pytest.raises(overhead.TemplateError) as raised:
        tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False)
    line = json.dumps({"messages": [{"role": "user", "content": "hi"}]})
    cli = cli_error("tokenize", "--chat", "--tokenizer", folder, "--input", "-", stdin=line + "\n")
    # A render error is the input line's ("line 1: ..."); a syntax error stops the command at load.
    assert cli in ("line 1: " + str(raised.value), str(raised.value))
    assert raised.value.message in str(raised.value)


def test_a_tokenizer_without_template_says_so_as_transformers_does():
    require_set("cl100k")
    with pytest.raises(ValueError, match="tokenizer.chat_template is not set"):
        tokenizer("cl100k").apply_chat_template([{"role": "user", "content": "hi"}])


def test_bad_arguments_name_the_bad_value():
    require_set("phi-4")
    tok = tokenizer("phi-4")
    with pytest.raises(TypeError, match="text must be str, not bytes"):
        tok.encode(b"bytes")
    with pytest.raises(TypeError, match=r"texts\[1\] must be str"):
        tok.encode_batch(["a", 2])
    with pytest.raises(TypeError, match="a list of str, not a str"):
        tok.encode_batch("abc")
    with pytest.raises(ValueError, match=r"threads must be 0 \(all cores\) or a positive count, not -1"):
        tok.encode_batch(["a"], threads=-1)
    with pytest.raises(TypeError, match="threads must be an int, not str"):
        tok.encode_batch(["a"], threads="2")
    # An id no token can have is no token, however large (not an overflow error).
    for id in (-1, 2**32, 10**30):
        assert tok.id_to_token(id) is None
        assert tok.is_special(id) is False
    with pytest.raises(TypeError, match="id must be an int, not str"):
        tok.is_special("1")
    with pytest.raises(ValueError, match=r"ids\[1\]: -1 is not a token id"):
        tok.decode([1, -1])
    with pytest.raises(TypeError, match=r"ids\[0\] must be an int"):
        tok.decode(["1"])
    with pytest.raises(TypeError, match=r"messages\[0\]\['content'\]: a value of type set"):
        tok.apply_chat_template([{"role": "user", "content": {1, 2}}], tokenize=False)
    with pytest.raises(TypeError, match=r"messages\[0\]: a key of type int"):
        tok.apply_chat_template([{1: "x"}], tokenize=False)
    with pytest.raises(TypeError, match="tools must be JSON schemas"):
        tok.apply_chat_template([{"role": "user", "content": "x"}], tools=[len], tokenize=False)
    deep = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(ValueError, match="nested too deeply"):
        tok.apply_chat_template([{"role": "user", "content": "x", "extra": deep}], tokenize=False)
    with pytest.raises(ValueError, match="is not a real date"):
        overhead.Tokenizer.from_pretrained("phi-4", date="2025-02-30")
    with pytest.raises(ValueError, match="is not a real date"):
        overhead.ChatTemplate("x", date="yesterday")


def test_lone_surrogates_are_refused_not_mangled():
    require_set("phi-4")
    with pytest.raises(UnicodeEncodeError):
        tokenizer("phi-4").encode("\ud800")


def test_runaway_template_stops_with_an_error():
    template = overhead.ChatTemplate("{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}")
    with pytest.raises(overhead.TemplateError, match="loop|iterations|output|time"):
        template.render([])
