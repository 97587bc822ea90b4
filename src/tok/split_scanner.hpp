// Hand-written scanners for the pre-tokenizer regexes that dominate real use, so the hot path
// never runs a backtracking regex engine. Each scanner returns exactly the matches PCRE2 (and
// Oniguruma, which HF tokenizers uses) find for its pattern; tests hold the two against each other.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tok/regex.hpp"

namespace overhead::tok {

enum class ScannerKind {
  // cl100k_base / Llama-3 / Phi-4:
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  kCl100k,
  // o200k_base (GPT-4o): cased letter runs with optional contractions, '/' after punctuation.
  kO200k,
};

// The scanner that implements `pattern` exactly, if there is one.
std::optional<ScannerKind> scanner_for(const std::string& pattern);
// The pattern text a scanner implements.
const std::string& scanner_pattern(ScannerKind kind);

// Appends the matches in s[begin, end) (valid UTF-8) as absolute spans. Every character of these
// patterns' input is covered by some match, so the spans tile [begin, end). At most `max` are
// appended; returns where the next call continues (end when all were found). Each match is
// decided on the whole s[.., end), so the matches found in parts are those found at once.
std::size_t scan(ScannerKind kind, std::string_view s, std::size_t begin, std::size_t end, std::vector<Span>& out,
                 std::size_t max = static_cast<std::size_t>(-1));

}  // namespace overhead::tok
