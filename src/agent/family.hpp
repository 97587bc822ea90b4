// What a tool-call family is to the parser (internal to agent/): a state machine that consumes
// the pending text of a Stream and reports content, reasoning and calls on it. One file per
// family under families/, one entry each in family_registry.cpp.
//
// step() must make progress (consume, or change state) or return false to wait for more text;
// every decision it takes must be one the rest of the text cannot change, which is what makes
// the output independent of where the text was split.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "agent/json_scan.hpp"
#include "agent/markers.hpp"
#include "agent/stream.hpp"

namespace overhead::agent::detail {

class Family {
 public:
  virtual ~Family() = default;
  virtual bool step(Stream& s) = 0;
  // The text is over and step() has nothing more to do. By default what is left outside a call
  // is content (a held tail that never became a marker); a call's region is the Stream's.
  virtual void finish(Stream& s);
};

// Content up to the first of `markers`: releases the text before it (and, without one, all but
// a tail that may start one). Returns the index of the marker now at the head of the pending
// text (not consumed), or MarkerScan::kNone. `progress` is set when text was consumed.
std::size_t content_until(Stream& s, std::initializer_list<std::string_view> markers, bool& progress);

// The same for text of `kind` (content or reasoning).
std::size_t text_until(Stream& s, Delta::Kind kind, std::initializer_list<std::string_view> markers,
                       bool& progress);

// After a call: what follows the whitespace at the head of the pending text, among `words`.
// Returns the index of the word found (the whitespace is consumed, the word left at the head),
// kWait (more text is needed; nothing consumed) or MarkerScan::kNone (nothing consumed: the
// whitespace is then the next text's).
inline constexpr std::size_t kWait = MarkerScan::kNone - 1;
std::size_t after_space(Stream& s, std::initializer_list<std::string_view> words);

// Skips whitespace at the head of the pending text; true when something follows it.
bool skip_space(Stream& s, bool& progress);

// A call's JSON arguments read from the head of the pending text as they arrive: passed on
// compacted (Stream::arguments) and the call ended (Stream::end_call) once the value is whole.
class CallArguments {
 public:
  void reset() { scanner_.reset(); }
  // Nullopt while the value runs (`progress`: text was consumed); else the call has ended, and
  // true when it was kept.
  std::optional<bool> step(Stream& s, bool& progress);

 private:
  JsonScanner scanner_;
  std::string scratch_;
};

using FamilyFactory = std::unique_ptr<Family> (*)();
struct FamilyEntry {
  std::string_view name;
  FamilyFactory make;
};
// The registry (family_registry.cpp).
std::span<const FamilyEntry> families();
std::span<const std::string_view> family_names();

// The reasoning stage in front of a family: a leading <think>...</think> block.
std::unique_ptr<Family> make_think_stage(std::unique_ptr<Family> inner, bool starts_in_reasoning);
// No tool calls: everything is content.
std::unique_ptr<Family> make_plain();

}  // namespace overhead::agent::detail
