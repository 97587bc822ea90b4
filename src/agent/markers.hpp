// Finding a family's markers in streamed text (internal to agent/): where the first marker
// starts, or else how much of the text can be released because no marker can start in it. The
// held tail is the longest suffix that is a proper prefix of a marker, so a marker split across
// deltas is never missed and nothing that cannot become one is held.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string_view>

namespace overhead::agent::detail {

struct MarkerScan {
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t safe = 0;     // text[0, safe) holds no marker and no start of one
  std::size_t which = kNone;  // the index of the marker found at `safe`, or kNone
  [[nodiscard]] bool found() const { return which != kNone; }
};

MarkerScan scan_markers(std::string_view text, std::initializer_list<std::string_view> markers);

// Whether `text` could still grow into `word` (text is a proper prefix of it), it starts with it,
// or neither.
enum class Prefix { no, partial, full };
inline Prefix match_prefix(std::string_view text, std::string_view word) {
  if (text.size() >= word.size()) return text.substr(0, word.size()) == word ? Prefix::full : Prefix::no;
  return word.substr(0, text.size()) == text ? Prefix::partial : Prefix::no;
}

// Leading whitespace length.
std::size_t space_prefix(std::string_view text);

}  // namespace overhead::agent::detail
