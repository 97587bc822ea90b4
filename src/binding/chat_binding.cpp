#include "binding/chat_binding.hpp"

#include <array>
#include <utility>

#include "tok/errors.hpp"

namespace overhead::binding {

namespace {

// HF id -> bundled set (data/tokenizers/PROVENANCE.md says what each set is built from).
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kHfIds = {{
    {"meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b-instruct"},
    {"meta-llama/Llama-3.1-8B-Instruct", "llama-3.3-70b-instruct"},  // same tokenizer.json and config
    {"google/gemma-2-27b-it", "gemma-2-27b-it"},
    {"microsoft/phi-4", "phi-4"},
}};

}  // namespace

std::string bundled_tokenizer_name(std::string_view name) {
  for (const auto& [id, set] : kHfIds)
    if (id == name) return std::string(set);
  return std::string(name);
}

std::shared_ptr<const ChatBinding> ChatBinding::load(const std::string& name) {
  std::shared_ptr<const tok::Tokenizer> t;
  const std::string bundled = bundled_tokenizer_name(name);
  try {
    t = tok::Tokenizer::load(name);  // a folder, a short name, or an HF id in the local cache
  } catch (const tok::LoadError&) {
    if (bundled == name) throw;
    t = tok::Tokenizer::load(bundled);
  }
  auto c = chat::ChatTemplate::from_tokenizer_config(t->config(), name);
  return std::shared_ptr<const ChatBinding>(new ChatBinding(name, std::move(t), std::move(c)));
}

}  // namespace overhead::binding
