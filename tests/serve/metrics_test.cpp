// GET /metrics: the exposition parses as Prometheus text, and its counters, histograms and
// in-flight gauge follow the requests the test made.
#include <httplib.h>

#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "serve/metrics.hpp"
#include "serve_fixture.hpp"

namespace {

using MetricsTest = overhead::serve::testing::ServeTest;

// The text format's pieces, checked by hand: std::regex trips GCC 12's -Wmaybe-uninitialized
// under the sanitizer build, and the grammar is small.
bool is_name_char(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

// Reads a metric name at `pos`; returns its length (0 when there is none).
size_t name_length(const std::string& line, size_t pos) {
  size_t n = 0;
  while (pos + n < line.size() && is_name_char(line[pos + n], n == 0)) ++n;
  return n;
}

// Reads `{a="b",c="d"}` at `pos`; returns its length, or npos when malformed.
size_t labels_length(const std::string& line, size_t pos) {
  if (pos >= line.size() || line[pos] != '{') return 0;
  size_t i = pos + 1;
  for (;;) {
    size_t key = i;
    while (i < line.size() && (std::islower(static_cast<unsigned char>(line[i])) || line[i] == '_')) ++i;
    if (i == key || line.compare(i, 2, "=\"") != 0) return std::string::npos;
    i = line.find('"', i + 2);
    if (i == std::string::npos) return std::string::npos;
    ++i;
    if (i < line.size() && line[i] == ',') { ++i; continue; }
    if (i < line.size() && line[i] == '}') return i + 1 - pos;
    return std::string::npos;
  }
}

// Every sample line, keyed by its name and labels as written ("name{a=\"b\"}"), checked against
// the text format: a TYPE line names each family before its samples.
std::map<std::string, double> parse_exposition(const std::string& text) {
  std::map<std::string, double> out;
  std::set<std::string> families;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      size_t n = name_length(line, 7);
      std::string kind = n ? line.substr(7 + n) : "";
      EXPECT_TRUE(kind == " counter" || kind == " gauge" || kind == " histogram") << "bad TYPE line: " << line;
      families.insert(line.substr(7, n));
      continue;
    }
    size_t n = name_length(line, 0);
    size_t l = n ? labels_length(line, n) : std::string::npos;
    bool ok = n > 0 && l != std::string::npos && n + l < line.size() && line[n + l] == ' ' &&
              n + l + 1 < line.size() && line.find(' ', n + l + 1) == std::string::npos;
    EXPECT_TRUE(ok) << "not a sample line: " << line;
    if (!ok) continue;
    std::string family = line.substr(0, n);
    for (const char* suffix : {"_bucket", "_sum", "_count"})
      if (!families.count(family) && family.size() > std::string(suffix).size() &&
          family.compare(family.size() - std::string(suffix).size(), std::string::npos, suffix) == 0)
        family.resize(family.size() - std::string(suffix).size());
    EXPECT_TRUE(families.count(family)) << "no TYPE line before " << line;
    out[line.substr(0, n + l)] = std::stod(line.substr(n + l + 1));
  }
  return out;
}

std::string requests(const std::string& route, int status) {
  return "overhead_http_requests_total{route=\"" + route + "\",status=\"" + std::to_string(status) + "\"}";
}

TEST_F(MetricsTest, CountersAndHistogramsFollowTheRequests) {
  start({});
  // The server records a request once its answer is on the wire, and over one kept-alive
  // connection before it reads the next request, so a scrape sees every earlier one.
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
