// The shipped fit (data/calibration/engine.json) against the published measurements it was not
// fitted on (data/calibration/published.csv, split held_out): the throughput's median absolute
// error within 10% and no row above 25%, and TPOT within 15% and TTFT within 25% on average where the source reports
// them. Every row names its source.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "cost/calibration.hpp"

namespace overhead::cost {
namespace {

const std::filesystem::path kData = OVERHEAD_DATA_DIR;

TEST(Calibration, HeldOutRowsArePredictedWithinTheTargets) {
  const auto rows = load_calibration(kData / "calibration" / "published.csv");
  const auto engine = load_engine_params(kData / "calibration" / "engine.json");
  std::vector<double> errors;
  double tpot_sum = 0, ttft_sum = 0, worst = 0;
  int tpot_n = 0, ttft_n = 0;
  for (const auto& row : rows) {
    EXPECT_FALSE(row.source.empty()) << row.id;
    if (row.split != "held_out") continue;
    const auto p = predict(row, engine, kData / "profiles");
    const double err = std::abs(p.output_tokens_per_s / row.output_tokens_per_s - 1);
    errors.push_back(err);
    worst = std::max(worst, err);
    if (row.tpot_ms) {
      tpot_sum += std::abs(p.tpot_ms / *row.tpot_ms - 1);
      ++tpot_n;
    }
    if (row.ttft_ms) {
      ttft_sum += std::abs(p.ttft_ms / *row.ttft_ms - 1);
      ++ttft_n;
    }
  }
  ASSERT_GE(errors.size(), 30u);
  std::sort(errors.begin(), errors.end());
  const double median = (errors[(errors.size() - 1) / 2] + errors[errors.size() / 2]) / 2;
  EXPECT_LE(median, 0.10);
  EXPECT_LE(worst, 0.25);
  ASSERT_GT(tpot_n, 0);
  ASSERT_GT(ttft_n, 0);
  EXPECT_LE(tpot_sum / tpot_n, 0.15);
  EXPECT_LE(ttft_sum / ttft_n, 0.25);
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
