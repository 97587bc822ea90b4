#include "cost/length_distribution.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "cost/json_file.hpp"

namespace overhead::cost {
namespace {

double number_at(const nlohmann::json& law, const char* key, const std::string& where) {
  if (!law.contains(key) || !law[key].is_number() || !(law[key].get<double>() >= 1))
    throw CostError(where + "." + key + " must be a number >= 1");
  return law[key].get<double>();
}

LengthLaw read_law(const nlohmann::json& j, const char* part, const std::string& file) {
  const std::string where = file + ": " + part;
  if (!j.contains(part) || !j[part].is_object()) throw CostError(where + " is missing");
  const auto& law = j[part];
  if (!law.contains("family") || law["family"] != "exponential")
    throw CostError(where + ".family must be \"exponential\" (the one law drawn)");
  LengthLaw l;
  l.min = number_at(law, "min", where);
  l.of_total = law.contains("max_total");
  l.max = number_at(law, l.of_total ? "max_total" : "max", where);
  l.mean = number_at(law, "mean", where);
  if (!(l.max > l.min)) throw CostError(where + ": the maximum must exceed the minimum");
  return l;
}

// The u-quantile of min + Exp(scale) cut at `max`, as a whole token count.
double quantile(double u, double scale, double min, double max) {
  const double width = max - min;
  if (!(width > 0)) return min;
  const double x = min - scale * std::log1p(-u * -std::expm1(-width / scale));
  return std::clamp(std::round(x), min, max);
}

// Fisher-Yates by mt19937_64 (whose output the standard fixes; std::shuffle's use of it is not).
std::vector<std::size_t> shuffled(std::size_t n, std::mt19937_64& rng) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

// The scale whose draws (`maxes[i]` the cut of the i-th) have mean `target`, by bisection on its
// logarithm (the draws' mean grows with the scale); throws when no scale reaches it.
std::vector<double> fitted_draws(const std::vector<double>& u, const std::vector<double>& maxes, const LengthLaw& law,
                                 const char* part) {
  const auto draws_at = [&](double scale) {
    std::vector<double> d(u.size());
    for (std::size_t i = 0; i < u.size(); ++i) d[i] = quantile(u[i], scale, law.min, maxes[i]);
    return d;
  };
  const auto mean_of = [](const std::vector<double>& d) { return std::accumulate(d.begin(), d.end(), 0.0) / d.size(); };
  double lo = std::log(1e-3), hi = std::log(1e9);
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (mean_of(draws_at(std::exp(mid))) < law.mean ? lo : hi) = mid;
  }
  auto d = draws_at(std::exp(hi));
  const double reached = mean_of(d);
  if (std::abs(reached - law.mean) > std::max(0.5, 0.005 * law.mean))
    throw CostError(std::string("--workload: no ") + part + " length law within " + std::to_string(law.min) + ".." +
                    std::to_string(law.max) + " has a mean of " + std::to_string(law.mean) + " (the closest: " +
                    std::to_string(reached) + ")");
  return d;
}

}  // namespace

std::optional<LengthDistribution> load_length_distribution(const std::string& name, const std::filesystem::path& dir) {
  const auto file = dir / (name + ".json");
  if (name.empty() || name.find('/') != std::string::npos || !std::filesystem::is_regular_file(file)) return std::nullopt;
  const auto j = read_json_file(file);
  LengthDistribution d;
  d.name = name;
  d.input = read_law(j, "input", file.string());
  d.output = read_law(j, "output", file.string());
  if (d.input.of_total) throw CostError(file.string() + ": input: max_total is the output's bound");
  return d;
}

LengthDistribution with_means(LengthDistribution d, double input_mean, double output_mean) {
  d.input.mean = input_mean;
  d.output.mean = output_mean;
  return d;
}

Workload draw_workload(const LengthDistribution& d, std::size_t n, std::uint64_t seed) {
  n = std::max<std::size_t>(n, 1);
  std::mt19937_64 rng(seed);
  const auto in_order = shuffled(n, rng);
  const auto out_order = shuffled(n, rng);
  std::vector<double> u_in(n), u_out(n);
  for (std::size_t i = 0; i < n; ++i) {
    u_in[i] = (static_cast<double>(in_order[i]) + 0.5) / static_cast<double>(n);
    u_out[i] = (static_cast<double>(out_order[i]) + 0.5) / static_cast<double>(n);
  }
  Workload w;
  w.input_tokens = fitted_draws(u_in, std::vector<double>(n, d.input.max), d.input, "input");
  std::vector<double> out_max(n, d.output.max);
  if (d.output.of_total)
    for (std::size_t i = 0; i < n; ++i) out_max[i] = std::max(d.output.min, d.output.max - w.input_tokens[i]);
  w.output_tokens = fitted_draws(u_out, out_max, d.output, "output");
  return w;
}

std::vector<std::string> list_length_distributions(const std::filesystem::path& dir) { return json_file_names(dir); }

std::filesystem::path default_workloads_dir(const std::filesystem::path& profiles_dir) { return data_dir_beside(profiles_dir, "workloads"); }

}  // namespace overhead::cost
