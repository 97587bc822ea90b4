// Exceptions of the tokenizer module. A LoadError always names the file and the JSON path of the
// offending value, so an unsupported tokenizer fails loudly at load, never at encode time. An
// EncodeError is a text a loaded tokenizer refuses to encode: today only one whose normalized
// form would pass the size limit (normalizer.hpp), which a hostile tokenizer.json can cause.
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

class EncodeError : public std::runtime_error {
 public:
  explicit EncodeError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace overhead::tok
