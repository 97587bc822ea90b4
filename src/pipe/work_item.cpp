#include "pipe/work_item.hpp"

#include <algorithm>
#include <charconv>

#include "chat/json_value.hpp"

#include <simdjson.h>

#include "pipe/dead_letter.hpp"
#include "ports/errors.hpp"
#include "util/json_writer.hpp"
#include "util/utf8.hpp"

namespace overhead::pipe {

using ports::is_plain_queue_name;
using ports::ItemError;
using ports::SamplingParams;

namespace {

namespace dom = simdjson::dom;

// simdjson's DOM parser reuses its buffers across documents; one per thread keeps parsing free
// of allocation after warm-up and of any lock.
dom::parser& thread_parser() {
  thread_local dom::parser parser;
  return parser;
}

nlohmann::json to_nlohmann(dom::element e) {
  switch (e.type()) {
    case dom::element_type::ARRAY: {
      nlohmann::json out = nlohmann::json::array();
      for (dom::element x : dom::array(e)) out.push_back(to_nlohmann(x));
      return out;
    }
    case dom::element_type::OBJECT: {
      nlohmann::json out = nlohmann::json::object();
      for (dom::key_value_pair kv : dom::object(e)) out[std::string(kv.key)] = to_nlohmann(kv.value);
      return out;
    }
    case dom::element_type::INT64: return std::int64_t(e);
    case dom::element_type::UINT64: return std::uint64_t(e);
    case dom::element_type::DOUBLE: return double(e);
    case dom::element_type::STRING: return std::string(std::string_view(e));
    case dom::element_type::BOOL: return bool(e);
    case dom::element_type::NULL_VALUE: return nullptr;
  }
  return nullptr;
}

// The element as compact JSON, byte for byte what simdjson::minify writes (strings escaped the
// same way: `"`, `\\` and the bytes below 0x20, \b \t \n \f \r by name, the rest as \u00xx),
// but strings are copied a run at a time: simdjson's formatter copies every byte after a string's
// first escape one by one, and a prompt's text is full of newlines (it was half of a work item's
// decoding).
void append_minified(std::string& out, dom::element e) {
  switch (e.type()) {
    case dom::element_type::ARRAY: {
      out += '[';
      bool first = true;
      for (dom::element x : dom::array(e)) {
        if (!first) out += ',';
        first = false;
        append_minified(out, x);
      }
      out += ']';
      return;
    }
    case dom::element_type::OBJECT: {
      out += '{';
      bool first = true;
      for (dom::key_value_pair kv : dom::object(e)) {
        if (!first) out += ',';
        first = false;
        util::append_json_string(out, kv.key, util::kPythonJsonDumps);
        out += ':';
        append_minified(out, kv.value);
      }
      out += '}';
      return;
    }
    case dom::element_type::STRING: util::append_json_string(out, std::string_view(e), util::kPythonJsonDumps); return;
    case dom::element_type::INT64: {
      char buf[24];
      out.append(buf, std::to_chars(buf, buf + sizeof buf, std::int64_t(e)).ptr);
      return;
    }
    case dom::element_type::UINT64: {
      char buf[24];
      out.append(buf, std::to_chars(buf, buf + sizeof buf, std::uint64_t(e)).ptr);
      return;
    }
    case dom::element_type::DOUBLE: out += simdjson::minify(e); return;  // rare: simdjson's shortest form
    case dom::element_type::BOOL: out += bool(e) ? "true" : "false"; return;
    case dom::element_type::NULL_VALUE: out += "null"; return;
  }
}

std::string minified(dom::element e) {
  std::string out;
  append_minified(out, e);
  return out;
}

// obj[key] with the last of duplicate keys, as Python's json.loads and the prompt's conversion
// (to_nlohmann: later keys overwrite) take it. simdjson's obj[key] takes the first, so the message
// checked and counted could differ from the message rendered.
simdjson::error_code last_field(dom::object obj, std::string_view key, dom::element& out) {
  simdjson::error_code found = simdjson::NO_SUCH_FIELD;
  for (dom::key_value_pair kv : obj)
    if (kv.key == key) {
      out = kv.value;
      found = simdjson::SUCCESS;
    }
  return found;
}

[[noreturn]] void fail(const std::string& kind, const std::string& where, const std::string& reason) {
  throw ItemError(kind, reason, where);
}

std::string_view required_string(dom::object obj, const char* field, const std::string& where) {
  dom::element v;
  if (last_field(obj, field, v) != simdjson::SUCCESS) fail(kind_name(DeadLetterKind::missing_field), where, std::string("missing field \"") + field + "\"");
  std::string_view s;
  if (v.get(s) != simdjson::SUCCESS) fail(kind_name(DeadLetterKind::missing_field), where, std::string("field \"") + field + "\" is not a string");
  return s;
}

std::optional<std::int64_t> optional_int(dom::object obj, const char* field) {
  dom::element e;
  std::int64_t v = 0;
  if (last_field(obj, field, e) == simdjson::SUCCESS && e.get(v) == simdjson::SUCCESS) return v;
  return std::nullopt;
}

// "sampling" of a body, as append_sampling wrote it; a field of the wrong type is a bad_prompt
// naming it (a gateway checked them all, so only a hand-made body gets here).
std::shared_ptr<const SamplingParams> read_sampling(dom::element e, const std::string& where) {
  const auto bad = [&](const std::string& what) { fail(kind_name(DeadLetterKind::bad_prompt), where, "\"sampling\"" + what); };
  dom::object obj;
  if (e.get(obj) != simdjson::SUCCESS) bad(" is not an object");
  auto s = std::make_shared<SamplingParams>();
  const auto number = [&](const char* key, std::optional<double>& out) {
    dom::element v;
    if (last_field(obj, key, v) != simdjson::SUCCESS || v.is_null()) return;
    double d = 0;
    if (v.get(d) != simdjson::SUCCESS) bad(std::string(".") + key + " is not a number");
    out = d;
  };
  number("temperature", s->temperature);
  number("top_p", s->top_p);
  number("presence_penalty", s->presence_penalty);
  number("frequency_penalty", s->frequency_penalty);
  dom::element v;
  if (last_field(obj, "seed", v) == simdjson::SUCCESS && !v.is_null()) {
    std::int64_t seed = 0;
    if (v.get(seed) != simdjson::SUCCESS) bad(".seed is not an integer");
    s->seed = seed;
  }
  if (last_field(obj, "stop", v) == simdjson::SUCCESS && !v.is_null()) {
    dom::array stops;
    if (v.get(stops) != simdjson::SUCCESS || stops.size() > 4) bad(".stop is not a list of up to 4 strings");
    for (dom::element x : stops) {
      std::string_view t;
      if (x.get(t) != simdjson::SUCCESS) bad(".stop is not a list of up to 4 strings");
      s->stop.emplace_back(t);
    }
  }
  if (last_field(obj, "user", v) == simdjson::SUCCESS && !v.is_null()) {
    std::string_view u;
    if (v.get(u) != simdjson::SUCCESS) bad(".user is not a string");
    s->user = std::string(u);
  }
  return s;
}

// The messages of a chat record's `prompt` (a list of {role, content} objects), counted.
void fill_messages(dom::element prompt, const std::string& where, SourceRecord& rec, bool with_prompt_json) {
  dom::array messages;
  if (prompt.get(messages) != simdjson::SUCCESS)
    fail(kind_name(DeadLetterKind::bad_prompt), where, "field \"prompt\" is neither a list of messages nor a text");
  if (messages.size() == 0) fail(kind_name(DeadLetterKind::bad_prompt), where, "field \"prompt\" is an empty list");
  std::size_t index = 0;
  for (dom::element m : messages) {
    dom::object msg;
    const std::string at = "prompt[" + std::to_string(index++) + "]";
    if (m.get(msg) != simdjson::SUCCESS) fail(kind_name(DeadLetterKind::bad_prompt), where, at + " is not a message object");
    std::string_view role;
    dom::element role_value;
    if (last_field(msg, "role", role_value) != simdjson::SUCCESS || role_value.get(role) != simdjson::SUCCESS) fail(kind_name(DeadLetterKind::bad_prompt), where, at + " has no string \"role\"");
    dom::element content;
    if (last_field(msg, "content", content) != simdjson::SUCCESS) fail(kind_name(DeadLetterKind::bad_prompt), where, at + " has no \"content\"");
    std::string_view text;
    if (content.get(text) == simdjson::SUCCESS) {
      rec.prompt_bytes += static_cast<std::int64_t>(text.size());
      rec.prompt_chars += count_code_points(text);
    } else if (content.is_array()) {
      // Content given as a list of parts: count the text parts.
      for (dom::element part : dom::array(content)) {
        std::string_view t;
        dom::object part_object;
        dom::element part_text;
        if (part.get(part_object) == simdjson::SUCCESS && last_field(part_object, "text", part_text) == simdjson::SUCCESS &&
            part_text.get(t) == simdjson::SUCCESS) {
          rec.prompt_bytes += static_cast<std::int64_t>(t.size());
          rec.prompt_chars += count_code_points(t);
        }
      }
    } else if (!content.is_null()) {
      fail(kind_name(DeadLetterKind::bad_prompt), where, at + ".content is neither a string, a list of parts nor null");
    }
  }
  rec.prompt = to_nlohmann(prompt);
  rec.prompt_value = chat::value_from_json(rec.prompt);
  if (with_prompt_json) rec.prompt_json = minified(prompt);
}

// Fills everything but `line` from a parsed object of the record shape; `prompt_json` only with
// `with_prompt_json` (see parse_item_body). A prompt text (a completion's) only with
// `text_prompt`: queue bodies carry the gateway's /v1/completions requests; the seed's JSONL
// holds conversations, and a text there is the bad_prompt it always was.
void fill_record(dom::object obj, const std::string& where, SourceRecord& rec, bool with_prompt_json, bool text_prompt) {
  rec.id = required_string(obj, "id", where);
  rec.model = required_string(obj, "model", where);
  dom::element prompt;
  if (last_field(obj, "prompt", prompt) != simdjson::SUCCESS) fail(kind_name(DeadLetterKind::missing_field), where, "missing field \"prompt\"");
  if (std::string_view raw; text_prompt && prompt.get(raw) == simdjson::SUCCESS) {
    // A completion's prompt (/v1/completions): text the engine continues as it is.
    if (raw.empty()) fail(kind_name(DeadLetterKind::bad_prompt), where, "field \"prompt\" is an empty text");
    rec.prompt_text = std::string(raw);
    rec.prompt_bytes = static_cast<std::int64_t>(raw.size());
    rec.prompt_chars = count_code_points(raw);
    rec.prompt = nlohmann::json::array();
    rec.prompt_value = chat::value_from_json(rec.prompt);
    if (with_prompt_json) rec.prompt_json = minified(prompt);
  } else {
    fill_messages(prompt, where, rec, with_prompt_json);
  }
  dom::element tools;
  if (last_field(obj, "tools", tools) == simdjson::SUCCESS && !tools.is_null()) {
    if (!tools.is_array()) fail(kind_name(DeadLetterKind::bad_prompt), where, "field \"tools\" is not a list of tool definitions");
    rec.tools_json = minified(tools);
  }
  dom::element kwargs;
  if (last_field(obj, "chat_template_kwargs", kwargs) == simdjson::SUCCESS && !kwargs.is_null()) {
    if (!kwargs.is_object()) fail(kind_name(DeadLetterKind::bad_prompt), where, "field \"chat_template_kwargs\" is not an object");
    if (dom::object(kwargs).size() > 0) rec.template_kwargs_json = minified(kwargs);
  }
  if (!rec.tools_json.empty() || !rec.template_kwargs_json.empty()) {
    // Parsed again in order: tojson prints a tool's schema keys as sent, as Python keeps them.
    auto extra = std::make_shared<TemplateExtra>();
    extra->json = nlohmann::ordered_json::object();
    if (!rec.template_kwargs_json.empty()) {
      // The gateway refused kwargs named as the template's own variables; a body from elsewhere
      // still cannot replace the tools with one.
      nlohmann::ordered_json kwargs_json = nlohmann::ordered_json::parse(rec.template_kwargs_json);
      for (auto it = kwargs_json.begin(); it != kwargs_json.end(); ++it)
        if (it.key() != "tools") extra->json[it.key()] = std::move(it.value());
    }
    if (!rec.tools_json.empty()) extra->json["tools"] = nlohmann::ordered_json::parse(rec.tools_json);
    extra->value = chat::value_from_json(extra->json);
    rec.template_extra = std::move(extra);
  }
  dom::object usage;
  dom::element usage_value;
  if (last_field(obj, "usage", usage_value) == simdjson::SUCCESS && usage_value.get(usage) == simdjson::SUCCESS) {
    rec.api_input = optional_int(usage, "input");
    rec.api_output = optional_int(usage, "output");
  }
  dom::element answer;
  std::string_view answer_text;
  if (last_field(obj, "answer", answer) == simdjson::SUCCESS && answer.get(answer_text) == simdjson::SUCCESS)
    rec.answer = std::string(answer_text);
  if (const auto m = optional_int(obj, "max_tokens"); m && *m > 0) rec.max_tokens = m;
  dom::element sampling;
  if (last_field(obj, "sampling", sampling) == simdjson::SUCCESS && !sampling.is_null()) rec.sampling = read_sampling(sampling, where);
  dom::element constraint;
  std::string_view constraint_kind;
  if (last_field(obj, "constraint", constraint) == simdjson::SUCCESS && !constraint.is_null()) {
    if (constraint.get(constraint_kind) != simdjson::SUCCESS || constraint_kind.empty())
      fail(kind_name(DeadLetterKind::bad_prompt), where, "field \"constraint\" is not a constraint's name");
    dom::element schema;
    if (last_field(obj, "json_schema", schema) != simdjson::SUCCESS || !(schema.is_object() || schema.is_bool()))
      fail(kind_name(DeadLetterKind::bad_prompt), where, "field \"constraint\" without a \"json_schema\" object or boolean");
    rec.constraint = std::string(constraint_kind);
    rec.json_schema = minified(schema);
  }
}

void append_number(std::string& out, const char* key, const std::optional<double>& v) {
  if (!v) return;
  out += out.back() == '{' ? "\"" : ",\"";
  out += key;
  out += "\":";
  out += nlohmann::json(*v).dump();  // shortest round-trip form
}

void append_sampling(std::string& out, const SamplingParams& s) {
  out += ",\"sampling\":{";
  append_number(out, "temperature", s.temperature);
  append_number(out, "top_p", s.top_p);
  append_number(out, "presence_penalty", s.presence_penalty);
  append_number(out, "frequency_penalty", s.frequency_penalty);
  const auto key = [&out](const char* k) {
    out += out.back() == '{' ? "\"" : ",\"";
    out += k;
    out += "\":";
  };
  if (s.seed) {
    key("seed");
    out += std::to_string(*s.seed);
  }
  if (!s.stop.empty()) {
    key("stop");
    out += '[';
    for (std::size_t i = 0; i < s.stop.size(); ++i) {
      if (i) out += ',';
      util::append_json_string(out, s.stop[i]);
    }
    out += ']';
  }
  if (!s.user.empty()) {
    key("user");
    util::append_json_string(out, s.user);
  }
  out += '}';
}

dom::object parse_object(std::string_view text, const std::string& where, const char* bad_kind) {
  dom::element doc;
  if (auto err = thread_parser().parse(text.data(), text.size(), true).get(doc); err)
    fail(bad_kind, where, std::string("invalid JSON (") + simdjson::error_message(err) + ")");
  dom::object obj;
  if (doc.get(obj) != simdjson::SUCCESS) fail(bad_kind, where, "not a JSON object");
  return obj;
}

}  // namespace

std::int64_t count_code_points(std::string_view utf8) {
  return static_cast<std::int64_t>(util::utf8::count_code_points(utf8));
}

std::shared_ptr<const SourceRecord> parse_source_line(std::string_view line, std::size_t line_number,
                                                      std::shared_ptr<const std::string> file) {
  const std::string where = "line " + std::to_string(line_number);
  auto rec = std::make_shared<SourceRecord>();
  rec->line = line_number;
  rec->file = std::move(file);
  fill_record(parse_object(line, where, kind_name(DeadLetterKind::malformed_json)), where, *rec, true, false);
  return rec;
}

std::string encode_item_body(const SourceRecord& source, std::string_view tokenizer, bool with_answer,
                             std::string_view reply_to) {
  std::string out;
  out.reserve(source.prompt_json.size() + source.id.size() + source.model.size() + 96);
  out += "{\"tokenizer\":";
  util::append_json_string(out, tokenizer);
  out += ",\"line\":" + std::to_string(source.line) + ",\"id\":";
  util::append_json_string(out, source.id);
  out += ",\"model\":";
  util::append_json_string(out, source.model);
  out += ",\"usage\":";
  if (source.api_input || source.api_output) {
    out += "{\"input\":";
    out += source.api_input ? std::to_string(*source.api_input) : "null";
    out += ",\"output\":";
    out += source.api_output ? std::to_string(*source.api_output) : "null";
    out += "}";
  } else {
    out += "null";
  }
  out += ",\"prompt\":";
  out += source.prompt_json;
  if (!source.tools_json.empty()) out += ",\"tools\":" + source.tools_json;
  if (!source.template_kwargs_json.empty()) out += ",\"chat_template_kwargs\":" + source.template_kwargs_json;
  if (source.max_tokens) out += ",\"max_tokens\":" + std::to_string(*source.max_tokens);
  if (source.sampling) append_sampling(out, *source.sampling);
  if (!source.constraint.empty()) {
    out += ",\"constraint\":";
    util::append_json_string(out, source.constraint);
    out += ",\"json_schema\":" + source.json_schema;
  }
  if (with_answer && source.answer) {
    out += ",\"answer\":";
    util::append_json_string(out, *source.answer);
  }
  if (!reply_to.empty()) {
    out += ",\"reply_to\":";
    util::append_json_string(out, reply_to);
  }
  if (source.stream) out += ",\"stream\":true";
  if (!source.key_name.empty()) {
    out += ",\"key_name\":";
    util::append_json_string(out, source.key_name);
  }
  if (!source.batch.empty()) {
    out += ",\"batch\":";
    util::append_json_string(out, source.batch);
  }
  out += "}";
  return out;
}

WorkItem parse_item_body(std::string_view body, const std::string& origin) {
  dom::object obj = parse_object(body, origin, kind_name(DeadLetterKind::bad_message));
  WorkItem item;
  item.origin = origin;
  std::string_view tok;
  dom::element tok_value;
  if (last_field(obj, "tokenizer", tok_value) != simdjson::SUCCESS || tok_value.get(tok) != simdjson::SUCCESS) fail(kind_name(DeadLetterKind::bad_message), origin, "no string \"tokenizer\" in the item body");
  item.tokenizer = tok;
  auto rec = std::make_shared<SourceRecord>();
  std::uint64_t line = 0;
  dom::element line_value;
  if (last_field(obj, "line", line_value) == simdjson::SUCCESS && line_value.get(line) == simdjson::SUCCESS) rec->line = line;
  // The item's prompt_json is left empty: it exists to write queue bodies, and a parsed item is
  // never sent on (a dead letter of it keeps the body itself); minifying it was 14.7k
  // instructions, almost half of the parse.
  fill_record(obj, origin, *rec, false, true);
  dom::element reply_value;
  if (last_field(obj, "reply_to", reply_value) == simdjson::SUCCESS) {
    std::string_view reply_to;
    if (reply_value.get(reply_to) != simdjson::SUCCESS || !is_plain_queue_name(reply_to))
      fail(kind_name(DeadLetterKind::bad_message), origin, "\"reply_to\" is not a queue name (1..80 of A-Z a-z 0-9 _ -)");
    rec->reply_to = std::string(reply_to);
  }
  dom::element stream_value;
  bool stream = false;
  if (last_field(obj, "stream", stream_value) == simdjson::SUCCESS && stream_value.get(stream) == simdjson::SUCCESS)
    rec->stream = stream;
  dom::element key_value;
  if (last_field(obj, "key_name", key_value) == simdjson::SUCCESS) {
    std::string_view key_name;
    if (key_value.get(key_name) != simdjson::SUCCESS)
      fail(kind_name(DeadLetterKind::bad_message), origin, "\"key_name\" is not a string");
    rec->key_name = std::string(key_name);
  }
  dom::element batch_value;
  if (last_field(obj, "batch", batch_value) == simdjson::SUCCESS) {
    std::string_view batch;
    // A name of the batch shape only: an item cannot write its record into another experiment.
    if (batch_value.get(batch) != simdjson::SUCCESS || !is_batch_name(batch))
      fail(kind_name(DeadLetterKind::bad_message), origin, "\"batch\" is not a batch id (batch_ and 1..74 of A-Z a-z 0-9 _ -)");
    rec->batch = std::string(batch);
  }
  item.source = std::move(rec);
  return item;
}

bool is_batch_name(std::string_view name) {
  constexpr std::string_view kPrefix = "batch_";
  return name.size() > kPrefix.size() && name.starts_with(kPrefix) && is_plain_queue_name(name);
}

std::optional<ItemAddress> peek_item_address(std::string_view body) {
  try {
    dom::object obj = parse_object(body, "", kind_name(DeadLetterKind::bad_message));
    dom::element v;
    std::string_view s;
    if (last_field(obj, "id", v) != simdjson::SUCCESS || v.get(s) != simdjson::SUCCESS) return std::nullopt;
    ItemAddress address{std::string(s), std::nullopt};
    if (last_field(obj, "reply_to", v) == simdjson::SUCCESS) {
      if (v.get(s) != simdjson::SUCCESS || !is_plain_queue_name(s)) return std::nullopt;
      address.reply_to = std::string(s);
    }
    return address;
  } catch (const ItemError&) {
    return std::nullopt;
  }
}

std::string source_origin(const SourceRecord& record) {
  return (record.file ? *record.file + ":" : std::string("line ")) + std::to_string(record.line);
}

}  // namespace overhead::pipe
