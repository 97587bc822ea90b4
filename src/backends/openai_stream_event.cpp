#include "backends/openai_stream_event.hpp"

#include <utility>

#include <simdjson.h>

namespace overhead::backends {

namespace od = simdjson::ondemand;

struct CompletionEventParser::Impl {
  od::parser parser;
  std::vector<std::uint32_t> token_ids;  // the last event's, reused
};

const std::size_t CompletionEventParser::kPadding = simdjson::SIMDJSON_PADDING;

CompletionEventParser::CompletionEventParser() : impl_(std::make_unique<Impl>()) {}
CompletionEventParser::~CompletionEventParser() = default;

namespace {

bool is_null(od::value& v) {
  od::json_type t;
  return v.type().get(t) == simdjson::SUCCESS && t == od::json_type::null;
}

// A string or null (-> empty); anything else is a type error.
simdjson::error_code string_or_null(od::value& v, std::string_view& out) {
  if (is_null(v)) {
    out = {};
    return simdjson::SUCCESS;
  }
  return v.get_string().get(out);
}

// A list of token ids (non-negative integers below 2^32) or null.
simdjson::error_code read_token_ids(od::value& v, std::vector<std::uint32_t>& ids, CompletionEvent& out) {
  if (is_null(v)) return simdjson::SUCCESS;
  od::array array;
  if (auto e = v.get_array().get(array)) return e;
  ids.clear();
  for (auto element : array) {
    std::uint64_t id = 0;
    if (auto e = element.get_uint64().get(id)) return e;
    if (id > 0xFFFFFFFFu) return simdjson::NUMBER_OUT_OF_RANGE;
    ids.push_back(static_cast<std::uint32_t>(id));
  }
  out.token_ids = &ids;
  return simdjson::SUCCESS;
}

simdjson::error_code read_choice(od::value& v, std::vector<std::uint32_t>& ids, CompletionEvent& out) {
  od::object choice;
  if (auto e = v.get_object().get(choice)) return e;
  for (auto f : choice) {
    od::field field;
    std::string_view key;
    if (auto e = std::move(f).get(field)) return e;
    if (auto e = field.unescaped_key().get(key)) return e;
    if (key == "text") {
      if (auto e = string_or_null(field.value(), out.text)) return e;
    } else if (key == "finish_reason") {
      if (auto e = string_or_null(field.value(), out.finish_reason)) return e;
    } else if (key == "token_ids") {
      if (auto e = read_token_ids(field.value(), ids, out)) return e;
    }
  }
  return simdjson::SUCCESS;
}

simdjson::error_code read_choices(od::value& v, std::vector<std::uint32_t>& ids, CompletionEvent& out) {
  od::array choices;
  if (auto e = v.get_array().get(choices)) return e;
  bool first = true;
  for (auto c : choices) {  // every element is walked (On-Demand reads in order); only [0] is kept
    od::value choice;
    if (auto e = std::move(c).get(choice)) return e;
    if (first) {
      if (auto e = read_choice(choice, ids, out)) return e;
      first = false;
    }
  }
  return simdjson::SUCCESS;
}

simdjson::error_code read_usage(od::value& v, CompletionEvent& out) {
  if (is_null(v)) return simdjson::SUCCESS;  // vLLM: "usage": null until the last chunk
  od::object usage;
  if (auto e = v.get_object().get(usage)) return e;
  for (auto f : usage) {
    od::field field;
    std::string_view key;
    if (auto e = std::move(f).get(field)) return e;
    if (auto e = field.unescaped_key().get(key)) return e;
    if (key == "completion_tokens") {
      if (auto e = field.value().get_int64().get(out.completion_tokens)) return e;
    } else if (key == "prompt_tokens") {
      if (auto e = field.value().get_int64().get(out.prompt_tokens)) return e;
    }
  }
  return simdjson::SUCCESS;
}

simdjson::error_code read_error(od::value& v, CompletionEvent& out) {
  od::json_type t;
  if (auto e = v.type().get(t)) return e;
  if (t == od::json_type::null) return simdjson::SUCCESS;
  out.has_error = true;
  if (t == od::json_type::string) return v.get_string().get(out.error_message);
  if (t != od::json_type::object) return simdjson::SUCCESS;
  od::object error;
  if (auto e = v.get_object().get(error)) return e;
  for (auto f : error) {
    od::field field;
    std::string_view key;
    if (auto e = std::move(f).get(field)) return e;
    if (auto e = field.unescaped_key().get(key)) return e;
    if (key == "message" && !is_null(field.value())) {
      if (auto e = field.value().get_string().get(out.error_message)) return e;
    }
  }
  return simdjson::SUCCESS;
}

}  // namespace

bool CompletionEventParser::parse(const char* data, std::size_t size, std::size_t capacity, CompletionEvent& out,
                                  std::string& why) {
  out = CompletionEvent{};
  od::document doc;
  od::object root;
  simdjson::error_code e = impl_->parser.iterate(data, size, capacity).get(doc);
  if (!e) e = doc.get_object().get(root);
  if (e) {
    why = std::string("not a JSON object (") + simdjson::error_message(e) + ")";
    return false;
  }
  std::string_view key;
  for (auto f : root) {
    od::field field;
    if ((e = std::move(f).get(field)) || (e = field.unescaped_key().get(key))) break;
    if (key == "choices") e = read_choices(field.value(), impl_->token_ids, out);
    else if (key == "usage") e = read_usage(field.value(), out);
    else if (key == "error") e = read_error(field.value(), out);
    if (e) break;
  }
  if (e) {
    why = std::string(key.empty() ? "" : "field '" + std::string(key) + "': ") + simdjson::error_message(e);
    return false;
  }
  return true;
}

}  // namespace overhead::backends
