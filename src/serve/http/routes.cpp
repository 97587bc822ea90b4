#include "serve/http/routes.hpp"

#include <stdexcept>

namespace overhead::serve::http {
namespace {

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> out;
  std::size_t start = 1;  // past the leading '/'
  for (;;) {
    const std::size_t slash = path.find('/', start);
    out.emplace_back(path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
}

bool is_param(std::string_view segment) { return segment.size() > 2 && segment.front() == '{' && segment.back() == '}'; }

bool has_params(const Route& r) {
  for (const auto& s : r.segments)
    if (is_param(s)) return true;
  return false;
}

// Whether `path` fits `route`'s pattern; fills `params` when it does.
bool fits(const Route& route, std::string_view path, std::map<std::string, std::string, std::less<>>& params) {
  if (!has_params(route)) return path == route.pattern;
  const auto parts = split_path(path);
  if (parts.size() != route.segments.size()) return false;
  std::map<std::string, std::string, std::less<>> found;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& s = route.segments[i];
    if (is_param(s)) {
      if (!is_param_value(parts[i])) return false;
      found[s.substr(1, s.size() - 2)] = parts[i];
    } else if (parts[i] != s) {
      return false;
    }
  }
  params = std::move(found);
  return true;
}

}  // namespace

bool is_param_value(std::string_view segment) {
  if (segment.empty() || segment.size() > 64) return false;
  for (const char c : segment)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  return true;
}

void Routes::add(std::string method, std::string pattern, Handler handler, RouteOptions options) {
  if (pattern.empty() || pattern.front() != '/') throw std::invalid_argument("route pattern '" + pattern + "' must start with '/'");
  for (const auto& r : routes_)
    if (r->method == method && r->pattern == pattern) throw std::invalid_argument("route " + method + " " + pattern + " registered twice");
  auto route = std::make_unique<Route>();
  route->method = std::move(method);
  route->pattern = std::move(pattern);
  route->handler = std::move(handler);
  route->segments = split_path(route->pattern);
  for (const auto& s : route->segments)
    if (s.find_first_of("{}") != std::string::npos && !is_param(s))
      throw std::invalid_argument("route pattern '" + route->pattern + "': a {name} must fill a whole segment");
  if (options.label.empty()) options.label = route->pattern;
  route->options = std::move(options);
  routes_.push_back(std::move(route));
}

Routes::Match Routes::match(std::string_view method, std::string_view path) const {
  const std::string_view wanted = method == "HEAD" ? std::string_view("GET") : method;
  Match m;
  // Two passes: exact patterns, then those with {name} segments.
  for (const bool with_params : {false, true}) {
    for (const auto& r : routes_) {
      if (has_params(*r) != with_params) continue;
      std::map<std::string, std::string, std::less<>> params;
      if (!fits(*r, path, params)) continue;
      if (r->method == wanted) {
        m.route = r.get();
        m.any = r.get();
        m.params = std::move(params);
        return m;
      }
      m.path_known = true;
      if (!m.any) m.any = r.get();
      if (m.allowed.find(r->method) == std::string::npos) m.allowed += (m.allowed.empty() ? "" : ", ") + r->method;
      if (r->method == "GET" && m.allowed.find("HEAD") == std::string::npos) m.allowed += ", HEAD";
    }
  }
  return m;
}

}  // namespace overhead::serve::http
