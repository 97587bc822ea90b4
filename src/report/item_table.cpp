#include "report/item_table.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace overhead::report {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

std::int64_t latest_stamp(const ports::Record& r) {
  return std::max({r.received, r.render_start, r.render_end, r.encode_end, r.publish_start, r.publish_acked,
                   r.input_deleted});
}

}  // namespace

ItemTable build_item_table(std::span<const ports::Record> records) {
  ItemTable t;
  const std::size_t n = records.size();

  // Tokenizer and case dictionaries.
  std::map<std::string, std::uint16_t> tokenizer_index;
  for (const auto& r : records) tokenizer_index.emplace(r.tokenizer, 0);
  for (auto& [name, index] : tokenizer_index) {
    index = static_cast<std::uint16_t>(t.tokenizer_names.size());
    t.tokenizer_names.push_back(name);
  }

  t.tokenizer.resize(n);
  t.case_number.resize(n);
  t.tokens.resize(n);
  t.api_input.resize(n);
  t.cycle_us.assign(n, kNan);
  t.service_us.assign(n, kNan);
  for (auto& s : t.stage_us) s.assign(n, kNan);
  t.turnover.assign(n, 0);
  t.batch_boundary.resize(n);
  t.first_of_key.assign(n, 0);

  std::vector<std::unordered_set<std::string_view>> seen_ids(t.tokenizer_names.size());
  std::map<int, int> cases;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = records[i];
    const std::uint16_t tok = tokenizer_index.at(r.tokenizer);
    t.tokenizer[i] = tok;
    t.case_number[i] = r.case_number;
    cases[r.case_number] = 1;
    if (r.token_count < 0) {
      ++t.negative_tokens;
      t.tokens[i] = kNan;
    } else {
      t.tokens[i] = static_cast<double>(r.token_count);
    }
    t.api_input[i] = r.api_input ? static_cast<double>(*r.api_input) : kNan;
    t.batch_boundary[i] = r.batch_boundary ? 1 : 0;
    t.first_of_key[i] = seen_ids[tok].insert(r.id).second ? 1 : 0;
  }
  for (const auto& [c, unused] : cases) t.case_numbers.push_back(c);

  // Workers: (experiment, case, run, worker) -> dense id. The run is part of it because runs
  // reuse worker names ("case2-worker-0") while their clocks and sequences start afresh: one
  // run's item is never the "next" of another's. Records arrive grouped by key, not by worker,
  // so a one-entry cache saves most lookups only when workers repeat; the map does the rest.
  std::unordered_map<std::string, std::uint32_t> worker_index;
  std::vector<std::uint32_t> worker_of(n);
  std::string key;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = records[i];
    key.clear();
    key.append(r.experiment).push_back('\x1f');
    key.append(std::to_string(r.case_number)).push_back('\x1f');
    key.append(r.run_id).push_back('\x1f');
    key.append(r.worker);
    const auto [it, inserted] = worker_index.try_emplace(key, static_cast<std::uint32_t>(worker_index.size()));
    worker_of[i] = it->second;
  }
  std::vector<std::uint32_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (worker_of[a] != worker_of[b]) return worker_of[a] < worker_of[b];
    return records[a].seq < records[b].seq;
  });

  // Runs: (experiment, case) -> span.
  struct RunAccumulator {
    std::int64_t first = std::numeric_limits<std::int64_t>::max();
    std::int64_t last = 0;
    std::size_t items = 0;
    std::unordered_set<std::uint32_t> workers;
  };
  std::map<std::pair<std::string, int>, RunAccumulator> runs;

  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t i = order[k];
    const auto& r = records[i];
    auto& run = runs[{r.experiment, r.case_number}];
    ++run.items;
    run.workers.insert(worker_of[i]);
    if (r.received <= 0) {
      ++t.missing_stamps;
      continue;
    }
    run.first = std::min(run.first, r.received);
    run.last = std::max(run.last, latest_stamp(r));

    const bool has_next = k + 1 < n && worker_of[order[k + 1]] == worker_of[i];
    const ports::Record* next = has_next ? &records[order[k + 1]] : nullptr;
    // The next start, or this item's own end when the worker has no next item with a stamp.
    const std::int64_t end = next && next->received > 0 ? next->received : latest_stamp(r);
    if (next && (next->batch_boundary || next->batch != r.batch)) t.turnover[i] = 1;
    if (end <= r.received) {
      if (next) ++t.nonpositive_cycles;
      if (!next && end == r.received) ++t.nonpositive_cycles;
      continue;
    }
    const std::array<std::int64_t, 6> chain = {r.render_start, r.render_end, r.encode_end,
                                               r.publish_start, r.publish_acked, r.input_deleted};
    std::int64_t cursor = r.received;
    for (std::size_t s = 0; s < chain.size(); ++s) {
      double duration = 0;
      if (chain[s] > 0) {
        const std::int64_t at = std::min(std::max(chain[s], cursor), end);
        duration = static_cast<double>(at - cursor) / 1000.0;
        cursor = at;
      }
      t.stage_us[s][i] = duration;
    }
    t.stage_us[kReceiveWait][i] = static_cast<double>(end - cursor) / 1000.0;
    t.cycle_us[i] = static_cast<double>(end - r.received) / 1000.0;
    t.service_us[i] = t.cycle_us[i] - t.stage_us[kReceiveWait][i];
  }

  for (const auto& [k, acc] : runs) {
    RunSpan span;
    span.experiment = k.first;
    span.case_number = k.second;
    span.items = acc.items;
    span.workers = acc.workers.size();
    span.wall_us = acc.last > acc.first ? static_cast<double>(acc.last - acc.first) / 1000.0 : kNan;
    t.runs.push_back(std::move(span));
  }
  if (t.missing_stamps > 0) {
    t.warnings.push_back(std::to_string(t.missing_stamps) +
                         " records have no received stamp: they count in the token statistics but have no cycle time");
  }
  if (t.nonpositive_cycles > 0) {
    t.warnings.push_back(std::to_string(t.nonpositive_cycles) +
                         " items start no earlier than the next item on their worker (duplicate or unordered stamps): "
                         "left out of the time analysis");
  }
  if (t.negative_tokens > 0) {
    t.warnings.push_back(std::to_string(t.negative_tokens) + " records have a negative token_count: treated as missing");
  }
  return t;
}

}  // namespace overhead::report
