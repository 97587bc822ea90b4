#include "report/cost_section.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>

#include "cost/profiles.hpp"
#include "report/svg.hpp"

namespace overhead::report {

namespace {

constexpr int kWidth = 660, kHeight = 380;
constexpr double kLeft = 70, kRight = 170, kTop = 40, kBottom = 50;

std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string money(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, v >= 100 ? "$%.0f" : v >= 1 ? "$%.2f" : "$%.3g", v);
  return buf;
}

std::string header_line(const CostView& v) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s x%d serving %s, workload %s, utilization %.2f", v.gpu.c_str(), v.gpus,
                v.model.c_str(), v.workload.c_str(), v.result.utilization);
  return buf;
}

// The y range of a cost plot: the curve and every API line, with some room.
Scale cost_scale(const std::vector<cost::CurvePoint>& curve, const std::vector<cost::ApiLine>& apis) {
  double lo = curve.front().usd_per_1m_tokens_blended, hi = lo;
  for (const auto& p : curve) {
    lo = std::min(lo, p.usd_per_1m_tokens_blended);
    hi = std::max(hi, p.usd_per_1m_tokens_blended);
  }
  for (const auto& a : apis) {
    if (a.usd_per_1m_tokens_blended <= 0) continue;
    lo = std::min(lo, a.usd_per_1m_tokens_blended);
    hi = std::max(hi, a.usd_per_1m_tokens_blended);
  }
  lo = std::max(lo * 0.7, 1e-9);
  hi = std::max(hi * 1.4, lo * 10);
  return {lo, hi, kHeight - kBottom, kTop, true};
}

void curve(Svg& svg, const Scale& x, const Scale& y, const std::vector<cost::CurvePoint>& points) {
  std::vector<std::pair<double, double>> line;
  for (const auto& p : points) line.push_back({x(p.x), y(p.usd_per_1m_tokens_blended)});
  svg.polyline(line, series_colour(0), 2);
  for (const auto& p : points)
    svg.circle(x(p.x), y(p.usd_per_1m_tokens_blended), 2.5, series_colour(0),
               "class=\"point\" data-x=\"" + exact(p.x) + "\" data-y=\"" + exact(p.usd_per_1m_tokens_blended) + "\"");
}

// One API price as a dashed horizontal line, labelled at the right; its break-even (at `be`, when
// set and inside the x range) as a ring on the line and a drop line to the axis.
void api_line(Svg& svg, const Scale& x, const Scale& y, const cost::ApiLine& a, std::size_t k,
              std::optional<double> be, const std::string& be_label) {
  if (a.usd_per_1m_tokens_blended <= 0) return;
  const std::string& colour = series_colour(k + 1);
  const double py = y(a.usd_per_1m_tokens_blended);
  svg.line(x.from, py, x.to, py, colour, 1.5,
           "stroke-dasharray=\"6 4\" class=\"api\" data-y=\"" + exact(a.usd_per_1m_tokens_blended) + "\"");
  svg.text(x.to + 6, py + 4, "API " + a.name + " " + money(a.usd_per_1m_tokens_blended), "start", 10,
           "fill=\"" + colour + "\"");
  if (!be) return;
  const double lo = std::min(x.lo, x.hi), hi = std::max(x.lo, x.hi);
  if (*be < lo || *be > hi) {
    svg.text(x.to + 6, py + 16, be_label + " (off the plot)", "start", 9, "fill=\"" + colour + "\"");
    return;
  }
  const double px = x(*be);
  svg.line(px, py, px, y.from, colour, 1, "stroke-dasharray=\"2 3\"");
  svg.circle(px, py, 5, "none", "stroke=\"" + colour + "\" stroke-width=\"2\" class=\"break-even\" data-x=\"" +
                                     exact(*be) + "\" data-y=\"" + exact(a.usd_per_1m_tokens_blended) + "\"");
  svg.text(px + 6, py - 8, be_label, "start", 10, "fill=\"" + colour + "\"");
}

void here_marker(Svg& svg, const Scale& x, const Scale& y, double vx, double vy, const std::string& label) {
  svg.rect(x(vx) - 4, y(vy) - 4, 8, 8, "#000", "class=\"here\" data-x=\"" + exact(vx) + "\" data-y=\"" + exact(vy) + "\"");
  svg.text(x(vx) + 7, y(vy) + 14, label, "start", 10);
}

std::string format(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

CostView cost_view(const cost::PricingOptions& o, const cost::ELinear& e, const cost::Workload& w,
                   const std::string& workload_label) {
  const cost::Scenario scenario = cost::make_scenario(o.scenario);
  const auto& prices = scenario.prices;
  const auto& model = scenario.model;
  CostView v;
  v.gpu = scenario.gpu.name;
  v.model = model.name;
  v.gpus = o.scenario.gpus;
  v.e_origin = e.origin;
  v.workload = workload_label.empty() ? o.workload : workload_label;
  v.w = w;
  v.inputs = cost::price_load(scenario, o.load, e, w).inputs;
  std::vector<cost::ApiLine> apis;
  for (const auto& a : o.api_prices) apis.push_back(cost::api_line(a, prices, w));
  if (!apis.empty()) v.inputs.api_usd_per_1m = {apis.front().usd_per_1m_in, apis.front().usd_per_1m_out};
  v.result = cost::compute_cost(v.inputs, w);
  // The plots sweep utilization: whatever the load, they are drawn around the utilization it came
  // to (the capacity is 1, a concurrency or a max rate their share of it).
  cost::CostInputs at = v.inputs;
  at.mode = cost::LoadMode::utilization;
  at.utilization = v.result.utilization;
  v.sensitivity = cost::sensitivity(at, w, apis);
  // Every row at its own preset price (a typed-in --gpu-usd-per-hour is for --gpu only), with the
  // first API price, so each row carries its break-even utilization.
  v.gpus_table = cost::gpu_table(o.scenario.profiles_dir, model, at, w, prices);
  return v;
}

Figure cost_utilization_figure(const CostView& v) {
  const auto& s = v.sensitivity;
  Svg svg("fig-cost_utilization", kWidth, kHeight, "Cost per 1M tokens (blended) against utilization");
  svg.text(kLeft, 20, header_line(v), "start", 12, "font-weight=\"bold\"");
  const Scale x{0, 1, kLeft, kWidth - kRight, false};
  const Scale y = cost_scale(s.by_utilization, s.apis);
  svg.axes(x, y, "utilization of the replica", "$ per 1M tokens (blended)");
  curve(svg, x, y, s.by_utilization);
  for (std::size_t k = 0; k < s.apis.size(); ++k) {
    const auto& a = s.apis[k];
    api_line(svg, x, y, a, k, a.break_even_utilization,
             a.break_even_utilization ? "break-even U = " + format("%.3f", *a.break_even_utilization) : "");
    if (!a.break_even_utilization)
      svg.text(x.to + 6, y(a.usd_per_1m_tokens_blended) + 16, "no break-even in (0, 1]", "start", 9,
               "fill=\"" + series_colour(k + 1) + "\"");
  }
  here_marker(svg, x, y, s.utilization, s.profile_usd_per_1m_tokens_blended,
              "U = " + format("%.2f", s.utilization) + ": " + money(s.profile_usd_per_1m_tokens_blended));
  return {"cost_utilization",
          "Blended $ per 1M tokens against the replica's utilization (" + header_line(v) +
              "); dashed: API prices over the same mix; rings: break-even.",
          svg.str()};
}

Figure cost_decode_figure(const CostView& v) {
  const auto& s = v.sensitivity;
  Svg svg("fig-cost_decode", kWidth, kHeight, "Cost per 1M tokens (blended) against decode speed");
  svg.text(kLeft, 20, header_line(v), "start", 12, "font-weight=\"bold\"");
  const Scale x{s.by_decode.front().x, s.by_decode.back().x, kLeft, kWidth - kRight, true};
  const Scale y = cost_scale(s.by_decode, s.apis);
  svg.axes(x, y, "output tokens/s of the replica at full load", "$ per 1M tokens (blended)");
  curve(svg, x, y, s.by_decode);
  for (std::size_t k = 0; k < s.apis.size(); ++k) {
    const auto& a = s.apis[k];
    api_line(svg, x, y, a, k, a.break_even_output_tokens_per_s,
             a.break_even_output_tokens_per_s ? "break-even " + format("%.0f", *a.break_even_output_tokens_per_s) + " tok/s"
                                              : "");
    if (!a.break_even_output_tokens_per_s)
      svg.text(x.to + 6, y(a.usd_per_1m_tokens_blended) + 16, "no break-even up to 1000x", "start", 9,
               "fill=\"" + series_colour(k + 1) + "\"");
  }
  here_marker(svg, x, y, s.profile_output_tokens_per_s, s.profile_usd_per_1m_tokens_blended,
              "profile: " + format("%.0f", s.profile_output_tokens_per_s) + " tok/s");
  return {"cost_decode",
          "Blended $ per 1M tokens against the replica's output tokens/s at full load, the profile's FLOP/s and "
          "bandwidth scaled 1/8x to 8x, at utilization " + format("%.2f", s.utilization) + " (" + header_line(v) +
              "); dashed: API prices; rings: break-even.",
          svg.str()};
}

Table gpu_profiles_table(const CostView& v) {
  const bool api = !v.sensitivity.apis.empty();
  Table t{"cost_gpus", "Shipped GPU profiles serving " + v.model + " at utilization " + format("%.2f", v.inputs.utilization) +
                           " (the fewest of 1, 2, 4, 8 GPUs that hold the weights)",
          {"gpu", "GPUs", "$/GPU-hour", "batch", "output tok/s", "$/1M in", "$/1M out", "$/1M blended"},
          {}};
  if (api) t.header.push_back("break-even U vs " + v.sensitivity.apis.front().name);
  for (const auto& row : v.gpus_table) {
    if (!row.cost) {
      std::vector<std::string> cells = {row.gpu, "", row.price_kind.empty() ? "" : fixed(row.gpu_usd_per_hour, 3), row.error};
      cells.resize(t.header.size());
      t.rows.push_back(cells);
      continue;
    }
    const auto& c = *row.cost;
    std::vector<std::string> cells = {row.gpu, std::to_string(row.gpus), fixed(row.gpu_usd_per_hour, 3) + " (" + row.price_kind + ")",
                                      fixed(c.batch, 0), fixed(c.output_tokens_per_s, 1), fixed(c.usd_per_1m_input_tokens, 4),
                                      fixed(c.usd_per_1m_output_tokens, 4), fixed(c.usd_per_1m_tokens_blended, 4)};
    if (api) cells.push_back(c.break_even_utilization && *c.break_even_utilization <= 1 ? fixed(*c.break_even_utilization, 4) : "none");
    t.rows.push_back(cells);
  }
  return t;
}

ReportSection cost_section(const CostView& v) {
  ReportSection s;
  const auto& r = v.result;
  Table summary{"cost_summary", "Cost: " + header_line(v), {"figure", "value"}, {}};
  auto add = [&](const std::string& name, const std::string& value) { summary.rows.push_back({name, value}); };
  add("E(x) = alpha + beta*x (µs)", fixed(v.inputs.e.alpha_us, 3) + " + " + fixed(v.inputs.e.beta_us_per_token, 5) +
                                         "*x (" + v.e_origin + ")");
  add("E mean (s)", general(r.e_s.mean));
  add("D mean (s)", general(r.d_s.mean));
  add("T mean / p99 (s)", general(r.t_s.mean) + " / " + general(r.t_s.p99));
  add("E's share of T", percent(r.e_share, 4));
  add("requests/s at the utilization", general(r.requests_per_s));
  add("output tokens/s at the utilization", fixed(r.output_tokens_per_s, 1));
  add("GPU $/hour, CPU worker $/hour", fixed(v.inputs.gpu_usd_per_hour, 4) + ", " + fixed(v.inputs.cpu_usd_per_hour, 4));
  add("usd_per_request", general(r.usd_per_request));
  add("usd_per_1m_input_tokens", fixed(r.usd_per_1m_input_tokens, 4));
  add("usd_per_1m_output_tokens", fixed(r.usd_per_1m_output_tokens, 4));
  add("usd_per_1m_tokens_blended", fixed(r.usd_per_1m_tokens_blended, 4));
  for (const auto& a : v.sensitivity.apis) {
    add("API " + a.name + " $/1M blended", fixed(a.usd_per_1m_tokens_blended, 4));
    add("break_even_utilization vs " + a.name, a.break_even_utilization ? fixed(*a.break_even_utilization, 4) : "none in (0, 1]");
    add("break-even output tok/s vs " + a.name,
        a.break_even_output_tokens_per_s ? fixed(*a.break_even_output_tokens_per_s, 0) : "none up to 1000x the speed");
  }
  s.tables = {summary, gpu_profiles_table(v)};
  s.figures = {cost_utilization_figure(v), cost_decode_figure(v)};
  s.markdown = "## Cost: T = E(x) + D(y|x)\n\n" + to_markdown(summary) + "\n";
  s.html = "<h2 id=\"cost\">Cost: T = E(x) + D(y|x)</h2>\n" + to_html(summary);
  for (const auto& f : s.figures) {
    s.markdown += "![" + f.caption + "](figures/" + f.name + ".svg)\n\n*" + f.caption + "*\n\n";
    s.html += "<figure id=\"figure-" + f.name + "\" data-figure=\"" + f.name + "\">\n" + f.svg + "<figcaption>" +
              html_escape(f.caption) + "</figcaption></figure>\n";
  }
  s.markdown += "### " + s.tables[1].title + "\n\n" + to_markdown(s.tables[1]) + "\n";
  s.html += "<h3>" + html_escape(s.tables[1].title) + "</h3>\n" + to_html(s.tables[1]);
  return s;
}

SectionMaker cost_section_maker(const CostSectionOptions& o) {
  return [o](const Analysis& a) {
    try {
      const FitEntry* fit = nullptr;
      for (const auto& f : a.fits) {
        if (f.case_number != o.case_number || f.target != "cycle" || f.model != "a" || f.method != "ols" || !f.ols) continue;
        if (o.tokenizer.empty() ? f.tokenizer == kAllTokenizers : f.tokenizer != o.tokenizer) continue;
        fit = &f;
        break;
      }
      if (!fit)
        throw cost::CostError("no OLS cycle fit for case " + std::to_string(o.case_number) +
                              (o.tokenizer.empty() ? std::string() : " and tokenizer " + o.tokenizer) + " in this analysis");
      cost::ELinear e{fit->ols->coefficients[0].estimate, fit->ols->coefficients[1].estimate,
                      "this analysis: case " + std::to_string(o.case_number) + ", " + fit->tokenizer + ", OLS on cycle"};
      return cost_section(cost_view(o.pricing, e, cost::parse_workload(o.pricing.workload)));
    } catch (const std::exception& ex) {
      ReportSection s;
      s.markdown = "## Cost: T = E(x) + D(y|x)\n\nNot computed: " + std::string(ex.what()) + "\n\n";
      s.html = "<h2 id=\"cost\">Cost: T = E(x) + D(y|x)</h2>\n<p class=\"warn\">Not computed: " + html_escape(ex.what()) + "</p>\n";
      return s;
    }
  };
}

}  // namespace overhead::report
