// The shipped profiles under data/profiles/: each loads, each figure says its kind, source and date,
// and a malformed profile is refused with an error naming the file and the field.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "cost/profiles.hpp"
#include "cost/roofline.hpp"

namespace overhead::cost {
namespace {

const std::filesystem::path kProfiles = std::filesystem::path(OVERHEAD_DATA_DIR) / "profiles";

bool has_date(const std::string& date) {
  // YYYY-MM or YYYY-MM-DD
  if (date.size() != 7 && date.size() != 10) return false;
  for (std::size_t i = 0; i < date.size(); ++i) {
    const bool dash = i == 4 || i == 7;
    if (dash ? date[i] != '-' : !std::isdigit(static_cast<unsigned char>(date[i]))) return false;
  }
  return true;
}

void expect_sourced(const std::string& where, const std::string& kind, const std::string& source,
                    const std::string& date) {
  static const std::set<std::string> kinds = {"measured", "published", "estimated"};
  EXPECT_TRUE(kinds.count(kind)) << where << ": kind \"" << kind << "\"";
  EXPECT_FALSE(source.empty()) << where << ": no source";
  EXPECT_TRUE(has_date(date)) << where << ": date \"" << date << "\"";
}

void expect_sourced(const std::string& where, const Figure& f) {
  expect_sourced(where, f.kind, f.source, f.date);
  EXPECT_GT(f.value, 0) << where;
}

TEST(Profiles, EveryShippedGpuLoadsWithSourcedFigures) {
  const auto names = list_profiles(kProfiles, "gpu");
  ASSERT_GE(names.size(), 7u);
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    const auto g = load_gpu(name, kProfiles);
    EXPECT_EQ(g.name, name);
    expect_sourced(name + ".memory_gb", g.memory_gb);
    expect_sourced(name + ".device_memory_mib", g.device_memory_mib);
    expect_sourced(name + ".memory_bandwidth_gb_per_s", g.bandwidth_gb_per_s);
    expect_sourced(name + ".peak_dense_bf16_tflops", g.peak_tflops);
    // The efficiencies are the engine's, fitted (data/calibration/engine.json), not the GPU's.
    EXPECT_EQ(g.compute_efficiency.value, 0.0);
    EXPECT_EQ(g.bandwidth_efficiency.value, 0.0);
    expect_sourced(name + ".interconnect_gb_per_s", g.interconnect_gb_per_s);
    EXPECT_GE(g.peak_for("fp8"), g.peak_tflops.value);
    EXPECT_GE(g.peak_for("fp4"), g.peak_for("fp8"));
  }
}

TEST(Profiles, EveryShippedModelLoadsWithSourcedFigures) {
  const auto names = list_profiles(kProfiles, "model");
  ASSERT_GE(names.size(), 4u);
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    const auto m = load_model(name, kProfiles);
    EXPECT_EQ(m.name, name);
    expect_sourced(name + ".parameters", m.parameters);
    expect_sourced(name + ".active_parameters", m.active_parameters);
    // Derived from the architecture and within 3% of the published counts (load_model checks).
    EXPECT_NEAR(m.arch.parameters(), m.parameters.value, 0.03 * m.parameters.value);
    EXPECT_NEAR(m.arch.active_parameters(), m.active_parameters.value, 0.03 * m.active_parameters.value);
    EXPECT_LE(m.active_parameters.value, m.parameters.value);
  }
}

TEST(Profiles, EveryPriceIsSourcedAndEveryGpuHasOne) {
  const auto p = load_prices(kProfiles / "price" / "prices.json");
  ASSERT_FALSE(p.instances.empty());
  ASSERT_FALSE(p.apis.empty());
  for (const auto& [name, ip] : p.instances) {
    expect_sourced("instances." + name, ip.kind, ip.source, ip.date);
    EXPECT_GT(ip.usd_per_hour, 0) << name;
  }
  for (const auto& [name, ap] : p.apis) {
    expect_sourced("apis." + name, ap.kind, ap.source, ap.date);
    EXPECT_GT(ap.usd_per_1m_input, 0) << name;
    EXPECT_GT(ap.usd_per_1m_output, 0) << name;
  }
  for (const auto& gpu : list_profiles(kProfiles, "gpu")) EXPECT_TRUE(p.instances.count(gpu)) << gpu;
}

TEST(Profiles, ShippedSeventyBOnOneH100IsRefused) {
  const auto r = make_roofline(load_gpu("h100-sxm", kProfiles), load_model("llama-3.3-70b", kProfiles), ServingOptions{});
  // 70.55e9 parameters x 2 bytes = 141.1e9 bytes of weights against 80e9.
  EXPECT_NEAR(r.weight_bytes, 141.1e9, 0.1e9);
  EXPECT_THROW(concurrency_limit(r, 1500), CostError);
}

TEST(Profiles, ArchitectureGivesTheKnownCounts) {
  // Llama 3.1 8B: 32 x (41.9M attention + 176.2M MLP) + 2 x 525.3M embeddings = 8.03e9;
  // KV 2 x 32 layers x 8 heads x 128 x 2 bytes = 131072 B/token.
  const auto m = load_model("llama-3.1-8b", kProfiles);
  EXPECT_NEAR(m.arch.parameters(), 8.0302e9, 0.001e9);
  EXPECT_DOUBLE_EQ(m.arch.kv_bytes_per_token(2), 131072);
  // Mixtral 8x7B: 2 of 8 experts: 46.7e9 in all, 12.9e9 active.
  const auto x = load_model("mixtral-8x7b", kProfiles);
  EXPECT_NEAR(x.arch.parameters(), 46.70e9, 0.01e9);
  EXPECT_NEAR(x.arch.active_parameters(), 12.88e9, 0.01e9);
}

TEST(Profiles, ArchitectureThatContradictsThePublishedCountIsRefused) {
  const std::string text = R"({"name": "wrong", "parameters": )" + std::string(R"({"value": 8.03e9, "kind": "published", "source": "s", "date": "2025-06"})") +
                           R"(, "active_parameters": {"value": 8.03e9, "kind": "published", "source": "s", "date": "2025-06"})" +
                           R"(, "architecture": {"layers": 64, "hidden_size": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128,)" +
                           R"( "intermediate_size": 14336, "vocab_size": 128256}})";
  const auto dir = std::filesystem::temp_directory_path() / "overhead_cost_tests";
  std::filesystem::create_directories(dir);
  const auto file = dir / "wrong_model.json";
  std::ofstream(file) << text;
  try {
    load_model(file.string(), kProfiles);
    ADD_FAILURE() << "a 64-layer 8B was accepted";
  } catch (const CostError& e) {
    EXPECT_NE(std::string(e.what()).find("3%"), std::string::npos) << e.what();
  }
}

// Writes `text` to a fresh file in the temporary folder and returns its path.
std::filesystem::path write_profile(const std::string& file_name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "overhead_cost_tests";
  std::filesystem::create_directories(dir);
  const auto file = dir / file_name;
  std::ofstream(file) << text;
  return file;
}

std::string sourced(const std::string& value) {
  return R"({"value": )" + value + R"(, "kind": "estimated", "source": "test", "date": "2025-06"})";
}

// A valid GPU profile with `field` replaced by `replacement` (or dropped when it is empty).
std::string gpu_json(const std::string& field = "", const std::string& replacement = "") {
  const std::pair<const char*, std::string> figures[] = {
      {"memory_gb", sourced("80")},
      {"memory_bandwidth_gb_per_s", sourced("2000")},
      {"peak_dense_bf16_tflops", sourced("1000")},
      {"compute_efficiency", sourced("0.5")},
      {"bandwidth_efficiency", sourced("0.8")}};
  std::string out = R"({"name": "broken")";
  for (const auto& [key, text] : figures) {
    if (key == field && replacement.empty()) continue;
    out += std::string(", \"") + key + "\": " + (key == field ? replacement : text);
  }
  return out + "}";
}

// Loads `text` as a GPU profile and expects an error naming the file and every one of `words`.
void expect_refused(const std::string& file_name, const std::string& text, std::initializer_list<const char*> words) {
  const auto file = write_profile(file_name, text);
  try {
    load_gpu(file.string(), kProfiles);
    ADD_FAILURE() << file_name << " was accepted";
  } catch (const CostError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(file.string()), std::string::npos) << what;
    for (const char* w : words) EXPECT_NE(what.find(w), std::string::npos) << "no \"" << w << "\" in: " << what;
  }
}

// A datasheet's "80 GB" of HBM is 80 GiB (less the driver's share), not 80e9 bytes: a GPU holds
// what it reports, in MiB (the A100 80 GB 81920 MiB, exactly 80 GiB; the H100 81559 MiB), and a
// profile that gives no such figure falls back to its datasheet GB as 1e9 bytes.
TEST(Profiles, AGpuHoldsTheMemoryItReportsInMiB) {
  EXPECT_DOUBLE_EQ(load_gpu("a100-80g", kProfiles).memory_bytes(), 80.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(load_gpu("h100-sxm", kProfiles).memory_bytes(), 81559.0 * 1024 * 1024);
  EXPECT_GT(load_gpu("h100-sxm", kProfiles).memory_bytes(), 85e9);
  const auto file = write_profile("no_device_memory.json", gpu_json());
  EXPECT_DOUBLE_EQ(load_gpu(file.string(), kProfiles).memory_bytes(), 80e9);
  const std::string valid = gpu_json();
  const std::string tiny = valid.substr(0, valid.size() - 1) + R"(, "device_memory_mib": )" + sourced("1e-3") + "}";
  expect_refused("tiny_device_memory.json", tiny, {"device_memory_mib"});
}

TEST(Profiles, ValidTestProfileLoads) {
  const auto file = write_profile("valid.json", gpu_json());
  EXPECT_DOUBLE_EQ(load_gpu(file.string(), kProfiles).bandwidth_gb_per_s.value, 2000);
}

TEST(Profiles, MalformedProfileNamesFileAndField) {
  expect_refused("missing_figure.json", gpu_json("memory_gb"), {"memory_gb"});
  expect_refused("missing_value.json",
                 gpu_json("compute_efficiency", R"({"kind": "estimated", "source": "s", "date": "2025-06"})"),
                 {"compute_efficiency", "value"});
  expect_refused("missing_source.json",
                 gpu_json("bandwidth_efficiency", R"({"value": 0.8, "kind": "estimated", "date": "2025-06"})"),
                 {"bandwidth_efficiency", "source"});
  expect_refused("text_value.json", gpu_json("peak_dense_bf16_tflops", R"({"value": "lots", "kind": "estimated", "source": "s", "date": "2025-06"})"),
                 {"peak_dense_bf16_tflops", "value"});
  expect_refused("bad_kind.json", gpu_json("memory_gb", R"({"value": 80, "kind": "guessed", "source": "s", "date": "2025-06"})"),
                 {"memory_gb", "kind", "guessed"});
  expect_refused("negative.json", gpu_json("memory_bandwidth_gb_per_s", sourced("-1")),
                 {"memory_bandwidth_gb_per_s", "positive"});
  expect_refused("no_name.json", R"({"memory_gb": )" + sourced("80") + "}", {"name"});
  expect_refused("not_json.json", "{\"name\": ", {});
}

TEST(Profiles, MalformedPriceNamesFileAndEntry) {
  const auto file = write_profile("prices.json",
                                  R"({"instances": {"h100-sxm": {"usd_per_hour": 6.88, "kind": "estimated", "date": "2025-06"}}})");
  try {
    load_prices(file);
    ADD_FAILURE() << "a price without a source was accepted";
  } catch (const CostError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(file.string()), std::string::npos) << what;
    EXPECT_NE(what.find("instances.h100-sxm"), std::string::npos) << what;
    EXPECT_NE(what.find("source"), std::string::npos) << what;
  }
}

// DeepSeek-V3: MLA caches one 512-wide latent and the 64-wide rotary key per layer (61 x 576 x 2
// bytes in BF16, not 2 x 61 x 128 heads x 192); 671B in all, 37B a token with 8 of 256 routed
// experts, the shared one and the 3 dense layers.
TEST(Profiles, LatentAttentionAndSharedExpertsGiveDeepSeekV3sCounts) {
  const auto m = load_model("deepseek-v3", kProfiles);
  EXPECT_DOUBLE_EQ(m.arch.kv_bytes_per_token(2), 61.0 * 576 * 2);
  EXPECT_NEAR(m.arch.parameters() / 1e9, 671, 3);
  EXPECT_NEAR(m.arch.active_parameters() / 1e9, 37.4, 0.5);
  // Only the routed experts are read by the tokens that route to them (roofline.hpp).
  const auto r = make_roofline(load_gpu("h200", kProfiles), m, ServingOptions{8, "", "bf16", {}});
  EXPECT_NEAR(r.expert_weight_bytes / 1e9, 58.0 * 256 * 3 * 7168 * 2048 / 1e9, 1);
}

// llama-3.1-70b is priced as llama-3.3-70b (the same config.json fields): one profile, the
// asked-for name, and the alias's source in the description.
TEST(Profiles, AnAliasLoadsTheProfileOfItsArchitecture) {
  const auto aliases = load_model_aliases(kProfiles);
  ASSERT_TRUE(aliases.count("llama-3.1-70b"));
  for (const auto& [name, alias] : aliases) {
    SCOPED_TRACE(name);
    EXPECT_FALSE(alias.source.empty());
    const auto m = load_model(name, kProfiles);
    const auto same = load_model(alias.profile, kProfiles);
    EXPECT_EQ(m.name, name);
    EXPECT_EQ(m.arch.parameters(), same.arch.parameters());
    EXPECT_EQ(m.arch.kv_bytes_per_token(2), same.arch.kv_bytes_per_token(2));
    EXPECT_EQ(m.precision, same.precision);
    EXPECT_NE(m.description.find(alias.source), std::string::npos);
  }
}

TEST(Profiles, UnknownShortNameIsRefused) {
  try {
    load_model("no-such-model", kProfiles);
    ADD_FAILURE() << "an unknown profile name was accepted";
  } catch (const CostError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-model"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace overhead::cost
