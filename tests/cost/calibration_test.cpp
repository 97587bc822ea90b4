// The shipped fit (data/calibration/engine.json) against the published measurements it was not
// fitted on (data/calibration/published.csv, split held_out). On the family it was fitted on
// (TensorRT-LLM 1.0 with FP8 weights on H100/H200, and NIM on TensorRT-LLM), the targets:
// the throughput's median absolute error within 10% and no row above 25%, TPOT within 15% and TTFT
// within 25% on average where the source reports them. Beyond that family (B200 with FP4
// weights, TensorRT-LLM 0.13 with FP16 weights on H100 and A100, FP8 on L40S, Mixtral 8x7B,
// Llama 2 70B: held out whole, no refit) the targets are not met; the second test pins what holds
// today so that a change making it worse shows, and docs/cost-model.md has every row's error.
// Every row names its source.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

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
  // 72 rows: the median misses by 19% and the worst by 71%. B200 with FP4 weights is predicted
  // 30-71% too fast on every row (the datasheet's 8 TB/s and 9 PFLOP/s dense FP4 are further
  // from what the engine reaches than H100/H200's are at FP8); FP16 on H100 stays within 12%.
  const HeldOut beyond = held_out([](const CalibrationRow& r) { return !fitted_family(r); });
  ASSERT_GE(beyond.errors.size(), 70u);
  EXPECT_LE(beyond.median(), 0.20);
  EXPECT_LE(beyond.worst(), 0.75);
  const HeldOut b200 = held_out([](const CalibrationRow& r) { return r.gpu == "b200"; });
  ASSERT_EQ(b200.errors.size(), 20u);
  for (double e : b200.signed_errors) EXPECT_GT(e, 0.25);
  const HeldOut h100_fp16 = held_out([](const CalibrationRow& r) { return r.gpu == "h100-sxm" && r.precision == "bf16"; });
  ASSERT_EQ(h100_fp16.errors.size(), 9u);
  EXPECT_LE(h100_fp16.worst(), 0.12);
  // Every held-out row together: 106 rows, median 11.4%.
  const HeldOut all = held_out([](const CalibrationRow&) { return true; });
  EXPECT_LE(all.median(), 0.12);
}

TEST(Calibration, MalformedRowIsRefusedWithItsLine) {
  const auto file = std::filesystem::temp_directory_path() / "overhead_calibration_bad.csv";
  {
    std::ofstream out(file);
    out << "id,engine,gpu,gpus,tp,model,precision,kv_dtype,input_tokens,output_tokens,concurrency,requests,"
           "output_tokens_per_s,ttft_ms,tpot_ms,split,source,table,read\n"
        << "x,e,h100-sxm,1,1,llama-3.1-8b,fp8,fp8,128,lots,max,10,100,,,fit,s,t,2026-12-05\n";
  }
  try {
    load_calibration(file);
    FAIL() << "a row with a text token count was accepted";
  } catch (const CostError& e) {
    EXPECT_NE(std::string(e.what()).find(":2: output_tokens"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace overhead::cost
