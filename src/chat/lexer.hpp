// Splits a template into tokens the way Jinja2's lexer does with transformers' settings
// (trim_blocks=True, lstrip_blocks=True): text between tags has its whitespace control applied here,
// so the parser and the evaluator never think about whitespace again.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace overhead::chat {

enum class Tok : std::uint8_t {
  Data,        // literal text (already stripped as the tags around it ask)
  VarBegin,    // {{
  VarEnd,      // }}
  BlockBegin,  // {%
  BlockEnd,    // %}
  Name,
  String,      // value holds the unescaped text
  Int,
  Float,
  Op,          // value holds the operator: + - * / // % ** ~ == != < <= > >= ( ) [ ] { } , . : | = ;
  Eof,
};

struct Token {
  Tok type;
  std::string value;
  std::uint32_t offset = 0;  // byte offset in the source, for line:column
  std::int64_t int_value = 0;
  double float_value = 0;
};

// Thrown with a byte offset; the compiler turns it into "name:line:col: message".
struct LexError {
  std::string message;
  std::uint32_t offset;
};

std::vector<Token> tokenize(std::string_view source);

// 1-based line and column of a byte offset.
void line_col(std::string_view source, std::uint32_t offset, std::uint32_t& line, std::uint32_t& col);

}  // namespace overhead::chat
