#include "cost/profiles.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

namespace overhead::cost {
namespace {

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw CostError(file.string() + ": cannot open");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw CostError(file.string() + ": " + e.what());
  }
}

std::string text_field(const nlohmann::json& j, const char* key, const std::filesystem::path& file) {
  if (!j.contains(key) || !j[key].is_string()) throw CostError(file.string() + ": missing string field \"" + key + "\"");
  return j[key].get<std::string>();
}

double number_field(const nlohmann::json& j, const char* key, const std::filesystem::path& file,
                    const std::string& where) {
  if (!j.contains(key) || !j[key].is_number())
    throw CostError(file.string() + ": " + where + ": missing number field \"" + key + "\"");
  return j[key].get<double>();
}

Figure figure(const nlohmann::json& j, const char* key, const std::filesystem::path& file) {
  if (!j.contains(key) || !j[key].is_object()) throw CostError(file.string() + ": missing figure \"" + key + "\"");
  const auto& f = j[key];
  Figure out;
  out.value = number_field(f, "value", file, key);
  out.kind = text_field(f, "kind", file);
  out.source = text_field(f, "source", file);
  out.date = text_field(f, "date", file);
  if (out.kind != "measured" && out.kind != "published" && out.kind != "estimated")
    throw CostError(file.string() + ": " + key + ".kind must be measured, published or estimated, not \"" + out.kind + "\"");
  if (!(out.value > 0)) throw CostError(file.string() + ": " + key + ".value must be positive");
  return out;
}

std::filesystem::path resolve(const std::string& name_or_file, const std::filesystem::path& dir, const char* kind) {
  const std::filesystem::path direct(name_or_file);
  if (name_or_file.find('/') != std::string::npos || direct.extension() == ".json") return direct;
  const auto shipped = dir / kind / (name_or_file + ".json");
  if (!std::filesystem::exists(shipped))
    throw CostError(std::string("unknown ") + kind + " profile \"" + name_or_file + "\" (see `overhead cost --list`)");
  return shipped;
}

}  // namespace

GpuProfile load_gpu(const std::string& name_or_file, const std::filesystem::path& profiles_dir) {
  const auto file = resolve(name_or_file, profiles_dir, "gpu");
  const auto j = read_json(file);
  GpuProfile g;
  g.name = text_field(j, "name", file);
  g.description = j.value("description", "");
  g.memory_gb = figure(j, "memory_gb", file);
  g.bandwidth_gb_per_s = figure(j, "memory_bandwidth_gb_per_s", file);
  g.peak_tflops = figure(j, "peak_dense_bf16_tflops", file);
  g.compute_efficiency = figure(j, "compute_efficiency", file);
  g.bandwidth_efficiency = figure(j, "bandwidth_efficiency", file);
  return g;
}

ModelProfile load_model(const std::string& name_or_file, const std::filesystem::path& profiles_dir) {
  const auto file = resolve(name_or_file, profiles_dir, "model");
  const auto j = read_json(file);
  ModelProfile m;
  m.name = text_field(j, "name", file);
  m.description = j.value("description", "");
  m.parameters = figure(j, "parameters", file);
  m.active_parameters = figure(j, "active_parameters", file);
  m.bytes_per_parameter = figure(j, "bytes_per_parameter", file);
  m.kv_bytes_per_token = figure(j, "kv_bytes_per_token", file);
  m.max_concurrency = figure(j, "max_concurrency", file);
  return m;
}

Prices load_prices(const std::filesystem::path& file) {
  const auto j = read_json(file);
  Prices p;
  if (j.contains("instances"))
    for (const auto& [name, e] : j["instances"].items()) {
      InstancePrice ip;
      ip.usd_per_hour = number_field(e, "usd_per_hour", file, "instances." + name);
      ip.kind = text_field(e, "kind", file);
      ip.source = text_field(e, "source", file);
      ip.date = text_field(e, "date", file);
      p.instances[name] = ip;
    }
  if (j.contains("apis"))
    for (const auto& [name, e] : j["apis"].items()) {
      ApiPrice ap;
      ap.usd_per_1m_input = number_field(e, "usd_per_1m_input", file, "apis." + name);
      ap.usd_per_1m_output = number_field(e, "usd_per_1m_output", file, "apis." + name);
      ap.kind = text_field(e, "kind", file);
      ap.source = text_field(e, "source", file);
      ap.date = text_field(e, "date", file);
      p.apis[name] = ap;
    }
  return p;
}

std::vector<std::string> list_profiles(const std::filesystem::path& profiles_dir, const std::string& kind) {
  std::vector<std::string> names;
  const auto dir = profiles_dir / kind;
  if (!std::filesystem::is_directory(dir)) return names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace overhead::cost
