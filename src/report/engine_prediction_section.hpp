// `overhead analyze --engine-profile P` on a run made with `--decoder openai:`: per item, what the
// engine did (E, TTFT, TPOT, D) next to what the profile (`overhead calibrate`) predicts for the
// same prompt and output length at the load the item met (the mean number of generations in
// flight while it decoded, from the records' own decode stamps), and the prediction's errors.
#pragma once

#include <optional>
#include <span>

#include "cost/engine_profile.hpp"
#include "ports/record.hpp"
#include "report/section.hpp"

namespace overhead::report {

// One item's prediction. batch: generations in flight (the item included); context: its prompt
// plus half its output.
struct EnginePrediction {
  double ttft_s = 0, tpot_s = 0, d_s = 0;
};
EnginePrediction predict_item(const cost::EngineFit& fit, double prompt_tokens, double output_tokens, double batch);

// For each record, the mean number of records decoding during its own decode interval (itself
// included; 0 for a record without decode stamps). O(n log n).
std::vector<double> mean_in_flight(std::span<const ports::Record> records);

// Empty when no record has decode stamps. The section's table (every item) is also its CSV.
[[nodiscard]] std::optional<ReportSection> engine_prediction_section(std::span<const ports::Record> records,
                                                                     const cost::EngineProfile& profile,
                                                                     const std::string& profile_name);

}  // namespace overhead::report
