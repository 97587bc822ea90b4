#include "cost/json_file.hpp"

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

}  // namespace overhead::cost
