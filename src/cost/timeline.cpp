#include "cost/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "cost/sim_statistics.hpp"
#include "util/line_reader.hpp"

namespace overhead::cost {
namespace {

constexpr const char* kHeader = "tokenizer,worker,seq,batch,boundary,tokens,start_us,last_us";

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream s(line);
  while (std::getline(s, field, ',')) out.push_back(field);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

std::int64_t integer(const std::string& text, const std::string& where, const char* field) {
  try {
    std::size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used != text.size()) throw std::invalid_argument("trailing");
    return v;
  } catch (const std::exception&) {
    throw CostError(where + ": field " + field + ": \"" + text + "\" is not an integer");
  }
}

}  // namespace

std::vector<TimelineItem> read_timeline(const std::string& path) {
  std::vector<TimelineItem> items;
  try {
    util::LineReader in(path);
    std::string line;
    if (!in.next(line) || line != kHeader) throw CostError(path + ":1: expected the header " + std::string(kHeader));
    while (in.next(line)) {
      if (line.empty()) continue;
      const std::string where = path + ":" + std::to_string(in.line_number());
      const auto f = split(line);
      if (f.size() != 8) throw CostError(where + ": expected 8 fields, got " + std::to_string(f.size()));
      TimelineItem t;
      t.tokenizer = f[0];
      t.worker = f[1];
      t.seq = integer(f[2], where, "seq");
      t.batch = integer(f[3], where, "batch");
      t.boundary = integer(f[4], where, "boundary") != 0;
      t.tokens = static_cast<double>(integer(f[5], where, "tokens"));
      t.start_us = integer(f[6], where, "start_us");
      t.last_us = integer(f[7], where, "last_us");
      if (t.tokens < 0) throw CostError(where + ": field tokens: negative");
      items.push_back(std::move(t));
    }
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const CostError*>(&e)) throw;
    throw CostError(e.what());
  }
  return items;
}

void write_timeline(const std::string& path, const std::vector<TimelineItem>& items) {
  std::ofstream out(path);
  if (!out) throw CostError(path + ": cannot write");
  out << kHeader << '\n';
  for (const auto& t : items)
    out << t.tokenizer << ',' << t.worker << ',' << t.seq << ',' << t.batch << ',' << (t.boundary ? 1 : 0) << ','
        << static_cast<long long>(t.tokens) << ',' << t.start_us << ',' << t.last_us << '\n';
  if (!out) throw CostError(path + ": write failed");
}

MeasuredRun measure(const std::vector<TimelineItem>& items) {
  MeasuredRun m;
  m.items = items.size();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  m.cycles_us.assign(items.size(), nan);
  m.turnover.assign(items.size(), false);
  if (items.empty()) return m;
  std::map<std::string, std::vector<std::size_t>> by_worker;
  std::map<std::pair<std::string, std::int64_t>, std::size_t> batch_sizes;
  std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = std::numeric_limits<std::int64_t>::min();
  for (std::size_t i = 0; i < items.size(); ++i) {
    by_worker[items[i].worker].push_back(i);
    ++batch_sizes[{items[i].worker, items[i].batch}];
    first = std::min(first, items[i].start_us);
    last = std::max({last, items[i].last_us, items[i].start_us});
  }
  for (const auto& [key, size] : batch_sizes) m.batch = std::max(m.batch, size);
  m.workers = by_worker.size();
  m.total_s = static_cast<double>(last - first) / 1e6;
  std::vector<double> valid;
  for (auto& [worker, order] : by_worker) {
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return items[a].seq < items[b].seq; });
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto& t = items[order[k]];
      const bool has_next = k + 1 < order.size();
      const std::int64_t end = has_next ? items[order[k + 1]].start_us : std::max(t.last_us, t.start_us);
      if (has_next && (items[order[k + 1]].boundary || items[order[k + 1]].batch != t.batch)) m.turnover[order[k]] = true;
      if (end <= t.start_us) continue;
      m.cycles_us[order[k]] = static_cast<double>(end - t.start_us);
      valid.push_back(m.cycles_us[order[k]]);
    }
  }
  m.cycle_us = summarize(valid);
  return m;
}

std::vector<TimelineItem> queue_order(std::vector<TimelineItem> items) {
  std::stable_sort(items.begin(), items.end(), [](const TimelineItem& a, const TimelineItem& b) {
    if (a.start_us != b.start_us) return a.start_us < b.start_us;
    if (a.worker != b.worker) return a.worker < b.worker;
    return a.seq < b.seq;
  });
  return items;
}

}  // namespace overhead::cost
