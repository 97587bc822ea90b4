// GET /metrics: the exposition parses as Prometheus text, and its counters, histograms and
// in-flight gauge follow the requests the test made.
#include <httplib.h>

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "serve/metrics.hpp"
#include "serve_fixture.hpp"

namespace {

using MetricsTest = overhead::serve::testing::ServeTest;

// Every sample line, keyed by its name and labels as written ("name{a=\"b\"}"), checked against
// the text format: a TYPE line names each family before its samples.
std::map<std::string, double> parse_exposition(const std::string& text) {
  static const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? (\S+)$)");
  static const std::regex type_line(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram)$)");
  std::map<std::string, double> out;
  std::set<std::string> families;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (std::regex_match(line, m, type_line)) {
      families.insert(m[1]);
      continue;
    }
    EXPECT_TRUE(std::regex_match(line, m, sample)) << "not a sample line: " << line;
    if (m.empty()) continue;
    std::string family = m[1];
    for (const char* suffix : {"_bucket", "_sum", "_count"})
      if (!families.count(family) && family.size() > std::string(suffix).size() &&
          family.compare(family.size() - std::string(suffix).size(), std::string::npos, suffix) == 0)
        family.resize(family.size() - std::string(suffix).size());
    EXPECT_TRUE(families.count(family)) << "no TYPE line before " << line;
    out[std::string(m[1]) + std::string(m[2])] = std::stod(m[4]);
  }
  return out;
}

std::string requests(const std::string& route, int status) {
  return "overhead_http_requests_total{route=\"" + route + "\",status=\"" + std::to_string(status) + "\"}";
}

TEST_F(MetricsTest, CountersAndHistogramsFollowTheRequests) {
  start({});
  // httplib records a request after its answer is on the wire; over one kept-alive connection the
  // same server thread records it before reading the next request, so a scrape sees every earlier one.
  client_->set_keep_alive(true);
  for (int i = 0; i < 3; ++i) post("/v1/tokenize", R"({"model":"phi-4","prompt":"hello there"})", 200);
  post("/v1/tokenize", R"({"prompt":"no model"})", 400);
  post("/v1/render", R"({"model":"phi-4","messages":[{"role":"user","content":"hi"}]})", 200);
  post("/v1/render", R"({"model":"phi-4"})", 400);
  EXPECT_EQ(client_->Get("/no/such/path")->status, 404);
  EXPECT_EQ(client_->Get("/healthz")->status, 200);

  auto r = client_->Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type").rfind("text/plain", 0), 0u);
  auto m = parse_exposition(r->body);
  EXPECT_EQ(m[requests("/v1/tokenize", 200)], 3);
  EXPECT_EQ(m[requests("/v1/tokenize", 400)], 1);
  EXPECT_EQ(m[requests("/v1/render", 200)], 1);
  EXPECT_EQ(m[requests("/v1/render", 400)], 1);
  EXPECT_EQ(m[requests("other", 404)], 1);
  EXPECT_EQ(m[requests("/healthz", 200)], 1);
  EXPECT_EQ(m["overhead_http_requests_in_flight"], 0);

  for (const auto& [route, n] : {std::pair<std::string, double>{"/v1/tokenize", 4}, {"/v1/render", 2}}) {
    const std::string h = "overhead_http_request_duration_seconds";
    EXPECT_EQ(m[h + "_count{route=\"" + route + "\"}"], n) << route;
    EXPECT_EQ(m[h + "_bucket{route=\"" + route + "\",le=\"+Inf\"}"], n) << route;
    EXPECT_GT(m[h + "_sum{route=\"" + route + "\"}"], 0) << route;
    // Buckets are cumulative: never decreasing towards +Inf.
    double previous = 0;
    for (const double le : overhead::serve::Metrics::kBuckets) {
      char bound[32];
      std::snprintf(bound, sizeof bound, "%.9g", le);
      const std::string key = h + "_bucket{route=\"" + route + "\",le=\"" + bound + "\"}";
      ASSERT_TRUE(m.count(key)) << key;
      EXPECT_GE(m[key], previous) << key;
      previous = m[key];
    }
    EXPECT_LE(previous, n);
  }
  // The scrape itself is counted once it has been answered, and health checks are not timed.
  m = parse_exposition(client_->Get("/metrics")->body);
  EXPECT_EQ(m[requests("/metrics", 200)], 1);
  EXPECT_EQ(m.count("overhead_http_request_duration_seconds_count{route=\"/healthz\"}"), 0u);
}

}  // namespace
