// The real per-item work, exactly as the seed's worker: render the tokenizer's chat template
// (apply_chat_template(prompt, tokenize=False), add_generation_prompt=False), then encode the
// text with add_special_tokens=True. For Llama-3.3 and Gemma-2, whose templates emit BOS
// themselves, this counts BOS twice; that is the seed's figure and is kept on purpose.
#pragma once

#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/detect.hpp"
#include "binding/chat_binding.hpp"
#include "chat/chat_template.hpp"
#include "pipe/processor.hpp"

namespace overhead::pipe {

class ChatTokenProcessor final : public Processor {
 public:
  // Loads every tokenizer with its template now (binding::ChatBinding), so the hot path only
  // looks them up in an immutable map (no lock). A name that fails to load is remembered with its
  // error: its items are dead-lettered as unknown_tokenizer and the run goes on. An item may name
  // a loaded tokenizer by another name of the same bundled set (its HF id, e.g.
  // "microsoft/phi-4" for "phi-4"); its record keeps the item's name. `date` pins strftime_now.
  ChatTokenProcessor(const std::vector<std::string>& tokenizers, std::optional<std::string> date = std::nullopt);

  ProcessResult process(const SourceRecord& source, const std::string& tokenizer) const override;
  // The engine's prompt, chat path: the template's tokens exactly, special tokens parsed and none
  // added (HF's add_special_tokens=false, as vLLM's chat completions), so a template that emits
  // BOS gives one BOS and one that does not gives none. With PromptForm::text the engine
  // tokenizes the text itself with add_special_tokens=true, and prompt_tokens_sent is our count
  // of that (a template that emits BOS then reaches the engine with two).
  ProcessResult process_for_decoder(const SourceRecord& source, const std::string& tokenizer,
                                    ports::PromptForm form) const override;
  std::optional<std::int64_t> count_text(const std::string& tokenizer, std::string_view text) const override;
  std::unique_ptr<tok::IncrementalDetokenizer> detokenizer(const std::string& tokenizer) const override;
  AnswerCounts count_answer(const std::string& tokenizer, std::string_view text, bool with_tools, std::string_view prompt,
                            const AnswerParsers& parsers) const override;
  // Tokenizer name -> load error, for the names that failed.
  const std::map<std::string, std::string>& load_errors() const { return load_errors_; }

 private:
  // The binding for `name`: loaded under that name, or under another name of the same set.
  const binding::ChatBinding* find(const std::string& name) const;

  std::unordered_map<std::string, std::shared_ptr<const binding::ChatBinding>> entries_;
  std::unordered_map<std::string, std::shared_ptr<const binding::ChatBinding>> by_bundled_name_;
  std::map<std::string, std::string> load_errors_;
  std::set<std::string> template_failures_;
  // The parsers each loaded template's markers point to (agent::detect_parsers), by binding name.
  std::unordered_map<std::string, agent::DetectedParsers> detected_parsers_;  // names whose tokenizer loads but whose template does not compile
  chat::RenderOptions options_;
  chat::RenderOptions generation_options_;  // the same with add_generation_prompt (the decoder's prompt)
};

}  // namespace overhead::pipe
