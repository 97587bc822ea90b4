// The flags `cost` and `simulate` share to describe a deployment (--gpu, --model, --gpus, --tp,
// --precision, --kv-dtype, the engine's settings and the prices) and how the fleet is loaded, each
// checked as typed (finite, in range, else a usage error naming the flag) and bound straight to
// the command's one cost::PricingOptions (never copied field by field).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cost/pricing.hpp"
#include "cost/scenario.hpp"

namespace overhead::cli {

// Binds the deployment's flags (and --profiles) to the one ScenarioSpec the command reads.
void add_serving_flags(CLI::App& cmd, cost::ScenarioSpec& f);

// How the fleet is loaded when priced: --utilization, --max-throughput, --concurrency, --rate
// (Poisson), --offline N (every request at once) or --max-rate (with --ttft-p99-ms,
// --tpot-p99-ms), each setting load.mode as it is parsed. `load` must outlive
// the parse (the options struct's own member).
void add_load_flags(CLI::App& cmd, cost::LoadSpec& load, const std::string& group = "Load");
// --max-rate (setting load.mode) and its two targets alone: simulate's other loads are its own
// --rate and --concurrency.
void add_max_rate_flags(CLI::App& cmd, cost::LoadSpec& load, const std::string& group = "Load");
// How many of the load flags were given (more than one is a usage error).
std::size_t load_modes_given(const CLI::App& cmd);

// Where E comes from: --fits (repeatable), --backend, --case, --tokenizer, or --e-us typed in
// (cost::choose_e reads them).
void add_e_flags(CLI::App& cmd, std::vector<std::string>& fits, std::string& backend, int& case_number,
                 std::string& tokenizer, std::string& e_us);

// "A,B": exactly two finite numbers (a third value is refused, not dropped).
CLI::Validator number_pair_check();

// The engine settings a run used, for --json.
nlohmann::json engine_json(const cost::EngineParams& e, const cost::Roofline& replica);

// The engine preset a run used (its name, version and every setting with its source), for --json;
// null when none.
nlohmann::json preset_json(const cost::EnginePreset& p);
// One line naming the preset and what it set, for the text output; empty when none.
std::string preset_line(const cost::EnginePreset& p);

// Mean, p50, p95 and p99 of a run's figure, for --json.
nlohmann::json percentiles_json(const cost::Percentiles& p);

}  // namespace overhead::cli
