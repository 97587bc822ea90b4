#include "tok/detokenizer.hpp"

#include "tok/byte_level.hpp"
#include "util/utf8.hpp"

namespace overhead::tok {

void ByteLevelDetokenizer::detokenize_chain(std::vector<std::string>& tokens) const {
  // A token whose every char maps back to a byte contributes those bytes; any other token (an
  // added token such as "<|eot_id|>") contributes its UTF-8 as is. The whole is decoded lossily.
  std::string bytes;
  for (const std::string& t : tokens) {
    if (auto raw = byte_level::to_bytes(t)) {
      bytes += *raw;
    } else {
      bytes += t;
    }
  }
  tokens.assign(1, util::utf8::repair(bytes));
}

void ReplaceDetokenizer::detokenize_chain(std::vector<std::string>& tokens) const {
  if (pattern_.empty()) return;
  for (std::string& t : tokens) {
    std::string out;
    std::size_t prev = 0, hit;
    while ((hit = t.find(pattern_, prev)) != std::string::npos) {
      out.append(t, prev, hit - prev);
      out += content_;
      prev = hit + pattern_.size();
    }
    out.append(t, prev, std::string::npos);
    t.swap(out);
  }
}

namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}
}  // namespace

void ByteFallbackDetokenizer::detokenize_chain(std::vector<std::string>& tokens) const {
  std::vector<std::string> out;
  out.reserve(tokens.size());
  std::string pending;
  auto flush = [&] {
    if (pending.empty()) return;
    if (util::utf8::is_valid(pending)) {
      out.push_back(pending);
    } else {
      for (std::size_t k = 0; k < pending.size(); ++k) out.emplace_back("\xEF\xBF\xBD");
    }
    pending.clear();
  };
  for (std::string& t : tokens) {
    const bool is_byte = t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' && hex_value(t[3]) >= 0 &&
                         hex_value(t[4]) >= 0;
    if (is_byte) {
      pending.push_back(static_cast<char>(hex_value(t[3]) * 16 + hex_value(t[4])));
    } else {
      flush();
      out.push_back(std::move(t));
    }
  }
  flush();
  tokens.swap(out);
}

void FuseDetokenizer::detokenize_chain(std::vector<std::string>& tokens) const {
  std::string all;
  for (const std::string& t : tokens) all += t;
  tokens.assign(1, std::move(all));
}

void StripDetokenizer::detokenize_chain(std::vector<std::string>& tokens) const {
  for (std::string& t : tokens) {
    std::vector<std::pair<std::size_t, char32_t>> chars;  // (byte offset, char)
    std::size_t i = 0;
    while (i < t.size()) {
      const std::size_t at = i;
      chars.emplace_back(at, util::utf8::next(t, i));
    }
    std::size_t skip_front = 0;
    while (skip_front < start_ && skip_front < chars.size() && chars[skip_front].second == content_) ++skip_front;
    std::size_t skip_back = 0;
    while (skip_back < stop_ && skip_back + skip_front < chars.size() &&
           chars[chars.size() - 1 - skip_back].second == content_)
      ++skip_back;
    const std::size_t b = skip_front < chars.size() ? chars[skip_front].first : t.size();
    const std::size_t e = skip_back ? chars[chars.size() - skip_back].first : t.size();
    t = b < e ? t.substr(b, e - b) : std::string();
  }
}

void MetaspaceDetokenizer::detokenize_chain(std::vector<std::string>& tokens) const {
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    const std::string& t = tokens[k];
    std::string out;
    std::size_t i = 0;
    while (i < t.size()) {
      const char32_t c = util::utf8::next(t, i);
      if (c == replacement_) {
        if (!(k == 0 && strip_first_)) out.push_back(' ');
      } else {
        util::utf8::append(out, c);
      }
    }
    tokens[k] = std::move(out);
  }
}

}  // namespace overhead::tok
