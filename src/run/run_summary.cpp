#include "run/run_summary.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "ports/backend_url.hpp"
#include "run/cases.hpp"
#include "pipe/dead_letter.hpp"
#include "report/item_table.hpp"

namespace overhead::run {

using pipe::DeadLetterKind;
using pipe::kind_name;
using ports::Record;
using ports::redact_url;

namespace {

struct Mean {
  double sum = 0;
  std::size_t n = 0;
  void add(double v) {
    if (std::isnan(v)) return;
    sum += v;
    ++n;
  }
  double value() const { return n ? sum / double(n) : 0; }
};

}  // namespace

StageBreakdown breakdown(std::span<const Record> records) {
  StageBreakdown b;
  b.records = records.size();
  if (records.empty()) return b;
  const report::ItemTable t = report::build_item_table(records);
  Mean render, encode, publish, del, gap_b, gap_o, bet_b, bet_o;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto& st = t.stage_us;
    render.add(st[report::kRender][i]);
    encode.add(st[report::kEncode][i]);
    if (records[i].publish_acked > 0) publish.add(st[report::kPublish][i]);
    if (records[i].input_deleted > 0) del.add(st[report::kDelete][i]);
    const double between = st[report::kRecord][i] + st[report::kPublish][i] + st[report::kDelete][i] +
                           st[report::kReceiveWait][i];
    (t.turnover[i] ? gap_b : gap_o).add(t.cycle_us[i]);
    (t.turnover[i] ? bet_b : bet_o).add(between);
    b.boundary_items += t.batch_boundary[i];
  }
  b.render_us = render.value();
  b.encode_us = encode.value();
  b.publish_us = publish.value();
  b.delete_us = del.value();
  b.gap_boundary_us = gap_b.value();
  b.gap_other_us = gap_o.value();
  b.between_boundary_us = bet_b.value();
  b.between_other_us = bet_o.value();
  return b;
}

std::uint64_t CaseResult::failed() const {
  std::uint64_t n = 0;
  for (const auto& [kind, count] : failures) n += count;
  return n;
}

std::uint64_t CaseResult::bad_input_lines() const {
  // The kinds with which reading the data file refuses a line (load_source_records): such a line
  // never became an item, so it is not an item that failed.
  std::uint64_t n = 0;
  for (const DeadLetterKind kind : {DeadLetterKind::malformed_json, DeadLetterKind::missing_field,
                                    DeadLetterKind::bad_prompt, DeadLetterKind::duplicate_id})
    if (const auto it = failures.find(kind_name(kind)); it != failures.end()) n += it->second;
  return n;
}

nlohmann::json to_json(const CaseResult& r) {
  nlohmann::json j;
  j["case"] = r.number;
  j["steps"] = r.steps;
  j["experiment"] = r.experiment;
  j["total_s"] = double(r.total_ns) / 1e9;
  j["enqueue_s"] = double(r.enqueue_ns) / 1e9;
  j["drain_s"] = double(r.drain_ns) / 1e9;
  j["workers"] = r.workers;
  j["items"] = r.items;
  j["ok"] = r.ok;
  j["stored"] = r.stored;
  j["us_per_item"] = r.us_per_item();
  j["worker_cpu_us_per_item"] = r.per_item(r.worker_cpu_ns);
  j["process_cpu_us_per_item"] = r.per_item(r.process_cpu_ns);
  j["failed"] = r.failed();
  j["bad_input_lines"] = r.bad_input_lines();
  j["failed_items"] = r.failed_items();
  j["failures"] = r.failures;
  j["delete_failures"] = r.delete_failures;
  j["dead_letter_file"] = r.dead_letter_file;
  if (!r.artifact.empty()) j["csv"] = r.artifact;
  j["publisher"] = {{"published", r.publisher.published}, {"retries", r.publisher.retries},
                    {"failed", r.publisher.failed}, {"max_outstanding", r.publisher.max_outstanding}};
  j["stages_us"] = {{"render", r.stages.render_us},           {"encode", r.stages.encode_us},
                    {"publish", r.stages.publish_us},         {"delete_after_ack", r.stages.delete_us},
                    {"gap_boundary", r.stages.gap_boundary_us}, {"gap_other", r.stages.gap_other_us},
                    {"between_boundary", r.stages.between_boundary_us}, {"between_other", r.stages.between_other_us},
                    {"boundary_items", r.stages.boundary_items}};
  return j;
}

std::string format_case_table(const std::vector<CaseResult>& results) {
  std::ostringstream out;
  char line[512];
  // At most 120 columns: the steps lose the spaces around their arrows.
  std::snprintf(line, sizeof line, "%-4s %-56s %8s %7s %8s %6s %6s %9s %8s\n", "case", "steps", "total s", "items",
                "us/item", "bad in", "failed", "cpu us/it", "wkr cpu");
  out << line;
  for (const auto& r : results) {
    std::string steps = r.steps;
    for (std::size_t at; (at = steps.find(" > ")) != std::string::npos;) steps.replace(at, 3, ">");
    std::snprintf(line, sizeof line, "%-4d %-56s %8.3f %7llu %8.2f %6llu %6llu %9.2f %8.2f\n", r.number, steps.c_str(),
                  double(r.total_ns) / 1e9, static_cast<unsigned long long>(r.items), r.us_per_item(),
                  static_cast<unsigned long long>(r.bad_input_lines()), static_cast<unsigned long long>(r.failed_items()),
                  r.per_item(r.process_cpu_ns), r.per_item(r.worker_cpu_ns));
    out << line;
  }
  out << "(bad in: data lines refused before they became items; failed: items that did not become a record.\n"
         " cpu us/it: CPU time of the whole process per item, all threads; wkr cpu: of the worker threads, us.\n"
         " On a shared machine wall time also measures the neighbours; CPU time measures this run.)\n";
  out << "\nstage breakdown (mean us per item, as the report defines them; gap = an item's cycle, its start to the\n"
         "next item's start on the same worker; bnd = the next item starts a new input batch; between = the cycle\n"
         "less the item's own render and encode: recording, publish call, delete, wait for the next item)\n";
  std::snprintf(line, sizeof line, "%-4s %8s %8s %8s %8s %9s %9s %9s %9s %9s %9s\n", "case", "render", "encode",
                "publish", "delete", "gap bnd", "gap oth", "betw bnd", "betw oth", "enqueue s", "drain s");
  out << line;
  for (const auto& r : results) {
    std::snprintf(line, sizeof line, "%-4d %8.2f %8.2f %8.2f %8.2f %9.2f %9.2f %9.2f %9.2f %9.3f %9.3f\n", r.number,
                  r.stages.render_us, r.stages.encode_us, r.stages.publish_us, r.stages.delete_us,
                  r.stages.gap_boundary_us, r.stages.gap_other_us, r.stages.between_boundary_us,
                  r.stages.between_other_us, double(r.enqueue_ns) / 1e9, double(r.drain_ns) / 1e9);
    out << line;
  }
  return out.str();
}

nlohmann::json run_summary_json(const RunConfig& config, const std::string& store_url,
                                const std::vector<CaseResult>& results) {
  nlohmann::json summary;
  summary["data"] = config.data;
  summary["tokenizers"] = config.tokenizers;
  summary["experiment"] = config.worker.experiment;
  summary["run_id"] = config.worker.run_id;
  summary["decoder"] = config.worker.decoder ? config.worker.decoder->describe() : std::string("none");
  summary["store"] = store_url;
  summary["queue"] = redact_url(config.queue_url);
  summary["log_queue"] = redact_url(config.log_queue_url);
  summary["batch"] = config.worker.batch;
  summary["publishers"] = config.worker.publishers;
  summary["prefetch"] = config.worker.prefetch;
  summary["limit"] = config.limit;
  summary["cases"] = nlohmann::json::array();
  std::map<std::string, std::size_t> failures;
  for (const auto& r : results) {
    summary["cases"].push_back(to_json(r));
    for (const auto& [k, v] : r.failures) failures[k] += v;
  }
  summary["failures"] = failures;
  return summary;
}

}  // namespace overhead::run
