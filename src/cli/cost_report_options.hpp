// The flags that add the cost section to a report (`overhead analyze --gpu NAME --model NAME ...`):
// registered by one call, turned into a report section maker when --gpu and --model are given.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>

#include "report/cost_section.hpp"

namespace overhead::cli {

void add_cost_report_options(CLI::App& cmd, const std::shared_ptr<report::CostSectionOptions>& o);

// The maker when the flags ask for a cost section (--gpu and --model both given); a usage error
// (CostError) when only one of them is.
std::optional<report::SectionMaker> cost_report_section(const report::CostSectionOptions& o);

}  // namespace overhead::cli
