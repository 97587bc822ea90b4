// The route registry: a route is registered once, with its method, its path (exact, or a pattern
// whose {name} segments match one path segment each, like /v1/requests/{id}), its handler, and
// what the server needs to know about it (its metric label, whether it is open without the bearer
// token, whether it counts against the in-flight limit, whether it is quick enough to run on the
// event loop). Nothing else lists routes: the metrics, auth and admission read them from here.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "serve/http/message.hpp"

namespace overhead::serve::http {

using Handler = std::function<void(const Request&, Response&)>;

struct RouteOptions {
  std::string label;          // the metric label; empty: the path pattern itself
  bool open = false;          // served without the bearer token (health checks, the dashboard's documents)
  bool operational = false;   // outside the in-flight limit (health checks, scrapes, the dashboard)
  // Runs on the connection's event-loop thread instead of the handler pool: only for a handler
  // that is quick and never blocks, so it stays answerable when every handler thread is busy.
  bool on_event_loop = false;
  bool json_body = true;      // a POST's body must be application/json (else 415)
  std::size_t max_body_bytes = 0;  // this route's body limit (an upload's); 0: the server's
};

struct Route {
  std::string method;   // "GET", "POST", ...
  std::string pattern;  // as registered
  Handler handler;
  RouteOptions options;
  std::vector<std::string> segments;  // the pattern split at '/'
};

class Routes {
 public:
  // Registers one route; throws std::invalid_argument on a malformed pattern or a duplicate.
  void add(std::string method, std::string pattern, Handler handler, RouteOptions options = {});
  void get(std::string pattern, Handler handler, RouteOptions options = {}) {
    add("GET", std::move(pattern), std::move(handler), std::move(options));
  }
  void post(std::string pattern, Handler handler, RouteOptions options = {}) {
    add("POST", std::move(pattern), std::move(handler), std::move(options));
  }

  struct Match {
    const Route* route = nullptr;  // null: no route for this method (see `path_known`)
    bool path_known = false;       // some route has this path, for another method (405)
    const Route* any = nullptr;    // a route with this path, whatever its method (its label counts a 405)
    std::string allowed;           // for 405's Allow header: the methods this path has
    std::map<std::string, std::string, std::less<>> params;
  };
  // The route for `method` on `path`; HEAD finds the GET route. Exact patterns win over {name} ones.
  [[nodiscard]] Match match(std::string_view method, std::string_view path) const;

  [[nodiscard]] const std::vector<std::unique_ptr<Route>>& all() const { return routes_; }

 private:
  std::vector<std::unique_ptr<Route>> routes_;
};

// Whether `segment` may fill a {name} of a pattern: 1 to 64 of A-Z a-z 0-9 _ -.
[[nodiscard]] bool is_param_value(std::string_view segment);

}  // namespace overhead::serve::http
