#include "report/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/errors.hpp"

namespace overhead::report {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// The seed post's case totals (AWS m7i.large), restated in docs of the seed brief.
constexpr std::array<double, 5> kSeedTotals = {15.621, 257.364, 235.018, 51.039, 98.887};

struct Group {
  std::vector<double> tokens, turnover, cycle, service;
};

TokenRow token_row(const ItemTable& t, const std::string& name, int tokenizer /* -1 = all */) {
  std::vector<double> tokens, api;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!t.first_of_key[i] || (tokenizer >= 0 && t.tokenizer[i] != tokenizer)) continue;
    tokens.push_back(t.tokens[i]);
    if (!std::isnan(t.api_input[i])) api.push_back(t.api_input[i]);
  }
  TokenRow row;
  row.tokenizer = name;
  row.tokens = stats::summarize(tokens);
  if (!api.empty()) row.api_input = stats::summarize(api);
  return row;
}

void add_fits(Analysis& a, int case_number, const std::string& tokenizer, const Group& g) {
  for (const std::string target : {"cycle", "service"}) {
    const std::vector<double>& y = target == "cycle" ? g.cycle : g.service;
    for (const std::string model : {"a", "b"}) {
      std::vector<stats::Regressor> xs;
      if (model == "b") xs.push_back({"turnover", g.turnover});
      xs.push_back({"tokens", g.tokens});
      // The robust variant is fitted to the cycle time, the measure with the heavy upper tail.
      for (const std::string method : {"ols", "huber"}) {
        if (method == "huber" && target != "cycle") continue;
        FitEntry e{case_number, tokenizer, target, model, method, y.size(), std::nullopt, std::nullopt, ""};
        try {
          if (method == "ols") {
            e.ols = stats::ols(y, xs);
          } else {
            stats::HuberOptions ho;
            ho.relative = true;  // see HuberOptions: an absolute tolerance never stops on large n
            e.robust = stats::huber(y, xs, ho);
          }
        } catch (const stats::StatsError& err) {
          e.error = err.what();
          if (model == "b" && std::string(err.what()).find("'turnover' is constant") != std::string::npos) {
            e.error = "no batch turnover varies in this group (" + e.error + ")";
          }
        }
        a.fits.push_back(std::move(e));
      }
    }
  }
}

double predicted_sum(const FitEntry* fit, const Group& g) {
  if (fit == nullptr || fit->coefficients() == nullptr) return kNan;
  const auto& c = *fit->coefficients();
  double sum = 0;
  for (std::size_t i = 0; i < g.tokens.size(); ++i) {
    sum += c.front().estimate + c.back().estimate * g.tokens[i] + (c.size() == 3 ? c[1].estimate * g.turnover[i] : 0.0);
  }
  return sum;
}

}  // namespace

std::optional<double> seed_case_total_s(int case_number) {
  if (case_number < 1 || case_number > 5) return std::nullopt;
  return kSeedTotals[static_cast<std::size_t>(case_number - 1)];
}

const FitEntry* Analysis::find_fit(int case_number, const std::string& tokenizer, const std::string& target,
                                   const std::string& model, const std::string& method) const {
  for (const auto& f : fits) {
    if (f.case_number == case_number && f.tokenizer == tokenizer && f.target == target && f.model == model &&
        f.method == method) {
      return &f;
    }
  }
  return nullptr;
}

Analysis analyze(const ItemTable& t, const AnalysisOptions& options) {
  Analysis a;
  a.tokenizers = t.tokenizer_names;
  a.cases = t.case_numbers;
  a.records = t.size();
  a.warnings = t.warnings;
  if (t.size() == 0) throw stats::StatsError("no records to analyse");

  // Token statistics over distinct (tokenizer, id): a store holding several cases of the same
  // data counts each prompt once per tokenizer, as the seed's table did.
  for (std::size_t k = 0; k < t.tokenizer_names.size(); ++k) {
    a.token_rows.push_back(token_row(t, t.tokenizer_names[k], static_cast<int>(k)));
  }
  if (t.tokenizer_names.size() > 1) a.token_rows.push_back(token_row(t, kAllTokenizers, -1));
  for (std::size_t k = 0; k < t.tokenizer_names.size(); ++k) {
    std::vector<double> v;
    double hi = 1;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t.first_of_key[i] && t.tokenizer[i] == k && t.tokens[i] >= 1) {
        v.push_back(t.tokens[i]);
        hi = std::max(hi, t.tokens[i]);
      }
    }
    if (v.empty()) continue;
    a.token_distributions.push_back({t.tokenizer_names[k], stats::histogram(v, stats::log_edges(1, hi * 1.0001, 50))});
  }

  for (int c : t.case_numbers) {
    // Items of this case with a measured cycle, in columns: per tokenizer and pooled.
    std::vector<Group> per_tok(t.tokenizer_names.size());
    Group pooled;
    CaseRow row;
    row.case_number = c;
    std::array<double, kStageCount> stage_sum{};
    std::size_t boundary = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t.case_number[i] != c) continue;
      ++row.items;
      boundary += t.batch_boundary[i];
      if (std::isnan(t.cycle_us[i]) || std::isnan(t.tokens[i])) continue;
      for (Group* g : {&per_tok[t.tokenizer[i]], &pooled}) {
        g->tokens.push_back(t.tokens[i]);
        g->turnover.push_back(t.turnover[i]);
        g->cycle.push_back(t.cycle_us[i]);
        g->service.push_back(t.service_us[i]);
      }
      for (std::size_t s = 0; s < kStageCount; ++s) stage_sum[s] += t.stage_us[s][i];
    }
    a.timed_items += pooled.cycle.size();
    double cycle_sum = 0;
    for (double v : pooled.cycle) cycle_sum += v;
    double wall = 0;
    for (const auto& run : t.runs) {
      if (run.case_number == c && !std::isnan(run.wall_us)) {
        wall += run.wall_us;
        row.workers += run.workers;
      }
    }
    row.wall_s = wall / 1e6;
    row.us_per_item = row.items ? wall / static_cast<double>(row.items) : kNan;
    row.mean_cycle_us = pooled.cycle.empty() ? kNan : cycle_sum / static_cast<double>(pooled.cycle.size());
    for (std::size_t s = 0; s < kStageCount; ++s) {
      row.stage_share[s] = cycle_sum > 0 ? stage_sum[s] / cycle_sum : kNan;
      row.stage_us_per_item[s] = pooled.cycle.empty() ? kNan : stage_sum[s] / static_cast<double>(pooled.cycle.size());
    }
    if (options.compare_seed) {
      row.seed_total_s = seed_case_total_s(c);
      if (row.seed_total_s) row.seed_us_per_item = *row.seed_total_s / kSeedItems * 1e6;
    }
    a.case_rows.push_back(row);

    // Fits: per tokenizer, then pooled.
    for (std::size_t k = 0; k < per_tok.size(); ++k) {
      if (!per_tok[k].cycle.empty() || !pooled.cycle.empty()) add_fits(a, c, t.tokenizer_names[k], per_tok[k]);
    }
    if (per_tok.size() > 1) add_fits(a, c, kAllTokenizers, pooled);

    // Histogram of cycle times, turnover items marked, and the two modes.
    CycleHistogram h;
    h.case_number = c;
    h.items = pooled.cycle.size();
    if (!pooled.cycle.empty()) {
      const auto [lo, hi] = std::minmax_element(pooled.cycle.begin(), pooled.cycle.end());
      const double top = *hi > *lo ? *hi * 1.0001 : *lo * 2;
      const auto edges = stats::log_edges(*lo, top, options.histogram_bins);
      std::vector<unsigned char> turn(pooled.turnover.begin(), pooled.turnover.end());
      h.all = stats::histogram(pooled.cycle, edges);
      h.turnover = stats::histogram(pooled.cycle, edges, turn);
      h.modes = stats::fit_two_modes(pooled.cycle);
      std::size_t turnovers = 0, upper = 0, upper_and_turn = 0;
      for (std::size_t i = 0; i < pooled.cycle.size(); ++i) {
        const bool is_turn = turn[i] != 0;
        const bool is_upper = h.modes.fitted && pooled.cycle[i] > h.modes.threshold;
        turnovers += is_turn;
        upper += is_upper;
        upper_and_turn += is_turn && is_upper;
      }
      const double n = static_cast<double>(pooled.cycle.size());
      h.turnover_share = static_cast<double>(turnovers) / n;
      h.upper_turnover_share = upper ? static_cast<double>(upper_and_turn) / static_cast<double>(upper) : kNan;
      h.turnover_in_upper = turnovers ? static_cast<double>(upper_and_turn) / static_cast<double>(turnovers) : kNan;
    }
    h.boundary_share = row.items ? static_cast<double>(boundary) / static_cast<double>(row.items) : kNan;
    a.histograms.push_back(std::move(h));

    // Predicted against measured: each tokenizer's fit applied to its own items, summed.
    Prediction p;
    p.case_number = c;
    p.measured_cycle_sum_us = cycle_sum;
    p.wall_us = wall;
    p.ols_a_us = p.ols_b_us = p.huber_a_us = p.huber_b_us = 0;
    for (std::size_t k = 0; k < per_tok.size(); ++k) {
      if (per_tok[k].cycle.empty()) continue;
      const std::string& name = t.tokenizer_names[k];
      p.ols_a_us += predicted_sum(a.find_fit(c, name, "cycle", "a", "ols"), per_tok[k]);
      p.ols_b_us += predicted_sum(a.find_fit(c, name, "cycle", "b", "ols"), per_tok[k]);
      p.huber_a_us += predicted_sum(a.find_fit(c, name, "cycle", "a", "huber"), per_tok[k]);
      p.huber_b_us += predicted_sum(a.find_fit(c, name, "cycle", "b", "huber"), per_tok[k]);
    }
    a.predictions.push_back(p);

    // Scatter sample: an even stride keeps the picture's density honest and the page light.
    std::vector<ScatterPoint> points;
    std::size_t seen = 0;
    const std::size_t total = pooled.cycle.size();
    const std::size_t stride = std::max<std::size_t>(1, (total + options.scatter_points_per_case - 1) /
                                                            std::max<std::size_t>(1, options.scatter_points_per_case));
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t.case_number[i] != c || std::isnan(t.cycle_us[i]) || std::isnan(t.tokens[i])) continue;
      if (seen++ % stride != 0) continue;
      points.push_back({static_cast<float>(t.tokens[i]), static_cast<float>(t.cycle_us[i]), t.tokenizer[i], t.turnover[i] != 0});
    }
    a.scatter.push_back(std::move(points));
  }
  if (a.timed_items == 0) {
    a.warnings.push_back("no item has stage stamps: the time analysis (cycle times, fits, histograms) is empty");
  }
  return a;
}

}  // namespace overhead::report
