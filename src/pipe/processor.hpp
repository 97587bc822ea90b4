// The per-item work of the worker, injected: render the chat template, encode, count. The
// queue, publisher and worker semantics are tested with a plain function here, without
// tokenizers; the real one (ChatTokenProcessor) wires a tokenizer and its chat template.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "pipe/work_item.hpp"

namespace overhead::pipe {

struct ProcessResult {
  std::int64_t token_count = 0;
  std::int64_t render_end = 0;  // monotonic ns at which rendering ended and encoding began
};

class Processor {
 public:
  virtual ~Processor() = default;
  // Thread-safe. Throws ItemError (template_error, unknown_tokenizer, ...) for an item that
  // cannot be processed; the worker dead-letters it and goes on.
  virtual ProcessResult process(const SourceRecord& source, const std::string& tokenizer) const = 0;
};

// A Processor from a function (tests, benchmarks of the pipeline alone).
class FunctionProcessor final : public Processor {
 public:
  using Fn = std::function<ProcessResult(const SourceRecord&, const std::string&)>;
  explicit FunctionProcessor(Fn fn) : fn_(std::move(fn)) {}
  ProcessResult process(const SourceRecord& source, const std::string& tokenizer) const override {
    return fn_(source, tokenizer);
  }

 private:
  Fn fn_;
};

}  // namespace overhead::pipe
