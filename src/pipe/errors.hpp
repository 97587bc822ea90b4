// Exceptions at the edges of the pipeline. Each names what failed (URL, source line, message id)
// so the CLI can print one clear line; ItemError additionally carries a machine-readable kind that
// the dead-letter sink counts by.
#pragma once

#include <stdexcept>
#include <string>

namespace overhead::pipe {

class QueueError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Why one work item could not become a record. The kinds are stable strings (they appear in
// summary.json and the dead-letter file): malformed_json, missing_field, bad_prompt,
// template_error, unknown_tokenizer, prompt_too_large, bad_message, publish_failed.
class ItemError : public std::runtime_error {
 public:
  ItemError(std::string kind, const std::string& reason) : std::runtime_error(reason), kind_(std::move(kind)) {}
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
};

}  // namespace overhead::pipe
