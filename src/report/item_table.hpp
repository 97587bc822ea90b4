// The analysis' view of the records: one row per record, in columns, with each item's place on
// its worker's timeline worked out (cycle time, stage times, batch turnover).
//
// Definitions (the report repeats them):
// - Items are ordered per worker, i.e. per (experiment, case, worker), by `seq`.
// - An item starts at its `received` stamp (the worker has it in hand). Its cycle time runs to the
//   next item's start on the same worker; the last item of a worker ends at its own latest stamp
//   (input_deleted, else publish_acked, else encode_end, ...), since no next start exists.
// - Stage times split the cycle along the stamp chain received -> render_start ("wait") ->
//   render_end ("render") -> encode_end ("encode") -> publish_start ("record") -> publish_acked
//   ("publish") -> input_deleted ("delete"); the rest of the cycle up to the next start is
//   "receive wait" (getting the next item in hand, which for a batch turnover includes the queue's
//   receive round trip). A stamp of 0 (stage not taken) gives that stage 0. A stage still running
//   when the next item starts (an asynchronous publish, a batch delete) counts only up to that
//   start: the worker had moved on. So the stages always add up to the cycle exactly.
// - Service time = cycle time minus receive wait.
// - Turnover: item i's cycle spans a batch turnover when the next item on its worker belongs to a
//   new input batch (its batch_boundary flag, or a different batch index). That is the item whose
//   cycle carries the receive/delete round trip, the 1[B] of the refined model.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ports/record.hpp"

namespace overhead::report {

enum Stage : std::size_t { kWait, kRender, kEncode, kRecord, kPublish, kDelete, kReceiveWait, kStageCount };
inline constexpr std::array<const char*, kStageCount> kStageNames = {"wait",    "render", "encode",      "record",
                                                                      "publish", "delete", "receive wait"};

// One (experiment, case) run: its wall time from the first start to the last stamp.
struct RunSpan {
  std::string experiment;
  int case_number = 0;
  double wall_us = 0;
  std::size_t items = 0;
  std::size_t workers = 0;
};

struct ItemTable {
  std::vector<std::string> tokenizer_names;  // index -> name, sorted
  std::vector<int> case_numbers;             // distinct, ascending

  // One entry per record, in the order given.
  std::vector<std::uint16_t> tokenizer;
  std::vector<int> case_number;
  std::vector<double> tokens;      // token_count
  std::vector<double> api_input;   // NaN when the record has none
  std::vector<double> cycle_us;    // NaN when not measurable (missing stamps)
  std::vector<double> service_us;  // cycle minus receive wait; NaN with the cycle
  std::array<std::vector<double>, kStageCount> stage_us;
  std::vector<unsigned char> turnover;        // the cycle spans a batch turnover
  std::vector<unsigned char> batch_boundary;  // the record's own flag
  std::vector<unsigned char> first_of_key;    // first record of its (tokenizer, id): token stats count it once

  std::vector<RunSpan> runs;
  std::size_t missing_stamps = 0;       // records without a received stamp
  std::size_t nonpositive_cycles = 0;   // next start not after this start (clock or stamping fault)
  std::size_t negative_tokens = 0;      // token_count < 0: treated as missing
  std::vector<std::string> warnings;

  std::size_t size() const { return tokens.size(); }
};

ItemTable build_item_table(std::span<const ports::Record> records);

}  // namespace overhead::report
