#include "cli/option_checks.hpp"

#include <charconv>
#include <cmath>
#include <system_error>

namespace overhead::cli {

namespace {

std::string range_text(std::int64_t min, std::int64_t max) { return std::to_string(min) + ".." + std::to_string(max); }

std::string number_text(double v) {
  std::string s = std::to_string(v);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

std::string integer_range_error(const std::string& text, std::int64_t min, std::int64_t max) {
  const std::string expected = "expected an integer in " + range_text(min, max) + ", got '" + text + "'";
  std::int64_t v = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (begin != end && *begin == '+') ++begin;  // from_chars takes no '+'; "+3" is still 3
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  if (begin == end || ptr != end || (ec != std::errc() && ec != std::errc::result_out_of_range)) return expected;
  if (ec == std::errc::result_out_of_range || v < min || v > max) return expected;
  return "";
}

CLI::Validator integer_in(std::int64_t min, std::int64_t max) {
  return CLI::Validator([min, max](std::string& s) { return integer_range_error(s, min, max); },
                        "INT in " + range_text(min, max), "integer range");
}

std::string number_range_error(const std::string& text, double min, double max) {
  const std::string expected = "expected a number in " + number_text(min) + ".." + number_text(max) + ", got '" + text + "'";
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ptr != text.data() + text.size() || ec != std::errc() || !std::isfinite(v) || v < min || v > max)
    return expected;
  return "";
}

CLI::Validator number_in(double min, double max) {
  return CLI::Validator([min, max](std::string& s) { return number_range_error(s, min, max); },
                        "NUMBER in " + number_text(min) + ".." + number_text(max), "number range");
}

std::string name_list_error(const std::string& text) {
  if (text.empty()) return "expected a comma-separated list of names, got an empty value";
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::size_t stop = comma == std::string::npos ? text.size() : comma;
    if (stop == start) return "empty name in '" + text + "' (at byte " + std::to_string(start) + ")";
    if (comma == std::string::npos) return "";
    start = comma + 1;
  }
}

CLI::Validator name_list() {
  return CLI::Validator([](std::string& s) { return name_list_error(s); }, "NAME[,NAME...]", "name list");
}

CLI::Validator non_empty() {
  return CLI::Validator([](std::string& s) { return s.empty() ? std::string("expected a name, got an empty value") : ""; },
                        "NAME", "non-empty");
}

}  // namespace overhead::cli
