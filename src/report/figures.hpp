// The report's four figures, as SVG: cycle time against tokens per tokenizer with the fitted
// lines, the cycle-time histograms with the turnover items marked, the stage breakdown per case,
// and the token-count distributions.
#pragma once

#include <string>
#include <vector>

#include "report/analysis.hpp"

namespace overhead::report {

struct Figure {
  std::string name;     // file stem and element id ("fig-" + name)
  std::string caption;
  std::string svg;
};

std::vector<Figure> make_figures(const Analysis& a);

// The figure as a standalone .svg file: the XML prolog, then the <svg> element.
[[nodiscard]] std::string svg_file(const Figure& f);

}  // namespace overhead::report
