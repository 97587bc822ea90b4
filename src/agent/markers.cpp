// scan_markers (markers.hpp).
#include "agent/markers.hpp"

#include <algorithm>

#include "agent/stream.hpp"

namespace overhead::agent::detail {

MarkerScan scan_markers(std::string_view text, std::initializer_list<std::string_view> markers) {
  MarkerScan best;
  best.safe = text.size();
  std::size_t longest = 0;
  std::size_t i = 0;
  for (std::string_view m : markers) {
    longest = std::max(longest, m.size());
    const std::size_t at = text.find(m);
    if (at != std::string_view::npos && at < best.safe) {
      best.safe = at;
      best.which = i;
    }
    ++i;
  }
  if (best.found()) return best;
  // No whole marker: hold the longest tail that a marker starts with. Only positions whose byte
  // starts some marker are tried, so plain text costs one byte test per tail position.
  const std::size_t from = text.size() >= longest ? text.size() - longest + 1 : 0;
  for (std::size_t p = from; p < text.size(); ++p) {
    const std::string_view tail = text.substr(p);
    for (std::string_view m : markers) {
      if (m.front() == tail.front() && tail.size() < m.size() && m.substr(0, tail.size()) == tail) {
        best.safe = p;
        return best;
      }
    }
  }
  return best;
}

std::size_t space_prefix(std::string_view text) {
  std::size_t n = 0;
  while (n < text.size() && is_space(text[n])) ++n;
  return n;
}

}  // namespace overhead::agent::detail
