// Reading one of the cost model's JSON data files (profiles, engine parameters, engine profiles):
// the file parsed whole, or a CostError naming the file and what went wrong.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

namespace overhead::cost {

// Throws CostError ("<file>: cannot open", or "<file>: <parser's message>").
[[nodiscard]] nlohmann::json read_json_file(const std::filesystem::path& file);

}  // namespace overhead::cost
