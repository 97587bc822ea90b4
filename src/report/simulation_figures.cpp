#include "report/simulation_figures.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "report/svg.hpp"

namespace overhead::report {
namespace {

constexpr int kWidth = 760, kHeight = 420, kLeft = 80, kRight = 150, kTop = 40, kBottom = 60;

Figure depth_figure(const cost::SimResult& r, const std::string& title) {
  Svg svg("fig-sim_queue_depth", kWidth, kHeight, "Queue depth over time per stage");
  svg.text(kLeft, 20, title, "start", 12, "font-weight=\"bold\"");
  double t_hi = r.depth_times.empty() ? 1 : std::max(r.depth_times.back(), 1e-9);
  double d_hi = 1;
  for (const auto& s : r.stages)
    for (double d : s.depth) d_hi = std::max(d_hi, d);
  const Scale x{0, t_hi, kLeft, kWidth - kRight, false};
  const Scale y{0, d_hi * 1.05, kHeight - kBottom, kTop, false};
  svg.axes(x, y, "simulated time (s)", "requests waiting");
  for (std::size_t k = 0; k < r.stages.size(); ++k) {
    const auto& s = r.stages[k];
    std::vector<std::pair<double, double>> points;
    for (std::size_t i = 0; i < s.depth.size() && i < r.depth_times.size(); ++i) points.emplace_back(x(r.depth_times[i]), y(s.depth[i]));
    if (points.size() > 1) svg.polyline(points, series_colour(k), 2);
    svg.text(kWidth - kRight + 10, kTop + 16 * static_cast<double>(k), s.name + (s.saturated ? " (saturated)" : ""), "start", 11,
             "fill=\"" + series_colour(k) + "\"");
  }
  return {"sim_queue_depth", "Requests waiting in front of each stage over the simulated span (" + title + ").", svg.str()};
}

Figure latency_figure(const cost::SimResult& r, const std::string& title) {
  // One group per figure of the request: each stage's wait and service, then end to end.
  std::vector<std::pair<std::string, cost::Percentiles>> groups;
  for (const auto& s : r.stages) {
    groups.emplace_back(s.name + " wait", s.wait_s);
    groups.emplace_back(s.name + " service", s.service_s);
  }
  groups.emplace_back("end to end", r.latency_s);
  double lo = 1e300, hi = 0;
  for (const auto& [name, p] : groups)
    for (double v : {p.p50, p.p95, p.p99})
      if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  if (hi <= 0) lo = 1e-6, hi = 1;
  lo = std::min(lo, hi / 10);
  Svg svg("fig-sim_latency", kWidth, kHeight, "Latency percentiles per stage and end to end");
  svg.text(kLeft, 20, title, "start", 12, "font-weight=\"bold\"");
  const Scale x{0, static_cast<double>(groups.size()), kLeft, kWidth - kRight, false};
  const Scale y{lo / 1.5, hi * 1.5, kHeight - kBottom, kTop, true};
  // The x axis is categorical: the frame, the y ticks with grid lines, and the groups' labels.
  svg.line(x.from, y.from, x.to, y.from, "#333");
  svg.line(x.from, y.from, x.from, y.to, "#333");
  for (double v : y.ticks()) {
    svg.line(x.from - 4, y(v), x.to, y(v), "#ddd");
    svg.text(x.from - 8, y(v) + 4, tick_label(v), "end", 10);
  }
  svg.text(18, (y.from + y.to) / 2, "seconds (log)", "middle", 11, "transform=\"rotate(-90 18 " + std::to_string((y.from + y.to) / 2) + ")\"");
  const double slot = (x.to - x.from) / static_cast<double>(groups.size());
  const char* names[] = {"p50", "p95", "p99"};
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& p = groups[g].second;
    const double values[] = {p.p50, p.p95, p.p99};
    for (int k = 0; k < 3; ++k) {
      if (!(values[k] > 0)) continue;
      const double bar = slot / 4;
      const double left = x.from + slot * static_cast<double>(g) + bar * (0.5 + k);
      const double top = y(values[k]);
      svg.rect(left, top, bar * 0.9, y.from - top, series_colour(static_cast<std::size_t>(k)));
    }
    svg.text(x.from + slot * (static_cast<double>(g) + 0.5), kHeight - kBottom + 16, groups[g].first, "middle", 9);
  }
  for (int k = 0; k < 3; ++k)
    svg.text(kWidth - kRight + 10, kTop + 16 * k, names[k], "start", 11, "fill=\"" + series_colour(static_cast<std::size_t>(k)) + "\"");
  return {"sim_latency", "p50, p95 and p99 of each stage's wait and service and of the request end to end (" + title + ").",
          svg.str()};
}

}  // namespace

std::vector<Figure> simulation_figures(const cost::SimResult& r, const std::string& title) {
  return {depth_figure(r, title), latency_figure(r, title)};
}

}  // namespace overhead::report
