// A string that must never be printed: secret access keys and session tokens. It has no stream
// operator and no implicit conversion, so the only way to the bytes is reveal(), which the signer
// and the credential sources call and nothing that formats messages does.
#pragma once

#include <string>
#include <utility>

namespace overhead::aws {

class Secret {
 public:
  Secret() = default;
  explicit Secret(std::string value) : value_(std::move(value)) {}
  const std::string& reveal() const { return value_; }
  bool empty() const { return value_.empty(); }
  // What logs and errors may show instead of the value.
  static constexpr const char* kMask = "****";
  friend bool operator==(const Secret&, const Secret&) = default;

 private:
  std::string value_;
};

}  // namespace overhead::aws
