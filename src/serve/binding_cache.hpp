// The gateway's tokenizer bindings: each model name a request names is loaded once (through
// binding::ChatBinding, the pipeline's own rule) and then shared by every connection thread.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "binding/chat_binding.hpp"

namespace overhead::serve {

class BindingCache {
 public:
  // `allowed`: the names /v1/models lists and requests may use; empty means every known name.
  explicit BindingCache(std::vector<std::string> allowed);

  // The binding for `model`, loading it on first use. Returns nullptr when the model is not
  // allowed or cannot be loaded; `error` then says why.
  std::shared_ptr<const binding::ChatBinding> get(const std::string& model, std::string& error);

  [[nodiscard]] const std::vector<std::string>& models() const { return allowed_; }
  // The listed name `model` stands for (itself, or the listed short name of its bundled set, as
  // "phi-4" for "microsoft/phi-4"); empty when it is not listed. Loads nothing.
  [[nodiscard]] std::optional<std::string> listed_name(const std::string& model) const;

 private:
  std::vector<std::string> allowed_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const binding::ChatBinding>> loaded_;
};

}  // namespace overhead::serve
