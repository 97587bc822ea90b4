// The URL-like strings that choose a backend: "scheme:rest?key=value&key=value". The rest is a
// path or a name ("sqlite:out/records.db", "mem:in", "sqlite-queue:out/q.db?name=in").
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace overhead::pipe {

struct BackendUrl {
  std::string text;    // as given, for error messages
  std::string scheme;  // before the first ':'
  std::string rest;    // between ':' and '?'
  std::map<std::string, std::string> params;

  // Integer parameter, or `fallback` when absent; throws std::invalid_argument naming the URL
  // when present but not an integer.
  std::int64_t int_param(const std::string& key, std::int64_t fallback) const;
  std::string param(const std::string& key, const std::string& fallback) const;
};

// Throws std::invalid_argument when there is no scheme.
BackendUrl parse_backend_url(const std::string& url);

}  // namespace overhead::pipe
