// The shipped fit (data/calibration/engine.json) against the published measurements it was not
// fitted on (data/calibration/published.csv, split held_out). On the family it was fitted on
// (TensorRT-LLM 1.0 with FP8 weights on H100/H200, and NIM on TensorRT-LLM), the targets:
// the throughput's median absolute error within 10% and no row above 25%, TPOT within 15% and TTFT
// within 25% on average where the source reports them. Beyond that family (B200 with FP4
// weights, TensorRT-LLM 0.13 with FP16 weights on H100 and A100, FP8 on L40S, Mixtral 8x7B,
// Llama 2 70B: held out whole, no refit) the targets are not met; the second test pins what holds
// today so that a change making it worse shows, and docs/cost-model.md has every row's error.
// Every row names its source. Other engines (vLLM, SGLang with their presets, LMDeploy with the
// base settings; one efficiency factor each, data/calibration/engine_factors.json) are checked apart, against the same targets,
// their figures pinned as they stand whether the targets are met or not ("Across engines" in
// docs/cost-model.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "published_table.hpp"

namespace overhead::cost {
namespace {

const std::filesystem::path kData = OVERHEAD_DATA_DIR;

bool fitted_family(const CalibrationRow& row) {
  return row.engine.rfind("NIM", 0) == 0 || (row.engine.rfind("tensorrt-llm 1.0", 0) == 0 && row.precision == "fp8");
}

struct HeldOut {
  std::vector<double> errors;  // |predicted / measured - 1| of the throughput, sorted
  std::vector<double> signed_errors;
  double tpot_sum = 0, ttft_sum = 0;
  int tpot_n = 0, ttft_n = 0;
  double median() const { return (errors[(errors.size() - 1) / 2] + errors[errors.size() / 2]) / 2; }
  double worst() const { return errors.back(); }
};

template <typename Keep>
HeldOut held_out(Keep keep) {
  const auto rows = load_calibration(kData / "calibration" / "published.csv");
  const auto engine = load_engine_params(kData / "calibration" / "engine.json");
  HeldOut h;
  for (const auto& row : rows) {
    EXPECT_FALSE(row.source.empty()) << row.id;
    if (row.split != "held_out" || !keep(row)) continue;
    const auto p = predict(row, engine, kData / "profiles");
    h.signed_errors.push_back(p.output_tokens_per_s / row.output_tokens_per_s - 1);
    h.errors.push_back(std::abs(h.signed_errors.back()));
    if (row.tpot_ms) {
      h.tpot_sum += std::abs(p.tpot_ms / *row.tpot_ms - 1);
      ++h.tpot_n;
    }
    if (row.ttft_ms) {
      h.ttft_sum += std::abs(p.ttft_ms / *row.ttft_ms - 1);
      ++h.ttft_n;
    }
  }
  std::sort(h.errors.begin(), h.errors.end());
  return h;
}

TEST(Calibration, HeldOutRowsOfTheFittedFamilyAreWithinTheTargets) {
  const HeldOut h = held_out(fitted_family);
  ASSERT_GE(h.errors.size(), 30u);
  EXPECT_LE(h.median(), 0.10);
  EXPECT_LE(h.worst(), 0.25);
  ASSERT_GT(h.tpot_n, 0);
  ASSERT_GT(h.ttft_n, 0);
  EXPECT_LE(h.tpot_sum / h.tpot_n, 0.15);
  EXPECT_LE(h.ttft_sum / h.ttft_n, 0.25);
}

TEST(Calibration, HeldOutRowsBeyondTheFittedFamilyAsTheyStand) {
  // 72 rows: the median misses by 15.5% and the worst by 72%. B200 with FP4 weights is predicted
  // 27-72% too fast on every row (the datasheet's 8 TB/s and 9 PFLOP/s dense FP4 are further
  // from what the engine reaches than H100/H200's are at FP8); FP16 on H100 stays within 12%.
  const HeldOut beyond = held_out([](const CalibrationRow& r) { return !fitted_family(r) && engine_family(r).empty(); });
  ASSERT_GE(beyond.errors.size(), 70u);
  EXPECT_LE(beyond.median(), 0.20);
  EXPECT_LE(beyond.worst(), 0.75);
  const HeldOut b200 = held_out([](const CalibrationRow& r) { return engine_family(r).empty() && r.gpu == "b200"; });
  ASSERT_EQ(b200.errors.size(), 20u);
  for (double e : b200.signed_errors) EXPECT_GT(e, 0.25);
  const HeldOut h100_fp16 = held_out(
      [](const CalibrationRow& r) { return engine_family(r).empty() && r.gpu == "h100-sxm" && r.precision == "bf16"; });
  ASSERT_EQ(h100_fp16.errors.size(), 9u);
  EXPECT_LE(h100_fp16.worst(), 0.12);
  // Every held-out row together: 106 rows, median 10.6%.
  const HeldOut all = held_out([](const CalibrationRow& r) { return engine_family(r).empty(); });
  EXPECT_LE(all.median(), 0.12);
}

// One engine's rows beyond the base fit, priced with its preset and shipped factor.
struct EngineFigures {
  int fit = 0, held_out = 0, unpriced = 0;  // unpriced: the model refuses the row (it cannot fit)
  std::vector<double> tokens_per_s, ttft, tpot;  // |predicted / measured - 1| of the held-out rows
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
}
double largest_of(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

EngineFigures engine_figures(const std::string& family) {
  const auto rows = load_calibration(kData / "calibration" / "published.csv");
  const auto base = load_engine_params(kData / "calibration" / "engine.json");
  const double factor = load_engine_factors(kData / "calibration" / "engine_factors.json").at(family);
  EngineFigures f;
  for (const auto& row : rows) {
    if (engine_family(row) != family) continue;
    EXPECT_FALSE(row.source.empty()) << row.id;
    if (row.split == "fit") {
      ++f.fit;
      continue;
    }
    ++f.held_out;
    Prediction p;
    try {
      p = predict(row, engine_for_row(row, base, factor, kData), kData / "profiles");
    } catch (const CostError&) {
      ++f.unpriced;
      continue;
    }
    f.tokens_per_s.push_back(std::abs(p.output_tokens_per_s / row.output_tokens_per_s - 1));
    if (row.ttft_ms) f.ttft.push_back(std::abs(p.ttft_ms / *row.ttft_ms - 1));
    if (row.tpot_ms) f.tpot.push_back(std::abs(p.tpot_ms / *row.tpot_ms - 1));
  }
  return f;
}

// Prints one figure against its target and pins it where it stands (within half a point): a
// change that moves it shows, and the docs' table must move with it.
void report(const std::string& family, const char* what, double figure, double stands_at, double target) {
  std::printf("[ %s ] %s %.1f%% (target %.0f%%): %s\n", family.c_str(), what, 100 * figure, 100 * target,
              figure <= target ? "met" : "not met");
  EXPECT_NEAR(figure, stands_at, 0.005) << family << " " << what;
}

TEST(Calibration, OtherEnginesSplitInTurnInTheTablesOrder) {
  // The rule fixed before any error was seen: per engine, in the table's order, fit and held out
  // in turn, starting with fit.
  std::map<std::string, int> seen;
  for (const auto& row : load_calibration(kData / "calibration" / "published.csv")) {
    const auto family = engine_family(row);
    if (family.empty()) continue;
    EXPECT_EQ(row.split, seen[family]++ % 2 == 0 ? "fit" : "held_out") << row.id;
  }
  EXPECT_EQ(seen["vllm"], 27);
  EXPECT_EQ(seen["sglang"], 16);
  EXPECT_EQ(seen["lmdeploy"], 80);
}

TEST(Calibration, RowsThatRanShareGptArePricedWithItsDistribution) {
  // A ShareGPT run's lengths are long-tailed (an offline run ends with its longest answers): a row
  // whose source table says it ran ShareGPT names the distribution, and no other row does.
  int marked = 0;
  for (const auto& row : load_calibration(kData / "calibration" / "published.csv")) {
    const bool sharegpt = row.table.find("ShareGPT") != std::string::npos || row.table.find("sharegpt") != std::string::npos;
    EXPECT_EQ(row.lengths, sharegpt ? "sharegpt" : "") << row.id;
    marked += sharegpt;
  }
  EXPECT_EQ(marked, 10);
}

TEST(Calibration, HeldOutRowsOfVllmAsTheyStand) {
  // Qwen3 32B on one H100 and one A100, DeepSeek-R1 on 8 x H200 (gpustack's performance lab,
  // vLLM 0.11), Llama 3.1 70B and 405B on 8 x MI300X (AMD's results, vLLM 0.11.1 and 0.10.2),
  // priced with the vllm@0.11 preset (256 sequences and a 2048-token budget on the A100; KV
  // allocated as tokens are computed, the last admitted preempted and recomputed when the cache
  // is full; decodes in the token budget; its own all-reduce on a full mesh) and each GPU's
  // measured matmul share: no target met. One factor (0.493) cannot serve GPUs the engine runs so
  // differently: Qwen3 on the A100 is 48-57% too slow on every held-out row, the MI300X's
  // 2048/2048 runs 53-115% too fast, and DeepSeek-R1 at 4 clients 102% too fast. Every row is
  // priced: 32K prompts fit one 80 GB GPU's 85.5e9 bytes.
  const EngineFigures f = engine_figures("vllm");
  EXPECT_EQ(f.fit, 14);
  EXPECT_EQ(f.held_out, 13);
  EXPECT_EQ(f.unpriced, 0);
  report("vllm", "tok/s median", median_of(f.tokens_per_s), 0.456, 0.10);
  report("vllm", "tok/s largest", largest_of(f.tokens_per_s), 1.145, 0.35);
  report("vllm", "TTFT median", median_of(f.ttft), 0.500, 0.25);
  report("vllm", "TPOT median", median_of(f.tpot), 0.610, 0.15);
}

TEST(Calibration, HeldOutRowsOfSglangAsTheyStand) {
  // Qwen3 32B on one H100 / one A100 and DeepSeek-R1 on 8 x H200 (gpustack's performance lab),
  // Llama 3.3 70B on 4 x H200 offline and at Poisson rates, priced with SGLang's adaptive KV
  // reservation (new_token_ratio 0.7 falling to 0.098, retraction of the fewest-output requests)
  // and its own all-reduce on a full mesh: the throughput's and the TTFT's medians meet their
  // targets; the largest throughput error (DeepSeek-R1's ShareGPT run, +66%) and TPOT (55%: the
  // offline runs' per-token times; the Poisson rows' ITLs at 1 to 4 per second are within 16%) do not.
  const EngineFigures f = engine_figures("sglang");
  EXPECT_EQ(f.fit, 8);
  EXPECT_EQ(f.held_out, 8);
  EXPECT_EQ(f.unpriced, 0);
  report("sglang", "tok/s median", median_of(f.tokens_per_s), 0.064, 0.10);
  report("sglang", "tok/s largest", largest_of(f.tokens_per_s), 0.659, 0.35);
  report("sglang", "TTFT median", median_of(f.ttft), 0.245, 0.25);
  report("sglang", "TPOT median", median_of(f.tpot), 0.550, 0.15);
  EXPECT_LE(median_of(f.tokens_per_s), 0.10);
  EXPECT_LE(median_of(f.ttft), 0.25);
}

TEST(Calibration, HeldOutRowsOfLmdeployAsTheyStand) {
  // LMDeploy 0.1's fixed batches (Llama 2 7B, 13B, InternLM 20B, Llama 2 70B on A100, FP16):
  // the throughput's and the per-token latency's medians meet their targets; the first-token
  // latency of a batch whose prompts wait for the KV of the others does not.
  const EngineFigures f = engine_figures("lmdeploy");
  EXPECT_EQ(f.fit, 40);
  EXPECT_EQ(f.held_out, 40);
  EXPECT_EQ(f.unpriced, 0);
  report("lmdeploy", "tok/s median", median_of(f.tokens_per_s), 0.058, 0.10);
  report("lmdeploy", "tok/s largest", largest_of(f.tokens_per_s), 0.403, 0.35);
  report("lmdeploy", "TTFT median", median_of(f.ttft), 0.557, 0.25);
  report("lmdeploy", "TPOT median", median_of(f.tpot), 0.056, 0.15);
  EXPECT_LE(median_of(f.tokens_per_s), 0.10);
  EXPECT_LE(median_of(f.tpot), 0.15);
}

// The error load_calibration gives for a table of the header (and `extra_columns`) and `row`;
// empty when it loads.
std::string load_error_of(const char* file_name, const std::string& row, const std::string& extra_columns = "") {
  const auto file = std::filesystem::temp_directory_path() / file_name;
  {
    std::ofstream out(file);
    out << "id,engine,gpu,gpus,tp,model,precision,kv_dtype,input_tokens,output_tokens,concurrency,requests,"
           "output_tokens_per_s,ttft_ms,tpot_ms,split,source,table,read"
        << extra_columns << "\n"
        << row << "\n";
  }
  try {
    load_calibration(file);
  } catch (const CostError& e) {
    return e.what();
  }
  return {};
}

TEST(Calibration, MalformedRowIsRefusedWithItsLine) {
  const std::string error =
      load_error_of("overhead_calibration_bad.csv", "x,e,h100-sxm,1,1,llama-3.1-8b,fp8,fp8,128,lots,max,10,100,,,fit,s,t,2026-12-05");
  EXPECT_NE(error.find(":2: output_tokens"), std::string::npos) << "a row with a text token count: " << error;
}

TEST(Calibration, UnknownLoadIsRefusedWithItsLine) {
  // The load column: max, a number of clients, batch:N or rate:R; anything else names its line.
  const std::string error = load_error_of("overhead_calibration_bad_load.csv",
                                          "x,e,h100-sxm,1,1,llama-3.1-8b,fp8,fp8,128,128,rate:fast,10,100,,,fit,s,t,2026-12-07");
  EXPECT_NE(error.find(":2: concurrency \"rate:fast\""), std::string::npos) << "a row with a load of rate:fast: " << error;
}

TEST(Calibration, RowSettingsAreReadAndABadOneIsRefusedWithItsLine) {
  // What a run set against its engine's defaults: max_batch, prefill_chunk_tokens and
  // memory_fraction, ";"-separated; anything else, or a value that is no positive number, names
  // its line. The settings are applied after the preset (engine_for_row).
  const std::string good = "x,vllm 0.11.1,mi300x,8,8,llama-3.1-70b,fp8,fp8,128,2048,max,3200,100,,,fit,s,t,2026-12-07,max_batch=3200;prefill_chunk_tokens=16384";
  EXPECT_EQ(load_error_of("overhead_calibration_settings.csv", good, ",settings"), "");
  const auto rows = load_calibration(std::filesystem::temp_directory_path() / "overhead_calibration_settings.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].settings.at("max_batch"), 3200);
  const auto base = load_engine_params(kData / "calibration" / "engine.json");
  const EngineParams e = engine_for_row(rows[0], base, 1, kData);
  EXPECT_EQ(e.max_batch, 3200);
  EXPECT_EQ(e.prefill_chunk_tokens, 16384);
  EXPECT_TRUE(e.memory_of_total);  // the vLLM preset under the row's settings
  const std::string unknown = load_error_of("overhead_calibration_bad_setting.csv",
                                            "x,e,h100-sxm,1,1,llama-3.1-8b,fp8,fp8,128,128,max,10,100,,,fit,s,t,2026-12-07,max_seqs=5", ",settings");
  EXPECT_NE(unknown.find(":2: settings: \"max_seqs=5\""), std::string::npos) << unknown;
  const std::string negative = load_error_of("overhead_calibration_bad_setting.csv",
                                             "x,e,h100-sxm,1,1,llama-3.1-8b,fp8,fp8,128,128,max,10,100,,,fit,s,t,2026-12-07,max_batch=-1", ",settings");
  EXPECT_NE(negative.find(":2: settings: \"max_batch=-1\" has no positive number"), std::string::npos) << negative;
}

}  // namespace
}  // namespace overhead::cost
