// Reading JSONL input line by line, and writing a command's output files, shared by the
// subcommands (fields of a line: json_line.hpp).
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace overhead::cli {

// Calls fn(line_number, line) for every line of a JSONL file (".gz" is gunzipped; "-" is stdin).
// Blank lines are passed too, so that output line N always answers input line N.
void for_each_line(const std::string& path,
                   const std::function<void(std::size_t, std::string_view)>& fn);

// Writes DIR/NAME (DIR made when missing) and says so on stderr ("wrote PATH"). Throws
// std::runtime_error naming the path when it cannot.
void write_output_file(const std::string& dir, const std::string& name, const std::string& text);

}  // namespace overhead::cli
