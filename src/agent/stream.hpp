// The state a family's parser works on (internal to agent/): the text not yet consumed, and the
// output side that turns what a family recognises into deltas. It owns the rules every family
// shares, so no family repeats them: whitespace next to markers, call ids and indices, whether a
// call is released whole or streamed, and what an unfinished call becomes (answer_parser.hpp).
//
// A family marks where a call's text starts (open_region) before consuming its first byte; the
// text from there stays in the buffer until the call ends, so a call that fails becomes content
// exactly as the model wrote it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "agent/answer.hpp"
#include "agent/answer_parser.hpp"

namespace overhead::agent::detail {

// One text channel (content or reasoning) with its trailing whitespace held back: whitespace is
// emitted once a non-space byte follows it. At a call's edge (boundary) whitespace held before
// it is dropped, and so is whitespace after it that nothing but the end follows; at a block's
// edge (trim: <think>, </think>, a harmony message) leading whitespace is dropped too.
class TextChannel {
 public:
  template <typename Emit>
  void text(std::string_view s, Emit&& emit);
  void boundary() {
    held_.clear();
    after_marker_ = true;
  }
  void trim() {
    boundary();
    drop_leading_ = true;
  }
  // The end of the answer: held whitespace is kept unless a marker precedes it.
  template <typename Emit>
  void flush(Emit&& emit) {
    if (!held_.empty() && !after_marker_) emit(std::string_view(held_));
    held_.clear();
  }

 private:
  std::string held_;
  bool drop_leading_ = false;
  bool after_marker_ = false;
};

inline bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

template <typename Emit>
void TextChannel::text(std::string_view s, Emit&& emit) {
  std::size_t last = s.size();
  while (last > 0 && is_space(s[last - 1])) --last;
  if (last == 0) {  // only whitespace: hold it (or drop it after a block's edge)
    if (!drop_leading_) held_.append(s);
    return;
  }
  std::size_t first = 0;
  if (drop_leading_) {
    while (is_space(s[first])) ++first;
  } else if (!held_.empty()) {
    emit(std::string_view(held_));
  }
  drop_leading_ = false;
  after_marker_ = false;
  emit(s.substr(first, last - first));
  held_.assign(s.substr(last));
}

class Stream {
 public:
  Stream(std::string call_id_prefix, CallRelease release)
      : id_prefix_(std::move(call_id_prefix)), release_(release) {}

  void set_sink(std::vector<Delta>* sink) { sink_ = sink; }

  // ---- input -------------------------------------------------------------------------------
  void append(std::string_view text);
  [[nodiscard]] std::string_view pending() const {
    return std::string_view(buf_).substr(pos_);
  }
  [[nodiscard]] bool at_end() const { return at_end_; }
  void set_at_end() { at_end_ = true; }
  void consume(std::size_t n) { pos_ += n; }

  // ---- text out ------------------------------------------------------------------------------
  void content(std::string_view s);
  void reasoning(std::string_view s);
  // The edge of a block (<think>, </think>, a harmony message): whitespace at it is dropped.
  void content_boundary() { content_.trim(); }
  void reasoning_boundary() { reasoning_.trim(); }

  // ---- calls ---------------------------------------------------------------------------------
  // The text of a possible call starts at the current position.
  void open_region();
  [[nodiscard]] bool region_open() const { return region_ != kNone; }
  // The call's name is known and its arguments start.
  void begin_call(std::string_view name);
  [[nodiscard]] bool call_begun() const { return begun_; }
  void arguments(std::string_view fragment);
  // The call's text is over (what was consumed so far). syntax_ok false: it did not parse.
  // Returns whether the call is good (a JSON object as arguments); a bad one is content
  // (whole_calls) or in bad_calls() (streamed, once sent).
  bool end_call(bool syntax_ok);
  // The region's text is no call: it is content.
  void reject_region();
  // The region's text is markup that is neither content nor a call (a harmony message header).
  void drop_region() {
    region_ = kNone;
    begun_ = false;
  }
  // After the family's own finish: a region still open, held whitespace.
  void close_at_end();

  [[nodiscard]] const std::vector<std::size_t>& bad_calls() const { return bad_calls_; }
  [[nodiscard]] std::size_t call_count() const { return next_index_; }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  void emit_text(Delta::Kind kind, std::string_view s);
  void emit_call(std::size_t index, std::string_view name, std::string_view args);
  void release_region_as_content(std::size_t end);

  std::string id_prefix_;
  CallRelease release_;
  std::vector<Delta>* sink_ = nullptr;
  std::string buf_;
  std::size_t pos_ = 0;
  std::size_t region_ = kNone;
  bool at_end_ = false;
  TextChannel content_;
  TextChannel reasoning_;
  // The call in progress.
  bool begun_ = false;
  std::size_t index_ = 0;
  std::string name_;
  std::string args_;
  std::size_t next_index_ = 0;
  std::vector<std::size_t> bad_calls_;
};

}  // namespace overhead::agent::detail
