#include "ports/backend_url.hpp"

#include <charconv>
#include <stdexcept>

namespace overhead::ports {

namespace {

// Where the parts of "scheme://[userinfo@]host[:port][/path][?query]" sit in `url`: the one
// reading of a URL's layout, used by the parser and by redact_url alike, so that what is parsed
// as the password is exactly what is hidden. The user info runs from "://" to the LAST '@' of the
// URL: a password may then hold '@', '/', '?', '#' and ':' as typed (people paste them unescaped),
// and an '@' in a path or parameter must be written %40. The authority ends at the first '/' or
// '?' after that '@' (after "://" when there is none).
struct UrlLayout {
  bool has_authority = false;
  std::size_t authority_begin = 0;  // just after "://"
  std::size_t at = std::string_view::npos;  // the '@' closing the user info, npos when none
  std::size_t authority_end = 0;    // the first '/' or '?' after the host, or the URL's size
  std::size_t password_begin = 0;   // [password_begin, at) when the user info holds a ':'
  bool has_password = false;
};

UrlLayout url_layout(std::string_view url) {
  UrlLayout l;
  const auto colon = url.find(':');
  if (colon == std::string_view::npos || url.substr(colon + 1, 2) != "//") return l;
  l.has_authority = true;
  l.authority_begin = colon + 3;
  const auto at = url.rfind('@');
  if (at != std::string_view::npos && at >= l.authority_begin) l.at = at;
  const std::size_t host_begin = l.at == std::string_view::npos ? l.authority_begin : l.at + 1;
  l.authority_end = std::min(url.find_first_of("/?", host_begin), url.size());
  if (l.at != std::string_view::npos) {
    const auto c = url.find(':', l.authority_begin);
    if (c != std::string_view::npos && c < l.at) {
      l.has_password = true;
      l.password_begin = c + 1;
    }
  }
  return l;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string redact_url(std::string_view url) {
  const UrlLayout l = url_layout(url);
  if (l.has_password) {
    std::string out(url.substr(0, l.password_begin));
    out += "***";
    out += url.substr(l.at);
    return out;
  }
  const auto at = url.rfind('@');
  if (l.has_authority || at == std::string_view::npos) return std::string(url);
  // No "scheme://", yet an '@': a URL typed with a slash too few (redis:/u:SECRET@host) or none
  // still holds what reads as user info, and an error that echoes it must not show the secret.
  // USER:PASSWORD hides the password; a lone token without '/' (redis:/SECRET@host) is hidden whole;
  // a path with an '@' in a file name (sqlite:/tmp/a@b.db) is left as it is.
  const auto colon = url.find(':');
  std::size_t begin = colon != std::string_view::npos && colon < at ? colon + 1 : 0;
  while (begin < at && url[begin] == '/') ++begin;
  const std::string_view info = url.substr(begin, at - begin);
  if (const auto c = info.find(':'); c != std::string_view::npos) begin += c + 1;
  else if (info.empty() || info.find('/') != std::string_view::npos) return std::string(url);
  return std::string(url.substr(0, begin)) + "***" + std::string(url.substr(at));
}

BackendUrl parse_backend_url(std::string_view url) {
  BackendUrl out;
  out.redacted_ = redact_url(url);
  auto fail = [&](const std::string& why) {
    return std::invalid_argument("backend URL \"" + out.redacted_ + "\": " + why);
  };
  auto decode = [&](std::string_view s, const char* part) {
    std::string d;
    d.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '%') {
        d += s[i];
        continue;
      }
      const int hi = i + 1 < s.size() ? hex_digit(s[i + 1]) : -1;
      const int lo = i + 2 < s.size() ? hex_digit(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) throw fail(std::string("broken percent escape in the ") + part);
      d += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
    return d;
  };

  const auto colon = url.find(':');
  if (colon == std::string_view::npos || colon == 0)
    throw fail("expected scheme:..., e.g. mem: or sqlite:PATH");
  out.scheme = std::string(url.substr(0, colon));
  const UrlLayout layout = url_layout(url);
  // The query starts at the first '?' after the authority (a password may hold a '?').
  const auto query = url.find('?', layout.has_authority ? layout.authority_end : colon + 1);
  const std::size_t rest_end = query == std::string_view::npos ? url.size() : query;

  if (layout.has_authority) {
    out.has_authority = true;
    if (layout.authority_end < rest_end) out.path = decode(url.substr(layout.authority_end, rest_end - layout.authority_end), "path");
    std::string_view authority = url.substr(layout.authority_begin, layout.authority_end - layout.authority_begin);
    if (layout.at != std::string_view::npos) {
      const std::string_view userinfo = url.substr(layout.authority_begin, layout.at - layout.authority_begin);
      const auto c = userinfo.find(':');
      out.user = decode(userinfo.substr(0, c), "user");
      if (c != std::string_view::npos) out.password = decode(userinfo.substr(c + 1), "password");
      authority = url.substr(layout.at + 1, layout.authority_end - layout.at - 1);
    }
    // [v6 address]:port or host:port
    std::string_view port;
    if (authority.starts_with('[')) {
      const auto close = authority.find(']');
      if (close == std::string_view::npos) throw fail("unclosed '[' in the host");
      out.host = std::string(authority.substr(1, close - 1));
      const std::string_view after = authority.substr(close + 1);
      if (!after.empty()) {
        if (after.front() != ':') throw fail("expected ':PORT' after the host");
        port = after.substr(1);
      }
    } else {
      const auto c = authority.rfind(':');
      out.host = std::string(authority.substr(0, c));
      if (c != std::string_view::npos) port = authority.substr(c + 1);
    }
    if (!port.empty()) {
      int p = 0;
      const auto r = std::from_chars(port.data(), port.data() + port.size(), p);
      if (r.ec != std::errc() || r.ptr != port.data() + port.size() || p < 1 || p > 65535)
        throw fail("port \"" + std::string(port) + "\" is not a number in 1..65535");
      out.port = p;
    }
  } else {
    out.path = std::string(url.substr(colon + 1, rest_end - colon - 1));
  }

  if (query != std::string_view::npos) {
    std::size_t pos = query + 1;
    while (pos <= url.size()) {
      auto amp = url.find('&', pos);
      if (amp == std::string_view::npos) amp = url.size();
      const std::string_view pair = url.substr(pos, amp - pos);
      if (!pair.empty()) {
        const auto eq = pair.find('=');
        if (eq == std::string_view::npos) out.params[decode(pair, "parameters")] = "";
        else out.params[decode(pair.substr(0, eq), "parameters")] = decode(pair.substr(eq + 1), "parameters");
      }
      pos = amp + 1;
    }
  }
  return out;
}

void BackendUrl::check_params(std::initializer_list<std::string_view> known) const {
  for (const auto& [key, value] : params) {
    bool ok = false;
    for (auto k : known) ok = ok || k == key;
    if (ok) continue;
    std::string list;
    for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    throw std::invalid_argument(describe("backend", "unknown parameter \"" + key + "\" (known: " +
                                                        (list.empty() ? std::string("none") : list) + ")"));
  }
}

std::int64_t BackendUrl::int_param(const std::string& key, std::int64_t fallback) const {
  const auto it = params.find(key);
  if (it == params.end()) return fallback;
  std::int64_t v = 0;
  const auto* end = it->second.data() + it->second.size();
  const auto r = std::from_chars(it->second.data(), end, v);
  if (r.ec != std::errc() || r.ptr != end || it->second.empty())
    throw std::invalid_argument(describe("backend", "parameter " + key + " is not an integer"));
  return v;
}

std::int64_t BackendUrl::int_param(const std::string& key, std::int64_t fallback, std::int64_t min,
                                   std::int64_t max) const {
  const std::int64_t v = int_param(key, fallback);
  if (v < min || v > max)
    throw std::invalid_argument(describe("backend", "parameter " + key + " must be in " + std::to_string(min) + ".." +
                                                        std::to_string(max) + ", got " + std::to_string(v)));
  return v;
}

std::string BackendUrl::param(const std::string& key, const std::string& fallback) const {
  const auto it = params.find(key);
  return it == params.end() ? fallback : it->second;
}

std::chrono::milliseconds BackendUrl::call_timeout() const {
  const std::int64_t ms = int_param("timeout_ms", kDefaultCallTimeout.count());
  if (ms <= 0) throw std::invalid_argument(describe("backend", "parameter timeout_ms must be > 0"));
  return std::chrono::milliseconds(ms);
}

std::string BackendUrl::describe(std::string_view what, std::string_view message) const {
  return std::string(what) + " URL \"" + redacted_ + "\": " + std::string(message);
}

}  // namespace overhead::ports
