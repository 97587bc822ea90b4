// GPU, model and price profiles: the data files under data/profiles/, each figure with its value,
// kind (measured, published or estimated), source and date, so every output can say where a number
// came from.
#pragma once

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace overhead::cost {

struct CostError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Figure {
  double value = 0;
  std::string kind;  // measured | published | estimated
  std::string source;
  std::string date;
};

struct GpuProfile {
  std::string name, description;
  Figure memory_gb, bandwidth_gb_per_s, peak_tflops, compute_efficiency, bandwidth_efficiency;
};

struct ModelProfile {
  std::string name, description;
  Figure parameters, active_parameters, bytes_per_parameter, kv_bytes_per_token, max_concurrency;
};

struct InstancePrice {
  double usd_per_hour = 0;
  std::string kind, source, date;
};
struct ApiPrice {
  double usd_per_1m_input = 0, usd_per_1m_output = 0;
  std::string kind, source, date;
};
struct Prices {
  std::map<std::string, InstancePrice> instances;
  std::map<std::string, ApiPrice> apis;
};

// `name_or_file`: a shipped short name (data/profiles/gpu/NAME.json) or a path to a JSON file.
// Errors name the file and the missing or malformed field.
GpuProfile load_gpu(const std::string& name_or_file, const std::filesystem::path& profiles_dir);
ModelProfile load_model(const std::string& name_or_file, const std::filesystem::path& profiles_dir);
Prices load_prices(const std::filesystem::path& file);

// Shipped profile names of one kind ("gpu" or "model"), sorted.
std::vector<std::string> list_profiles(const std::filesystem::path& profiles_dir, const std::string& kind);

}  // namespace overhead::cost
