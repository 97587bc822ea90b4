#include "tok/normalizer.hpp"

#include <utf8proc.h>

#include <cstdlib>
#include <stdexcept>

#include "tok/unicode_class.hpp"
#include "util/utf8.hpp"

namespace overhead::tok {

void ReplaceNormalizer::normalize(std::string& text) const {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  if (regex_) {
    std::vector<Span> matches;
    regex_->find_all(text, 0, text.size(), matches);
    if (matches.empty()) return;
    std::size_t prev = 0;
    for (const auto& [b, e] : matches) {
      out.append(text, prev, b - prev);
      out += content_;
      prev = e;
    }
    out.append(text, prev, std::string::npos);
  } else {
    if (literal_.empty()) return;
    std::size_t prev = 0, hit;
    while ((hit = text.find(literal_, prev)) != std::string::npos) {
      out.append(text, prev, hit - prev);
      out += content_;
      prev = hit + literal_.size();
    }
    if (prev == 0) return;
    out.append(text, prev, std::string::npos);
  }
  text.swap(out);
}

void StripNormalizer::normalize(std::string& text) const {
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

void UnicodeNormalizer::normalize(std::string& text) const {
  int options = UTF8PROC_STABLE;
  switch (form_) {
    case Form::kNFC: options |= UTF8PROC_COMPOSE; break;
    case Form::kNFD: options |= UTF8PROC_DECOMPOSE; break;
    case Form::kNFKC: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
    case Form::kNFKD: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
  }
  utf8proc_uint8_t* result = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                              static_cast<utf8proc_ssize_t>(text.size()), &result,
                              static_cast<utf8proc_option_t>(options));
  if (n < 0) throw std::runtime_error(std::string("unicode normalization failed: ") + utf8proc_errmsg(n));
  text.assign(reinterpret_cast<const char*>(result), static_cast<std::size_t>(n));
  std::free(result);
}

void LowercaseNormalizer::normalize(std::string& text) const {
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
  text.swap(out);
}

}  // namespace overhead::tok
