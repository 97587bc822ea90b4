// A small SVG writer for the report's figures.
//
// Why SVG written by our own code (and PNG through rsvg-convert) rather than gnuplot: the HTML
// report must be one self-contained page with the figures inline, and SVG we write ourselves
// inlines as is (no external fonts, scripts or ids to rename), is byte-for-byte deterministic for
// tests, and costs no process per plot. librsvg's rsvg-convert (Debian librsvg2-bin) then turns
// the same SVG into PNG, so both formats show the same picture.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace overhead::report {

// Maps data to pixels on one axis, linear or log10.
struct Scale {
  double lo = 0, hi = 1;       // data range
  double from = 0, to = 1;     // pixel range
  bool log = false;
  double operator()(double v) const;
  // About `count` readable tick positions inside [lo, hi] (1-2-5 steps; decades for log).
  std::vector<double> ticks(int count = 5) const;
};

class Svg {
 public:
  Svg(std::string id, int width, int height, std::string title);
  void rect(double x, double y, double w, double h, const std::string& fill, const std::string& extra = "");
  void line(double x1, double y1, double x2, double y2, const std::string& stroke, double width = 1,
            const std::string& extra = "");
  void circle(double x, double y, double r, const std::string& fill, const std::string& extra = "");
  void polyline(const std::vector<std::pair<double, double>>& points, const std::string& stroke, double width = 1.5);
  void text(double x, double y, const std::string& s, const std::string& anchor = "start", int size = 12,
            const std::string& extra = "");
  // A frame with ticks, tick labels and axis titles for the rectangle the two scales span.
  void axes(const Scale& x, const Scale& y, const std::string& x_title, const std::string& y_title);
  std::string str() const;  // the <svg> element, no XML prolog (inlines in HTML as is)

 private:
  std::string id_, title_;
  int width_, height_;
  std::string body_;
};

std::string tick_label(double v);
// Colours, one per series, readable on white and for common colour-vision deficiencies.
const std::string& series_colour(std::size_t i);

}  // namespace overhead::report
