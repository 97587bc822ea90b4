// An extra section of the analysis report, made by another part (e.g. the cost section): its
// Markdown and HTML, and the figures and tables that write_report writes as files beside the rest.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "report/analysis.hpp"
#include "report/figures.hpp"
#include "report/table.hpp"

namespace overhead::report {

struct ReportSection {
  std::string markdown;  // starts with its own "## " heading; links figures as figures/NAME.svg
  std::string html;      // starts with its own <h2>; figures inline
  std::vector<Figure> figures;
  std::vector<Table> tables;
};

// Made from the finished analysis, so a section can use its fits.
using SectionMaker = std::function<ReportSection(const Analysis&)>;

}  // namespace overhead::report
