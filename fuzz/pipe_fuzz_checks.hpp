// Invariants shared by the pipeline's fuzz targets (jsonl_record_fuzz, queue_body_fuzz): what an
// accepted source record must look like, that two records are the same, and that an item error
// names its input and carries a known dead-letter kind.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "pipe/dead_letter.hpp"
#include "ports/errors.hpp"
#include "pipe/work_item.hpp"

namespace overhead::fuzz {

inline void check_item_error(const ports::ItemError& e, std::string_view prefix) {
  if (std::string_view(e.what()).rfind(prefix, 0) != 0) fail("error does not name its input: " + std::string(e.what()));
  pipe::DeadLetterKind kind{};
  if (!pipe::parse_dead_letter_kind(e.kind(), kind)) fail("unknown dead-letter kind " + e.kind());
}

// Counts the message contents as the record's counters claim to (string content, or the text
// of each part of a list).
inline void count_contents(const nlohmann::json& prompt, std::int64_t& bytes, std::int64_t& chars) {
  auto add = [&](const std::string& s) {
    bytes += static_cast<std::int64_t>(s.size());
    for (const char c : s) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  };
  for (const auto& m : prompt) {
    const auto& c = m.at("content");
    if (c.is_string()) add(c.get<std::string>());
    else if (c.is_array())
      for (const auto& part : c)
        if (part.is_object() && part.contains("text") && part["text"].is_string()) add(part["text"].get<std::string>());
  }
}

inline void check_source_record(const pipe::SourceRecord& r, const char* where) {
  const std::string w = std::string(where) + ": ";
  if (!is_valid_utf8(r.id) || !is_valid_utf8(r.model)) fail(w + "id or model is not valid UTF-8");
  if (!r.prompt.is_array() || r.prompt.empty()) fail(w + "accepted a prompt that is not a non-empty list");
  for (const auto& m : r.prompt) {
    if (!m.is_object()) fail(w + "accepted a message that is not an object: " + r.prompt.dump());
    if (!m.contains("role") || !m["role"].is_string()) fail(w + "accepted a message without a string role: " + r.prompt.dump());
    if (!m.contains("content")) fail(w + "accepted a message without content: " + r.prompt.dump());
    const auto& c = m["content"];
    if (!c.is_string() && !c.is_array() && !c.is_null()) fail(w + "accepted content of another type: " + r.prompt.dump());
  }
  std::int64_t bytes = 0, chars = 0;
  count_contents(r.prompt, bytes, chars);
  if (bytes != r.prompt_bytes || chars != r.prompt_chars)
    fail(w + "prompt_bytes/prompt_chars " + std::to_string(r.prompt_bytes) + "/" + std::to_string(r.prompt_chars) +
         " but the contents hold " + std::to_string(bytes) + "/" + std::to_string(chars) + ": " + r.prompt.dump());
  if (nlohmann::json::parse(r.prompt_json, nullptr, false) != r.prompt)
    fail(w + "prompt_json does not hold the prompt: " + r.prompt_json + " vs " + r.prompt.dump());
}

inline void check_same_record(const pipe::SourceRecord& a, const pipe::SourceRecord& b, const char* where) {
  const std::string w = std::string(where) + ": ";
  if (a.id != b.id) fail(w + "id changed");
  if (a.model != b.model) fail(w + "model changed");
  if (a.prompt != b.prompt) fail(w + "prompt changed: " + a.prompt.dump() + " vs " + b.prompt.dump());
  if (a.api_input != b.api_input || a.api_output != b.api_output) fail(w + "usage changed");
  if (a.line != b.line) fail(w + "line changed");
  if (a.prompt_bytes != b.prompt_bytes || a.prompt_chars != b.prompt_chars) fail(w + "size counters changed");
}

}  // namespace overhead::fuzz
