#include "cost/json_file.hpp"

#include <algorithm>
#include <fstream>

#include "cost/profiles.hpp"

namespace overhead::cost {

nlohmann::json read_json_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw CostError(file.string() + ": cannot open");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw CostError(file.string() + ": " + e.what());
  }
}

std::vector<std::string> json_file_names(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  if (!std::filesystem::is_directory(dir)) return names;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::filesystem::path data_dir_beside(const std::filesystem::path& profiles_dir, const std::string& name) {
  std::filesystem::path dir = profiles_dir;
  if (!dir.has_filename()) dir = dir.parent_path();  // "data/profiles/"
  return dir.parent_path() / name;
}

}  // namespace overhead::cost
