// Normalizers of tokenizer.json: each rewrites a text segment before pre-tokenization.
// Supported: Replace (string or regex pattern), Prepend, Strip, Lowercase, NFC/NFD/NFKC/NFKD and
// Sequence; anything else is refused at load.
//
// A normalized text may not grow past max_normalized_size() of its input: a tokenizer.json is
// data from outside, and a Sequence of Replace("a" -> 10 x "a") steps grows a text tenfold per
// step (five steps took a 5,000-character line to 15 GB). Every step checks the one limit of
// the text it was first given, and Replace checks while it builds, so nothing past the limit is
// ever allocated; the text is then refused with an EncodeError. HF has no such limit; no real
// tokenizer comes near it (NFKD's widest expansion, U+FDFA, is 11x one character).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tok/regex.hpp"

namespace overhead::tok {

// The largest normalized form of an `input_size`-byte text: 16 times it, plus 4 KiB so a short
// text may still gain a prefix or a long replacement.
constexpr std::size_t max_normalized_size(std::size_t input_size) { return 16 * input_size + 4096; }

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // Rewrites `text`; throws EncodeError when the result would be larger than
  // max_normalized_size(text.size()).
  void normalize(std::string& text) const { apply(text, max_normalized_size(text.size())); }
  // One step under a limit the caller fixed (a Sequence passes its own to every step).
  virtual void apply(std::string& text, std::size_t limit) const = 0;
};

class ReplaceNormalizer final : public Normalizer {
 public:
  // Exactly one of `literal` / `regex` is used: a String pattern or a Regex pattern.
  ReplaceNormalizer(std::string literal, std::unique_ptr<Regex> regex, std::string content)
      : literal_(std::move(literal)), regex_(std::move(regex)), content_(std::move(content)) {}
  void apply(std::string& text, std::size_t limit) const override;

 private:
  std::string literal_;
  std::unique_ptr<Regex> regex_;
  std::string content_;
};

class PrependNormalizer final : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  // HF prepends only to a non-empty segment.
  void apply(std::string& text, std::size_t limit) const override;

 private:
  std::string prefix_;
};

class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  void apply(std::string& text, std::size_t limit) const override;

 private:
  bool left_, right_;
};

class UnicodeNormalizer final : public Normalizer {
 public:
  enum class Form { kNFC, kNFD, kNFKC, kNFKD };
  explicit UnicodeNormalizer(Form form) : form_(form) {}
  void apply(std::string& text, std::size_t limit) const override;

 private:
  Form form_;
};

class LowercaseNormalizer final : public Normalizer {
 public:
  void apply(std::string& text, std::size_t limit) const override;
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  void apply(std::string& text, std::size_t limit) const override {
    for (const auto& step : steps_) step->apply(text, limit);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace overhead::tok
