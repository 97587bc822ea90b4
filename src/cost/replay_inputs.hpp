// Glue between a measured run (cost/timeline.hpp) and the closed-batch simulator: the items of a
// run in queue order with the fit of their tokenizer, and the spread of a fitted run (its measured
// cycles over what its own fit gives them), which lets the simulator draw E from the fitted run's
// distribution rather than use the fitted mean alone.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cost/closed_batch.hpp"
#include "cost/timeline.hpp"

namespace overhead::cost {

using TokenizerFits = std::vector<std::pair<std::string, EBatch>>;

struct ReplayItems {
  std::vector<ClosedBatchItem> items;  // queue order
  std::vector<EBatch> fits;
};

// Throws CostError naming the tokenizer when a run's item has no fit.
ReplayItems replay_items(const std::vector<TimelineItem>& run, const TokenizerFits& fits);

struct SpreadPools {
  EmpiricalSpread plain, turnover;
};

// The spread of every measurable item of `fitted_run` around `fits` (its own fit), split by
// whether the item's cycle spans a batch turnover.
SpreadPools spread_pools(const std::vector<TimelineItem>& fitted_run, const TokenizerFits& fits);

}  // namespace overhead::cost
