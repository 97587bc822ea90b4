#include "serve/dashboard_routes.hpp"

#include "serve/http/routes.hpp"

#include <string>

#include "serve/dashboard_page.hpp"

namespace overhead::serve {
namespace {

// Nothing inline and nothing from elsewhere: script and style from this origin only, fetch() to
// this origin only (/metrics), no frames, no forms sent anywhere, no <base> rewrites.
constexpr const char* kPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

void send(http::Response& res, std::string_view body, const char* type) {
  res.set_header("Content-Security-Policy", kPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  // The documents change with the binary only; no-cache makes a browser ask again after an
  // upgrade instead of running an old script against new metrics.
  res.set_header("Cache-Control", "no-cache");
  res.set_content(std::string(body), type);
}

}  // namespace

void add_dashboard_routes(http::Routes& routes) {
  // Open and outside the in-flight limit (see the header), and quick: served from the event loop.
  http::RouteOptions document;
  document.open = true;
  document.operational = true;
  document.on_event_loop = true;
  const auto page = [](const http::Request&, http::Response& res) { send(res, dashboard_html(), "text/html; charset=utf-8"); };
  routes.get("/", page, document);
  routes.get("/dashboard", page, document);
  routes.get("/dashboard.css", [](const http::Request&, http::Response& res) {
    send(res, dashboard_css(), "text/css; charset=utf-8");
  }, document);
  routes.get("/dashboard.js", [](const http::Request&, http::Response& res) {
    send(res, dashboard_js(), "text/javascript; charset=utf-8");
  }, document);
  // Every browser asks for an icon; without this route each visit would add a 404 (a 401 under
  // auth) to the error counts the page itself shows.
  routes.get("/favicon.ico", [](const http::Request&, http::Response& res) { res.status = 204; }, document);
}

}  // namespace overhead::serve
