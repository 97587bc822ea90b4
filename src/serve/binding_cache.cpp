#include "serve/binding_cache.hpp"

#include <algorithm>
#include <exception>

#include "tok/resolve.hpp"

namespace overhead::serve {

BindingCache::BindingCache(std::vector<std::string> allowed) : allowed_(std::move(allowed)) {
  if (allowed_.empty()) allowed_ = tok::seed_tokenizer_names();
}

std::optional<std::string> BindingCache::listed_name(const std::string& model) const {
  if (std::find(allowed_.begin(), allowed_.end(), model) != allowed_.end()) return model;
  const std::string bundled = binding::bundled_tokenizer_name(model);
  for (const auto& name : allowed_)
    if (name == bundled || binding::bundled_tokenizer_name(name) == bundled) return name;
  return std::nullopt;
}

std::shared_ptr<const binding::ChatBinding> BindingCache::get(const std::string& model, std::string& error) {
  // A HuggingFace id of a bundled set names the same model as its short name.
  const std::string bundled = binding::bundled_tokenizer_name(model);
  const bool listed = std::find(allowed_.begin(), allowed_.end(), model) != allowed_.end() ||
                      std::find(allowed_.begin(), allowed_.end(), bundled) != allowed_.end();
  if (!listed) {
    error = "The model '" + model + "' does not exist";
    return nullptr;
  }
  std::lock_guard lock(mutex_);
  if (auto it = loaded_.find(model); it != loaded_.end()) return it->second;
  try {
    auto b = binding::ChatBinding::load(model);
    loaded_.emplace(model, b);
    return b;
  } catch (const std::exception& e) {
    error = std::string("The model '") + model + "' could not be loaded: " + e.what();
    return nullptr;
  }
}

}  // namespace overhead::serve
