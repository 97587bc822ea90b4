#include "pipe/backend_url.hpp"

#include <charconv>
#include <stdexcept>

namespace overhead::pipe {

BackendUrl parse_backend_url(const std::string& url) {
  BackendUrl out;
  out.text = url;
  const auto colon = url.find(':');
  if (colon == std::string::npos || colon == 0)
    throw std::invalid_argument("backend URL \"" + url + "\": expected scheme:..., e.g. mem: or sqlite:PATH");
  out.scheme = url.substr(0, colon);
  const auto query = url.find('?', colon + 1);
  out.rest = url.substr(colon + 1, query == std::string::npos ? std::string::npos : query - colon - 1);
  if (query != std::string::npos) {
    std::size_t pos = query + 1;
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

std::int64_t BackendUrl::int_param(const std::string& key, std::int64_t fallback) const {
  const auto it = params.find(key);
  if (it == params.end()) return fallback;
  std::int64_t v = 0;
  const auto* end = it->second.data() + it->second.size();
  const auto r = std::from_chars(it->second.data(), end, v);
  if (r.ec != std::errc() || r.ptr != end || it->second.empty())
    throw std::invalid_argument("backend URL \"" + text + "\": parameter " + key + " is not an integer");
  return v;
}

std::string BackendUrl::param(const std::string& key, const std::string& fallback) const {
  const auto it = params.find(key);
  return it == params.end() ? fallback : it->second;
}

}  // namespace overhead::pipe
