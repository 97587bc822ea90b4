#include "binding/chat_binding.hpp"

#include <array>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "tok/errors.hpp"
#include "tok/resolve.hpp"
#include "util/line_reader.hpp"

namespace overhead::binding {

namespace {

namespace fs = std::filesystem;

// HF id -> bundled set (data/tokenizers/PROVENANCE.md says what each set is built from).
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kHfIds = {{
    {"meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b-instruct"},
    {"meta-llama/Llama-3.1-8B-Instruct", "llama-3.3-70b-instruct"},  // same tokenizer.json and config
    {"google/gemma-2-27b-it", "gemma-2-27b-it"},
    {"microsoft/phi-4", "phi-4"},
}};

// Runs `attempt` on the name as given (a folder, a short name, or an HF id in the local cache);
// when that fails and the name is the HF id of a bundled set, on the bundled set instead.
template <typename Attempt>
auto with_bundled_fallback(const std::string& name, Attempt attempt) {
  try {
    return attempt(name);
  } catch (const tok::LoadError&) {
    const std::string bundled = bundled_tokenizer_name(name);
    if (bundled == name) throw;
    return attempt(bundled);
  }
}

// tokenizer_config.json of a name, or the file itself when given directly.
std::string config_path_of(const std::string& name) {
  if (fs::is_regular_file(name) && fs::path(name).filename() == "tokenizer_config.json") return name;
  const fs::path p = fs::path(tok::resolve_tokenizer_dir(name)) / "tokenizer_config.json";
  if (!fs::is_regular_file(p)) throw std::runtime_error(p.string() + ": no such file (tokenizer '" + name + "')");
  return p.string();
}

}  // namespace

std::string bundled_tokenizer_name(std::string_view name) {
  for (const auto& [id, set] : kHfIds)
    if (id == name) return std::string(set);
  return std::string(name);
}

std::shared_ptr<const tok::Tokenizer> load_tokenizer(const std::string& name) {
  return with_bundled_fallback(name, [](const std::string& n) { return tok::Tokenizer::load(n); });
}

TokenizerConfig read_tokenizer_config(const std::string& name) {
  TokenizerConfig config{with_bundled_fallback(name, config_path_of), {}};
  try {
    config.json = nlohmann::ordered_json::parse(util::read_file(config.path));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(config.path + ": invalid JSON: " + e.what());
  }
  return config;
}

std::shared_ptr<const chat::ChatTemplate> load_chat_template(const std::string& name) {
  const TokenizerConfig config = read_tokenizer_config(name);
  return chat::ChatTemplate::from_tokenizer_config(config.json, config.path);
}

std::shared_ptr<const ChatBinding> ChatBinding::load(const std::string& name) {
  auto t = load_tokenizer(name);
  auto c = chat::ChatTemplate::from_tokenizer_config(t->config(), name);
  return std::shared_ptr<const ChatBinding>(new ChatBinding(name, std::move(t), std::move(c)));
}

}  // namespace overhead::binding
