"""The seed's worker function, unchanged, with overhead's tokenizer where the seed had
transformers' AutoTokenizer: the same token_count on every MT-Bench record as the reference
pipeline (HF tokenizers + the chat template; data/chat/goldens/tokenize, strftime_now pinned to the
goldens' date)."""
import datetime  # noqa: F401  (encode_item below uses it, as in the seed)
import gzip
import json

import pytest

from overhead import AutoTokenizer, TemplateError
from conftest import DATA, SEED_TOKENIZERS, mtbench_records, require_set

EXPERIMENT_ID = "sqs_10"  # the seed's value


# ---- from the seed, as written there (only the indentation restored) ----
def encode_item(data, tokenizer, tokenizer_name):
    # 処理開始時間
    start_time = datetime.datetime.now(datetime.timezone.utc).isoformat()
    # 各メッセージを「role: content」の形式で結合（トークナイザー依存）
    chat_text = tokenizer.apply_chat_template(data["prompt"], tokenize=False)
    # トークナイズ処理
    encoded = tokenizer(chat_text, add_special_tokens=True)
    token_count = len(encoded.get("input_ids", []))
    # 処理終了時間
    end_time = datetime.datetime.now(datetime.timezone.utc).isoformat()
    # ペイロード作成
    payload = {
        "experiment_tokenizer": f"{EXPERIMENT_ID}#{tokenizer_name}",
        "id": data["id"],
        "model": data["model"],
        "start_time": start_time,
        "end_time": end_time,
        "token_count": token_count,
        "api_input": data["usage"]["input"],
        "api_output": data["usage"]["output"],
        "experiment": EXPERIMENT_ID,
        "tokenizer": tokenizer_name,
    }
    return payload
# ---- end of the seed's code ----


def golden(short):
    with gzip.open(DATA / "chat" / "goldens" / "tokenize" / f"{short}.mtbench.jsonl.gz", "rt", encoding="utf-8") as f:
        header, *rows = [json.loads(line) for line in f]
    return header, rows


@pytest.mark.parametrize("tokenizer_name", list(SEED_TOKENIZERS))
def test_encode_item_on_every_record(tokenizer_name):
    short = SEED_TOKENIZERS[tokenizer_name]
    require_set(short)
    header, rows = golden(short)
    assert header["field"] == "prompt" and header["add_generation_prompt"] is False
    # As the seed loads it (AutoTokenizer.from_pretrained(name)), with the goldens' date pinned.
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_name, date=header["date"])
    records = mtbench_records()
    assert len(rows) == len(records) == 6784
    wrong = []
    for data, row in zip(records, rows):
        # The public records carry usage: null (the API's counts are not published); encode_item
        # reads usage["input"] and usage["output"], so they are given as unknown.
        data = dict(data, usage=data["usage"] or {"input": None, "output": None})
        if "error" in row:
            with pytest.raises(TemplateError):
                encode_item(data, tokenizer, tokenizer_name)
            continue
        payload = encode_item(data, tokenizer, tokenizer_name)
        if payload["token_count"] != row["count"]:
            wrong.append((row["n"], payload["token_count"], row["count"]))
    assert not wrong, f"{tokenizer_name}: {len(wrong)} records differ (n, ours, reference): {wrong[:5]}"
    assert payload["tokenizer"] == tokenizer_name and payload["experiment_tokenizer"] == f"sqs_10#{tokenizer_name}"
    assert payload["id"] == records[-1]["id"] and payload["model"] == records[-1]["model"]
