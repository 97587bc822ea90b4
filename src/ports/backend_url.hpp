// A backend URL parsed once: the string that chooses and configures a queue, a store or an
// object store. Two shapes:
//   scheme:PATH[?key=value&...]                                   mem:in, sqlite:out/records.db,
//                                                                 sqlite-queue:out/q.db?name=in
//   scheme://[user[:password]@]host[:port][/path][?key=value&...] redis://:secret@127.0.0.1:6379/0
// In the second shape user, password and path are percent-decoded; parameters are
// percent-decoded in both. The user info runs to the URL's last '@', so a password may hold '@',
// '/', '?', '#' or ':' as typed; an '@' in a path or parameter is written %40. The PATH of the first shape is a file or queue name taken as written
// (a file name may hold '%').
//
// Secrets: the password is kept only in `password`. Everything meant for people (error
// messages, logs, url() of a backend, summary.json) uses redacted(), which shows "***" instead.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

namespace overhead::ports {

// The per-call deadline of a backend whose URL gives no `timeout_ms` (see queue.hpp, store.hpp).
inline constexpr std::chrono::milliseconds kDefaultCallTimeout{10000};

struct BackendUrl {
  std::string scheme;    // before the first ':', e.g. "sqlite", "redis"
  bool has_authority = false;  // "scheme://..." (host, port, user, password may be set)
  std::string user;
  std::string password;  // never print; see redacted()
  std::string host;
  int port = 0;          // 0 = not given
  std::string path;      // opaque shape: everything before '?'; authority shape: from the '/' on
  std::map<std::string, std::string> params;

  // The URL as given, with the password (if any) replaced by "***". Safe to show.
  const std::string& redacted() const { return redacted_; }

  // Throws std::invalid_argument naming the first parameter that is not in `known` and listing
  // the known ones (a misspelt "visiblity_ms" is an error, not a silent default).
  void check_params(std::initializer_list<std::string_view> known) const;
  // Integer parameter, or `fallback` when absent; throws std::invalid_argument naming the URL
  // (redacted) when present but not an integer.
  [[nodiscard]] std::int64_t int_param(const std::string& key, std::int64_t fallback) const;
  // The same, and throws std::invalid_argument naming the parameter and the range when the
  // value is outside [min, max] (a negative visibility_ms is an error, not a wrap-around).
  [[nodiscard]] std::int64_t int_param(const std::string& key, std::int64_t fallback, std::int64_t min,
                                       std::int64_t max) const;
  [[nodiscard]] std::string param(const std::string& key, const std::string& fallback) const;

  // The per-call deadline: parameter `timeout_ms` (> 0), else kDefaultCallTimeout. Throws
  // std::invalid_argument when it is not a positive integer.
  [[nodiscard]] std::chrono::milliseconds call_timeout() const;

  // "what URL \"<redacted>\": message", for errors raised while opening the backend.
  [[nodiscard]] std::string describe(std::string_view what, std::string_view message) const;

 private:
  friend BackendUrl parse_backend_url(std::string_view url);
  std::string redacted_;
};

// Throws std::invalid_argument (never showing the password) when there is no scheme, a
// percent escape is broken, or the port is not a number in 1..65535.
[[nodiscard]] BackendUrl parse_backend_url(std::string_view url);

// The redacted form of any string that may be a URL, without parsing it fully (for a URL that
// is shown but not opened). It finds the password by the parser's own reading of the URL's
// layout, so whatever parse_backend_url takes as the password is hidden; in a string that is no
// "scheme://" URL, anything shaped like user info before an '@' (redis:/u:SECRET@host, one slash
// too few) is hidden too. The one redaction for every message that echoes a URL. Never throws.
[[nodiscard]] std::string redact_url(std::string_view url);

}  // namespace overhead::ports
