#include "cost/replay_inputs.hpp"

#include <cmath>

namespace overhead::cost {
namespace {

const EBatch& fit_of(const TokenizerFits& fits, const std::string& tokenizer, std::size_t* index = nullptr) {
  for (std::size_t i = 0; i < fits.size(); ++i)
    if (fits[i].first == tokenizer) {
      if (index) *index = i;
      return fits[i].second;
    }
  throw CostError("no E fit for tokenizer \"" + tokenizer + "\" (the fits cover " + std::to_string(fits.size()) +
                  " tokenizers)");
}

}  // namespace

ReplayItems replay_items(const std::vector<TimelineItem>& run, const TokenizerFits& fits) {
  ReplayItems r;
  for (const auto& f : fits) r.fits.push_back(f.second);
  for (const auto& t : queue_order(run)) {
    std::size_t index = 0;
    fit_of(fits, t.tokenizer, &index);
    r.items.push_back({t.tokens, index});
  }
  return r;
}

SpreadPools spread_pools(const std::vector<TimelineItem>& fitted_run, const TokenizerFits& fits) {
  const MeasuredRun m = measure(fitted_run);
  std::vector<std::pair<double, double>> plain, turnover;
  for (std::size_t i = 0; i < fitted_run.size(); ++i) {
    if (!std::isfinite(m.cycles_us[i])) continue;
    const double fitted = fit_of(fits, fitted_run[i].tokenizer).at(fitted_run[i].tokens, m.turnover[i]);
    (m.turnover[i] ? turnover : plain).emplace_back(fitted, m.cycles_us[i]);
  }
  return {make_spread(std::move(plain)), make_spread(std::move(turnover))};
}

}  // namespace overhead::cost
