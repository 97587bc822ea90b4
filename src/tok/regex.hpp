// A compiled PCRE2 pattern (UTF + Unicode properties, JIT-compiled) that lists its matches in a
// string. It is the general path for the `Split` pre-tokenizer and `Replace` normalizer patterns
// of tokenizer.json, and the reference the hand-written scanners are tested against.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace overhead::tok {

using Span = std::pair<std::size_t, std::size_t>;  // [begin, end) byte offsets

class Regex {
 public:
  // Throws std::invalid_argument with PCRE2's message and offset when the pattern does not compile.
  explicit Regex(const std::string& pattern);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Appends the non-overlapping matches in s[begin, end), left to right, as absolute offsets.
  // After an empty match the search resumes one character later (Oniguruma's find_iter rule).
  void find_all(std::string_view s, std::size_t begin, std::size_t end, std::vector<Span>& out) const;
  // The same, at most `max` matches at a time: returns the offset the next call starts from, or
  // kDone. Each match sees the whole s[.., end), so the matches found in parts are find_all's.
  static constexpr std::size_t kDone = static_cast<std::size_t>(-1);
  std::size_t find_some(std::string_view s, std::size_t begin, std::size_t end, std::vector<Span>& out,
                        std::size_t max) const;
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  void* code_ = nullptr;  // pcre2_code_8*
};

}  // namespace overhead::tok
