#include "pipe/stop_strings.hpp"

#include <algorithm>

namespace overhead::pipe {

StopStrings::StopStrings(std::span<const std::string> stops) {
  for (const auto& s : stops)
    if (!s.empty()) stops_.push_back(s);
}

bool StopStrings::push(std::string_view piece, std::string& out) {
  if (stopped_) return true;
  held_.append(piece);
  // A stop string can only start inside the held tail: what was passed on never ends with a
  // prefix of one (that prefix would have been held).
  // The stop string that ends first (as if the text came byte by byte; of two ending at the same
  // byte, the longer), so the cut does not depend on how the text was split.
  std::size_t first = std::string::npos, first_end = std::string::npos;
  for (const auto& s : stops_) {
    const std::size_t at = held_.find(s);
    if (at == std::string::npos) continue;
    const std::size_t end = at + s.size();
    if (end < first_end || (end == first_end && at < first)) {
      first = at;
      first_end = end;
    }
  }
  if (first != std::string::npos) {
    out.append(held_, 0, first);
    held_.clear();
    stopped_ = true;
    return true;
  }
  // The longest tail that is a proper prefix of a stop string waits for the next piece.
  std::size_t keep = 0;
  for (const auto& s : stops_)
    for (std::size_t n = std::min(s.size() - 1, held_.size()); n > keep; --n)
      if (std::string_view(held_).substr(held_.size() - n) == std::string_view(s).substr(0, n)) {
        keep = n;
        break;
      }
  out.append(held_, 0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return false;
}

void StopStrings::finish(std::string& out) {
  if (!stopped_) out.append(held_);
  held_.clear();
}

}  // namespace overhead::pipe
