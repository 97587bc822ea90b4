#include "backends/queue_naming.hpp"

#include <stdexcept>

namespace overhead::backends::naming {
namespace {

// The URL split around its queue name: url[0, begin) + name + url[end, size) == url.
struct NameSpan {
  std::size_t begin = 0, end = 0;
};

std::size_t query_start(const std::string& url, std::size_t from) {
  const auto q = url.find('?', from);
  return q == std::string::npos ? url.size() : q;
}

std::string replaced(const std::string& url, NameSpan span, std::string_view name) {
  return url.substr(0, span.begin) + std::string(name) + url.substr(span.end);
}

NameSpan after_scheme_span(const std::string& url, const ports::BackendUrl& u) {
  const std::size_t begin = u.scheme.size() + 1;
  return {begin, query_start(url, begin)};
}

NameSpan host_span(const std::string& url) {
  const std::size_t authority = url.find("://") + 3;
  return {authority, query_start(url, authority)};
}

NameSpan path_span(const std::string& url, const ports::BackendUrl& u) {
  const std::size_t authority = url.find("://") + 3;
  const std::size_t end = query_start(url, authority);
  const std::size_t slash = url.find('/', authority);
  if (slash == std::string::npos || slash >= end) throw std::invalid_argument(u.describe("queue", "names no stream"));
  return {slash + 1, end};
}

}  // namespace

std::string after_scheme(const std::string&, const ports::BackendUrl& u) {
  if (u.path.empty()) throw std::invalid_argument(u.describe("queue", "names no queue (" + u.scheme + ":NAME)"));
  return u.path;
}

std::string after_scheme_with(const std::string& url, const ports::BackendUrl& u, std::string_view name) {
  return replaced(url, after_scheme_span(url, u), name);
}

std::string host(const std::string&, const ports::BackendUrl& u) { return u.host; }

std::string host_with(const std::string& url, const ports::BackendUrl&, std::string_view name) {
  return replaced(url, host_span(url), name);
}

std::string path(const std::string&, const ports::BackendUrl& u) {
  return u.path.starts_with('/') ? u.path.substr(1) : u.path;
}

std::string path_with(const std::string& url, const ports::BackendUrl& u, std::string_view name) {
  return replaced(url, path_span(url, u), name);
}

std::string name_param(const std::string&, const ports::BackendUrl& u) { return u.param("name", "queue"); }

std::string name_param_with(const std::string& url, const ports::BackendUrl&, std::string_view name) {
  const std::size_t q = url.find('?');
  if (q != std::string::npos) {
    for (std::size_t at = q + 1; at < url.size();) {
      const std::size_t amp = url.find('&', at);
      const std::size_t end = amp == std::string::npos ? url.size() : amp;
      if (url.compare(at, 5, "name=") == 0) return replaced(url, {at + 5, end}, name);
      at = end + 1;
    }
  }
  // The default name: add the parameter.
  return url + (q == std::string::npos ? "?name=" : "&name=") + std::string(name);
}

}  // namespace overhead::backends::naming
