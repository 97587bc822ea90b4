// The figures of one `overhead simulate` run (`--plots DIR`), as SVG: each stage's queue depth
// over the simulated span, and the latency percentiles (p50, p95, p99) of each stage's wait and
// service and of the request end to end, so that a person sees where the time and the backlog go
// without reading the JSON.
#pragma once

#include <vector>

#include "cost/simulator.hpp"
#include "report/figures.hpp"

namespace overhead::report {

// `title` heads both figures (the GPU, model and arrivals of the run).
std::vector<Figure> simulation_figures(const cost::SimResult& r, const std::string& title);

}  // namespace overhead::report
