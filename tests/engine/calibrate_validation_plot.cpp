// Draws the committed validation of `overhead calibrate` (tests/engine/fixtures/calibrate_validation.json)
// as docs/img/calibrate-validation.svg: for output tokens/s, mean TPOT and mean TTFT, each
// configuration's prediction against its measurement, on log axes, with the line where they are
// equal and the target band around it (15%, 15%, 25%).
//
//   calibrate_validation_plot FIXTURE.json OUT.svg
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/figures.hpp"
#include "report/svg.hpp"

namespace {

using overhead::report::Scale;
using overhead::report::Svg;

struct Panel {
  const char* key;
  const char* title;
  double scale;  // to the unit shown
  double target;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: calibrate_validation_plot FIXTURE.json OUT.svg\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  const auto fixture = nlohmann::json::parse(in, nullptr, false);
  if (fixture.is_discarded() || !fixture.contains("configurations")) {
    std::fprintf(stderr, "%s: not a calibrate validation fixture\n", argv[1]);
    return 1;
  }
  const std::vector<Panel> panels = {{"output_tokens_per_s", "output tokens/s", 1, 0.15},
                                     {"tpot_s_mean", "mean TPOT (ms)", 1e3, 0.15},
                                     {"ttft_s_mean", "mean TTFT (ms)", 1e3, 0.25}};
  constexpr int kPanel = 300, kLeft = 60, kTop = 40, kBottom = 50, kGap = 30;
  const int width = static_cast<int>(panels.size()) * (kPanel + kLeft + kGap) + 90;  // room for the last labels
  const int height = kPanel + kTop + kBottom;
  Svg svg("fig-calibrate_validation", width, height,
          "overhead calibrate: predicted against measured on configurations the calibration did not run");
  const auto& configs = fixture["configurations"];
  for (std::size_t p = 0; p < panels.size(); ++p) {
    const Panel& panel = panels[p];
    double lo = 1e300, hi = 0;
    for (const auto& c : configs)
      for (const char* side : {"measured", "predicted"}) {
        const double v = c[side][panel.key].get<double>() * panel.scale;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    lo /= 1.4;
    hi *= 1.4;
    const double x0 = 20 + static_cast<double>(p) * (kPanel + kLeft + kGap) + kLeft;
    const Scale x{lo, hi, x0, x0 + kPanel, true};
    const Scale y{lo, hi, kTop + kPanel, kTop, true};
    svg.axes(x, y, std::string("measured ") + panel.title, std::string("predicted ") + panel.title);
    // The target band, then the line of equality.
    // predicted = f x measured, clipped to the square: below the diagonal from (lo / f, lo) to
    // (hi, hi f), above it from (lo, lo f) to (hi / f, hi).
    for (const double f : {1 - panel.target, 1 + panel.target}) {
      if (f < 1) svg.line(x(lo / f), y(lo), x(hi), y(hi * f), "#999999", 1, "stroke-dasharray=\"4 3\"");
      else svg.line(x(lo), y(lo * f), x(hi / f), y(hi), "#999999", 1, "stroke-dasharray=\"4 3\"");
    }
    svg.line(x(lo), y(lo), x(hi), y(hi), "#444444", 1);
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const auto& c = configs[i];
      const double m = c["measured"][panel.key].get<double>() * panel.scale;
      const double pr = c["predicted"][panel.key].get<double>() * panel.scale;
      svg.circle(x(m), y(pr), 4, overhead::report::series_colour(0));
      svg.text(x(m) + 6, y(pr) - 4,
               "x" + c["concurrency"].dump() + " " + c["prompt_tokens"].dump() + "/" + c["output_tokens"].dump(), "start", 9);
    }
    svg.text(x0 + kPanel / 2.0, kTop - 12,
             std::string(panel.title) + " (dashed: ±" + std::to_string(static_cast<int>(panel.target * 100)) + "%)", "middle", 12);
  }
  const overhead::report::Figure figure{"calibrate_validation", "", svg.str()};
  std::ofstream out(argv[2]);
  out << overhead::report::svg_file(figure);
  return out ? 0 : 1;
}
