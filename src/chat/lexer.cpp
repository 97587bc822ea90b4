#include "chat/lexer.hpp"

#include <charconv>
#include <cstdlib>

#include "chat/pytext.hpp"

namespace overhead::chat {

namespace {

// Python's \s on str: the whitespace set of str.isspace plus a few separators Python's re treats
// alike; both agree on everything a template contains in practice.
bool is_re_space(std::string_view s, std::size_t i, std::size_t& len) {
  std::size_t j = i;
  const char32_t cp = py::next_code_point(s, j);
  len = j - i;
  return py::is_space(cp);
}

std::size_t skip_re_space(std::string_view s, std::size_t i) {
  std::size_t len = 0;
  while (i < s.size() && is_re_space(s, i, len)) i += len;
  return i;
}

bool all_re_space(std::string_view s) {
  if (s.empty()) return false;
  return skip_re_space(s, 0) == s.size();
}

std::string_view rstrip_space(std::string_view s) { return py::strip(s, false, true); }

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) lex_root();
    push(Tok::Eof, "", static_cast<std::uint32_t>(src_.size()));
    return std::move(out_);
  }

 private:
  std::string_view src_;
  std::size_t pos_ = 0;
  bool line_starting_ = true;
  std::vector<Token> out_;

  void push(Tok t, std::string value, std::uint32_t offset) {
    Token tok;
    tok.type = t;
    tok.value = std::move(value);
    tok.offset = offset;
    out_.push_back(std::move(tok));
  }
  [[noreturn]] void fail(std::string msg, std::size_t at) { throw LexError{std::move(msg), static_cast<std::uint32_t>(at)}; }

  // Applies `{%-` / lstrip_blocks to the text in front of a tag.
  std::string_view strip_text(std::string_view text, char sign, bool is_variable) const {
    if (sign == '-') return rstrip_space(text);
    if (sign != '+' && !is_variable) {
      const std::size_t nl = text.rfind('\n');
      const std::size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
      if ((l_pos > 0 || line_starting_) && all_re_space(text.substr(l_pos))) return text.substr(0, l_pos);
    }
    return text;
  }

  void emit_data(std::string_view text, std::size_t at) {
    if (!text.empty()) push(Tok::Data, std::string(text), static_cast<std::uint32_t>(at));
  }

  // Matches `{%[-+]?\s*raw\s*(-%}\s*|%})` at p; returns its end or npos.
  std::size_t match_raw_begin(std::size_t p) const {
    std::size_t i = p + 2;
    if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) ++i;
    i = skip_re_space(src_, i);
    if (src_.substr(i, 3) != "raw") return std::string_view::npos;
    i = skip_re_space(src_, i + 3);
    if (src_.substr(i, 3) == "-%}") return skip_re_space(src_, i + 3);
    if (src_.substr(i, 2) == "%}") return i + 2;
    return std::string_view::npos;
  }

  void lex_root() {
    // The earliest of {{ {% {#.
    std::size_t p = pos_;
    for (;;) {
      p = src_.find('{', p);
      if (p == std::string_view::npos || p + 1 >= src_.size()) {
        emit_data(src_.substr(pos_), pos_);
        line_starting_ = src_.back() == '\n';
        pos_ = src_.size();
        return;
      }
      const char c = src_[p + 1];
      if (c == '{' || c == '%' || c == '#') break;
      ++p;
    }
    const char kind = src_[p + 1];
    const char sign = p + 2 < src_.size() && (src_[p + 2] == '-' || src_[p + 2] == '+') ? src_[p + 2] : 0;
    const std::string_view text = src_.substr(pos_, p - pos_);
    emit_data(strip_text(text, sign, kind == '{'), pos_);
    if (kind == '%') {
      const std::size_t raw_end = match_raw_begin(p);
      if (raw_end != std::string_view::npos) {
        line_starting_ = src_[raw_end - 1] == '\n';
        lex_raw(raw_end, p);
        return;
      }
    }
    std::size_t i = p + 2 + (sign ? 1 : 0);
    line_starting_ = false;
    if (kind == '#') {
      lex_comment(i, p);
    } else {
      push(kind == '{' ? Tok::VarBegin : Tok::BlockBegin, "", static_cast<std::uint32_t>(p));
      lex_tag(i, kind == '{');
    }
  }

  void lex_comment(std::size_t i, std::size_t begin) {
    const std::size_t q = src_.find("#}", i);
    if (q == std::string_view::npos) fail("Missing end of comment tag", begin);
    std::size_t end = q + 2;
    if (q > i && src_[q - 1] == '-') {
      end = skip_re_space(src_, end);
    } else if (q > i && src_[q - 1] == '+') {
      // keep what follows
    } else if (end < src_.size() && src_[end] == '\n') {
      ++end;
    }
    line_starting_ = src_[end - 1] == '\n';
    pos_ = end;
  }

  void lex_raw(std::size_t i, std::size_t begin) {
    // Find `{%[-+]?\s*endraw\s*(+%}|-%}\s*|%}\n?)`.
    std::size_t p = i;
    for (;;) {
      p = src_.find("{%", p);
      if (p == std::string_view::npos) fail("Missing end of raw directive", begin);
      std::size_t j = p + 2;
      char sign = 0;
      if (j < src_.size() && (src_[j] == '-' || src_[j] == '+')) sign = src_[j++];
      j = skip_re_space(src_, j);
      if (src_.substr(j, 6) != "endraw") { p += 2; continue; }
      j = skip_re_space(src_, j + 6);
      std::size_t end;
      if (src_.substr(j, 3) == "+%}") end = j + 3;
      else if (src_.substr(j, 3) == "-%}") end = skip_re_space(src_, j + 3);
      else if (src_.substr(j, 2) == "%}") end = j + 2 + (j + 2 < src_.size() && src_[j + 2] == '\n' ? 1 : 0);
      else { p += 2; continue; }
      emit_data(strip_text(src_.substr(i, p - i), sign, false), i);
      line_starting_ = src_[end - 1] == '\n';
      pos_ = end;
      return;
    }
  }

  // Tokens of an expression up to the closing }} or %}.
  void lex_tag(std::size_t i, bool is_variable) {
    std::vector<char> balance;
    for (;;) {
      if (i >= src_.size()) fail(is_variable ? "unexpected end of template, expected 'end of print statement'."
                                             : "unexpected end of template, expected 'end of statement block'.", i);
      if (balance.empty()) {
        std::size_t end = std::string_view::npos;
        if (is_variable) {
          if (src_.substr(i, 3) == "-}}") end = skip_re_space(src_, i + 3);
          else if (src_.substr(i, 2) == "}}") end = i + 2;
        } else {
          if (src_.substr(i, 3) == "+%}") end = i + 3;
          else if (src_.substr(i, 3) == "-%}") end = skip_re_space(src_, i + 3);
          else if (src_.substr(i, 2) == "%}") end = i + 2 + (i + 2 < src_.size() && src_[i + 2] == '\n' ? 1 : 0);
        }
        if (end != std::string_view::npos) {
          push(is_variable ? Tok::VarEnd : Tok::BlockEnd, "", static_cast<std::uint32_t>(i));
          line_starting_ = src_[end - 1] == '\n';
          pos_ = end;
          return;
        }
      }
      std::size_t len = 0;
      if (is_re_space(src_, i, len)) {
        i = skip_re_space(src_, i);
        continue;
      }
      const char c = src_[i];
      if (is_digit(c)) {
        i = lex_number(i);
      } else if (is_name_start(c)) {
        std::size_t j = i;
        while (j < src_.size() && is_name_char(src_[j])) ++j;
        push(Tok::Name, std::string(src_.substr(i, j - i)), static_cast<std::uint32_t>(i));
        i = j;
      } else if (c == '\'' || c == '"') {
        i = lex_string(i);
      } else {
        i = lex_operator(i, balance);
      }
    }
  }

  std::size_t lex_digits(std::size_t j) const {
    // (\d+_)*\d+
    while (j < src_.size() && is_digit(src_[j])) {
      ++j;
      if (j + 1 < src_.size() && src_[j] == '_' && is_digit(src_[j + 1])) ++j;
    }
    return j;
  }

  std::size_t lex_number(std::size_t i) {
    std::size_t j = lex_digits(i);
    bool is_float = false;
    if (j + 1 < src_.size() && src_[j] == '.' && is_digit(src_[j + 1])) {
      j = lex_digits(j + 1);
      is_float = true;
    }
    if (j < src_.size() && (src_[j] == 'e' || src_[j] == 'E')) {
      std::size_t k = j + 1;
      if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
      if (k < src_.size() && is_digit(src_[k])) {
        j = lex_digits(k);
        is_float = true;
      }
    }
    std::string text;
    for (std::size_t k = i; k < j; ++k)
      if (src_[k] != '_') text.push_back(src_[k]);
    Token tok;
    tok.offset = static_cast<std::uint32_t>(i);
    if (is_float) {
      tok.type = Tok::Float;
      tok.float_value = std::strtod(text.c_str(), nullptr);
    } else {
      tok.type = Tok::Int;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), tok.int_value);
      if (r.ec != std::errc()) fail("integer literal too large", i);
    }
    tok.value = std::move(text);
    out_.push_back(std::move(tok));
    return j;
  }

  // Python's "unicode-escape" decoding of the literal's body, as Jinja applies it.
  std::size_t lex_string(std::size_t i) {
    const char quote = src_[i];
    std::size_t j = i + 1;
    std::string value;
    for (;;) {
      if (j >= src_.size()) fail("unexpected char '" + std::string(1, quote) + "'", i);
      const char c = src_[j];
      if (c == quote) break;
      if (c != '\\') {
        value.push_back(c);
        ++j;
        continue;
      }
      if (j + 1 >= src_.size()) fail("unexpected char '" + std::string(1, quote) + "'", i);
      const char e = src_[j + 1];
      j += 2;
      switch (e) {
        case '\n': break;
        case '\\': value.push_back('\\'); break;
        case '\'': value.push_back('\''); break;
        case '"': value.push_back('"'); break;
        case 'a': value.push_back('\a'); break;
        case 'b': value.push_back('\b'); break;
        case 'f': value.push_back('\f'); break;
        case 'n': value.push_back('\n'); break;
        case 'r': value.push_back('\r'); break;
        case 't': value.push_back('\t'); break;
        case 'v': value.push_back('\v'); break;
        case 'x':
        case 'u':
        case 'U': {
          const std::size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (j + n > src_.size()) fail("invalid escape in string literal", i);
          char32_t cp = 0;
          for (std::size_t k = 0; k < n; ++k) {
            const char h = src_[j + k];
            int d;
            if (h >= '0' && h <= '9') d = h - '0';
            else if (h >= 'a' && h <= 'f') d = h - 'a' + 10;
            else if (h >= 'A' && h <= 'F') d = h - 'A' + 10;
            else fail("invalid escape in string literal", i);
            cp = cp * 16 + static_cast<char32_t>(d);
          }
          if (cp > 0x10FFFF) fail("invalid escape in string literal", i);
          py::append_utf8(value, cp);
          j += n;
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            char32_t cp = static_cast<char32_t>(e - '0');
            for (int k = 0; k < 2 && j < src_.size() && src_[j] >= '0' && src_[j] <= '7'; ++k, ++j)
              cp = cp * 8 + static_cast<char32_t>(src_[j] - '0');
            py::append_utf8(value, cp);
          } else {
            value.push_back('\\');
            value.push_back(e);
          }
      }
    }
    push(Tok::String, std::move(value), static_cast<std::uint32_t>(i));
    return j + 1;
  }

  std::size_t lex_operator(std::size_t i, std::vector<char>& balance) {
    static constexpr std::string_view two[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const auto op : two)
      if (src_.substr(i, 2) == op) {
        push(Tok::Op, std::string(op), static_cast<std::uint32_t>(i));
        return i + 2;
      }
    const char c = src_[i];
    static constexpr std::string_view one = "+-/*%~[](){}<>=.:|,;";
    if (one.find(c) == std::string_view::npos) fail(std::string("unexpected char '") + c + "'", i);
    if (c == '{') balance.push_back('}');
    else if (c == '(') balance.push_back(')');
    else if (c == '[') balance.push_back(']');
    else if (c == '}' || c == ')' || c == ']') {
      if (balance.empty()) fail(std::string("unexpected '") + c + "'", i);
      const char expected = balance.back();
      balance.pop_back();
      if (expected != c) fail(std::string("unexpected '") + c + "', expected '" + expected + "'", i);
    }
    push(Tok::Op, std::string(1, c), static_cast<std::uint32_t>(i));
    return i + 1;
  }
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

void line_col(std::string_view source, std::uint32_t offset, std::uint32_t& line, std::uint32_t& col) {
  line = 1;
  col = 1;
  for (std::size_t i = 0; i < offset && i < source.size(); ++i) {
    if (source[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
}

}  // namespace overhead::chat
