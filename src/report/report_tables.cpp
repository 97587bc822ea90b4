#include "report/report_tables.hpp"

#include <cmath>

namespace overhead::report {

namespace {

std::string case_name(int c) { return std::to_string(c); }

}  // namespace

Table token_table(const Analysis& a) {
  Table t{"token_stats", "Input-token statistics (each prompt once per tokenizer)",
          {"tokenizer", "field", "prompts", "Q1", "median", "Q3", "sum", "mean"}, {}};
  for (const auto& r : a.token_rows) {
    auto add = [&](const std::string& field, const stats::Summary& s) {
      t.rows.push_back({r.tokenizer, field, count(static_cast<double>(s.n)), general(s.q1), general(s.median),
                        general(s.q3), count(s.sum), fixed(s.mean, 2)});
    };
    add("token_count", r.tokens);
    if (r.api_input) add("api_input", *r.api_input);
  }
  return t;
}

Table case_table(const Analysis& a) {
  Table t{"case_table", "Cases: wall time, items, µs per item, share of each stage in the cycle time", {}, {}};
  t.header = {"case", "items", "workers", "total (s)", "µs/item", "cycle µs/item"};
  for (const char* s : kStageNames) t.header.push_back(std::string(s) + " %");
  const bool seed = !a.case_rows.empty() && a.case_rows.front().seed_total_s.has_value();
  if (seed) {
    t.header.push_back("seed total (s)");
    t.header.push_back("seed µs/item");
  }
  for (const auto& r : a.case_rows) {
    std::vector<std::string> row = {case_name(r.case_number), count(static_cast<double>(r.items)),
                                    count(static_cast<double>(r.workers)), fixed(r.wall_s, 3), fixed(r.us_per_item, 2),
                                    fixed(r.mean_cycle_us, 2)};
    for (double s : r.stage_share) row.push_back(fixed(s * 100, 1));
    if (seed) {
      row.push_back(r.seed_total_s ? fixed(*r.seed_total_s, 3) : "n/a");
      row.push_back(r.seed_us_per_item ? fixed(*r.seed_us_per_item, 1) : "n/a");
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table fit_table(const Analysis& a) {
  Table t{"fits", "Every fit: coefficients with standard errors, t, p and 95% intervals",
          {"case", "tokenizer", "target", "model", "method", "n", "term", "estimate", "std error", "t", "p",
           "95% low", "95% high", "R²", "resid SD", "note"},
          {}};
  for (const auto& f : a.fits) {
    const auto* coefs = f.coefficients();
    if (coefs == nullptr) {
      t.rows.push_back({case_name(f.case_number), f.tokenizer, f.target, f.model, f.method, count(static_cast<double>(f.n)),
                        "", "", "", "", "", "", "", "", "", "not fitted: " + f.error});
      continue;
    }
    for (const auto& c : *coefs) {
      t.rows.push_back({case_name(f.case_number), f.tokenizer, f.target, f.model, f.method, count(static_cast<double>(f.n)),
                        c.name, general(c.estimate), general(c.std_error), fixed(c.t, 2), general(c.p), general(c.ci_low),
                        general(c.ci_high), f.ols ? fixed(f.ols->r_squared, 4) : "",
                        f.ols ? general(f.ols->resid_sd) : general(f.robust->scale),
                        f.robust ? "Huber t=1.345, z-based inference; SD column = MAD scale" : ""});
    }
  }
  return t;
}

Table headline_table(const Analysis& a) {
  Table t{"headline", "E(x) ≈ α + β·tokens (OLS on the cycle time), per case and tokenizer",
          {"case", "tokenizer", "n", "α (µs)", "β (µs/token)", "R²", "α1 + α2·1[B] + β·tokens: α2 (µs)"}, {}};
  for (const auto& f : a.fits) {
    if (f.target != "cycle" || f.model != "a" || f.method != "ols") continue;
    const FitEntry* b = a.find_fit(f.case_number, f.tokenizer, "cycle", "b", "ols");
    const std::string alpha2 = b && b->ols ? general(b->ols->coefficients[1].estimate) : "n/a";
    if (!f.ols) {
      t.rows.push_back({case_name(f.case_number), f.tokenizer, count(static_cast<double>(f.n)), "n/a", "n/a", "n/a", alpha2});
      continue;
    }
    t.rows.push_back({case_name(f.case_number), f.tokenizer, count(static_cast<double>(f.n)),
                      fixed(f.ols->coefficients[0].estimate, 3), general(f.ols->coefficients[1].estimate),
                      fixed(f.ols->r_squared, 4), alpha2});
  }
  return t;
}

Table modes_table(const Analysis& a) {
  Table t{"modes", "Two modes of the cycle time against the batch turnover",
          {"case", "items", "upper-mode share", "turnover share", "batch_boundary share", "split (µs)",
           "turnover items among upper mode", "upper mode among turnover items", "BIC 1 vs 2 modes"},
          {}};
  for (const auto& h : a.histograms) {
    t.rows.push_back({case_name(h.case_number), count(static_cast<double>(h.items)),
                      h.modes.fitted ? percent(h.modes.upper_share) : "n/a", percent(h.turnover_share),
                      percent(h.boundary_share), h.modes.fitted ? general(h.modes.threshold) : "n/a",
                      percent(h.upper_turnover_share), percent(h.turnover_in_upper),
                      h.modes.fitted ? general(h.modes.bic_one) + " vs " + general(h.modes.bic_two) : "n/a"});
  }
  return t;
}

Table prediction_table(const Analysis& a) {
  Table t{"predicted_vs_measured", "Sum of the fitted E(x) against the measured total, per case (seconds)",
          {"case", "measured Σ cycle", "wall time", "OLS (a)", "OLS (b)", "Huber (a)", "Huber (b)", "Huber (a) vs measured"},
          {}};
  for (const auto& p : a.predictions) {
    t.rows.push_back({case_name(p.case_number), fixed(p.measured_cycle_sum_us / 1e6, 4), fixed(p.wall_us / 1e6, 4),
                      fixed(p.ols_a_us / 1e6, 4), fixed(p.ols_b_us / 1e6, 4), fixed(p.huber_a_us / 1e6, 4),
                      fixed(p.huber_b_us / 1e6, 4),
                      percent(p.measured_cycle_sum_us > 0 ? p.huber_a_us / p.measured_cycle_sum_us - 1 : NAN)});
  }
  return t;
}

Table histogram_table(const Analysis& a) {
  Table t{"cycle_histogram", "Cycle-time histogram bins", {"case", "bin low (µs)", "bin high (µs)", "items", "turnover items"}, {}};
  for (const auto& h : a.histograms) {
    for (std::size_t b = 0; b < h.all.counts.size(); ++b) {
      t.rows.push_back({case_name(h.case_number), general(h.all.edges[b]), general(h.all.edges[b + 1]),
                        std::to_string(h.all.counts[b]), std::to_string(h.turnover.counts[b])});
    }
  }
  return t;
}

std::vector<Table> all_tables(const Analysis& a) {
  return {token_table(a), case_table(a), headline_table(a), fit_table(a), modes_table(a), prediction_table(a),
          histogram_table(a)};
}

}  // namespace overhead::report
