// CLI11 validators for the numeric and list options of every subcommand. They look at the text as
// typed, before CLI11 converts it: converting "-1" into an unsigned option wraps it around to
// 18446744073709551615, so the sign and the range have to be checked on the string. A value out
// of range is a usage error (exit 2) whose message names the option and the accepted range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace overhead::cli {

// "" when `text` is a decimal integer in [min, max], else the reason, e.g.
// "expected an integer in 1..10, got '11'".
std::string integer_range_error(const std::string& text, std::int64_t min, std::int64_t max);
CLI::Validator integer_in(std::int64_t min, std::int64_t max);

// The same for a decimal number (seconds), finite and in [min, max].
std::string number_range_error(const std::string& text, double min, double max);
CLI::Validator number_in(double min, double max);

// "" when `text` is a comma-separated list of non-empty names ("a,b"), else the reason: an empty
// value or an empty element ("a,,b", "a,") names nothing and would be dropped silently.
std::string name_list_error(const std::string& text);
CLI::Validator name_list();

// A single non-empty name (an experiment, a worker name).
CLI::Validator non_empty();

}  // namespace overhead::cli
