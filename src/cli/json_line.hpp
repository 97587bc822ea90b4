// Reading one string field of a JSONL line for `tokenize` and `bench tokenize`, with the whole line
// validated: trailing content (`{"a":1}{"b":2}`), bad literals anywhere (`tru`), truncation, lone
// surrogates (`"\ud800"`, which no UTF-8 text can hold) and invalid UTF-8 are errors that say what
// is wrong and at which byte. Of duplicate keys the last one counts, as Python's json.loads does.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>
#include <simdjson.h>

namespace overhead::cli {

// What is wrong with a JSON text and where, e.g. "invalid JSON at byte 13: unexpected '{'; expected
// end of input". Only called for text already known to be invalid (it parses a second time).
std::string describe_invalid_json(std::string_view text, const char* fallback_reason);

// "invalid JSON at byte N: what" for a parse error of nlohmann's parser (N is 0-based).
// "blank line: ..." when `line` holds only spaces and tabs: tokenize and template answer every input
// line with one output line, so a blank line is an error line (the output stays aligned with the
// input) whose message says what it is; empty otherwise.
std::string blank_line_error(std::string_view line);
std::string parse_error_text(const nlohmann::json::parse_error& e);

class JsonLineReader {
 public:
  // Reads the string field `field` of the JSON object `line` (line number `line_number`) into
  // `value`. On failure returns false and sets `error` to "line N: reason".
  bool string_field(std::string_view line, std::size_t line_number, const std::string& field, std::string& value,
                    std::string& error);

 private:
  // A line of 1 MiB or more, read with a SAX parser (same checks and messages, far less memory).
  static bool long_string_field(std::string_view line, const std::string& prefix, const std::string& field,
                                std::string& value, std::string& error);
  simdjson::dom::parser parser_;  // reuses its buffers across lines
};

}  // namespace overhead::cli
