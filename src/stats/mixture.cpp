#include "stats/mixture.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

namespace overhead::stats {

namespace {

double normal_pdf(double x, double mean, double sd) {
  const double z = (x - mean) / sd;
  return std::exp(-0.5 * z * z) / (sd * std::sqrt(2.0 * std::numbers::pi));
}

}  // namespace

TwoModes fit_two_modes(std::span<const double> values) {
  TwoModes m;
  std::vector<double> logs;
  logs.reserve(values.size());
  for (double v : values) {
    if (v > 0 && std::isfinite(v)) logs.push_back(std::log(v));
  }
  if (logs.size() < 10) return m;
  const auto [lo_it, hi_it] = std::minmax_element(logs.begin(), logs.end());
  const double lo = *lo_it, hi = *hi_it;
  if (!(hi > lo)) return m;

  constexpr std::size_t kBins = 1024;
  const double width = (hi - lo) / kBins;
  std::vector<double> count(kBins, 0.0), centre(kBins);
  for (std::size_t b = 0; b < kBins; ++b) centre[b] = lo + (static_cast<double>(b) + 0.5) * width;
  for (double x : logs) count[std::min<std::size_t>(static_cast<std::size_t>((x - lo) / width), kBins - 1)] += 1.0;
  const double n = static_cast<double>(logs.size());
  // The within-bin spread floors each sd so that a mode sitting in one bin cannot collapse to 0.
  const double sd_floor = width / std::sqrt(12.0);

  double mean_all = 0, var_all = 0;
  for (std::size_t b = 0; b < kBins; ++b) mean_all += count[b] * centre[b];
  mean_all /= n;
  for (std::size_t b = 0; b < kBins; ++b) var_all += count[b] * (centre[b] - mean_all) * (centre[b] - mean_all);
  const double sd_all = std::max(std::sqrt(var_all / n), sd_floor);

  // Start: the lower mode at the 25th percentile, the upper at the 95th, each narrow.
  std::sort(logs.begin(), logs.end());
  double w1 = 0.8, w2 = 0.2;
  double m1 = logs[logs.size() / 4], m2 = logs[logs.size() * 95 / 100];
  double s1 = sd_all / 2, s2 = sd_all / 2;
  if (m2 <= m1) m2 = m1 + sd_all;
  double previous_ll = -INFINITY, ll = 0;
  int it = 0;
  for (; it < 1000; ++it) {
    double n1 = 0, sum1 = 0, sum2 = 0, n2 = 0;
    ll = 0;
    std::vector<double> r1(kBins);
    for (std::size_t b = 0; b < kBins; ++b) {
      if (count[b] == 0) continue;
      const double p1 = w1 * normal_pdf(centre[b], m1, s1), p2 = w2 * normal_pdf(centre[b], m2, s2);
      const double total = p1 + p2;
      const double resp = total > 0 ? p1 / total : (centre[b] < (m1 + m2) / 2 ? 1.0 : 0.0);
      r1[b] = resp;
      if (total > 0) ll += count[b] * std::log(total);
      n1 += count[b] * resp;
      n2 += count[b] * (1 - resp);
      sum1 += count[b] * resp * centre[b];
      sum2 += count[b] * (1 - resp) * centre[b];
    }
    if (n1 < 1e-9 || n2 < 1e-9) break;  // one component emptied: no second mode
    m1 = sum1 / n1;
    m2 = sum2 / n2;
    double v1 = 0, v2 = 0;
    for (std::size_t b = 0; b < kBins; ++b) {
      if (count[b] == 0) continue;
      v1 += count[b] * r1[b] * (centre[b] - m1) * (centre[b] - m1);
      v2 += count[b] * (1 - r1[b]) * (centre[b] - m2) * (centre[b] - m2);
    }
    s1 = std::max(std::sqrt(v1 / n1), sd_floor);
    s2 = std::max(std::sqrt(v2 / n2), sd_floor);
    w1 = n1 / n;
    w2 = n2 / n;
    if (std::fabs(ll - previous_ll) < 1e-10 * std::fabs(ll)) break;
    previous_ll = ll;
  }
  if (m1 > m2) {
    std::swap(m1, m2);
    std::swap(s1, s2);
    std::swap(w1, w2);
  }
  m.fitted = w1 > 0 && w2 > 0;
  m.weight_low = w1;
  m.weight_high = w2;
  m.mean_low = m1;
  m.mean_high = m2;
  m.sd_low = s1;
  m.sd_high = s2;
  m.iterations = it;
  // Split: scan between the means for where the upper component's weighted density overtakes.
  double split = (m1 + m2) / 2;
  constexpr int kSteps = 2000;
  for (int i = 0; i <= kSteps; ++i) {
    const double x = m1 + (m2 - m1) * i / kSteps;
    if (w2 * normal_pdf(x, m2, s2) >= w1 * normal_pdf(x, m1, s1)) {
      split = x;
      break;
    }
  }
  m.threshold = std::exp(split);
  const auto above = static_cast<double>(logs.end() - std::upper_bound(logs.begin(), logs.end(), split));
  m.upper_share = above / n;
  // BIC: one normal has 2 parameters, the mixture 5.
  double ll_one = 0;
  for (std::size_t b = 0; b < kBins; ++b) {
    if (count[b] > 0) ll_one += count[b] * std::log(normal_pdf(centre[b], mean_all, sd_all));
  }
  m.bic_one = -2 * ll_one + 2 * std::log(n);
  m.bic_two = -2 * ll + 5 * std::log(n);
  return m;
}

}  // namespace overhead::stats
