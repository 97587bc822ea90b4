// One tokenizer bound to its chat template: the single rule by which the CLI, the pipeline and
// the HTTP front pick "this tokenizer" and "this tokenizer's template". A binding is loaded once
// per name and shared, immutable, by every thread.
//
// Two rules live here and nowhere else:
//   - which files a name stands for: whatever tok::resolve_tokenizer_dir accepts, plus the
//     HuggingFace ids of the bundled sets (meta-llama/Llama-3.3-70B-Instruct,
//     google/gemma-2-27b-it, microsoft/phi-4, meta-llama/Llama-3.1-8B-Instruct), which the seed's
//     messages carry. An HF id is looked up in the local HF cache first (a real download wins);
//     otherwise it is the bundled set;
//   - which template of a tokenizer_config.json is "the" template: chat::ChatTemplate::
//     from_tokenizer_config (a string, or the list entry named "default", as transformers does).
// A binding keeps the name it was given, so records name the tokenizer as their input did.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "chat/chat_template.hpp"
#include "tok/tokenizer.hpp"

namespace overhead::binding {

// The bundled set an HF id stands for ("microsoft/phi-4" -> "phi-4"); any other name unchanged.
[[nodiscard]] std::string bundled_tokenizer_name(std::string_view name);

// The tokenizer a name stands for, by the rule above. Throws tok::LoadError naming what was tried.
[[nodiscard]] std::shared_ptr<const tok::Tokenizer> load_tokenizer(const std::string& name);

// The tokenizer_config.json a name stands for, by the rule above (`name` may also be that file),
// parsed with its key order kept, as Python keeps it. Throws tok::LoadError when the name resolves
// to nothing, std::runtime_error naming the file when it is missing or not JSON.
struct TokenizerConfig {
  std::string path;
  nlohmann::ordered_json json;
};
[[nodiscard]] TokenizerConfig read_tokenizer_config(const std::string& name);

// The chat template a name stands for, by the same rules, without loading tokenizer.json: for
// commands that only render. Throws as read_tokenizer_config, or chat::TemplateError when the
// config holds no usable template.
[[nodiscard]] std::shared_ptr<const chat::ChatTemplate> load_chat_template(const std::string& name);

class ChatBinding {
 public:
  // Loads the tokenizer and compiles its chat template (from its tokenizer_config.json).
  // Throws tok::LoadError or chat::TemplateError naming `name`.
  [[nodiscard]] static std::shared_ptr<const ChatBinding> load(const std::string& name);

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const tok::Tokenizer& tokenizer() const { return *tokenizer_; }
  [[nodiscard]] const chat::ChatTemplate& chat_template() const { return *chat_template_; }

 private:
  ChatBinding(std::string name, std::shared_ptr<const tok::Tokenizer> t, std::shared_ptr<const chat::ChatTemplate> c)
      : name_(std::move(name)), tokenizer_(std::move(t)), chat_template_(std::move(c)) {}

  std::string name_;
  std::shared_ptr<const tok::Tokenizer> tokenizer_;
  std::shared_ptr<const chat::ChatTemplate> chat_template_;
};

}  // namespace overhead::binding
