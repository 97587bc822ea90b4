// Exceptions of the tokenizer module. A LoadError always names the file and the JSON path of the
// offending value, so an unsupported tokenizer fails loudly at load, never at encode time.
#pragma once

#include <stdexcept>
#include <string>

namespace overhead::tok {

class LoadError : public std::runtime_error {
 public:
  LoadError(const std::string& file, const std::string& json_path, const std::string& reason)
      : std::runtime_error(file + ": " + (json_path.empty() ? "" : json_path + ": ") + reason) {}
  explicit LoadError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace overhead::tok
