// A Batch API input file as the runner reads it (serve/batch_runner.hpp): line by line from the
// object store in pieces of bounded size (ObjectLines), each line checked as OpenAI checks it
// (check_batch_line: JSON, custom_id, method POST, url equal to the batch's endpoint, a body the
// chat route would accept, within the gateway's limits) into the work item it becomes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "pipe/work_item.hpp"
#include "ports/object_store.hpp"
#include "serve/batch_state.hpp"
#include "serve/chat_request.hpp"
#include "serve/special_tokens_guard.hpp"

namespace overhead::serve {

class BindingCache;

// The lines of one object, read `piece_bytes` at a time: memory is bounded by the piece and the
// longest line, whatever the object's size. A line over `max_line_bytes` is returned cut to that
// many bytes with `too_long` set, the rest of it skipped.
class ObjectLines {
 public:
  ObjectLines(ports::ObjectStore& store, std::string key, std::size_t max_line_bytes, std::size_t piece_bytes = 1 << 20);
  // The next line without its "\n" (and "\r"); false at the end.
  bool next(std::string& line, bool& too_long);
  [[nodiscard]] std::size_t line_number() const { return line_number_; }
  // The byte offset of the next line: a reader made again later starts there with seek().
  [[nodiscard]] std::uint64_t position() const { return offset_ - (buffer_.size() - at_); }
  // Before the first next(): reading starts at byte `offset`, which begins line `line_number` + 1.
  void seek(std::uint64_t offset, std::size_t line_number) {
    offset_ = offset;
    line_number_ = line_number;
  }

 private:
  bool fill();
  ports::ObjectStore& store_;
  std::string key_;
  std::size_t max_line_bytes_, piece_bytes_;
  std::uint64_t offset_ = 0;
  std::string buffer_;
  std::size_t at_ = 0;
  bool end_ = false;
  std::size_t line_number_ = 0;
};

// One error of OpenAI's `errors.data`: {code, message, param, line}.
struct LineError {
  std::string code, message, param;
  std::size_t line = 0;
  [[nodiscard]] nlohmann::ordered_json json() const;
};

struct BatchLineLimits {
  std::size_t max_line_bytes = 1 << 20;  // the gateway's --max-body-bytes: a line's body is a request
  std::size_t max_messages = 1024;
  std::size_t max_item_bytes = 256 * 1024;  // the batch lane's largest message
  SpecialTokensInContent special_tokens = SpecialTokensInContent::kRefuse;
};

struct CheckedLine {
  ChatRequest request;        // as the chat route reads it (its tools and tool_choice shape the answer)
  pipe::SourceRecord source;  // id = custom_id, batch = the batch's id
  std::string tokenizer;
  std::string body;           // the work item's queue body
};

// Checks line `number` of `batch` (its endpoint, and the models its owner may use); the error
// names the line and the field. The item is charged to the batch's owner.
[[nodiscard]] std::variant<CheckedLine, LineError> check_batch_line(const std::string& line, std::size_t number, const Batch& batch,
                                                                    BindingCache& bindings, const BatchLineLimits& limits);

}  // namespace overhead::serve
