// The gateway's own counters for GET /metrics: requests answered by route and status, latency
// histograms per route, the in-flight gauge and the requests refused for special-token text,
// written out in Prometheus' text format.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace overhead::serve {

class Metrics {
 public:
  // Upper bounds (seconds) of the latency buckets; +Inf is implied.
  static constexpr std::array<double, 13> kBuckets = {50e-6, 100e-6, 250e-6, 500e-6, 1e-3,  2.5e-3, 5e-3,
                                                      10e-3, 25e-3,  50e-3,  100e-3, 250e-3, 1.0};

  // Whether a route's latency goes into a histogram (the /v1 routes that do work).
  [[nodiscard]] static bool is_timed(std::string_view route);

  // One answered request under its route's label (registered with the route, http/routes.hpp;
  // "other" for a path no route has, so a client cannot grow the label set by asking for made-up
  // paths); `seconds` < 0 when no start time was taken (a request cut before its headers were read).
  void record(std::string_view route, int status, double seconds);

  // One pipeline stage of one request (queue, render, encode, publish, total); `seconds` < 0 is
  // skipped (a stamp not taken).
  void record_stage(std::string_view stage, double seconds);

  // A request refused for special-token text in its messages (special_tokens_guard.hpp).
  void count_special_token_refusal() { special_token_refusals_.fetch_add(1, std::memory_order_relaxed); }

  // One answer whose engine said how many prompt tokens it read (Record::engine_prompt_tokens),
  // under the item's tokenizer (a name the gateway serves: a bounded label set); `mismatch`: not
  // the number sent, so the engine's tokenizer is not ours.
  void count_engine_prompt(const std::string& tokenizer, bool mismatch);

  // In-flight admission: counts the request and returns the new number in flight.
  std::int64_t enter() { return in_flight_.fetch_add(1, std::memory_order_relaxed) + 1; }
  void leave() { in_flight_.fetch_sub(1, std::memory_order_relaxed); }
  [[nodiscard]] std::int64_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }

  // The exposition text (text/plain; version=0.0.4).
  [[nodiscard]] std::string exposition() const;

 private:
  struct Histogram {
    std::array<std::uint64_t, kBuckets.size() + 1> counts{};  // last: above every bound
    double sum = 0;
    std::uint64_t count = 0;
  };
  static void append_histogram(std::string& out, const std::string& name, const char* label, const std::string& value,
                               const Histogram& h);
  // One lock for all maps: an update is a few increments, far below the cost of the request it
  // describes, and one lock keeps a scrape consistent (counts and histograms from the same instant).
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
  std::map<std::string, Histogram> stages_;
  struct PromptCheck {
    std::uint64_t checked = 0, mismatched = 0;
  };
  std::map<std::string, PromptCheck> engine_prompts_;  // by tokenizer
  std::atomic<std::int64_t> in_flight_{0};
  std::atomic<std::uint64_t> special_token_refusals_{0};
};

}  // namespace overhead::serve
