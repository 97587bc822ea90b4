// The calibration table (data/calibration/published.csv): published, measured serving results,
// one a row with its source, and the server model's prediction of each. The fit of the engine's
// efficiency parameters (calibration_fit.cpp, a tool run by hand) and the check of the held-out
// rows (calibration_test.cpp) both use these; nothing in src/ does (a run's own engine is
// calibrated by `overhead calibrate`), so it lives here with them. Rows of vLLM and SGLang are
// priced with their engine preset (data/engines/) and one efficiency factor per engine
// (data/calibration/engine_factors.json) on top of the TensorRT-LLM fit, which they leave as it is.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cost/engine_params.hpp"

namespace overhead::cost {

struct CalibrationRow {
  std::string id, engine, gpu, model, precision, kv_dtype, split, source, table;
  int gpus = 1, tp = 1;
  double input_tokens = 0, output_tokens = 0;
  std::optional<double> concurrency;        // a closed loop of this many clients
  bool in_step = false;                     // "batch:N": N clients started together (a fixed batch)
  std::optional<double> request_rate;       // "rate:R": Poisson arrivals at R requests/s
                                            // neither ("max"): the engine's maximum throughput (offline)
  double requests = 0;                      // offline and rate: the benchmark's request count
  double output_tokens_per_s = 0;           // the fleet's (all `gpus`)
  std::optional<double> ttft_ms, tpot_ms;   // where the source reports them
  std::string lengths;                      // "" : every request at the stated means; a named length
                                            // distribution (data/workloads/, e.g. "sharegpt"): its
                                            // law at the stated means, one draw a request
  // What the row's run set against its engine's defaults (column "settings", ";"-separated:
  // "max_batch=3200"; max_batch, prefill_chunk_tokens, memory_fraction), applied after the preset.
  std::map<std::string, double> settings;
};

// Throws CostError naming the file, line and field of a malformed row.
std::vector<CalibrationRow> load_calibration(const std::filesystem::path& file);

struct Prediction {
  double output_tokens_per_s = 0, ttft_ms = 0, tpot_ms = 0;
};
// What the row measured, by the engine simulation: at its concurrency, a closed loop in its
// steady state (a fixed batch, "batch:N": its clients started together and kept in step); offline (concurrency "max"), its `requests` all at once, and at a Poisson rate
// ("rate:R") its `requests` arriving at that rate: both the output tokens over the whole run (the
// benchmark's own figure, start and drain included). A row with `lengths` runs that distribution's
// draws (seed 1) at the row's means: an offline run then ends when its longest answers do.
Prediction predict(const CalibrationRow& row, const EngineParams& engine, const std::filesystem::path& profiles_dir);

// The engine whose preset and efficiency factor a row takes: "vllm", "sglang" or "lmdeploy" from
// the row's engine, "" for the rest (TensorRT-LLM and NIM: the base fit, data/calibration/engine.json).
std::string engine_family(const CalibrationRow& row);

// The base fit with the row's engine preset (at the row's GPU and TP; an engine without one keeps
// the base settings), the row's own settings, and `factor` applied: the bandwidth and compute
// efficiencies times `factor`, at most 1. A row of the base family gets `base` with its settings. `data_dir` holds profiles/ and engines/.
EngineParams engine_for_row(const CalibrationRow& row, const EngineParams& base, double factor, const std::filesystem::path& data_dir);

}  // namespace overhead::cost
