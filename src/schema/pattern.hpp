// One compiled `pattern` (or `patternProperties` key) of a schema: a PCRE2 regular expression,
// searched (not anchored) in a string as JSON Schema says, with PCRE2's match and depth limits
// set (limits.hpp) so that a pattern written to backtrack without end costs bounded time.
//
// Dialect: JSON Schema patterns are ECMA-262 regular expressions; PCRE2 (UTF mode, without UCP, so
// \d \w are ASCII as in ECMA-262; `$` at the very end only) reads the common subset the same way.
// Known differences: \s is ASCII whitespace here (ECMA-262 adds Unicode spaces), and PCRE2 accepts
// syntax ECMA-262 does not (possessive quantifiers, atomic groups). Strings are valid UTF-8
// (they come from a parsed JSON document).
#pragma once

#include <string>
#include <string_view>

namespace overhead::schema {

class Pattern {
 public:
  enum class Match { kNo, kYes, kTooCostly };

  // Throws std::invalid_argument with PCRE2's message and the offset when `source` does not compile.
  explicit Pattern(const std::string& source);
  ~Pattern();
  Pattern(const Pattern&) = delete;
  Pattern& operator=(const Pattern&) = delete;

  // Whether the pattern matches somewhere in `subject`; kTooCostly when a limit stopped the search.
  // Safe to call from several threads at once.
  [[nodiscard]] Match search(std::string_view subject) const;

  const std::string& source() const { return source_; }

 private:
  std::string source_;
  void* code_ = nullptr;  // pcre2_code_8*
};

}  // namespace overhead::schema
