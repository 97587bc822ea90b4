// deepseek_v3: DeepSeek-V3 and R1 (tokens spelled with U+FF5C FULLWIDTH VERTICAL LINE and U+2581
// LOWER ONE EIGHTH BLOCK, as in their tokenizer_config.json):
//   text<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>
//       <｜tool▁call▁begin｜>...<｜tool▁call▁end｜><｜tool▁calls▁end｜>
// DeepSeek-V3.1 writes the name where V3 writes the type, and the JSON right after the separator:
//   <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>
// so a `{` right after the separator makes the word before it the name. That word is at most 128
// bytes on one line; a V3 name runs to the end of its line. A call completes with its JSON; the
// fence and end tokens after it are consumed when they come. A fence-less `NAME\n{...}` is read too.
#include <algorithm>

#include "agent/family.hpp"
#include "agent/json_scan.hpp"

namespace overhead::agent::detail {

namespace deepseek_family {

constexpr std::string_view kCallsBegin = "<\uFF5Ctool\u2581calls\u2581begin\uFF5C>";
constexpr std::string_view kCallBegin = "<\uFF5Ctool\u2581call\u2581begin\uFF5C>";
constexpr std::string_view kSep = "<\uFF5Ctool\u2581sep\uFF5C>";
constexpr std::string_view kCallEnd = "<\uFF5Ctool\u2581call\u2581end\uFF5C>";
constexpr std::string_view kCallsEnd = "<\uFF5Ctool\u2581calls\u2581end\uFF5C>";
constexpr std::string_view kFence = "```";
constexpr std::string_view kJsonFence = "```json";
constexpr std::size_t kMaxType = 128;
constexpr std::size_t kMaxName = 256;

class DeepSeekV3 final : public Family {
 public:
  bool step(Stream& s) override {
    bool progress = false;
    switch (state_) {
      case State::content: {
        const std::size_t which = content_until(s, {kCallsBegin, kCallBegin}, progress);
        if (which == MarkerScan::kNone) return progress;
        s.open_region();
        if (which == 0) {
          s.consume(kCallsBegin.size());
          state_ = State::between;
        } else {
          s.consume(kCallBegin.size());
          begin_type();
        }
        return true;
      }
      case State::between:
        return between(s);
      case State::type: {
        const std::string_view text = s.pending();
        const MarkerScan scan = scan_markers(text, {kSep});
        // Reject at the very byte that makes the word no call type, wherever the text was cut.
        const std::size_t bad = first_bad(text.substr(0, scan.safe), kMaxType, '\n');
        word_.append(text.substr(0, std::min(bad, scan.safe)));
        s.consume(std::min(bad, scan.safe));
        if (bad < scan.safe) return reject(s);
        if (!scan.found()) return scan.safe > 0;
        s.consume(kSep.size());
        type_ = std::move(word_);
        word_.clear();
        state_ = State::name;
        return true;
      }
      case State::name: {
        const std::string_view text = s.pending();
        if (word_.empty() && !text.empty() && text.front() == '{') {  // V3.1: the word was the name
          word_ = type_;
          while (!word_.empty() && is_space(word_.back())) word_.pop_back();
          if (word_.empty()) return reject(s);
          start_args(s);
          return true;
        }
        const std::size_t nl = text.find('\n');
        const std::size_t take = nl == std::string_view::npos ? text.size() : nl;
        const std::size_t bad = first_bad(text.substr(0, take), kMaxName, '<');
        word_.append(text.substr(0, std::min(bad, take)));
        s.consume(std::min(bad, take));
        if (bad < take) return reject(s);
        if (nl == std::string_view::npos) return take > 0;
        s.consume(1);
        while (!word_.empty() && is_space(word_.back())) word_.pop_back();
        if (word_.empty()) return reject(s);
        state_ = State::fence;
        return true;
      }
      case State::fence: {
        if (!skip_space(s, progress)) return progress;
        const std::string_view text = s.pending();
        if (text.front() == '{') {
          start_args(s);
          return true;
        }
        const Prefix p = match_prefix(text, kJsonFence);
        if (p == Prefix::partial) return progress;
        if (p == Prefix::no) return reject(s);
        s.consume(kJsonFence.size());
        start_args(s);
        return true;
      }
      case State::args: {
        bool fed = false;
        const std::optional<bool> kept = arguments_.step(s, fed);
        if (!kept) return fed;
        state_ = *kept ? State::between : State::content;
        return true;
      }
    }
    return progress;
  }

 private:
  // The offset in `more` of the first byte that would make word_ + more longer than `limit` or
  // contain `forbidden`, or more.size().
  [[nodiscard]] std::size_t first_bad(std::string_view more, std::size_t limit, char forbidden) const {
    const std::size_t room = limit >= word_.size() ? limit - word_.size() : 0;
    const std::size_t at = more.find(forbidden);
    std::size_t bad = at == std::string_view::npos ? more.size() : at;
    if (bad > room) bad = room;
    return bad;
  }
  void begin_type() {
    word_.clear();
    state_ = State::type;
  }
  void start_args(Stream& s) {
    s.begin_call(word_);
    arguments_.reset();
    state_ = State::args;
  }
  bool reject(Stream& s) {
    s.reject_region();
    state_ = State::content;
    return true;
  }
  // Between calls: the previous call's fence and end token, the next call, or the section's end.
  bool between(Stream& s) {
    const std::size_t w = after_space(s, {kCallBegin, kCallsEnd, kCallEnd, kFence});
    if (w == kWait) return false;
    if (w == 0) {
      if (!s.region_open()) s.open_region();
      s.consume(kCallBegin.size());
      begin_type();
      return true;
    }
    if (w == MarkerScan::kNone) {
      if (s.region_open()) s.reject_region();  // a section that holds no call
      state_ = State::content;
      return true;
    }
    s.consume(w == 1 ? kCallsEnd.size() : w == 2 ? kCallEnd.size() : kFence.size());
    if (w == 1) {
      if (s.region_open()) s.reject_region();
      state_ = State::content;
    }
    return true;
  }

  enum class State { content, between, type, name, fence, args };
  State state_ = State::content;
  CallArguments arguments_;  // a call's arguments as they arrive
  std::string word_;
  std::string type_;
};

}  // namespace deepseek_family

std::unique_ptr<Family> make_deepseek_v3() { return std::make_unique<deepseek_family::DeepSeekV3>(); }

}  // namespace overhead::agent::detail
