// The cost section of the analysis report, and the same plots for `overhead cost --plots`: the
// blended $/1M tokens against utilization and against decode speed (the API prices as lines, the
// break-even marked), and a table of the shipped GPU profiles for one model. The numbers come from
// cost::sensitivity and cost::gpu_table; this file only lays them out.
#pragma once

#include <string>
#include <vector>

#include "cost/pricing.hpp"
#include "cost/scenario.hpp"
#include "cost/sensitivity.hpp"
#include "report/section.hpp"

namespace overhead::report {

// What the section prices: the cost family's one PricingOptions (the deployment, the load --
// a utilization, the capacity, a concurrency or the max rate -- the workload, the API prices), and
// which of the analysis' own E fits prices the requests.
struct CostSectionOptions {
  cost::PricingOptions pricing;
  int case_number = 5;                  // whose E fit (OLS, model a, cycle) to use
  std::string tokenizer;                // empty: the first tokenizer of that case with a fit
};

// Everything the section shows, computed.
struct CostView {
  std::string gpu, model, e_origin, workload;
  int gpus = 1;
  cost::CostInputs inputs;
  cost::Workload w;
  cost::CostResult result;
  cost::Sensitivity sensitivity;
  std::vector<cost::GpuRow> gpus_table;
};

// Loads the profiles and prices and computes the view with E as given, the fleet loaded as
// `o.load` asks (cost::price_load); `workload_label` (empty: o.workload) heads the plots.
// Throws cost::CostError.
CostView cost_view(const cost::PricingOptions& o, const cost::ELinear& e, const cost::Workload& w,
                   const std::string& workload_label = "");

// The two figures ("cost_utilization", "cost_decode"); each point carries data-x/data-y with the
// model's value, so a test can read back what was drawn.
Figure cost_utilization_figure(const CostView& v);
Figure cost_decode_figure(const CostView& v);
Table gpu_profiles_table(const CostView& v);

ReportSection cost_section(const CostView& v);

// The maker for write_report: E from the analysis' own fit of `o.case_number` (and tokenizer).
// A missing fit or a bad profile becomes a section that says so, not a failed report.
SectionMaker cost_section_maker(const CostSectionOptions& o);

}  // namespace overhead::report
