#include "tok/resolve.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "tok/errors.hpp"

#ifndef OVERHEAD_DEFAULT_MODELS_DIR
#define OVERHEAD_DEFAULT_MODELS_DIR "models"
#endif

namespace overhead::tok {

namespace fs = std::filesystem;

namespace {

// Short name -> folder under the models directory (scripts/fetch_tokenizers.sh fills it).
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> m = {
      {"llama-3.3-70b-instruct", "llama-3.3-70b-instruct"},
      {"gemma-2-27b-it", "gemma-2-27b-it"},
      {"phi-4", "phi-4"},
      {"gemma-3", "raw/gemma3"},
      {"llama-3", "raw/llama3"},
      {"cl100k", "raw/gpt35turbo"},
      {"o200k", "raw/gpt4o"},
      {"llama3", "raw/llama3"},
      {"llama3_1", "raw/llama3_1"},
      {"gemma3", "raw/gemma3"},
      {"gemini", "raw/gemini"},
      {"gpt35turbo", "raw/gpt35turbo"},
      {"gpt4o", "raw/gpt4o"},
  };
  return m;
}

std::string models_dir() {
  if (const char* env = std::getenv("OVERHEAD_MODELS"); env && *env) return env;
  return OVERHEAD_DEFAULT_MODELS_DIR;
}

bool holds_tokenizer(const fs::path& dir) { return fs::is_regular_file(dir / "tokenizer.json"); }

// HF hub cache layout: models--org--name/{refs/main, snapshots/<revision>/tokenizer.json}.
std::optional<std::string> from_hf_cache(const std::string& model_id) {
  if (model_id.find('/') == std::string::npos) return std::nullopt;
  fs::path hub;
  if (const char* hf_home = std::getenv("HF_HOME"); hf_home && *hf_home) {
    hub = fs::path(hf_home) / "hub";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    hub = fs::path(home) / ".cache" / "huggingface" / "hub";
  } else {
    return std::nullopt;
  }
  std::string folder = "models--" + model_id;
  for (std::size_t p; (p = folder.find('/')) != std::string::npos;) folder.replace(p, 1, "--");
  const fs::path repo = hub / folder;
  std::error_code ec;
  if (!fs::is_directory(repo / "snapshots", ec)) return std::nullopt;
  std::ifstream ref(repo / "refs" / "main");
  std::string revision;
  if (ref && std::getline(ref, revision) && holds_tokenizer(repo / "snapshots" / revision))
    return (repo / "snapshots" / revision).string();
  std::optional<fs::path> newest;
  fs::file_time_type newest_time{};
  for (const auto& entry : fs::directory_iterator(repo / "snapshots", ec)) {
    if (!holds_tokenizer(entry.path())) continue;
    const auto t = fs::last_write_time(entry.path() / "tokenizer.json", ec);
    if (!newest || t > newest_time) newest = entry.path(), newest_time = t;
  }
  if (newest) return newest->string();
  return std::nullopt;
}

}  // namespace

std::string resolve_tokenizer_dir(const std::string& name) {
  const fs::path as_path(name);
  std::error_code ec;
  if (fs::is_directory(as_path, ec) && holds_tokenizer(as_path)) return as_path.string();
  if (fs::is_regular_file(as_path, ec) && as_path.filename() == "tokenizer.json") return as_path.parent_path().string();
  if (auto it = aliases().find(name); it != aliases().end()) {
    const fs::path dir = fs::path(models_dir()) / it->second;
    if (holds_tokenizer(dir)) return dir.string();
    throw LoadError("tokenizer \"" + name + "\": " + (dir / "tokenizer.json").string() +
                    " is missing; run scripts/fetch_tokenizers.sh (or set OVERHEAD_MODELS)");
  }
  if (auto cached = from_hf_cache(name)) return *cached;
  std::string known;
  for (const auto& n : known_tokenizer_names()) known += (known.empty() ? "" : ", ") + n;
  throw LoadError("unknown tokenizer \"" + name + "\": not a folder with tokenizer.json, not a short name (" + known +
                  "), not a model id in the HuggingFace cache");
}

const std::vector<std::string>& known_tokenizer_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [alias, dir] : aliases()) v.push_back(alias);
    return v;
  }();
  return names;
}

const std::vector<std::string>& seed_tokenizer_names() {
  static const std::vector<std::string> names = {"llama-3.3-70b-instruct", "gemma-2-27b-it", "phi-4"};
  return names;
}

}  // namespace overhead::tok
