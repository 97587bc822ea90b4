#include "backends/network_url.hpp"

#include <charconv>
#include <stdexcept>

namespace overhead::backends {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(const std::string& s, const std::string& shown, const char* what) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    const int hi = i + 2 < s.size() ? hex_value(s[i + 1]) : -1;
    const int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) throw std::invalid_argument("URL \"" + shown + "\": bad %-escape in the " + what);
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

}  // namespace

std::string redact_url(const std::string& url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return url;
  const auto authority = scheme_end + 3;
  const auto authority_end = url.find_first_of("/?", authority);
  const auto at = url.rfind('@', authority_end == std::string::npos ? std::string::npos : authority_end);
  if (at == std::string::npos || at < authority) return url;
  const auto colon = url.find(':', authority);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

NetworkUrl parse_network_url(const std::string& url) {
  NetworkUrl out;
  out.redacted = redact_url(url);
  const std::string& shown = out.redacted;
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos || scheme_end == 0)
    throw std::invalid_argument("URL \"" + shown + "\": expected scheme://host:port/...");
  out.scheme = url.substr(0, scheme_end);
  const auto authority = scheme_end + 3;
  auto authority_end = url.find_first_of("/?", authority);
  if (authority_end == std::string::npos) authority_end = url.size();
  std::string hostport = url.substr(authority, authority_end - authority);
  const auto at = hostport.rfind('@');
  if (at != std::string::npos) {
    const std::string userinfo = hostport.substr(0, at);
    hostport = hostport.substr(at + 1);
    const auto colon = userinfo.find(':');
    out.user = percent_decode(userinfo.substr(0, colon), shown, "user");
    if (colon != std::string::npos) {
      out.has_password = true;
      out.password = percent_decode(userinfo.substr(colon + 1), shown, "password");
    }
  }
  const auto colon = hostport.rfind(':');
  out.host = hostport.substr(0, colon);
  if (out.host.empty()) throw std::invalid_argument("URL \"" + shown + "\": no host");
  if (colon != std::string::npos) {
    const std::string p = hostport.substr(colon + 1);
    const auto r = std::from_chars(p.data(), p.data() + p.size(), out.port);
    if (p.empty() || r.ec != std::errc() || r.ptr != p.data() + p.size() || out.port <= 0 || out.port > 65535)
      throw std::invalid_argument("URL \"" + shown + "\": bad port \"" + p + "\"");
  }
  std::size_t pos = authority_end;
  if (pos < url.size() && url[pos] == '/') {
    const auto q = url.find('?', pos);
    out.path = percent_decode(url.substr(pos + 1, q == std::string::npos ? std::string::npos : q - pos - 1), shown, "path");
    pos = q == std::string::npos ? url.size() : q;
  }
  if (pos < url.size() && url[pos] == '?') {
    ++pos;
    while (pos <= url.size()) {
      auto amp = url.find('&', pos);
      if (amp == std::string::npos) amp = url.size();
      const std::string pair = url.substr(pos, amp - pos);
      if (!pair.empty()) {
        const auto eq = pair.find('=');
        if (eq == std::string::npos) out.params[pair] = "";
        else out.params[pair.substr(0, eq)] = pair.substr(eq + 1);
      }
      pos = amp + 1;
    }
  }
  return out;
}

std::int64_t NetworkUrl::int_param(const std::string& key, std::int64_t fallback) const {
  const auto it = params.find(key);
  if (it == params.end()) return fallback;
  std::int64_t v = 0;
  const auto* end = it->second.data() + it->second.size();
  const auto r = std::from_chars(it->second.data(), end, v);
  if (it->second.empty() || r.ec != std::errc() || r.ptr != end)
    throw std::invalid_argument("URL \"" + redacted + "\": parameter " + key + " is not an integer");
  return v;
}

std::string NetworkUrl::param(const std::string& key, const std::string& fallback) const {
  const auto it = params.find(key);
  return it == params.end() ? fallback : it->second;
}

}  // namespace overhead::backends
