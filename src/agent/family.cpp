// The helpers every family uses (family.hpp), and the family of no tool calls.
#include "agent/family.hpp"

namespace overhead::agent::detail {

void Family::finish(Stream& s) {
  if (!s.region_open()) s.content(s.pending());
  s.consume(s.pending().size());
}

std::size_t content_until(Stream& s, std::initializer_list<std::string_view> markers, bool& progress) {
  return text_until(s, Delta::Kind::content, markers, progress);
}

std::size_t text_until(Stream& s, Delta::Kind kind, std::initializer_list<std::string_view> markers,
                       bool& progress) {
  const std::string_view text = s.pending();
  const MarkerScan scan = scan_markers(text, markers);
  if (scan.safe > 0) {
    if (kind == Delta::Kind::reasoning) {
      s.reasoning(text.substr(0, scan.safe));
    } else {
      s.content(text.substr(0, scan.safe));
    }
    s.consume(scan.safe);
    progress = true;
  }
  return scan.which;
}

std::size_t after_space(Stream& s, std::initializer_list<std::string_view> words) {
  const std::string_view text = s.pending();
  const std::size_t n = space_prefix(text);
  const std::string_view rest = text.substr(n);
  if (rest.empty()) return kWait;
  bool partial = false;
  std::size_t i = 0;
  for (std::string_view w : words) {
    const Prefix p = match_prefix(rest, w);
    if (p == Prefix::full) {
      s.consume(n);
      return i;
    }
    if (p == Prefix::partial) partial = true;
    ++i;
  }
  return partial ? kWait : MarkerScan::kNone;
}

bool skip_space(Stream& s, bool& progress) {
  const std::string_view text = s.pending();
  const std::size_t n = space_prefix(text);
  if (n > 0) {
    s.consume(n);
    progress = true;
  }
  return n < text.size();
}

namespace plain {

class Plain final : public Family {
 public:
  bool step(Stream& s) override {
    const std::string_view text = s.pending();
    if (text.empty()) return false;
    s.content(text);
    s.consume(text.size());
    return true;
  }
};

}  // namespace plain

std::unique_ptr<Family> make_plain() { return std::make_unique<plain::Plain>(); }

std::optional<bool> CallArguments::step(Stream& s, bool& progress) {
  scratch_.clear();
  const std::size_t n = scanner_.feed(s.pending(), scratch_);
  s.arguments(scratch_);
  s.consume(n);
  progress = n > 0;
  if (scanner_.state() == JsonScanner::State::running) return std::nullopt;
  return s.end_call(scanner_.state() == JsonScanner::State::done);
}

}  // namespace overhead::agent::detail
