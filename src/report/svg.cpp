#include "report/svg.hpp"

#include <array>
#include <cmath>
#include <cstdio>

#include "report/table.hpp"

namespace overhead::report {

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

}  // namespace

double Scale::operator()(double v) const {
  const double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi;
  const double x = log ? std::log10(std::max(v, lo * 1e-12)) : v;
  return from + (to - from) * (x - a) / (b - a);
}

std::vector<double> Scale::ticks(int count) const {
  std::vector<double> out;
  if (log) {
    for (double d = std::pow(10.0, std::floor(std::log10(lo))); d <= hi * 1.0000001; d *= 10) {
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = d * m;
        if (v >= lo * 0.9999999 && v <= hi * 1.0000001) out.push_back(v);
      }
    }
    if (out.size() > 9) {  // decades only when 1-2-5 gets crowded
      std::vector<double> decades;
      for (double v : out) {
        if (std::fabs(std::log10(v) - std::round(std::log10(v))) < 1e-9) decades.push_back(v);
      }
      out = decades;
    }
    return out;
  }
  const double span = hi - lo;
  if (!(span > 0)) return {lo};
  const double raw = span / count;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return out;
}

Svg::Svg(std::string id, int width, int height, std::string title)
    : id_(std::move(id)), title_(std::move(title)), width_(width), height_(height) {}

void Svg::rect(double x, double y, double w, double h, const std::string& fill, const std::string& extra) {
  body_ += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(w, 0.0)) + "\" height=\"" +
           num(std::max(h, 0.0)) + "\" fill=\"" + fill + "\"" + (extra.empty() ? "" : " " + extra) + "/>\n";
}

void Svg::line(double x1, double y1, double x2, double y2, const std::string& stroke, double width,
               const std::string& extra) {
  body_ += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) +
           "\" stroke=\"" + stroke + "\" stroke-width=\"" + num(width) + "\"" + (extra.empty() ? "" : " " + extra) +
           "/>\n";
}

void Svg::circle(double x, double y, double r, const std::string& fill, const std::string& extra) {
  body_ += "<circle cx=\"" + num(x) + "\" cy=\"" + num(y) + "\" r=\"" + num(r) + "\" fill=\"" + fill + "\"" +
           (extra.empty() ? "" : " " + extra) + "/>\n";
}

void Svg::polyline(const std::vector<std::pair<double, double>>& points, const std::string& stroke, double width) {
  body_ += "<polyline fill=\"none\" stroke=\"" + stroke + "\" stroke-width=\"" + num(width) + "\" points=\"";
  for (const auto& [x, y] : points) body_ += num(x) + "," + num(y) + " ";
  body_ += "\"/>\n";
}

void Svg::text(double x, double y, const std::string& s, const std::string& anchor, int size, const std::string& extra) {
  body_ += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\" font-size=\"" +
           std::to_string(size) + "\"" + (extra.empty() ? "" : " " + extra) + ">" + html_escape(s) + "</text>\n";
}

void Svg::axes(const Scale& x, const Scale& y, const std::string& x_title, const std::string& y_title) {
  line(x.from, y.from, x.to, y.from, "#333");
  line(x.from, y.from, x.from, y.to, "#333");
  for (double v : x.ticks()) {
    const double px = x(v);
    line(px, y.from, px, y.from + 4, "#333");
    text(px, y.from + 16, tick_label(v), "middle", 10);
  }
  for (double v : y.ticks()) {
    const double py = y(v);
    line(x.from - 4, py, x.from, py, "#333");
    line(x.from, py, x.to, py, "#e5e5e5", 0.5);
    text(x.from - 6, py + 3, tick_label(v), "end", 10);
  }
  text((x.from + x.to) / 2, y.from + 32, x_title, "middle", 11);
  const double cy = (y.from + y.to) / 2;
  text(x.from - 44, cy, y_title, "middle", 11, "transform=\"rotate(-90 " + num(x.from - 44) + " " + num(cy) + ")\"");
}

std::string Svg::str() const {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"" + id_ + "\" width=\"" + std::to_string(width_) +
         "\" height=\"" + std::to_string(height_) + "\" viewBox=\"0 0 " + std::to_string(width_) + " " +
         std::to_string(height_) + "\" role=\"img\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n<title>" +
         html_escape(title_) + "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" + body_ + "</svg>\n";
}

std::string tick_label(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a >= 1e6) {
    std::snprintf(buf, sizeof buf, "%gM", v / 1e6);
  } else if (a >= 1e4) {
    std::snprintf(buf, sizeof buf, "%gk", v / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%g", v);
  }
  return buf;
}

const std::string& series_colour(std::size_t i) {
  // Okabe-Ito palette.
  static const std::array<std::string, 8> colours = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                                     "#56B4E9", "#D55E00", "#F0E442", "#000000"};
  return colours[i % colours.size()];
}

}  // namespace overhead::report
