// Everything the report shows, computed from the item table: token statistics, the case table,
// the fits, the cycle-time histograms with their two modes, and predicted against measured totals.
// Plain data, so that the writers (Markdown, HTML, JSON, CSV, plots) only format.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "report/item_table.hpp"
#include "stats/histogram.hpp"
#include "stats/huber.hpp"
#include "stats/mixture.hpp"
#include "stats/ols.hpp"
#include "stats/quantile.hpp"

namespace overhead::report {

inline constexpr const char* kAllTokenizers = "all";

struct TokenRow {
  std::string tokenizer;  // or "all"
  stats::Summary tokens;
  std::optional<stats::Summary> api_input;  // when any item carries it
};

struct CaseRow {
  int case_number = 0;
  std::size_t items = 0;
  std::size_t workers = 0;
  double wall_s = 0;        // sum over the case's runs of first start -> last stamp
  double us_per_item = 0;   // wall / items
  double mean_cycle_us = 0; // per-worker cycle time, averaged
  std::array<double, kStageCount> stage_share{};  // of the summed cycle time
  std::array<double, kStageCount> stage_us_per_item{};
  std::optional<double> seed_total_s;  // with --compare-seed
  std::optional<double> seed_us_per_item;
};

// One fit of one target on one group. Exactly one of ols / robust is set when error is empty.
struct FitEntry {
  int case_number = 0;
  std::string tokenizer;  // or "all" (pooled)
  std::string target;     // "cycle" or "service"
  std::string model;      // "a": const + tokens; "b": const + turnover + tokens
  std::string method;     // "ols" or "huber"
  std::size_t n = 0;
  std::optional<stats::OlsFit> ols;
  std::optional<stats::RobustFit> robust;
  std::string error;      // why it could not be fitted
  const std::vector<stats::Coefficient>* coefficients() const {
    return ols ? &ols->coefficients : robust ? &robust->coefficients : nullptr;
  }
};

struct CycleHistogram {
  int case_number = 0;
  stats::Histogram all, turnover;
  stats::TwoModes modes;
  std::size_t items = 0;
  double turnover_share = 0;   // items whose cycle spans a batch turnover
  double boundary_share = 0;   // records flagged batch_boundary
  double upper_turnover_share = 0;  // of the upper-mode items, how many are turnover items
  double turnover_in_upper = 0;     // of the turnover items, how many fall in the upper mode
};

struct Prediction {
  int case_number = 0;
  double measured_cycle_sum_us = 0;
  double wall_us = 0;
  // Sum over the case's items of the fitted E(x) per tokenizer; NaN when that fit failed.
  double ols_a_us = 0, ols_b_us = 0, huber_a_us = 0, huber_b_us = 0;
};

struct ScatterPoint {
  float tokens = 0, cycle_us = 0;
  std::uint16_t tokenizer = 0;
  bool turnover = false;
};

struct TokenDistribution {
  std::string tokenizer;
  stats::Histogram histogram;
};

struct Analysis {
  std::vector<std::string> tokenizers;
  std::vector<int> cases;
  std::size_t records = 0;
  std::size_t timed_items = 0;
  std::vector<TokenRow> token_rows;
  std::vector<CaseRow> case_rows;
  std::vector<FitEntry> fits;
  std::vector<CycleHistogram> histograms;
  std::vector<Prediction> predictions;
  std::vector<std::vector<ScatterPoint>> scatter;  // per case (same order as cases), subsampled
  std::vector<TokenDistribution> token_distributions;
  std::vector<std::string> warnings;

  const FitEntry* find_fit(int case_number, const std::string& tokenizer, const std::string& target,
                           const std::string& model, const std::string& method) const;
};

struct AnalysisOptions {
  bool compare_seed = false;
  std::size_t histogram_bins = 60;
  std::size_t scatter_points_per_case = 2400;
};

Analysis analyze(const ItemTable& items, const AnalysisOptions& options);

// The seed's case table (total seconds for its 34,368 items), from the seed brief.
std::optional<double> seed_case_total_s(int case_number);
inline constexpr double kSeedItems = 34368;

}  // namespace overhead::report
