// The calibration table (data/calibration/published.csv): published, measured serving results,
// one a row with its source, and the server model's prediction of each. The fit of the engine's
// efficiency parameters (calibration_fit.cpp, a tool run by hand) and the check of the held-out
// rows (calibration_test.cpp) both use these; nothing in src/ does (a run's own engine is
// calibrated by `overhead calibrate`), so it lives here with them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cost/engine_params.hpp"

namespace overhead::cost {

struct CalibrationRow {
  std::string id, engine, gpu, model, precision, kv_dtype, split, source, table;
  int gpus = 1, tp = 1;
  double input_tokens = 0, output_tokens = 0;
  std::optional<double> concurrency;        // empty: the engine's maximum throughput (offline)
  double requests = 0;                      // offline: the benchmark's request count, all at once
  double output_tokens_per_s = 0;           // the fleet's (all `gpus`)
  std::optional<double> ttft_ms, tpot_ms;   // where the source reports them
};

// Throws CostError naming the file, line and field of a malformed row.
std::vector<CalibrationRow> load_calibration(const std::filesystem::path& file);

struct Prediction {
  double output_tokens_per_s = 0, ttft_ms = 0, tpot_ms = 0;
};
// What the row measured, by the engine simulation: at its concurrency, a closed loop in its
// steady state; offline (concurrency "max"), its `requests` all at once, the output tokens over
// the whole run (the benchmark's own figure, start and drain included).
Prediction predict(const CalibrationRow& row, const EngineParams& engine, const std::filesystem::path& profiles_dir);

}  // namespace overhead::cost
