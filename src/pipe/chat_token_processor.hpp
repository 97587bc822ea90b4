// The real per-item work, exactly as the seed's worker: render the tokenizer's chat template
// (apply_chat_template(prompt, tokenize=False), add_generation_prompt=False), then encode the
// text with add_special_tokens=True. For Llama-3.3 and Gemma-2, whose templates emit BOS
// themselves, this counts BOS twice; that is the seed's figure and is kept on purpose.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "chat/chat_template.hpp"
#include "pipe/processor.hpp"
#include "tok/tokenizer.hpp"

namespace overhead::pipe {

class ChatTokenProcessor final : public Processor {
 public:
  // Loads every tokenizer and compiles its template now, so the hot path only looks them up in
  // an immutable map (no lock). A name that fails to load is remembered with its error: its
  // items are dead-lettered as unknown_tokenizer and the run goes on. `date` pins strftime_now.
  ChatTokenProcessor(const std::vector<std::string>& tokenizers, std::optional<std::string> date = std::nullopt);

  ProcessResult process(const SourceRecord& source, const std::string& tokenizer) const override;
  // Tokenizer name -> load error, for the names that failed.
  const std::map<std::string, std::string>& load_errors() const { return load_errors_; }

 private:
  struct Entry {
    std::shared_ptr<const tok::Tokenizer> tokenizer;
    std::shared_ptr<const chat::ChatTemplate> chat_template;
  };
  std::unordered_map<std::string, Entry> entries_;
  std::map<std::string, std::string> load_errors_;
  chat::RenderOptions options_;
};

}  // namespace overhead::pipe
