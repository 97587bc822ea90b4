// A named length distribution (data/workloads/NAME.json, `--workload sharegpt`): the law of a
// benchmark's input and output token counts, its bounds and the statistic it was fitted to, and
// the deterministic draws `simulate` runs in turn and `cost` averages over. Each length is a
// minimum plus an exponential cut at a maximum (the output's maximum less the request's input);
// the draws are the law's quantile midpoints, shuffled by a seed, so their mean is the stated one
// at any count and an offline run of n requests holds the law's tail as a sample of n would.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cost/cost_model.hpp"

namespace overhead::cost {

struct LengthLaw {
  double min = 1, max = 1e7;  // the output's max is of input + output (max_total) when `of_total`
  bool of_total = false;
  double mean = 1;            // the draws' mean, what the scale is solved for
};

struct LengthDistribution {
  std::string name;
  LengthLaw input, output;
};

// Reads `dir`/NAME.json; throws CostError naming the file and field of a malformed one. Empty when
// no such file exists (the name is then not a distribution).
std::optional<LengthDistribution> load_length_distribution(const std::string& name, const std::filesystem::path& dir);

// The same law with other means (a benchmark's stated lengths under ShareGPT's spread and bounds).
// Throws CostError when a mean lies outside its bounds.
LengthDistribution with_means(LengthDistribution d, double input_mean, double output_mean);

// `n` requests (at least 1): quantile midpoints of each law, input and output shuffled apart by
// `seed`, every count a whole token within its bounds, each law's scale solved (bisection) so
// that the n draws' mean is its `mean`.
Workload draw_workload(const LengthDistribution& d, std::size_t n, std::uint64_t seed);

// The names of the distributions in `dir` (NAME.json), sorted.
std::vector<std::string> list_length_distributions(const std::filesystem::path& dir);

// `data_dir`/workloads beside the profiles (`profiles_dir` is DATA/profiles).
std::filesystem::path default_workloads_dir(const std::filesystem::path& profiles_dir);

}  // namespace overhead::cost
