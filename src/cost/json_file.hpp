// Reading one of the cost model's JSON data files (profiles, engine parameters, engine profiles,
// length distributions): the file parsed whole, or a CostError naming the file and what went
// wrong; the names of a folder's files; the data folders beside the profiles.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace overhead::cost {

// Throws CostError ("<file>: cannot open", or "<file>: <parser's message>").
[[nodiscard]] nlohmann::json read_json_file(const std::filesystem::path& file);

// NAME of every NAME.json in `dir`, sorted; empty when there is no such folder.
[[nodiscard]] std::vector<std::string> json_file_names(const std::filesystem::path& dir);

// DATA/`name` for the profiles folder DATA/profiles (with or without its trailing '/').
[[nodiscard]] std::filesystem::path data_dir_beside(const std::filesystem::path& profiles_dir, const std::string& name);

}  // namespace overhead::cost
