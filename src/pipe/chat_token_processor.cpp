#include "pipe/chat_token_processor.hpp"

#include "agent/answer_parser.hpp"
#include "ports/clock.hpp"
#include "pipe/dead_letter.hpp"
#include "ports/errors.hpp"

namespace overhead::pipe {

using ports::ItemError;
using ports::monotonic_ns;

ChatTokenProcessor::ChatTokenProcessor(const std::vector<std::string>& tokenizers, std::optional<std::string> date) {
  options_.add_generation_prompt = false;
  options_.date = std::move(date);
  generation_options_ = options_;
  generation_options_.add_generation_prompt = true;
  for (const auto& name : tokenizers) {
    try {
      auto b = binding::ChatBinding::load(name);
      detected_parsers_.emplace(b->name(), agent::detect_parsers(b->chat_template().source()));
      by_bundled_name_.emplace(binding::bundled_tokenizer_name(name), b);
      entries_.emplace(name, std::move(b));
    } catch (const chat::TemplateError& err) {
      // The tokenizer is known; its template is what fails, for every item that names it.
      load_errors_[name] = err.what();
      template_failures_.insert(name);
    } catch (const std::exception& err) {
      load_errors_[name] = err.what();
    }
  }
}

const binding::ChatBinding* ChatTokenProcessor::find(const std::string& name) const {
  if (const auto it = entries_.find(name); it != entries_.end()) return it->second.get();
  if (const auto it = by_bundled_name_.find(binding::bundled_tokenizer_name(name)); it != by_bundled_name_.end())
    return it->second.get();
  return nullptr;
}

ProcessResult ChatTokenProcessor::process(const SourceRecord& source, const std::string& tokenizer) const {
  const binding::ChatBinding* b = find(tokenizer);
  if (!b) {
    const auto err = load_errors_.find(tokenizer);
    if (err != load_errors_.end() && template_failures_.count(tokenizer))
      throw ItemError(kind_name(DeadLetterKind::template_error),
                      "chat template of " + tokenizer + " does not compile: " + err->second);
    throw ItemError(kind_name(DeadLetterKind::unknown_tokenizer), "unknown tokenizer \"" + tokenizer + "\"" +
                                             (err != load_errors_.end() ? ": " + err->second : std::string()));
  }
  ProcessResult r;
  if (source.prompt_text) {  // a completion's prompt: no template, the tokenizer's special tokens added
    r.render_end = monotonic_ns();
    r.token_count = static_cast<std::int64_t>(b->tokenizer().count(*source.prompt_text, true));
    return r;
  }
  // One buffer per thread: after warm-up a render allocates no output.
  thread_local std::string text;
  try {
    b->chat_template().render_into(text, source.prompt_value, options_, source.template_extra ? &source.template_extra->value : nullptr);
  } catch (const chat::TemplateError& e) {
    throw ItemError(kind_name(DeadLetterKind::template_error), "chat template of " + tokenizer + ": " + e.what());
  }
  r.render_end = monotonic_ns();
  r.token_count = static_cast<std::int64_t>(b->tokenizer().count(text, true));
  return r;
}

ProcessResult ChatTokenProcessor::process_for_decoder(const SourceRecord& source, const std::string& tokenizer,
                                                      ports::PromptForm form) const {
  ProcessResult r = process(source, tokenizer);
  r.encode_end = monotonic_ns();
  const binding::ChatBinding* b = find(tokenizer);  // found: process() threw otherwise
  if (source.answer) r.answer_tokens = static_cast<std::int64_t>(b->tokenizer().count(*source.answer, false));
  if (form == ports::PromptForm::none) return r;
  // A chat prompt's template writes its own BOS: its ids get nothing added. A completion's text
  // gets the tokenizer's special tokens, as its token_count above counts them.
  bool add_special = false;
  if (source.prompt_text) {
    r.prompt = *source.prompt_text;
    add_special = true;
  } else {
    try {
      b->chat_template().render_into(r.prompt, source.prompt_value, generation_options_, source.template_extra ? &source.template_extra->value : nullptr);
    } catch (const chat::TemplateError& e) {
      throw ItemError(kind_name(DeadLetterKind::template_error), "chat template of " + tokenizer + ": " + e.what());
    }
  }
  if (form == ports::PromptForm::ids) {
    b->tokenizer().encode_into(r.prompt, r.prompt_ids, add_special);
    r.prompt_tokens_sent = static_cast<std::int64_t>(r.prompt_ids.size());
  } else {
    r.prompt_tokens_sent = static_cast<std::int64_t>(b->tokenizer().count(r.prompt, true));
  }
  return r;
}

std::optional<std::int64_t> ChatTokenProcessor::count_text(const std::string& tokenizer, std::string_view text) const {
  const binding::ChatBinding* b = find(tokenizer);
  if (!b) return std::nullopt;
  return static_cast<std::int64_t>(b->tokenizer().count(text, false));
}

std::unique_ptr<tok::IncrementalDetokenizer> ChatTokenProcessor::detokenizer(const std::string& tokenizer) const {
  const binding::ChatBinding* b = find(tokenizer);
  if (!b) return nullptr;
  return std::make_unique<tok::IncrementalDetokenizer>(b->tokenizer(), tok::DetokenizeOptions{.skip_special_tokens = true});
}

AnswerCounts ChatTokenProcessor::count_answer(const std::string& tokenizer, std::string_view text, bool with_tools,
                                              std::string_view prompt, const AnswerParsers& parsers) const {
  const binding::ChatBinding* b = find(tokenizer);
  if (!b || text.empty()) return {};
  const auto detected = detected_parsers_.find(b->name());
  agent::DetectedParsers use = detected != detected_parsers_.end() ? detected->second : agent::DetectedParsers{};
  if (parsers.tool_parser) use.tool_parser = *parsers.tool_parser == "none" ? "" : *parsers.tool_parser;
  if (parsers.reasoning_parser) use.reasoning_parser = *parsers.reasoning_parser == "none" ? "" : *parsers.reasoning_parser;
  if (!with_tools) use.tool_parser.clear();
  if (use.tool_parser.empty() && use.reasoning_parser.empty()) return {};
  agent::ParserOptions options;
  options.tool_parser = use.tool_parser;
  options.reasoning_parser = use.reasoning_parser;
  options.starts_in_reasoning = use.reasoning_parser == "think" && agent::prompt_opens_reasoning(prompt);
  const agent::ParsedAnswer a = agent::parse_whole(options, text);
  return {static_cast<std::int64_t>(a.calls.size()),
          a.reasoning.empty() ? 0 : static_cast<std::int64_t>(b->tokenizer().count(a.reasoning, false))};
}

}  // namespace overhead::pipe
