// Small helpers shared by the subcommands: reading JSONL input, fetching a field of a line.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <simdjson.h>

namespace overhead::cli {

// Calls fn(line_number, line) for every line of a JSONL file (".gz" is gunzipped; "-" is stdin).
// Blank lines are passed too, so that output line N always answers input line N.
void for_each_line(const std::string& path,
                   const std::function<void(std::size_t, std::string_view)>& fn);

// Reads the string field `field` of a JSON object line. On failure returns false and sets `error`
// to "line N: reason".
bool string_field(simdjson::ondemand::parser& parser, std::string_view line, std::size_t line_number,
                  const std::string& field, std::string& value, std::string& error);

}  // namespace overhead::cli
