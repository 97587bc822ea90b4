#include "report/figures.hpp"

#include <algorithm>
#include <cmath>

#include "report/svg.hpp"
#include "report/table.hpp"
#include "stats/quantile.hpp"

namespace overhead::report {

namespace {

constexpr int kPanelW = 380, kPanelH = 270;
constexpr double kLeft = 62, kRight = 14, kTop = 30, kBottom = 44;

std::string case_label(int c) { return c == 0 ? "case ?" : "case " + std::to_string(c); }

int columns_for(std::size_t panels) { return static_cast<int>(std::min<std::size_t>(3, std::max<std::size_t>(1, panels))); }

void legend(Svg& svg, double x, double y, const std::vector<std::pair<std::string, std::string>>& entries) {
  for (const auto& [label, colour] : entries) {
    svg.rect(x, y - 9, 10, 10, colour);
    svg.text(x + 14, y, label, "start", 11);
    x += 24 + 7.0 * static_cast<double>(label.size());
  }
}

Figure scatter_figure(const Analysis& a) {
  const int cols = columns_for(a.cases.size());
  const int rows = static_cast<int>((a.cases.size() + static_cast<std::size_t>(cols) - 1) / static_cast<std::size_t>(cols));
  Svg svg("fig-scatter", cols * kPanelW, rows * kPanelH + 30, "Cycle time against input tokens, per case and tokenizer");
  std::vector<std::pair<std::string, std::string>> entries;
  for (std::size_t k = 0; k < a.tokenizers.size(); ++k) entries.push_back({a.tokenizers[k], series_colour(k)});
  legend(svg, 10, 18, entries);
  for (std::size_t ci = 0; ci < a.cases.size(); ++ci) {
    const double ox = static_cast<double>(static_cast<int>(ci) % cols) * kPanelW;
    const double oy = 30 + static_cast<double>(static_cast<int>(ci) / cols) * kPanelH;
    const auto& pts = a.scatter[ci];
    svg.text(ox + kPanelW / 2.0, oy + 16, case_label(a.cases[ci]), "middle", 12, "font-weight=\"bold\"");
    if (pts.empty()) {
      svg.text(ox + kPanelW / 2.0, oy + kPanelH / 2.0, "no timed items", "middle");
      continue;
    }
    std::vector<double> ys, xs;
    for (const auto& p : pts) {
      ys.push_back(p.cycle_us);
      xs.push_back(p.tokens);
    }
    // The upper 1% would flatten everything else: the axis stops at the 99th percentile.
    const double y_hi = std::max(stats::quantiles(ys, std::vector<double>{0.99})[0] * 1.15, 1e-3);
    const double x_hi = std::max(*std::max_element(xs.begin(), xs.end()) * 1.02, 1.0);
    const Scale x{0, x_hi, ox + kLeft, ox + kPanelW - kRight, false};
    const Scale y{0, y_hi, oy + kPanelH - kBottom, oy + kTop, false};
    svg.axes(x, y, "input tokens", "cycle time (µs)");
    std::size_t clipped = 0;
    for (const auto& p : pts) {
      if (p.cycle_us > y_hi) {
        ++clipped;
        continue;
      }
      svg.circle(x(p.tokens), y(p.cycle_us), 1.6, series_colour(p.tokenizer), "fill-opacity=\"0.45\"");
    }
    for (std::size_t k = 0; k < a.tokenizers.size(); ++k) {
      const FitEntry* f = a.find_fit(a.cases[ci], a.tokenizers[k], "cycle", "a", "ols");
      if (f == nullptr || !f->ols) continue;
      const double alpha = f->ols->coefficients[0].estimate, beta = f->ols->coefficients[1].estimate;
      const double y0 = std::clamp(alpha, 0.0, y_hi), y1 = std::clamp(alpha + beta * x_hi, 0.0, y_hi);
      svg.line(x(0), y(y0), x(x_hi), y(y1), series_colour(k), 2);
    }
    if (clipped > 0) {
      svg.text(ox + kPanelW - kRight, oy + kTop - 4, std::to_string(clipped) + " points above the axis", "end", 9);
    }
  }
  return {"scatter", "Cycle time against input tokens (a sample of at most 2,400 items per case); lines: OLS fit (a) α + β·tokens per tokenizer. The y axis stops at 1.15 × the 99th percentile.", svg.str()};
}

Figure histogram_figure(const Analysis& a) {
  const int cols = columns_for(a.histograms.size());
  const int rows = static_cast<int>((a.histograms.size() + static_cast<std::size_t>(cols) - 1) / static_cast<std::size_t>(cols));
  Svg svg("fig-histogram", cols * kPanelW, rows * kPanelH + 30, "Histogram of cycle times, log-spaced bins, turnover items marked");
  legend(svg, 10, 18, {{"other items", "#8aa9c8"}, {"batch-turnover items", "#D55E00"}, {"mode split", "#000000"}});
  for (std::size_t ci = 0; ci < a.histograms.size(); ++ci) {
    const auto& h = a.histograms[ci];
    const double ox = static_cast<double>(static_cast<int>(ci) % cols) * kPanelW;
    const double oy = 30 + static_cast<double>(static_cast<int>(ci) / cols) * kPanelH;
    svg.text(ox + kPanelW / 2.0, oy + 16, case_label(h.case_number), "middle", 12, "font-weight=\"bold\"");
    if (h.all.counts.empty()) {
      svg.text(ox + kPanelW / 2.0, oy + kPanelH / 2.0, "no timed items", "middle");
      continue;
    }
    const std::size_t top = *std::max_element(h.all.counts.begin(), h.all.counts.end());
    const Scale x{h.all.edges.front(), h.all.edges.back(), ox + kLeft, ox + kPanelW - kRight, true};
    const Scale y{0, static_cast<double>(std::max<std::size_t>(top, 1)) * 1.05, oy + kPanelH - kBottom, oy + kTop, false};
    for (std::size_t b = 0; b < h.all.counts.size(); ++b) {
      const double x0 = x(h.all.edges[b]), x1 = x(h.all.edges[b + 1]);
      const double total = static_cast<double>(h.all.counts[b]), turn = static_cast<double>(h.turnover.counts[b]);
      svg.rect(x0, y(total), x1 - x0, y(turn) - y(total), "#8aa9c8");
      svg.rect(x0, y(turn), x1 - x0, y(0) - y(turn), "#D55E00");
    }
    svg.axes(x, y, "cycle time (µs, log scale)", "items");
    if (h.modes.fitted) {
      const double px = x(h.modes.threshold);
      svg.line(px, y.from, px, y.to, "#000", 1, "stroke-dasharray=\"4 3\"");
      svg.text(ox + kPanelW - kRight, oy + kTop + 10,
               "upper mode " + percent(h.modes.upper_share) + ", turnover " + percent(h.turnover_share), "end", 10);
    }
  }
  return {"histogram", "Cycle times per case in log-spaced bins; orange: items whose cycle spans a batch turnover; dashed: the split between the two modes of a two-component mixture on log time.", svg.str()};
}

Figure stage_figure(const Analysis& a) {
  const int bar = 30, gap = 14;
  const int height = 60 + static_cast<int>(a.case_rows.size()) * (bar + gap) + 40;
  Svg svg("fig-stages", 900, height, "Stage breakdown of the cycle time per case");
  std::vector<std::pair<std::string, std::string>> entries;
  for (std::size_t s = 0; s < kStageCount; ++s) entries.push_back({kStageNames[s], series_colour(s)});
  legend(svg, 10, 18, entries);
  const Scale x{0, 1, 80, 720, false};
  for (std::size_t r = 0; r < a.case_rows.size(); ++r) {
    const auto& row = a.case_rows[r];
    const double y0 = 40 + static_cast<double>(r) * (bar + gap);
    svg.text(72, y0 + bar / 2.0 + 4, case_label(row.case_number), "end", 12);
    double at = 0;
    for (std::size_t s = 0; s < kStageCount; ++s) {
      const double share = std::isnan(row.stage_share[s]) ? 0 : row.stage_share[s];
      svg.rect(x(at), y0, x(at + share) - x(at), bar, series_colour(s));
      at += share;
    }
    svg.text(728, y0 + bar / 2.0 + 4, fixed(row.mean_cycle_us, 1) + " µs/item (cycle)", "start", 11);
  }
  const double base = 40 + static_cast<double>(a.case_rows.size()) * (bar + gap);
  for (double v : {0.0, 0.25, 0.5, 0.75, 1.0}) svg.text(x(v), base + 12, percent(v, 0), "middle", 10);
  return {"stages", "Share of each stage in the summed cycle time, per case (100% stacked); the label gives the mean cycle time per item.", svg.str()};
}

Figure token_figure(const Analysis& a) {
  Svg svg("fig-tokens", 760, 340, "Distribution of input token counts per tokenizer");
  std::vector<std::pair<std::string, std::string>> entries;
  double lo = 1e300, hi = 0, top = 0;
  for (std::size_t k = 0; k < a.token_distributions.size(); ++k) {
    const auto& d = a.token_distributions[k];
    entries.push_back({d.tokenizer, series_colour(k)});
    lo = std::min(lo, d.histogram.edges.front());
    hi = std::max(hi, d.histogram.edges.back());
    double n = 0;
    for (auto c : d.histogram.counts) n += static_cast<double>(c);
    for (auto c : d.histogram.counts) top = std::max(top, static_cast<double>(c) / n);
  }
  legend(svg, 10, 18, entries);
  if (a.token_distributions.empty()) {
    svg.text(380, 170, "no token counts", "middle");
    return {"tokens", "Token counts per tokenizer.", svg.str()};
  }
  const Scale x{lo, hi, 70, 740, true};
  const Scale y{0, top * 1.08, 290, 36, false};
  svg.axes(x, y, "input tokens (log scale)", "share of prompts per bin");
  for (std::size_t k = 0; k < a.token_distributions.size(); ++k) {
    const auto& h = a.token_distributions[k].histogram;
    double n = 0;
    for (auto c : h.counts) n += static_cast<double>(c);
    std::vector<std::pair<double, double>> steps;
    for (std::size_t b = 0; b < h.counts.size(); ++b) {
      const double share = static_cast<double>(h.counts[b]) / n;
      steps.push_back({x(h.edges[b]), y(share)});
      steps.push_back({x(h.edges[b + 1]), y(share)});
    }
    svg.polyline(steps, series_colour(k), 1.8);
  }
  return {"tokens", "Distribution of input token counts (each prompt once per tokenizer), log-spaced bins.", svg.str()};
}

}  // namespace

std::vector<Figure> make_figures(const Analysis& a) {
  return {scatter_figure(a), histogram_figure(a), stage_figure(a), token_figure(a)};
}

std::string svg_file(const Figure& f) { return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + f.svg; }

}  // namespace overhead::report
