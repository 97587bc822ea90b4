// One `data:` event of an OpenAI /v1/completions stream (a text_completion chunk), read for the few
// fields the decoder needs: choices[0].text, choices[0].finish_reason, choices[0].token_ids (vLLM's
// return_token_ids), usage.completion_tokens / prompt_tokens, and error. It is read with simdjson's On-Demand API: no DOM is built per event
// and nothing is allocated per event once the parser's buffers have grown to the longest event
// (the decoder reads one event per generated token, so this is its hot path).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace overhead::backends {

struct CompletionEvent {
  // Views into the parser, valid until its next parse().
  std::string_view text;           // choices[0].text, unescaped; empty when absent or null
  std::string_view finish_reason;  // choices[0].finish_reason; empty when absent or null
  const std::vector<std::uint32_t>* token_ids = nullptr;  // choices[0].token_ids; null when absent or null
  std::int64_t completion_tokens = -1;  // usage.completion_tokens; -1: no usage in this event
  std::int64_t prompt_tokens = -1;      // usage.prompt_tokens; -1: none
  bool has_error = false;               // a non-null "error" member: the server failed mid-stream
  std::string_view error_message;       // its message (error.message, or the error when a string)
};

class CompletionEventParser {
 public:
  CompletionEventParser();
  ~CompletionEventParser();
  CompletionEventParser(const CompletionEventParser&) = delete;
  CompletionEventParser& operator=(const CompletionEventParser&) = delete;

  // At least this many readable bytes must follow an event in its buffer (simdjson reads ahead).
  static const std::size_t kPadding;

  // Reads `json` (data[0, size), with capacity - size >= kPadding bytes readable after it). False
  // with `why` when it is no JSON object or a field has the wrong type.
  [[nodiscard]] bool parse(const char* data, std::size_t size, std::size_t capacity, CompletionEvent& out,
                           std::string& why);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace overhead::backends
