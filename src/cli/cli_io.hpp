// Reading JSONL input line by line, and writing a command's output files, shared by the
// subcommands (fields of a line: json_line.hpp).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "util/line_reader.hpp"

namespace overhead::cli {

// Calls fn(line_number, line) for every line of a JSONL file (".gz" is gunzipped; "-" is stdin).
// Blank lines are passed too, so that output line N always answers input line N. A line longer
// than `max_line_bytes` ends the read with util::LineTooLongError naming the file and line.
void for_each_line(const std::string& path, const std::function<void(std::size_t, std::string_view)>& fn,
                   std::size_t max_line_bytes = util::kDefaultMaxLineBytes);

// --max-line-bytes, the same for every command that reads JSONL.
void add_max_line_bytes_option(CLI::App& cmd, std::size_t& max_line_bytes);

// Writes DIR/NAME (DIR made when missing) and says so on stderr ("wrote PATH"). Throws
// std::runtime_error naming the path when it cannot.
void write_output_file(const std::string& dir, const std::string& name, const std::string& text);

}  // namespace overhead::cli
