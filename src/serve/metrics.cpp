#include "serve/metrics.hpp"

#include <algorithm>
#include <cstdio>

namespace overhead::serve {
namespace {

constexpr std::array<std::string_view, 8> kRoutes = {"/v1/tokenize", "/v1/detokenize", "/v1/render", "/v1/models",
                                                     "/healthz",     "/readyz",         "/metrics",   "/v1/chat/completions"};

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::string_view Metrics::route_label(std::string_view path) {
  const auto it = std::find(kRoutes.begin(), kRoutes.end(), path);
  return it == kRoutes.end() ? std::string_view("other") : *it;
}

bool Metrics::is_timed(std::string_view route) { return route.substr(0, 4) == "/v1/"; }

void Metrics::record(std::string_view route, int status, double seconds) {
  std::lock_guard lock(mutex_);
  ++requests_[{std::string(route), status}];
  if (seconds < 0 || !is_timed(route)) return;
  Histogram& h = latency_[std::string(route)];
  const auto bucket = std::lower_bound(kBuckets.begin(), kBuckets.end(), seconds) - kBuckets.begin();
  ++h.counts[static_cast<std::size_t>(bucket)];
  h.sum += seconds;
  ++h.count;
}

std::string Metrics::exposition() const {
  std::lock_guard lock(mutex_);
  std::string out;
  out += "# HELP overhead_http_requests_total HTTP requests answered, by route and status.\n";
  out += "# TYPE overhead_http_requests_total counter\n";
  for (const auto& [key, n] : requests_)
    out += "overhead_http_requests_total{route=\"" + key.first + "\",status=\"" + std::to_string(key.second) + "\"} " +
           std::to_string(n) + "\n";
  out += "# HELP overhead_http_request_duration_seconds Time from routing to the answer written, by route.\n";
  out += "# TYPE overhead_http_request_duration_seconds histogram\n";
  for (const auto& [route, h] : latency_) {
    const std::string name = "overhead_http_request_duration_seconds";
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += h.counts[i];
      out += name + "_bucket{route=\"" + route + "\",le=\"" + number(kBuckets[i]) + "\"} " + std::to_string(cumulative) + "\n";
    }
    out += name + "_bucket{route=\"" + route + "\",le=\"+Inf\"} " + std::to_string(h.count) + "\n";
    out += name + "_sum{route=\"" + route + "\"} " + number(h.sum) + "\n";
    out += name + "_count{route=\"" + route + "\"} " + std::to_string(h.count) + "\n";
  }
  out += "# HELP overhead_http_requests_in_flight Requests admitted and not yet answered.\n";
  out += "# TYPE overhead_http_requests_in_flight gauge\n";
  out += "overhead_http_requests_in_flight " + std::to_string(in_flight()) + "\n";
  return out;
}

}  // namespace overhead::serve
