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
#include <vector>

namespace overhead::pipe {

struct DeadLetter {
  std::string kind;       // see ItemError
  std::string origin;     // "line 12", "message 42", or the record key for publish failures
  std::string tokenizer;  // empty when the failure precedes the tokenizer (a bad line)
  std::string reason;
  std::string payload;    // the offending input or record as JSON text (may be empty)
};

class DeadLetterSink {
 public:
  // `path` empty = keep in memory only (tests); else append JSON lines to it (created on first use).
  explicit DeadLetterSink(std::string path = "");
  void add(DeadLetter letter);

  std::size_t total() const;
  std::map<std::string, std::size_t> counts() const;
  // The first `kept` letters (all of them in tests; capped so a bad run cannot exhaust memory).
  std::vector<DeadLetter> letters() const;
  const std::string& path() const { return path_; }

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
