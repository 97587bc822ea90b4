#include "tok/normalizer.hpp"

#include <utf8proc.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "tok/errors.hpp"
#include "tok/unicode_class.hpp"
#include "util/utf8.hpp"

namespace overhead::tok {

namespace {

[[noreturn]] void too_large(std::size_t limit) {
  throw EncodeError("normalizer: the normalized text would pass " + std::to_string(limit) +
                    " bytes (16 times its input plus 4 KiB); the tokenizer's normalizer grows text without bound");
}

// Checked after each replacement rather than before each append: one comparison per match on
// the hot path (Gemma replaces every space), and the text past the limit is at most one
// replacement or the input's tail, both already held in memory.
void check_within(const std::string& out, std::size_t limit) {
  if (out.size() > limit) too_large(limit);
}

// How many bytes of `text` are `b`: sixteen compared at once where SSE2 is (every x86-64), their
// matches summed per lane for up to 255 blocks before the lanes are added up.
std::size_t count_byte(std::string_view text, char b) {
  std::size_t n = 0, i = 0;
#if defined(__SSE2__)
  const __m128i needle = _mm_set1_epi8(b);
  while (i + 16 <= text.size()) {
    __m128i lanes = _mm_setzero_si128();
    for (int k = 0; k < 255 && i + 16 <= text.size(); ++k, i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
      lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(v, needle));  // a match is -1: subtracting adds 1
    }
    const __m128i sums = _mm_sad_epu8(lanes, _mm_setzero_si128());
    n += static_cast<std::size_t>(_mm_cvtsi128_si32(sums)) + static_cast<std::size_t>(_mm_extract_epi16(sums, 4));
  }
#endif
  for (; i < text.size(); ++i) n += text[i] == b;
  return n;
}

}  // namespace

void ReplaceNormalizer::apply(std::string& text, std::size_t limit) const {
  std::string out;
  out.reserve(std::min(limit, text.size() + text.size() / 4));
  const std::string_view view(text);
  if (regex_) {
    std::vector<Span> matches;
    regex_->find_all(text, 0, text.size(), matches);
    if (matches.empty()) return;
    std::size_t prev = 0;
    for (const auto& [b, e] : matches) {
      out.append(view.substr(prev, b - prev));
      out += content_;
      check_within(out, limit);
      prev = e;
    }
    out.append(view.substr(prev));
  } else if (literal_.size() == 1) {
    // One byte replaced (Gemma's space -> U+2581, every fifth byte of English): the output's size
    // is known after a count, so it is written in one pass, a byte or a replacement at a time,
    // instead of a find and two appends per match.
    const char from = literal_[0];
    const std::size_t matches = count_byte(text, from);
    if (matches == 0) return;
    const std::size_t size = text.size() - matches + matches * content_.size();
    if (size > limit) too_large(limit);
    const std::size_t with_size = content_.size();
    if (with_size <= 4) {
      // The replacement as one 4-byte word, stored whole at each match (the room past `size` is
      // cut off below): a store instead of a copy of run-time length.
      std::uint32_t with = 0;
      std::memcpy(&with, content_.data(), with_size);
      out.resize(size + 4);
      char* d = out.data();
      for (const char c : text) {
        if (c == from) {
          std::memcpy(d, &with, 4);
          d += with_size;
        } else {
          *d++ = c;
        }
      }
      out.resize(size);
    } else {
      out.resize(size);
      char* d = out.data();
      for (const char c : text) {
        if (c == from) {
          std::memcpy(d, content_.data(), with_size);
          d += with_size;
        } else {
          *d++ = c;
        }
      }
    }
  } else {
    if (literal_.empty()) return;
    std::size_t prev = 0, hit;
    while ((hit = text.find(literal_, prev)) != std::string::npos) {
      out.append(view.substr(prev, hit - prev));
      out += content_;
      check_within(out, limit);
      prev = hit + literal_.size();
    }
    if (prev == 0) return;
    out.append(view.substr(prev));
  }
  check_within(out, limit);
  text.swap(out);
}

void PrependNormalizer::apply(std::string& text, std::size_t limit) const {
  if (text.empty()) return;
  if (prefix_.size() > limit - std::min(limit, text.size())) too_large(limit);
  text.insert(0, prefix_);
}

void StripNormalizer::apply(std::string& text, std::size_t /*limit*/) const {
  std::size_t b = 0, e = text.size();
  if (left_) {
    while (b < e) {
      std::size_t n = b;
      if (!unicode::is(util::utf8::next(text, n), unicode::kSpace)) break;
      b = n;
    }
  }
  if (right_) {
    while (e > b) {
      std::size_t start;
      if (!unicode::is(util::utf8::previous(text, e, start), unicode::kSpace)) break;
      e = start;
    }
  }
  text = text.substr(b, e - b);
}

void UnicodeNormalizer::apply(std::string& text, std::size_t limit) const {
  int options = UTF8PROC_STABLE;
  switch (form_) {
    case Form::kNFC: options |= UTF8PROC_COMPOSE; break;
    case Form::kNFD: options |= UTF8PROC_DECOMPOSE; break;
    case Form::kNFKC: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
    case Form::kNFKD: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
  }
  // utf8proc_map allocates 4 bytes per code point of the decomposed text: count them first (no
  // buffer) so an expansion past the limit is refused before that allocation.
  const auto points = utf8proc_decompose(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                         static_cast<utf8proc_ssize_t>(text.size()), nullptr, 0,
                                         static_cast<utf8proc_option_t>((options & ~UTF8PROC_COMPOSE) | UTF8PROC_DECOMPOSE));
  if (points < 0) throw std::runtime_error(std::string("unicode normalization failed: ") + utf8proc_errmsg(points));
  if (static_cast<std::size_t>(points) > limit) too_large(limit);
  utf8proc_uint8_t* result = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                              static_cast<utf8proc_ssize_t>(text.size()), &result,
                              static_cast<utf8proc_option_t>(options));
  if (n < 0) throw std::runtime_error(std::string("unicode normalization failed: ") + utf8proc_errmsg(n));
  if (static_cast<std::size_t>(n) > limit) {
    std::free(result);
    too_large(limit);
  }
  text.assign(reinterpret_cast<const char*>(result), static_cast<std::size_t>(n));
  std::free(result);
}

void LowercaseNormalizer::apply(std::string& text, std::size_t limit) const {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const char32_t c = util::utf8::next(text, i);
    if (c == 0x130) {
      out += "i\xCC\x87";  // full lowercase mapping of U+0130 is two code points (Rust's to_lowercase)
      continue;
    }
    util::utf8::append(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
  }
  // Lowercasing grows a text by half at most (U+0130, 2 bytes, becomes 3), so checking once at
  // the end allocates nothing unbounded.
  if (out.size() > limit) too_large(limit);
  text.swap(out);
}

}  // namespace overhead::tok
