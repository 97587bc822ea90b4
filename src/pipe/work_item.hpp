// The work item: one record of the seed's JSONL (`id`, `model`, `prompt` messages or a completion's
// prompt text, `answer`,
// `usage{input,output}` or null) paired with one tokenizer name.
//
// A source record is parsed once and shared (immutable) by the items of every tokenizer, so the
// three tokenizers of the seed cost one parse, not three. On a queue the item travels as a compact
// JSON body (`encode_item_body`) that leaves out the answer, which only the decoder stage reads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "chat/value.hpp"
#include "ports/decoder.hpp"
#include "ports/queue_name.hpp"  // is_plain_queue_name: what a body's reply_to may be

namespace overhead::pipe {

// Further chat template variables of a record (its `tools` and a request's chat_template_kwargs):
// the JSON and the engine values converted from it once, which borrow its strings, so the two
// live together.
struct TemplateExtra {
  nlohmann::ordered_json json;  // {"tools": [...], kwargs...}, keys in the order sent, as tojson must print them
  chat::Value value;            // the same as a dict of engine values
};

struct SourceRecord {
  std::string id;
  std::string model;
  nlohmann::json prompt;            // a list of {role, content, ...} messages, validated
  // The same list as template engine values, converted once here and shared by every
  // tokenizer's item of this record (chat/json_value.hpp): rendering converts nothing.
  chat::Value prompt_value;
  std::string prompt_json;          // the same list as compact JSON (for queue bodies); empty in a parsed item
  // A completion's prompt (/v1/completions; in a queue body `"prompt"` a string instead of a list): text the engine
  // continues as it is, through no chat template, encoded with the tokenizer's special tokens added
  // (its BOS), as HF's tokenizer(prompt) and the engines' completions do. `prompt` is then an empty
  // list and `prompt_json` the text as a JSON string.
  std::optional<std::string> prompt_text;
  // The record's or request's `tools` (a list of tool definitions) as compact JSON, empty when it
  // has none; and the template variables built from it once, null when there are none.
  std::string tools_json;
  // A gateway's request's chat_template_kwargs (an object of further template variables, e.g.
  // enable_thinking) as compact JSON, empty when none; rendered through template_extra beside the
  // tools (the gateway refuses a key that collides with the template's own variables).
  std::string template_kwargs_json;
  std::shared_ptr<const TemplateExtra> template_extra;
  std::optional<std::int64_t> api_input;
  std::optional<std::int64_t> api_output;
  std::size_t line = 0;             // 1-based line in the source file (0 when unknown)
  std::shared_ptr<const std::string> file;  // the source file's path, shared by its records (null when unknown)
  std::int64_t prompt_chars = 0;    // code points over all string contents
  std::int64_t prompt_bytes = 0;    // UTF-8 bytes over all string contents
  // For the decoder stage (decoder.hpp): the record's answer, whose length (counted with the
  // item's tokenizer) is the wanted output length; else the request's max_tokens.
  std::optional<std::string> answer;
  std::optional<std::int64_t> max_tokens;
  // A gateway's request's sampling and limits for the engine (temperature, top_p, stop, seed, ...);
  // null when the request set none (the engine's defaults). Shared, immutable.
  std::shared_ptr<const ports::SamplingParams> sampling;
  // A gateway's structured-output constraint: what it is (the record's `constraint`: "",
  // "json_object", "json_schema", "tool_required", "tool_named") and the JSON Schema the engine is
  // constrained to, as compact JSON (ports::DecodeRequest::json_schema); both empty when none.
  std::string constraint;
  std::string json_schema;
  // For a gateway's request over a shared queue: the name of the gateway's reply queue, a sibling
  // of the input queue on the same broker (backends/queue_siblings.hpp). Only queue bodies carry
  // it; a source file never does.
  std::optional<std::string> reply_to;
  // A gateway's request that wants its answer streamed (`stream: true`): the worker passes the
  // decoder's text on as it comes (reply/reply_path.hpp). Only queue bodies carry it.
  bool stream = false;
  // A gateway's request admitted under an API key: the key's name (never its secret), which the
  // record carries so that its cost is charged to the key. Only queue bodies carry it.
  std::string key_name;
  // A Batch API item (serve/batch_runner.hpp): the batch's id ("batch_" and 1..74 of A-Z a-z 0-9
  // _ -), empty for any other item. The worker stores its record with the generated text under the
  // experiment of that name, keyed by the line's custom_id (the item's `id`), answers nobody, and
  // stores a refusal as a record too (finish_reason "error"), so every line of a batch ends as
  // exactly one record. Only queue bodies carry it.
  std::string batch;
};

// Whether `name` can be a batch's id, and so an item's `batch` (see SourceRecord::batch).
[[nodiscard]] bool is_batch_name(std::string_view name);

// Where a record came from, as every dead letter of it names it: "PATH:LINE", or "line LINE" when
// the file is not known.
[[nodiscard]] std::string source_origin(const SourceRecord& record);

struct WorkItem {
  std::shared_ptr<const SourceRecord> source;
  std::string tokenizer;
  // Where the item came from, for error reports: "line 12" or "message 42".
  std::string origin;
};

// Parses one JSONL line of the seed's format. Throws ItemError (malformed_json, missing_field,
// bad_prompt) whose message starts with "line N: ".
std::shared_ptr<const SourceRecord> parse_source_line(std::string_view line, std::size_t line_number,
                                                      std::shared_ptr<const std::string> file = nullptr);

// The queue body of a work item: {"tokenizer":..,"line":..,"id":..,"model":..,"usage":..,"prompt":[..]},
// then "tools", "chat_template_kwargs", "max_tokens", "sampling" ({"temperature","top_p","presence_penalty",
// "frequency_penalty","seed","stop","user"}, each only when set) and "constraint" with "json_schema"
// when the source has them, and with `with_answer` (the decoder stage is on) the
// "answer" when it has one, "reply_to" when `reply_to` is not empty, "stream":true when the
// source wants its answer streamed, and "batch" for a Batch API item; without them the body is as it always was.
std::string encode_item_body(const SourceRecord& source, std::string_view tokenizer, bool with_answer = false,
                             std::string_view reply_to = {});
// The reverse, but for `prompt_json`, left empty: nothing sends a parsed item on, and its body is
// what a dead letter of it keeps. `origin` names the message in errors. Throws ItemError (bad_message when the
// body is not an item at all or its reply_to is not a plain queue name, else the same kinds as
// parse_source_line).
WorkItem parse_item_body(std::string_view body, const std::string& origin);

// Where a body's answer goes, read from a body that parse_item_body refused (its prompt too deep,
// a field of the wrong type): the request id and its reply queue, so that the refusal still
// reaches the gateway waiting for it. Empty when even these cannot be read (not JSON, no string
// "id", a reply_to that is not a plain queue name).
struct ItemAddress {
  std::string id;
  std::optional<std::string> reply_to;
};
[[nodiscard]] std::optional<ItemAddress> peek_item_address(std::string_view body);

// Code points of valid UTF-8 (bytes that are not continuation bytes).
std::int64_t count_code_points(std::string_view utf8);

}  // namespace overhead::pipe
