"""Renders equal to Jinja2's (data/chat/goldens, made by scripts/make_chat_goldens.py with Jinja2
set up as transformers sets it up) through the Python API: every conversation case of every
template (text, or the same error message), and the MT-Bench renders the goldens carry in full.
The tokenizer sets' own templates are also rendered through Tokenizer.apply_chat_template."""
import gzip
import json

import pytest

import overhead
from conftest import DATA, MODELS, mtbench_records, read_jsonl, tokenizer

GOLDENS = DATA / "chat" / "goldens"
INDEX = json.loads((GOLDENS / "index.json").read_text(encoding="utf-8"))
DATE = INDEX["pinned_date"]
NAMES = list(INDEX["templates"])


def config_of(name):
    origin = INDEX["templates"][name]
    kind, where = origin.split(":", 1)
    path = (MODELS / where / "tokenizer_config.json") if kind == "tokenizer" else (DATA / "chat" / "templates" / where)
    if not path.is_file():
        pytest.skip(f"tokenizer files not fetched: {path}")
    return json.loads(path.read_text(encoding="utf-8"))


def compiled(name):
    """(template, None) or (None, the compile error's message)."""
    try:
        return overhead.ChatTemplate.from_config(config_of(name), name, date=DATE), None
    except overhead.TemplateError as e:
        return None, e.message


def cases_of(config):
    cases = {c["id"]: c for c in read_jsonl(DATA / "chat" / "conversations.jsonl")}
    if "example" in config:
        cases["example"] = dict(config["example"], id="example")
    return cases


def split(case):
    extra = {k: v for k, v in case.items() if k not in ("id", "messages", "add_generation_prompt")}
    return case["messages"], extra


def outcome(render):
    try:
        return "text", render()
    except overhead.TemplateError as e:
        return "error", e.message


def check_against_goldens(name, render_case):
    config = config_of(name)
    cases = cases_of(config)
    failures = []
    for g in read_jsonl(GOLDENS / "conversations" / f"{name}.jsonl"):
        messages, extra = split(cases[g["id"]])
        got = render_case(messages, g["agp"], extra)
        want = ("text", g["text"]) if "text" in g else ("error", g["error"])
        if got != want:
            failures.append(f"{g['id']} agp={g['agp']}: want {want!r:.200}, got {got!r:.200}")
    assert not failures, f"{name}: {len(failures)} cases differ:\n" + "\n".join(failures[:5])


@pytest.mark.parametrize("name", NAMES)
def test_conversations(name):
    template, compile_error = compiled(name)

    def render_case(messages, agp, extra):
        if template is None:
            return "error", compile_error
        return outcome(lambda: template.render(messages, add_generation_prompt=agp, **extra))

    check_against_goldens(name, render_case)


TOKENIZER_TEMPLATES = [n for n in NAMES if INDEX["templates"][n].startswith("tokenizer:")]


@pytest.mark.parametrize("name", TOKENIZER_TEMPLATES)
def test_conversations_through_apply_chat_template(name):
    folder = MODELS / INDEX["templates"][name].split(":", 1)[1]
    if not (folder / "tokenizer.json").is_file():
        pytest.skip(f"tokenizer files not fetched: {folder}")
    tok = tokenizer(str(folder), date=DATE)

    def render_case(messages, agp, extra):
        return outcome(lambda: tok.apply_chat_template(messages, add_generation_prompt=agp, tokenize=False, **extra))

    check_against_goldens(name, render_case)


@pytest.mark.parametrize("name", NAMES)
def test_mtbench_sample(name):
    """The MT-Bench renders the goldens keep in full (every 400th record), and the refusals."""
    template, compile_error = compiled(name)
    with gzip.open(GOLDENS / "mtbench" / f"{name}.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    records = mtbench_records()
    checked = 0
    for row in rows:
        if "text" not in row and "error" not in row:
            continue
        messages = records[row["n"] - 1]["prompt"]
        if template is None:
            got = ("error", compile_error)
        else:
            got = outcome(lambda: template.render(messages))
        want = ("text", row["text"]) if "text" in row else ("error", row["error"])
        assert got == want, f"{name} MT-Bench record {row['n']}"
        if "text" in row:
            assert len(got[1].encode("utf-8")) == row["len"]
        checked += 1
    assert checked > 0
