// A measured run as the simulator needs it: one row per item with its tokenizer, worker, place
// in its worker's order and batch, token count, and two times (when the worker took it up, and
// its latest stamp). Read from and written to a compact CSV (gzipped when the name ends in .gz)
// so that measured runs can be kept as small fixtures; built from a store's records by the CLI.
//
// The measured figures follow the analysis' definitions (report/item_table.hpp): per worker in
// `seq` order, an item's cycle runs from its start to the next item's start on the same worker,
// the last item's to its own latest stamp; the total runs from the first start to the latest
// stamp of the run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost/cost_model.hpp"

namespace overhead::cost {

struct TimelineItem {
  std::string tokenizer;
  std::string worker;
  std::int64_t seq = 0, batch = 0;
  bool boundary = false;           // first item of its input batch
  double tokens = 0;               // input tokens (token_count)
  std::int64_t start_us = 0;       // `received`, from the run's first start
  std::int64_t last_us = 0;        // the item's latest stamp, same origin
};

struct MeasuredRun {
  std::size_t items = 0, workers = 0;
  std::size_t batch = 0;           // the largest input batch seen
  double total_s = 0;              // first start to the latest stamp
  Percentiles cycle_us;            // per-item cycle times
  std::vector<double> cycles_us;   // in the timeline's order; NaN for an unmeasurable item
  std::vector<bool> turnover;      // the item's cycle spans a batch turnover
};

// Throws CostError naming the file and line on a malformed row.
std::vector<TimelineItem> read_timeline(const std::string& path);
void write_timeline(const std::string& path, const std::vector<TimelineItem>& items);

MeasuredRun measure(const std::vector<TimelineItem>& items);

// The items in the order they left the input queue: by start time (ties by worker and seq), which
// for one worker is the queue's order and for several is the order in which batches were taken.
std::vector<TimelineItem> queue_order(std::vector<TimelineItem> items);

}  // namespace overhead::cost
