#include "pipe/chat_token_processor.hpp"

#include "pipe/clock.hpp"
#include "pipe/errors.hpp"

namespace overhead::pipe {

ChatTokenProcessor::ChatTokenProcessor(const std::vector<std::string>& tokenizers, std::optional<std::string> date) {
  options_.add_generation_prompt = false;
  options_.date = std::move(date);
  for (const auto& name : tokenizers) {
    try {
      Entry e;
      e.tokenizer = tok::Tokenizer::load(name);
      e.chat_template = chat::ChatTemplate::from_tokenizer_config(e.tokenizer->config(), name);
      entries_.emplace(name, std::move(e));
    } catch (const std::exception& err) {
      load_errors_[name] = err.what();
    }
  }
}

ProcessResult ChatTokenProcessor::process(const SourceRecord& source, const std::string& tokenizer) const {
  const auto it = entries_.find(tokenizer);
  if (it == entries_.end()) {
    const auto err = load_errors_.find(tokenizer);
    throw ItemError("unknown_tokenizer", "unknown tokenizer \"" + tokenizer + "\"" +
                                             (err != load_errors_.end() ? ": " + err->second : std::string()));
  }
  std::string text;
  try {
    text = it->second.chat_template->render(source.prompt, options_);
  } catch (const chat::TemplateError& e) {
    throw ItemError("template_error", "chat template of " + tokenizer + ": " + e.what());
  }
  ProcessResult r;
  r.render_end = monotonic_ns();
  r.token_count = static_cast<std::int64_t>(it->second.tokenizer->count(text, true));
  return r;
}

}  // namespace overhead::pipe
