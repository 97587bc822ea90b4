#include "cli/json_line.hpp"

#include <nlohmann/json.hpp>

namespace overhead::cli {

namespace {

// nlohmann's messages read "[json.exception.parse_error.101] parse error at line 1, column 14:
// syntax error while parsing value - <what>"; the line and column are those of the whole text,
// which is one line here, so the byte offset says the same more plainly.
std::string strip_nlohmann_prefix(const std::string& what) {
  std::string s = what;
  if (const auto close = s.find("] "); s.rfind("[json.exception.", 0) == 0 && close != std::string::npos)
    s = s.substr(close + 2);
  if (const auto colon = s.find(": "); s.rfind("parse error", 0) == 0 && colon != std::string::npos)
    s = s.substr(colon + 2);
  return s;
}

// The parser's message quotes the bytes it read last, which may be invalid UTF-8 or control
// bytes: shown as \xNN so that the error line itself stays valid JSON text.
std::string printable(const std::string& s) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (const unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

const char* type_name(simdjson::dom::element_type t) {
  using T = simdjson::dom::element_type;
  switch (t) {
    case T::ARRAY: return "a list";
    case T::OBJECT: return "an object";
    case T::INT64:
    case T::UINT64:
    case T::DOUBLE: return "a number";
    case T::STRING: return "a string";
    case T::BOOL: return "a boolean";
    case T::NULL_VALUE: return "null";
  }
  return "not a string";
}

// A line at least this long is read with nlohmann's SAX parser instead of simdjson's DOM: the DOM
// costs about 14 bytes per byte of the line (tape, string buffer, structural indexes), kept at
// the longest line's size, where the SAX reader holds only the field's string.
constexpr std::size_t kSaxLineBytes = std::size_t{1} << 20;
// simdjson's nesting bound, which the SAX reader keeps so both paths refuse the same lines.
constexpr std::size_t kMaxDepth = simdjson::DEFAULT_MAX_DEPTH;

// Validates the whole line and keeps the last value of `field` of the top-level object: its text
// when a string, else the name of its type.
class FieldSax final : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit FieldSax(const std::string& field) : field_(field) {}
  bool null() override { return scalar("null"); }
  bool boolean(bool) override { return scalar("a boolean"); }
  bool number_integer(number_integer_t) override { return scalar("a number"); }
  bool number_unsigned(number_unsigned_t) override { return scalar("a number"); }
  bool number_float(number_float_t, const string_t&) override { return scalar("a number"); }
  bool binary(binary_t&) override { return scalar("not a string"); }
  bool string(string_t& v) override {
    if (depth_ == 0) root = "a string";
    if (at_field()) {
      value = std::move(v);  // the lexer's copy: taken, not copied again
      type = nullptr;
    }
    return true;
  }
  bool start_object(std::size_t) override { return open("an object", true); }
  bool start_array(std::size_t) override { return open("a list", false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    key_matches_ = depth_ == 1 && k == field_;
    return true;
  }
  // Worded as describe_invalid_json words the same failure.
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    const auto* located = dynamic_cast<const nlohmann::json::parse_error*>(&e);
    error = located ? parse_error_text(*located) : "invalid JSON: " + printable(strip_nlohmann_prefix(e.what()));
    return false;
  }

  std::string value;
  const char* type = nullptr;  // the field's type when not a string (nullptr: a string, or absent)
  bool found = false;
  const char* root = nullptr;   // the line's type
  std::string error;            // set when the line is not JSON
  bool too_deep = false;

 private:
  bool at_field() {
    if (!(depth_ == 1 && key_matches_ && in_object_)) return false;
    found = true;
    key_matches_ = false;
    return true;
  }
  bool scalar(const char* name) {
    if (depth_ == 0) root = name;
    if (at_field()) type = name;
    return true;
  }
  bool open(const char* name, bool object) {
    if (depth_ == 0) {
      root = name;
      in_object_ = object;
    }
    if (at_field()) type = name;
    if (++depth_ > kMaxDepth) {
      too_deep = true;
      return false;
    }
    return true;
  }
  bool close() {
    --depth_;
    return true;
  }
  const std::string& field_;
  std::size_t depth_ = 0;
  bool key_matches_ = false;
  bool in_object_ = false;
};

}  // namespace

std::string blank_line_error(std::string_view line) {
  if (line.find_first_not_of(" \t") != std::string_view::npos) return {};
  return "blank line: every line must hold one JSON object (run and enqueue skip blank lines; tokenize and "
         "template answer each line, so the output stays aligned with the input)";
}

std::string parse_error_text(const nlohmann::json::parse_error& e) {
  // e.byte is 1-based: the byte at which the parser stopped.
  const std::size_t offset = e.byte == 0 ? 0 : e.byte - 1;
  return "invalid JSON at byte " + std::to_string(offset) + ": " + printable(strip_nlohmann_prefix(e.what()));
}

std::string describe_invalid_json(std::string_view text, const char* fallback_reason) {
  try {
    const auto parsed = nlohmann::json::parse(text);
    (void)parsed;
  } catch (const nlohmann::json::parse_error& e) {
    return parse_error_text(e);
  } catch (const nlohmann::json::exception& e) {
    return "invalid JSON: " + printable(strip_nlohmann_prefix(e.what()));
  }
  // The two parsers disagree (e.g. nesting deeper than simdjson's bound): say what simdjson said.
  return std::string("invalid JSON (") + fallback_reason + ")";
}

bool JsonLineReader::string_field(std::string_view line, std::size_t line_number, const std::string& field,
                                  std::string& value, std::string& error) {
  const std::string prefix = "line " + std::to_string(line_number) + ": ";
  if (std::string blank = blank_line_error(line); !blank.empty()) {
    error = prefix + blank;
    return false;
  }
  if (line.size() >= kSaxLineBytes) return long_string_field(line, prefix, field, value, error);
  simdjson::dom::element doc;
  // The DOM parser validates the whole text (unlike on-demand parsing, which reads only as far as
  // the field): trailing content, literals and strings after the field are checked too.
  if (auto err = parser_.parse(line.data(), line.size(), true).get(doc); err) {
    error = prefix + describe_invalid_json(line, simdjson::error_message(err));
    return false;
  }
  simdjson::dom::object obj;
  if (doc.get(obj) != simdjson::SUCCESS) {
    error = prefix + "expected a JSON object, got " + type_name(doc.type());
    return false;
  }
  // Last of duplicate keys, as json.loads keeps it.
  bool found = false;
  simdjson::dom::element v;
  for (const auto kv : obj)
    if (kv.key == field) {
      v = kv.value;
      found = true;
    }
  if (!found) {
    error = prefix + "missing field \"" + field + "\"";
    return false;
  }
  std::string_view s;
  if (v.get(s) != simdjson::SUCCESS) {
    error = prefix + "field \"" + field + "\" is " + type_name(v.type()) + ", not a string";
    return false;
  }
  value.assign(s);
  return true;
}

bool JsonLineReader::long_string_field(std::string_view line, const std::string& prefix, const std::string& field,
                                       std::string& value, std::string& error) {
  FieldSax sax(field);
  const bool ok = nlohmann::json::sax_parse(line.begin(), line.end(), &sax);
  if (!ok) {
    error = prefix + (sax.too_deep ? std::string("invalid JSON (") + simdjson::error_message(simdjson::DEPTH_ERROR) + ")"
                                   : sax.error);
    return false;
  }
  if (sax.root == nullptr || std::string_view(sax.root) != "an object") {
    error = prefix + "expected a JSON object, got " + (sax.root ? sax.root : "not a string");
    return false;
  }
  if (!sax.found) {
    error = prefix + "missing field \"" + field + "\"";
    return false;
  }
  if (sax.type != nullptr) {
    error = prefix + "field \"" + field + "\" is " + sax.type + ", not a string";
    return false;
  }
  value = std::move(sax.value);
  return true;
}

}  // namespace overhead::cli
