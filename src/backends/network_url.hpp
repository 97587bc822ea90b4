// Network backend URLs, "scheme://[user[:password]@]host[:port][/path][?k=v&...]", as Redis and
// PostgreSQL take them. Owns the parsing (with percent-decoding of the user and password) and the
// redacted form that every message shows: the password is never printed, only "***".
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace overhead::backends {

struct NetworkUrl {
  std::string scheme;
  std::string user;      // decoded; empty when absent
  std::string password;  // decoded; empty when absent
  bool has_password = false;
  std::string host;
  int port = 0;          // 0 when absent
  std::string path;      // after the first '/' following the authority, decoded; may be empty
  std::map<std::string, std::string> params;
  std::string redacted;  // the URL as given, with the password replaced by ***

  std::int64_t int_param(const std::string& key, std::int64_t fallback) const;
  std::string param(const std::string& key, const std::string& fallback) const;
};

// Throws std::invalid_argument naming the redacted URL for a malformed one (no host, bad port,
// bad percent-escape).
NetworkUrl parse_network_url(const std::string& url);

// The URL with any password replaced by ***; safe to print. Works on malformed URLs too.
std::string redact_url(const std::string& url);

}  // namespace overhead::backends
