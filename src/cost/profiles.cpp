#include "cost/profiles.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string_view>

#include "cost/json_file.hpp"

namespace overhead::cost {
namespace {

// `where`: the enclosing figure or entry ("memory_gb", "instances.NAME"), empty at the top level.
std::string text_field(const nlohmann::json& j, const char* key, const std::filesystem::path& file,
                       const std::string& where = "") {
  if (!j.contains(key) || !j[key].is_string())
    throw CostError(file.string() + ": " + (where.empty() ? "" : where + ": ") + "missing string field \"" + key + "\"");
  return j[key].get<std::string>();
}

double number_field(const nlohmann::json& j, const char* key, const std::filesystem::path& file,
                    const std::string& where) {
  if (!j.contains(key) || !j[key].is_number())
    throw CostError(file.string() + ": " + where + ": missing number field \"" + key + "\"");
  return j[key].get<double>();
}

// The range a figure can have on real hardware and models, generous on both sides: a value past it
// is a typo or a probe, not a machine (1e-300 GB/s of bandwidth was taken, and priced a step of
// infinite length).
struct FigureRange {
  std::string_view key;
  double min, max;
};
constexpr FigureRange kFigureRanges[] = {
    {"memory_gb", 0.1, 1e6},
    {"device_memory_mib", 100, 1e9},
    {"memory_bandwidth_gb_per_s", 1, 1e6},
    {"peak_dense_bf16_tflops", 0.01, 1e7},
    {"peak_dense_fp8_tflops", 0.01, 1e7},
    {"peak_dense_fp4_tflops", 0.01, 1e7},
    {"interconnect_gb_per_s", 0.01, 1e6},
    {"allreduce_latency_us", 0.001, 1e7},
    {"interconnect_full_mesh", 0, 1},
    {"matmul_achievable_share", 0.01, 1},
    {"compute_efficiency", 1e-3, 1},
    {"bandwidth_efficiency", 1e-3, 1},
    {"parameters", 1e3, 1e15},
    {"active_parameters", 1e3, 1e15},
    {"max_concurrency", 1, 1e7},
};

Figure figure(const nlohmann::json& j, const char* key, const std::filesystem::path& file) {
  if (!j.contains(key) || !j[key].is_object()) throw CostError(file.string() + ": missing figure \"" + key + "\"");
  const auto& f = j[key];
  Figure out;
  out.value = number_field(f, "value", file, key);
  out.kind = text_field(f, "kind", file, key);
  out.source = text_field(f, "source", file, key);
  out.date = text_field(f, "date", file, key);
  if (out.kind != "measured" && out.kind != "published" && out.kind != "estimated")
    throw CostError(file.string() + ": " + key + ".kind must be measured, published or estimated, not \"" + out.kind + "\"");
  if (!(out.value > 0) || !std::isfinite(out.value)) throw CostError(file.string() + ": " + key + ".value must be positive");
  for (const auto& r : kFigureRanges)
    if (r.key == key && !(out.value >= r.min && out.value <= r.max))
      throw CostError(file.string() + ": " + key + ".value " + std::to_string(out.value) + " is out of range [" +
                      std::to_string(r.min) + ", " + std::to_string(r.max) + "]");
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

// An optional figure: absent is value 0; present must be well formed.
Figure optional_figure(const nlohmann::json& j, const char* key, const std::filesystem::path& file) {
  if (!j.contains(key)) return {};
  return figure(j, key, file);
}

int int_field(const nlohmann::json& a, const char* key, const std::filesystem::path& file, int min) {
  if (!a.contains(key) || !a[key].is_number_integer() || a[key].get<long long>() < min || a[key].get<long long>() > 10'000'000)
    throw CostError(file.string() + ": architecture: missing or bad integer field \"" + key + "\" (at least " +
                    std::to_string(min) + ")");
  return a[key].get<int>();
}

Architecture architecture(const nlohmann::json& j, const std::filesystem::path& file) {
  if (!j.contains("architecture") || !j["architecture"].is_object())
    throw CostError(file.string() + ": missing object \"architecture\" (layers, hidden_size, heads, ...)");
  const auto& a = j["architecture"];
  Architecture r;
  r.layers = int_field(a, "layers", file, 1);
  r.hidden_size = int_field(a, "hidden_size", file, 1);
  r.heads = int_field(a, "heads", file, 1);
  r.kv_heads = int_field(a, "kv_heads", file, 1);
  r.head_dim = int_field(a, "head_dim", file, 1);
  r.intermediate_size = int_field(a, "intermediate_size", file, 1);
  r.vocab_size = int_field(a, "vocab_size", file, 1);
  r.experts = a.contains("experts") ? int_field(a, "experts", file, 1) : 1;
  r.experts_per_token = a.contains("experts_per_token") ? int_field(a, "experts_per_token", file, 1) : 1;
  r.tied_embeddings = a.value("tied_embeddings", false);
  const auto optional_int = [&](const char* key) { return a.contains(key) ? int_field(a, key, file, 1) : 0; };
  r.shared_experts = optional_int("shared_experts");
  r.dense_layers = optional_int("dense_layers");
  r.dense_intermediate_size = optional_int("dense_intermediate_size");
  r.q_lora_rank = optional_int("q_lora_rank");
  r.kv_lora_rank = optional_int("kv_lora_rank");
  r.qk_rope_head_dim = optional_int("qk_rope_head_dim");
  r.v_head_dim = optional_int("v_head_dim");
  if (r.dense_layers >= r.layers || (r.dense_layers > 0 && r.dense_intermediate_size == 0))
    throw CostError(file.string() + ": architecture: dense_layers must be fewer than layers, with dense_intermediate_size");
  if (r.kv_lora_rank > 0 && (r.v_head_dim == 0 || r.qk_rope_head_dim >= r.head_dim))
    throw CostError(file.string() + ": architecture: MLA needs v_head_dim and a qk_rope_head_dim below head_dim");
  if (r.experts_per_token > r.experts)
    throw CostError(file.string() + ": architecture: experts_per_token exceeds experts");
  if (r.kv_heads > r.heads) throw CostError(file.string() + ": architecture: kv_heads exceeds heads");
  return r;
}

// The published count against the architecture's: more than 3% apart means a wrong field.
void check_derived(const Figure& published, double derived, const char* what, const std::filesystem::path& file) {
  if (std::abs(derived - published.value) > 0.03 * published.value)
    throw CostError(file.string() + ": the architecture gives " + std::to_string(derived / 1e9) + "B " + what +
                    ", the profile says " + std::to_string(published.value / 1e9) + "B (more than 3% apart)");
}

}  // namespace

double precision_bytes(const std::string& precision, const char* flag) {
  if (precision == "bf16" || precision == "fp16") return 2;
  if (precision == "fp8") return 1;
  // NVFP4: 4-bit values plus one FP8 scale per 16 of them.
  if (precision == "fp4") return 0.5 + 1.0 / 16;
  throw CostError(std::string(flag) + " must be bf16, fp8 or fp4, got \"" + precision + "\"");
}

double GpuProfile::peak_for(const std::string& precision) const {
  if (precision == "fp4" && peak_fp4_tflops.value > 0) return peak_fp4_tflops.value;
  if ((precision == "fp4" || precision == "fp8") && peak_fp8_tflops.value > 0) return peak_fp8_tflops.value;
  return peak_tflops.value;
}

double Architecture::embedding_parameters() const {
  return static_cast<double>(vocab_size) * hidden_size * (tied_embeddings ? 1 : 2);
}
double Architecture::attention_parameters() const {
  const double h = hidden_size;
  if (kv_lora_rank > 0) {
    // MLA: Q through its low-rank pair (or straight), K/V's latent and rotary part down, the
    // latent up to every head's no-rope key and value, and the output projection.
    const double q_dim = static_cast<double>(heads) * head_dim;
    const double q = q_lora_rank > 0 ? h * q_lora_rank + static_cast<double>(q_lora_rank) * q_dim : h * q_dim;
    const double kv_down = h * (kv_lora_rank + qk_rope_head_dim);
    const double kv_up = static_cast<double>(kv_lora_rank) * heads * (head_dim - qk_rope_head_dim + v_head_dim);
    const double out = static_cast<double>(heads) * v_head_dim * h;
    return static_cast<double>(layers) * (q + kv_down + kv_up + out);
  }
  const double q = static_cast<double>(heads) * head_dim, kv = static_cast<double>(kv_heads) * head_dim;
  return static_cast<double>(layers) * h * (2 * q + 2 * kv);
}
double Architecture::expert_parameters() const {
  return static_cast<double>(layers - dense_layers) * experts * 3.0 * hidden_size * intermediate_size;
}
double Architecture::always_on_mlp_parameters() const {
  return static_cast<double>(layers - dense_layers) * shared_experts * 3.0 * hidden_size * intermediate_size +
         static_cast<double>(dense_layers) * 3.0 * hidden_size * dense_intermediate_size;
}
double Architecture::parameters() const {
  return embedding_parameters() + attention_parameters() + always_on_mlp_parameters() + expert_parameters();
}
double Architecture::active_parameters() const {
  return embedding_parameters() + attention_parameters() + always_on_mlp_parameters() +
         expert_parameters() * experts_per_token / experts;
}
double Architecture::kv_bytes_per_token(double bytes) const {
  // MLA caches one latent and the rotary key per layer, shared by every head.
  if (kv_lora_rank > 0) return static_cast<double>(layers) * (kv_lora_rank + qk_rope_head_dim) * bytes;
  return 2.0 * layers * kv_heads * head_dim * bytes;
}
int Architecture::cached_kv_heads() const { return kv_lora_rank > 0 ? 1 : std::max(1, kv_heads); }
double Architecture::replicated_attention_parameters() const {
  if (kv_lora_rank <= 0) return 0;
  return static_cast<double>(layers) * hidden_size * (q_lora_rank + kv_lora_rank + qk_rope_head_dim);
}
double Architecture::prefill_attention_flops_per_context_token() const {
  const double value_head = kv_lora_rank > 0 ? v_head_dim : head_dim;
  return 2.0 * layers * heads * (head_dim + value_head);
}
double Architecture::decode_attention_flops_per_context_token() const {
  if (kv_lora_rank <= 0) return prefill_attention_flops_per_context_token();
  return 2.0 * layers * heads * (2.0 * kv_lora_rank + qk_rope_head_dim);
}

double GpuProfile::memory_bytes() const {
  return device_memory_mib.value > 0 ? device_memory_mib.value * 1024 * 1024 : memory_gb.value * 1e9;
}

GpuProfile load_gpu(const std::string& name_or_file, const std::filesystem::path& profiles_dir) {
  const auto file = resolve(name_or_file, profiles_dir, "gpu");
  const auto j = read_json_file(file);
  GpuProfile g;
  g.name = text_field(j, "name", file);
  g.description = j.value("description", "");
  g.memory_gb = figure(j, "memory_gb", file);
  g.device_memory_mib = optional_figure(j, "device_memory_mib", file);
  g.bandwidth_gb_per_s = figure(j, "memory_bandwidth_gb_per_s", file);
  g.peak_tflops = figure(j, "peak_dense_bf16_tflops", file);
  g.peak_fp8_tflops = optional_figure(j, "peak_dense_fp8_tflops", file);
  g.peak_fp4_tflops = optional_figure(j, "peak_dense_fp4_tflops", file);
  g.interconnect_gb_per_s = optional_figure(j, "interconnect_gb_per_s", file);
  g.allreduce_latency_us = optional_figure(j, "allreduce_latency_us", file);
  g.interconnect_full_mesh = optional_figure(j, "interconnect_full_mesh", file);
  g.matmul_achievable_share = optional_figure(j, "matmul_achievable_share", file);
  g.compute_efficiency = optional_figure(j, "compute_efficiency", file);
  g.bandwidth_efficiency = optional_figure(j, "bandwidth_efficiency", file);
  if (g.compute_efficiency.value > 1 || g.bandwidth_efficiency.value > 1)
    throw CostError(file.string() + ": compute_efficiency and bandwidth_efficiency are shares of the peak, at most 1");
  return g;
}

std::map<std::string, ModelAlias> load_model_aliases(const std::filesystem::path& profiles_dir) {
  std::map<std::string, ModelAlias> aliases;
  const auto file = profiles_dir / "aliases.json";
  if (!std::filesystem::exists(file)) return aliases;
  const auto j = read_json_file(file);
  if (!j.contains("model")) return aliases;
  for (const auto& [name, e] : j["model"].items())
    aliases[name] = {text_field(e, "profile", file, "model." + name), text_field(e, "source", file, "model." + name)};
  return aliases;
}

ModelProfile load_model(const std::string& name_or_file, const std::filesystem::path& profiles_dir) {
  const bool plain_name = name_or_file.find('/') == std::string::npos &&
                          std::filesystem::path(name_or_file).extension() != ".json";
  if (plain_name && !std::filesystem::exists(profiles_dir / "model" / (name_or_file + ".json"))) {
    const auto aliases = load_model_aliases(profiles_dir);
    if (const auto it = aliases.find(name_or_file); it != aliases.end()) {
      ModelProfile m = load_model(it->second.profile, profiles_dir);
      m.description += " (as " + name_or_file + ": the same architecture, " + it->second.source + ")";
      m.name = name_or_file;
      return m;
    }
  }
  const auto file = resolve(name_or_file, profiles_dir, "model");
  const auto j = read_json_file(file);
  ModelProfile m;
  m.name = text_field(j, "name", file);
  m.description = j.value("description", "");
  m.parameters = figure(j, "parameters", file);
  m.active_parameters = figure(j, "active_parameters", file);
  m.arch = architecture(j, file);
  check_derived(m.parameters, m.arch.parameters(), "parameters", file);
  check_derived(m.active_parameters, m.arch.active_parameters(), "active parameters", file);
  m.precision = j.value("precision", "bf16");
  precision_bytes(m.precision, (file.string() + ": precision").c_str());
  m.max_concurrency = optional_figure(j, "max_concurrency", file);
  const std::string derived = "derived from the architecture";
  m.bytes_per_parameter = {precision_bytes(m.precision, "precision"), "published", derived, "2026-12"};
  m.kv_bytes_per_token = {m.arch.kv_bytes_per_token(2), "published", derived + " (BF16 KV)", "2026-12"};
  return m;
}

Prices load_prices(const std::filesystem::path& file) {
  const auto j = read_json_file(file);
  Prices p;
  if (j.contains("instances"))
    for (const auto& [name, e] : j["instances"].items()) {
      InstancePrice ip;
      ip.usd_per_hour = number_field(e, "usd_per_hour", file, "instances." + name);
      if (!(ip.usd_per_hour >= 0) || !std::isfinite(ip.usd_per_hour))
        throw CostError(file.string() + ": instances." + name + ": usd_per_hour must be a finite number >= 0");
      if (e.contains("vcpus")) {
        ip.vcpus = number_field(e, "vcpus", file, "instances." + name);
        if (!(ip.vcpus > 0) || !std::isfinite(ip.vcpus))
          throw CostError(file.string() + ": instances." + name + ": vcpus must be a finite number > 0");
      }
      ip.kind = text_field(e, "kind", file, "instances." + name);
      ip.source = text_field(e, "source", file, "instances." + name);
      ip.date = text_field(e, "date", file, "instances." + name);
      p.instances[name] = ip;
    }
  if (j.contains("apis"))
    for (const auto& [name, e] : j["apis"].items()) {
      ApiPrice ap;
      ap.usd_per_1m_input = number_field(e, "usd_per_1m_input", file, "apis." + name);
      ap.usd_per_1m_output = number_field(e, "usd_per_1m_output", file, "apis." + name);
      if (!(ap.usd_per_1m_input >= 0 && ap.usd_per_1m_output >= 0) || !std::isfinite(ap.usd_per_1m_input + ap.usd_per_1m_output))
        throw CostError(file.string() + ": apis." + name + ": the prices must be finite numbers >= 0");
      ap.kind = text_field(e, "kind", file, "apis." + name);
      ap.source = text_field(e, "source", file, "apis." + name);
      ap.date = text_field(e, "date", file, "apis." + name);
      p.apis[name] = ap;
    }
  return p;
}

std::vector<std::string> list_profiles(const std::filesystem::path& profiles_dir, const std::string& kind) {
  return json_file_names(profiles_dir / kind);
}

}  // namespace overhead::cost
