// The detokenizer: tokenizer.json's "decoder" steps, which turn token strings back into text with
// HF's decode_chain semantics per step (detokenize_chain). Supported: ByteLevel, Replace,
// ByteFallback, Fuse, Strip, Metaspace, Sequence.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace overhead::tok {

class Detokenizer {
 public:
  virtual ~Detokenizer() = default;
  virtual void detokenize_chain(std::vector<std::string>& tokens) const = 0;
};

class ByteLevelDetokenizer final : public Detokenizer {
 public:
  void detokenize_chain(std::vector<std::string>& tokens) const override;
};

class ReplaceDetokenizer final : public Detokenizer {
 public:
  ReplaceDetokenizer(std::string pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void detokenize_chain(std::vector<std::string>& tokens) const override;

 private:
  std::string pattern_, content_;
};

class ByteFallbackDetokenizer final : public Detokenizer {
 public:
  void detokenize_chain(std::vector<std::string>& tokens) const override;
};

class FuseDetokenizer final : public Detokenizer {
 public:
  void detokenize_chain(std::vector<std::string>& tokens) const override;
};

class StripDetokenizer final : public Detokenizer {
 public:
  StripDetokenizer(char32_t content, std::size_t start, std::size_t stop) : content_(content), start_(start), stop_(stop) {}
  void detokenize_chain(std::vector<std::string>& tokens) const override;
  char32_t content() const { return content_; }
  std::size_t start() const { return start_; }
  std::size_t stop() const { return stop_; }

 private:
  char32_t content_;
  std::size_t start_, stop_;
};

class MetaspaceDetokenizer final : public Detokenizer {
 public:
  MetaspaceDetokenizer(char32_t replacement, bool strip_first) : replacement_(replacement), strip_first_(strip_first) {}
  void detokenize_chain(std::vector<std::string>& tokens) const override;

 private:
  char32_t replacement_;
  bool strip_first_;  // prepend_scheme != never: the first token loses its replacement chars
};

class SequenceDetokenizer final : public Detokenizer {
 public:
  explicit SequenceDetokenizer(std::vector<std::unique_ptr<Detokenizer>> steps) : steps_(std::move(steps)) {}
  void detokenize_chain(std::vector<std::string>& tokens) const override {
    for (const auto& step : steps_) step->detokenize_chain(tokens);
  }
  // Read by the incremental detokenizer, which streams the same steps (incremental_detokenizer.hpp).
  const std::vector<std::unique_ptr<Detokenizer>>& steps() const { return steps_; }

 private:
  std::vector<std::unique_ptr<Detokenizer>> steps_;
};

}  // namespace overhead::tok
