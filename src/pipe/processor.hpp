// The per-item work of the worker, injected: render the chat template, encode, count. The
// queue, publisher and worker semantics are tested with a plain function here, without
// tokenizers; the real one (ChatTokenProcessor) wires a tokenizer and its chat template.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "pipe/work_item.hpp"
#include "ports/decoder.hpp"
#include "tok/incremental_detokenizer.hpp"

namespace overhead::pipe {

// How a model's answer is read for the record (agent/answer_parser.hpp): each unset follows the
// item's chat template (agent::detect_parsers), "none" reads nothing of that kind.
struct AnswerParsers {
  std::optional<std::string> tool_parser;
  std::optional<std::string> reasoning_parser;
};

// What the record keeps of an answer's shape.
struct AnswerCounts {
  std::int64_t tool_calls = 0;        // complete calls in the answer
  std::int64_t reasoning_tokens = 0;  // the reasoning's text counted with the item's tokenizer
};

struct ProcessResult {
  std::int64_t token_count = 0;
  std::int64_t render_end = 0;  // monotonic ns at which rendering ended and encoding began
  // Only from process_for_decoder (the decoder stage is on):
  std::int64_t encode_end = 0;  // monotonic ns at which encoding ended (0: the worker stamps it)
  std::string prompt;           // the prompt the model continues (with the generation prompt)
  // PromptForm::ids: the prompt's ids exactly as the template wrote them (nothing added).
  std::vector<std::uint32_t> prompt_ids;
  // The prompt's tokens as the engine reads them: the ids' count (ids), or our count of the text
  // with the engine's add_special_tokens=true (text); 0 with PromptForm::none.
  std::int64_t prompt_tokens_sent = 0;
  std::optional<std::int64_t> answer_tokens;  // the source's answer counted with the item's tokenizer
};

class Processor {
 public:
  virtual ~Processor() = default;
  // Thread-safe. Throws ItemError (template_error, unknown_tokenizer, ...) for an item that
  // cannot be processed; the worker dead-letters it and goes on.
  virtual ProcessResult process(const SourceRecord& source, const std::string& tokenizer) const = 0;
  // The same work, and what the decoder stage needs: the answer's length counted with the item's
  // tokenizer (when the source has an answer) and, by `form`, the prompt rendered with the
  // generation prompt (text) and its ids (ids). Work after the encode is stamped apart
  // (ProcessResult::encode_end), so E keeps its meaning. By default: process() alone.
  virtual ProcessResult process_for_decoder(const SourceRecord& source, const std::string& tokenizer,
                                            ports::PromptForm form) const {
    (void)form;
    return process(source, tokenizer);
  }
  // Tokens of `text` (an answer) with the item's tokenizer, without special tokens; nullopt when
  // the processor has no tokenizer for it.
  virtual std::optional<std::int64_t> count_text(const std::string& tokenizer, std::string_view text) const {
    (void)tokenizer;
    (void)text;
    return std::nullopt;
  }
  // The tool calls and reasoning in an answer (`text`), read as the gateway reads them: calls only
  // when the item had tools; `prompt` (the rendered one, may be empty) says whether the answer
  // starts inside a reasoning block. Zeros when the processor has no tokenizer for it.
  virtual AnswerCounts count_answer(const std::string& tokenizer, std::string_view text, bool with_tools,
                                    std::string_view prompt, const AnswerParsers& parsers) const {
    (void)tokenizer;
    (void)text;
    (void)with_tools;
    (void)prompt;
    (void)parsers;
    return {};
  }
  // Text back from the ids an engine streams, with the item's tokenizer (skip_special_tokens, as
  // vLLM's default); null when the processor has no tokenizer for it. The processor outlives it.
  virtual std::unique_ptr<tok::IncrementalDetokenizer> detokenizer(const std::string& tokenizer) const {
    (void)tokenizer;
    return nullptr;
  }
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
