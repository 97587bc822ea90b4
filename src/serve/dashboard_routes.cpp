#include "serve/dashboard_routes.hpp"

#include <httplib.h>

#include <string>

#include "serve/dashboard_page.hpp"

namespace overhead::serve {
namespace {

// Nothing inline and nothing from elsewhere: script and style from this origin only, fetch() to
// this origin only (/metrics), no frames, no forms sent anywhere, no <base> rewrites.
constexpr const char* kPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

void send(httplib::Response& res, std::string_view body, const char* type) {
  res.set_header("Content-Security-Policy", kPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  // The documents change with the binary only; no-cache makes a browser ask again after an
  // upgrade instead of running an old script against new metrics.
  res.set_header("Cache-Control", "no-cache");
  res.set_content(std::string(body), type);
}

}  // namespace

bool is_dashboard_path(std::string_view path) {
  return path == "/" || path == "/dashboard" || path == "/dashboard.css" || path == "/dashboard.js" || path == "/favicon.ico";
}

void add_dashboard_routes(httplib::Server& http) {
  const auto page = [](const httplib::Request&, httplib::Response& res) { send(res, dashboard_html(), "text/html; charset=utf-8"); };
  http.Get("/", page);
  http.Get("/dashboard", page);
  // httplib's route patterns are regular expressions: the dots are escaped.
  http.Get(R"(/dashboard\.css)", [](const httplib::Request&, httplib::Response& res) {
    send(res, dashboard_css(), "text/css; charset=utf-8");
  });
  http.Get(R"(/dashboard\.js)", [](const httplib::Request&, httplib::Response& res) {
    send(res, dashboard_js(), "text/javascript; charset=utf-8");
  });
  // Every browser asks for an icon; without this route each visit would add a 404 (a 401 under
  // auth) to the error counts the page itself shows.
  http.Get(R"(/favicon\.ico)", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
}

}  // namespace overhead::serve
