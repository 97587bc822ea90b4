// Normalizers of tokenizer.json: each rewrites a text segment before pre-tokenization.
// Supported: Replace (string or regex pattern), Prepend, Strip, Lowercase, NFC/NFD/NFKC/NFKD and
// Sequence; anything else is refused at load.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tok/regex.hpp"

namespace overhead::tok {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string& text) const = 0;
};

class ReplaceNormalizer final : public Normalizer {
 public:
  // Exactly one of `literal` / `regex` is used: a String pattern or a Regex pattern.
  ReplaceNormalizer(std::string literal, std::unique_ptr<Regex> regex, std::string content)
      : literal_(std::move(literal)), regex_(std::move(regex)), content_(std::move(content)) {}
  void normalize(std::string& text) const override;

 private:
  std::string literal_;
  std::unique_ptr<Regex> regex_;
  std::string content_;
};

class PrependNormalizer final : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  // HF prepends only to a non-empty segment.
  void normalize(std::string& text) const override {
    if (!text.empty()) text.insert(0, prefix_);
  }

 private:
  std::string prefix_;
};

class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  void normalize(std::string& text) const override;

 private:
  bool left_, right_;
};

class UnicodeNormalizer final : public Normalizer {
 public:
  enum class Form { kNFC, kNFD, kNFKC, kNFKD };
  explicit UnicodeNormalizer(Form form) : form_(form) {}
  void normalize(std::string& text) const override;

 private:
  Form form_;
};

class LowercaseNormalizer final : public Normalizer {
 public:
  void normalize(std::string& text) const override;
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  void normalize(std::string& text) const override {
    for (const auto& step : steps_) step->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace overhead::tok
