// `overhead status`: what an operator watches on a shared queue — messages waiting, in flight,
// in the dead-letter queue, the oldest message's age and the consumers — as a table for people
// (optionally refreshed every few seconds) or JSON for scripts and alerts.
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "backends/open.hpp"
#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "report/table.hpp"

namespace overhead::cli {

namespace {

struct StatusOptions {
  std::vector<std::string> queues;
  bool json = false;
  double watch_s = 0;  // 0 = print once
  int times = 0;       // with --watch: how many tables (0 = until interrupted)
};

struct QueueRow {
  std::string url;  // redacted
  ports::QueueStatus status;
};

std::string age_text(const std::optional<std::chrono::milliseconds>& age) {
  if (!age) return "-";
  const double s = static_cast<double>(age->count()) / 1000.0;
  if (s < 60) return report::fixed(s, 1) + " s";
  if (s < 3600) return report::fixed(s / 60, 1) + " min";
  return report::fixed(s / 3600, 1) + " h";
}

void print_table(const std::vector<QueueRow>& rows) {
  report::Table t;
  t.header = {"queue", "waiting", "in flight", "dead letters", "oldest", "consumers"};
  for (const auto& r : rows) {
    const auto& s = r.status;
    t.rows.push_back({r.url, report::count(static_cast<double>(s.counts.visible)),
                      report::count(static_cast<double>(s.counts.in_flight)),
                      s.dead_letters ? report::count(static_cast<double>(s.dead_letters->visible + s.dead_letters->in_flight))
                                     : "no DLQ",
                      age_text(s.oldest_age),
                      s.consumers ? report::count(static_cast<double>(*s.consumers)) : "-"});
  }
  std::printf("%s", report::to_markdown(t).c_str());
  std::fflush(stdout);
}

nlohmann::json to_json(const std::vector<QueueRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    const auto& s = r.status;
    nlohmann::json j = {{"queue", r.url}, {"waiting", s.counts.visible}, {"in_flight", s.counts.in_flight}};
    j["dead_letters"] = s.dead_letters ? nlohmann::json(s.dead_letters->visible + s.dead_letters->in_flight) : nullptr;
    j["oldest_age_ms"] = s.oldest_age ? nlohmann::json(s.oldest_age->count()) : nullptr;
    j["consumers"] = s.consumers ? nlohmann::json(*s.consumers) : nullptr;
    out.push_back(std::move(j));
  }
  return out;
}

int run_status(const StatusOptions& o) {
  std::vector<std::shared_ptr<ports::Queue>> queues;
  try {
    for (const auto& url : o.queues) queues.push_back(backends::open_queue(url, {}, backends::Access::existing));
  } catch (const std::exception& e) {
    // open_queue's errors show the URL redacted; the URL as typed is not repeated here.
    std::fprintf(stderr, "overhead status: %s\n", e.what());
    return 1;
  }
  for (int shown = 0;;) {
    std::vector<QueueRow> rows;
    try {
      for (const auto& q : queues) rows.push_back({q->url(), q->status()});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "overhead status: %s\n", e.what());
      return 1;
    }
    if (o.json) std::printf("%s\n", to_json(rows).dump(1).c_str());
    else print_table(rows);
    ++shown;
    if (o.watch_s <= 0 || (o.times > 0 && shown >= o.times)) return 0;
    std::this_thread::sleep_for(std::chrono::duration<double>(o.watch_s));
    if (!o.json) std::printf("\n");
  }
}

}  // namespace

void add_status_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<StatusOptions>();
  CLI::App* cmd = app.add_subcommand("status", "Depth, in flight, dead letters and oldest age of queues");
  cmd->add_option("--queue", o->queues, "Queue URL (repeat for several; e.g. the input and the log queue)")
      ->required();
  cmd->add_flag("--json", o->json, "JSON output (an array, one object per queue)");
  cmd->add_option("--watch", o->watch_s, "Print again every SECONDS until interrupted")
      ->check(number_in(0.1, 86400));
  cmd->add_option("--times", o->times, "With --watch: stop after this many prints")->check(integer_in(1, 1000000));
  cmd->callback([o, &exit_code] { exit_code = run_status(*o); });
}

}  // namespace overhead::cli
