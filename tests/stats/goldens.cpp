#include "goldens.hpp"

#include <fstream>
#include <stdexcept>
#include <string>

namespace overhead::stats::testing {

const nlohmann::json& goldens() {
  static const nlohmann::json data = [] {
    const std::string path = std::string(OVERHEAD_SOURCE_DIR) + "/data/stats/goldens.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return nlohmann::json::parse(in);
  }();
  return data;
}

std::vector<double> doubles(const nlohmann::json& array) { return array.get<std::vector<double>>(); }

}  // namespace overhead::stats::testing
