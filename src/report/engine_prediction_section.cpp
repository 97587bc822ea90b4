#include "report/engine_prediction_section.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace overhead::report {

namespace {

bool decoded(const ports::Record& r) { return r.decode_start > 0 && r.decode_end > r.decode_start; }

// The Markdown shows this many items; the CSV has them all.
constexpr std::size_t kShown = 20;

constexpr const char* kPredictionNote =
    "Measured: E = `encode_end - render_start`, TTFT = `first_token - decode_start`, TPOT = `(decode_end - "
    "first_token) / (output tokens - 1)`, D = `decode_end - decode_start`. Predicted by the engine profile for the "
    "item's prompt (our token count) and output tokens, at the batch it met: the mean number of generations in "
    "flight during its decode (from the records' stamps). TTFT = the profile's TTFT for the prompt plus one "
    "decode of each other generation in flight (they share the step); TPOT = the step at that batch and the "
    "item's context (prompt + half the output); D = TTFT + (output tokens - 1) x TPOT.";

double rel(double predicted, double measured) { return measured > 0 ? (predicted - measured) / measured : 0; }

}  // namespace

EnginePrediction predict_item(const cost::EngineFit& fit, double prompt_tokens, double output_tokens, double batch) {
  batch = std::max(1.0, batch);
  const double context = prompt_tokens + output_tokens / 2;
  EnginePrediction p;
  p.ttft_s = fit.ttft_s(prompt_tokens) +
             (batch - 1) * (fit.sequence_overhead_s + std::max(0.0, fit.context_s_per_token) * context);
  p.tpot_s = fit.step_s(batch, context);
  p.d_s = p.ttft_s + std::max(0.0, output_tokens - 1) * p.tpot_s;
  return p;
}

std::vector<double> mean_in_flight(std::span<const ports::Record> records) {
  // The in-flight count is a step function of time; its running integral at every start and end
  // gives each interval's mean as (F(end) - F(start)) / (end - start).
  std::vector<std::pair<std::int64_t, int>> events;
  for (const auto& r : records)
    if (decoded(r)) {
      events.push_back({r.decode_start, +1});
      events.push_back({r.decode_end, -1});
    }
  std::sort(events.begin(), events.end());
  std::vector<std::int64_t> at;
  std::vector<double> integral;  // F at each distinct event time
  double f = 0;
  int level = 0;
  std::int64_t last = events.empty() ? 0 : events.front().first;
  for (const auto& [t, step] : events) {
    f += static_cast<double>(level) * static_cast<double>(t - last);
    last = t;
    level += step;
    if (at.empty() || at.back() != t) {
      at.push_back(t);
      integral.push_back(f);
    }
  }
  const auto integral_at = [&](std::int64_t t) {
    return integral[static_cast<std::size_t>(std::lower_bound(at.begin(), at.end(), t) - at.begin())];
  };
  std::vector<double> out(records.size(), 0);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (!decoded(r)) continue;
    out[i] = (integral_at(r.decode_end) - integral_at(r.decode_start)) / static_cast<double>(r.decode_end - r.decode_start);
  }
  return out;
}

std::optional<ReportSection> engine_prediction_section(std::span<const ports::Record> records,
                                                       const cost::EngineProfile& profile,
                                                       const std::string& profile_name) {
  const std::vector<double> batch = mean_in_flight(records);
  Table items{"engine_prediction", "Each item against the engine profile's prediction",
              {"case", "tokenizer", "id", "prompt tokens", "output tokens", "in flight", "E (µs)", "TTFT (ms)",
               "TTFT predicted (ms)", "TPOT (ms)", "TPOT predicted (ms)", "D (ms)", "D predicted (ms)"},
              {}};
  double sum_ttft = 0, sum_tpot = 0, sum_d = 0, abs_ttft = 0, abs_tpot = 0, abs_d = 0;
  std::size_t n = 0, n_tpot = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (!decoded(r) || r.first_token <= 0) continue;
    const double prompt = static_cast<double>(r.token_count), out = static_cast<double>(r.output_tokens);
    const EnginePrediction p = predict_item(profile.fit, prompt, out, batch[i]);
    const double e_us = r.encode_end >= r.render_start && r.render_start > 0 ? double(r.encode_end - r.render_start) / 1e3 : 0;
    const double ttft = double(r.first_token - r.decode_start) / 1e9, d = double(r.decode_end - r.decode_start) / 1e9;
    const bool has_tpot = r.output_tokens >= 2;
    const double tpot = has_tpot ? double(r.decode_end - r.first_token) / 1e9 / (out - 1) : 0;
    items.rows.push_back({std::to_string(r.case_number), r.tokenizer, r.id, count(prompt), count(out), fixed(batch[i], 2),
                          fixed(e_us, 1), fixed(ttft * 1e3, 3), fixed(p.ttft_s * 1e3, 3),
                          has_tpot ? fixed(tpot * 1e3, 3) : "n/a", fixed(p.tpot_s * 1e3, 3), fixed(d * 1e3, 3),
                          fixed(p.d_s * 1e3, 3)});
    ++n;
    sum_ttft += rel(p.ttft_s, ttft);
    abs_ttft += std::abs(rel(p.ttft_s, ttft));
    sum_d += rel(p.d_s, d);
    abs_d += std::abs(rel(p.d_s, d));
    if (has_tpot) {
      ++n_tpot;
      sum_tpot += rel(p.tpot_s, tpot);
      abs_tpot += std::abs(rel(p.tpot_s, tpot));
    }
  }
  if (n == 0) return std::nullopt;
  const auto nd = static_cast<double>(n), nt = static_cast<double>(std::max<std::size_t>(1, n_tpot));
  Table summary{"engine_prediction_errors", "The prediction's errors over the items",
                {"", "items", "mean error", "mean absolute error"},
                {{"TTFT", count(nd), percent(sum_ttft / nd), percent(abs_ttft / nd)},
                 {"TPOT", count(static_cast<double>(n_tpot)), percent(sum_tpot / nt), percent(abs_tpot / nt)},
                 {"D", count(nd), percent(sum_d / nd), percent(abs_d / nd)}}};
  Table shown = items;
  if (shown.rows.size() > kShown) shown.rows.resize(kShown);
  const std::string head = "Engine profile " + profile_name + " (" + profile.model + ", " + profile.engine_url + ").";
  const std::string more = items.rows.size() > kShown ? "The first " + std::to_string(kShown) + " of " +
                                                            std::to_string(items.rows.size()) +
                                                            " items; all are in engine_prediction.csv."
                                                      : "";
  ReportSection s;
  s.markdown = "## The engine against its profile\n\n" + head + " " + kPredictionNote + "\n\n" + to_markdown(summary) + "\n" +
               (more.empty() ? "" : more + "\n\n") + to_markdown(shown) + "\n";
  s.html = "<h2>The engine against its profile</h2>\n<p>" + html_escape(head + " " + kPredictionNote) + "</p>\n" +
           to_html(summary) + (more.empty() ? "" : "<p>" + html_escape(more) + "</p>\n") + to_html(shown);
  s.tables.push_back(std::move(items));
  s.tables.push_back(std::move(summary));
  return s;
}

}  // namespace overhead::report
