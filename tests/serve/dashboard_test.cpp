// The dashboard's documents over loopback HTTP: GET / and /dashboard give the page with the ids its
// script fills, the style sheet and the script come with their types, every document carries a
// Content-Security-Policy with nothing inline allowed (and the page needs nothing inline), and
// with a bearer token set the page still loads while /metrics keeps asking for the token.
// tests/serve/dashboard_browser_test.mjs checks in Chromium that the figures fill and follow.
#include <httplib.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "serve/server.hpp"
#include "serve_fixture.hpp"

namespace {

using overhead::serve::ServerOptions;
using DashboardTest = overhead::serve::testing::ServeTest;

// The tags of an HTML text, each as its inside (between '<' and '>').
std::vector<std::string> tags(const std::string& html) {
  std::vector<std::string> out;
  for (std::size_t i = html.find('<'); i != std::string::npos; i = html.find('<', i + 1)) {
    const std::size_t end = html.find('>', i);
    if (end == std::string::npos) break;
    out.push_back(html.substr(i + 1, end - i - 1));
  }
  return out;
}

// The attribute names of one tag (the words before '=' or on their own), lower-cased.
std::vector<std::string> attribute_names(const std::string& tag) {
  std::vector<std::string> out;
  std::size_t i = tag.find_first_of(" \t\n");
  while (i != std::string::npos && i < tag.size()) {
    while (i < tag.size() && std::isspace(static_cast<unsigned char>(tag[i]))) ++i;
    std::string name;
    while (i < tag.size() && !std::isspace(static_cast<unsigned char>(tag[i])) && tag[i] != '=')
      name += static_cast<char>(std::tolower(static_cast<unsigned char>(tag[i++])));
    if (!name.empty() && name != "/") out.push_back(name);
    if (i < tag.size() && tag[i] == '=') {
      ++i;
      if (i < tag.size() && (tag[i] == '"' || tag[i] == '\'')) {
        const std::size_t close = tag.find(tag[i], i + 1);
        i = close == std::string::npos ? tag.size() : close + 1;
      } else {
        while (i < tag.size() && !std::isspace(static_cast<unsigned char>(tag[i]))) ++i;
      }
    }
  }
  return out;
}

void expect_policy(const httplib::Result& r, const std::string& path) {
  ASSERT_TRUE(r) << path;
  const std::string csp = r->get_header_value("Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << path << ": " << csp;
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << path << ": " << csp;
  EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos) << path << ": " << csp;
  EXPECT_EQ(csp.find("unsafe"), std::string::npos) << path << ": " << csp;
  EXPECT_EQ(r->get_header_value("X-Content-Type-Options"), "nosniff") << path;
}

TEST_F(DashboardTest, PageAtRootAndDashboardWithTheIdsItsScriptFills) {
  start({});
  for (const char* path : {"/", "/dashboard"}) {
    auto r = client_->Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_EQ(r->get_header_value("Content-Type").rfind("text/html", 0), 0u) << path;
    expect_policy(r, path);
    for (const char* id : {"status", "token-form", "token", "throughput", "throughput-window", "requests-total", "in-flight",
                           "awaiting-reply", "queue-depth", "queue-taken", "sparkline", "spark-line", "stages-body",
                           "routes-body", "errors-body", "updated"})
      EXPECT_NE(r->body.find(std::string("id=\"") + id + "\""), std::string::npos) << path << " lacks #" << id;
    EXPECT_NE(r->body.find("src=\"/dashboard.js\""), std::string::npos);
    EXPECT_NE(r->body.find("href=\"/dashboard.css\""), std::string::npos);
  }
  auto css = client_->Get("/dashboard.css");
  ASSERT_TRUE(css);
  EXPECT_EQ(css->status, 200);
  EXPECT_EQ(css->get_header_value("Content-Type").rfind("text/css", 0), 0u);
  expect_policy(css, "/dashboard.css");
  auto js = client_->Get("/dashboard.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
  EXPECT_EQ(js->get_header_value("Content-Type").rfind("text/javascript", 0), 0u);
  expect_policy(js, "/dashboard.js");
  EXPECT_NE(js->body.find("'/metrics'"), std::string::npos);
  // The routes are exact: a near name is not the script.
  EXPECT_EQ(client_->Get("/dashboardxjs")->status, 404);
  // The browser's icon request is no error in the page's error table.
  EXPECT_EQ(client_->Get("/favicon.ico")->status, 204);
}

// The policy allows no inline script or style, so the page must need none: every <script> has a
// src and no body, and no tag has a style or on* attribute.
TEST_F(DashboardTest, PageNeedsNothingThePolicyRefuses) {
  start({});
  auto r = client_->Get("/");
  ASSERT_TRUE(r);
  const std::string& html = r->body;
  int scripts = 0;
  for (const std::string& tag : tags(html)) {
    const auto names = attribute_names(tag);
    for (const std::string& name : names) {
      EXPECT_NE(name, "style") << "<" << tag << ">";
      EXPECT_NE(name.rfind("on", 0), 0u) << "<" << tag << ">";
    }
    if (tag.rfind("script", 0) == 0) {
      ++scripts;
      EXPECT_NE(std::find(names.begin(), names.end(), "src"), names.end()) << "<" << tag << ">";
    }
  }
  EXPECT_EQ(scripts, 1);
  EXPECT_NE(html.find("<script src=\"/dashboard.js\" defer></script>"), std::string::npos);
  EXPECT_EQ(html.find("<style"), std::string::npos);
  EXPECT_EQ(html.find("javascript:"), std::string::npos);
}

// A browser cannot attach a token to a page it navigates to, so the documents are open; the data
// is not.
TEST_F(DashboardTest, WithAuthThePageLoadsAndMetricsStillNeedTheToken) {
  ServerOptions o;
  o.auth_token = "s3cret-token";
  start(o);
  for (const char* path : {"/", "/dashboard", "/dashboard.css", "/dashboard.js", "/favicon.ico"}) {
    auto r = client_->Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, std::string(path) == "/favicon.ico" ? 204 : 200) << path;
    EXPECT_EQ(r->body.find("s3cret"), std::string::npos) << path;
  }
  auto denied = client_->Get("/metrics");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 401);
  client_->set_bearer_token_auth("s3cret-token");
  auto allowed = client_->Get("/metrics");
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200);
  EXPECT_NE(allowed->body.find("overhead_http_requests_in_flight 0"), std::string::npos);
}

}  // namespace
