// Pre-tokenizers of tokenizer.json: each cuts a segment into pieces the BPE model encodes one by
// one. Pieces are spans of one buffer; only steps that change content (Metaspace, ByteLevel's
// prefix space) rebuild the buffer, so the common path (regex split + byte-level) copies nothing.
// Supported: Split (string, regex or a hand-written scanner; all five behaviours, invert),
// ByteLevel, Metaspace, Digits, Sequence.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tok/regex.hpp"
#include "tok/split_scanner.hpp"

namespace overhead::tok {

struct Piece {
  std::size_t begin;
  std::size_t end;
  bool at_origin;  // starts at offset 0 of the original input (Metaspace's "first" scheme)
};

class PreTokenizer {
 public:
  // Receives one batch of pieces and the buffer they index (which the sink may change).
  using BatchSink = std::function<void(std::string& buffer, std::vector<Piece>& pieces)>;
  // Pieces per batch of apply_in_batches.
  static constexpr std::size_t kBatchPieces = 1 << 14;

  virtual ~PreTokenizer() = default;
  virtual void apply(std::string& buffer, std::vector<Piece>& pieces) const = 0;
  // The pieces apply() gives for the one piece `whole` of `text`, handed to `sink` in order, in
  // batches of about kBatchPieces where the step can cut them (a Split that keeps or drops each
  // span, first in a Sequence or alone), else all at once. The same pieces either way, each batch
  // in a buffer of its own (`text` is only read): a long text then costs memory for one batch of
  // pieces, not for a list of pieces and a copy as long as the text.
  virtual void apply_in_batches(std::string_view text, const Piece& whole, const BatchSink& sink) const;
  // When this step's pieces are exactly the spans a scanner gives (a Split isolating every match
  // of a scanned pattern, alone or with steps that change nothing): that scanner. The encoder then
  // scans and encodes in one loop, without the piece lists.
  virtual std::optional<ScannerKind> only_scanner() const { return std::nullopt; }
  // True when the step leaves every piece as it is (ByteLevel with neither prefix space nor regex).
  virtual bool is_identity() const { return false; }
};

// How a pattern's matches are found: a literal string, a PCRE2 regex or a scanner.
class Matcher {
 public:
  static Matcher literal(std::string text) { return Matcher(std::move(text), nullptr, std::nullopt); }
  static Matcher regex(const std::string& pattern);  // uses a scanner when one implements it
  void find_all(std::string_view s, std::size_t begin, std::size_t end, std::vector<Span>& out) const;
  // At most `max` of them: returns the offset to continue from, or Regex::kDone (regex.hpp).
  std::size_t find_some(std::string_view s, std::size_t begin, std::size_t end, std::vector<Span>& out,
                        std::size_t max) const;
  const std::optional<ScannerKind>& scanner() const { return scanner_; }

 private:
  Matcher(std::string literal, std::shared_ptr<Regex> regex, std::optional<ScannerKind> scanner)
      : literal_(std::move(literal)), regex_(std::move(regex)), scanner_(scanner) {}
  std::string literal_;
  std::shared_ptr<Regex> regex_;
  std::optional<ScannerKind> scanner_;
};

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

class SplitPreTokenizer final : public PreTokenizer {
 public:
  SplitPreTokenizer(Matcher matcher, SplitBehavior behavior, bool invert)
      : matcher_(std::move(matcher)), behavior_(behavior), invert_(invert) {}
  void apply(std::string& buffer, std::vector<Piece>& pieces) const override;
  void apply_in_batches(std::string_view text, const Piece& whole, const BatchSink& sink) const override;
  std::optional<ScannerKind> only_scanner() const override {
    // Isolated keeps every match and every gap (invert swaps which is which): the scanner's spans.
    return behavior_ == SplitBehavior::kIsolated ? matcher_.scanner() : std::nullopt;
  }

 private:
  Matcher matcher_;
  SplitBehavior behavior_;
  bool invert_;
};

// Marks the byte-level alphabet. The model works on raw bytes (see bpe_model.hpp), so this step
// only adds the prefix space and the GPT-2 regex split when asked.
class ByteLevelPreTokenizer final : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex);
  void apply(std::string& buffer, std::vector<Piece>& pieces) const override;
  bool is_identity() const override { return !add_prefix_space_ && !gpt2_split_; }

 private:
  bool add_prefix_space_;
  std::optional<SplitPreTokenizer> gpt2_split_;
};

class MetaspacePreTokenizer final : public PreTokenizer {
 public:
  enum class Prepend { kAlways, kFirst, kNever };
  MetaspacePreTokenizer(std::string replacement, Prepend prepend, bool split)
      : replacement_(std::move(replacement)), prepend_(prepend), split_(split) {}
  void apply(std::string& buffer, std::vector<Piece>& pieces) const override;

 private:
  std::string replacement_;
  Prepend prepend_;
  bool split_;
};

class DigitsPreTokenizer final : public PreTokenizer {
 public:
  explicit DigitsPreTokenizer(bool individual) : individual_(individual) {}
  void apply(std::string& buffer, std::vector<Piece>& pieces) const override;

 private:
  bool individual_;
};

class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void apply(std::string& buffer, std::vector<Piece>& pieces) const override {
    for (const auto& step : steps_) step->apply(buffer, pieces);
  }
  void apply_in_batches(std::string_view text, const Piece& whole, const BatchSink& sink) const override;
  std::optional<ScannerKind> only_scanner() const override;
  bool is_identity() const override;

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

// Splits every piece by (span, is_match) rules of HF's NormalizedString::split.
void split_pieces(std::vector<Piece>& pieces, const std::function<void(std::size_t, std::size_t, std::vector<Span>&)>& find,
                  SplitBehavior behavior, bool invert);

}  // namespace overhead::tok
