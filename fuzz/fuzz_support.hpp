// Helpers shared by the fuzz targets: where the small fixture tokenizers are, the reference UTF-8
// repair the tokenizer promises to apply, and a loud failure that libFuzzer records as a crash.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace overhead::fuzz {

// fuzz/tokenizers/<kind>/ (make_fixtures.py); OVERHEAD_FUZZ_TOKENIZERS_DIR is set by the build.
inline std::string fixture_dir(const char* kind) { return std::string(OVERHEAD_FUZZ_TOKENIZERS_DIR) + "/" + kind; }

// Replaces every maximal subpart of an ill-formed UTF-8 sequence with U+FFFD (Unicode 15, 3.9
// "U+FFFD substitution of maximal subparts"; what Rust's from_utf8_lossy and Python's
// decode("utf-8", "replace") do). Written independently of src/tok so the two check each other.
inline std::string repair_utf8(std::string_view s) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) len = 3;
    else if (c == 0xED) len = 3, hi = 0x9F;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F;
    if (len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    bool ok = true;
    for (std::size_t k = 1; k < len; ++k, ++j) {
      const unsigned b = j < s.size() ? static_cast<unsigned char>(s[j]) : 0u;
      if (j >= s.size() || b < (k == 1 ? lo : 0x80u) || b > (k == 1 ? hi : 0xBFu)) {
        ok = false;
        break;
      }
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += kReplacement;
      i = j;  // resume at the first byte that did not continue the sequence
    }
  }
  return out;
}

inline bool is_valid_utf8(std::string_view s) { return repair_utf8(s) == s; }

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "FUZZ INVARIANT BROKEN: %s\n", what.c_str());
  std::abort();
}

}  // namespace overhead::fuzz
