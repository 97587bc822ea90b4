// Where items that cannot become records go: bad input (malformed line, missing field, prompt
// not a list of messages, template error, unknown tokenizer, prompt too large) and records whose
// publishing failed after every retry. Each is counted by kind and written as one JSON line
// (kind, origin = source line or message id, tokenizer, reason, payload) to the sink's file, so
// nothing is only printed. Thread-safe.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace overhead::pipe {

// Every kind of dead letter, in one list. The names are stable (summary.json, dead-letter files).
enum class DeadLetterKind {
  malformed_json,     // a source line or body that is not JSON
  missing_field,      // a required field is absent
  bad_prompt,         // the prompt is not a list of messages
  template_error,     // the chat template refused the conversation (its own message)
  unknown_tokenizer,  // the item names a tokenizer the worker did not load
  prompt_too_large,   // over --max-prompt-bytes, or over the input queue's message limit
  bad_message,        // a queue body that is no work item or log message
  processing_error,   // an unexpected error while rendering or encoding one item
  publish_failed,     // a record not confirmed after the retries
  stamps_failed,      // a stamp patch not delivered after the retries
  send_failed,        // the producer: an entry the input queue refused
  store_failed,       // the consumer (or case 1's copy): a record the store refused for good
  duplicate_id,       // a source line whose id an earlier line already has (records are keyed by id)
  decode_failed,      // the decoder stage (--decoder) failed for the item, after the retries
  engine_refused,     // the engine blamed the request (an HTTP 4xx, e.g. a prompt over its context length)
};
inline constexpr DeadLetterKind kDeadLetterKinds[] = {
    DeadLetterKind::malformed_json,   DeadLetterKind::missing_field,  DeadLetterKind::bad_prompt,
    DeadLetterKind::template_error,   DeadLetterKind::unknown_tokenizer, DeadLetterKind::prompt_too_large,
    DeadLetterKind::bad_message,      DeadLetterKind::processing_error, DeadLetterKind::publish_failed,
    DeadLetterKind::stamps_failed,    DeadLetterKind::send_failed,    DeadLetterKind::store_failed,
    DeadLetterKind::duplicate_id,     DeadLetterKind::decode_failed,  DeadLetterKind::engine_refused};

// The kind's stable name ("publish_failed").
[[nodiscard]] const char* kind_name(DeadLetterKind kind);
// The kind named `name`; false when there is none.
[[nodiscard]] bool parse_dead_letter_kind(std::string_view name, DeadLetterKind& out);

struct DeadLetter {
  std::string kind;       // kind_name() of a DeadLetterKind
  std::string origin;     // "line 12", "message 42", or the record key for publish failures
  std::string tokenizer;  // empty when the failure precedes the tokenizer (a bad line)
  std::string reason;
  std::string payload;    // the offending input or record as JSON text (may be empty)
};

class DeadLetterSink {
 public:
  // `path` empty = keep in memory only (tests); else append JSON lines to it (created on first use).
  explicit DeadLetterSink(std::string path = "");
  // Throws std::logic_error when letter.kind is not a DeadLetterKind's name (a new kind must be
  // listed above, so summaries and docs never meet an unlisted one).
  void add(DeadLetter letter);

  std::size_t total() const;
  std::map<std::string, std::size_t> counts() const;
  // The first `kept` letters (all of them in tests; capped so a bad run cannot exhaust memory).
  std::vector<DeadLetter> letters() const;
  const std::string& path() const { return path_; }

  // A payload longer than this is kept as its first kMaxPayloadBytes (whole UTF-8 characters), and
  // the file's line adds "payload_bytes" (the full size) and "payload_fnv1a64" (its digest).
  static constexpr std::size_t kMaxPayloadBytes = 4096;

 private:
  static constexpr std::size_t kKept = 10000;
  std::string path_;
  mutable std::mutex mutex_;
  std::ofstream file_;
  std::map<std::string, std::size_t> counts_;
  std::vector<DeadLetter> letters_;
  std::size_t total_ = 0;
};

}  // namespace overhead::pipe
