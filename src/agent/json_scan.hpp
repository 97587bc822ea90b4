// Scanning one JSON value as it streams in (internal to agent/): where it ends, with the
// whitespace outside strings removed, so a call's arguments can be sent fragment by fragment the
// moment their bytes arrive, and the call known complete when the value is balanced. It checks
// only what it needs to find the end (brackets, strings, bytes that can occur outside strings);
// the complete value is validated once (stream.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace overhead::agent::detail {

class JsonScanner {
 public:
  enum class State { running, done, error };
  // Scans from `in`, appending the value's bytes (compacted) to `out`; returns the bytes consumed
  // (whitespace before the value included). Stops right after the value's last byte (a number or
  // literal at the top level ends at the first byte that cannot continue it, not consumed).
  std::size_t feed(std::string_view in, std::string& out);
  [[nodiscard]] State state() const { return state_; }
  [[nodiscard]] bool started() const { return started_; }
  void reset() { *this = JsonScanner{}; }

 private:
  State state_ = State::running;
  int depth_ = 0;
  bool started_ = false;
  bool in_string_ = false;
  bool escape_ = false;
  bool scalar_ = false;
};

}  // namespace overhead::agent::detail
