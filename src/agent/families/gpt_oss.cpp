// gpt_oss: OpenAI's harmony format (gpt-oss). The answer is a run of messages, each a header and
// a body:
//   <|channel|>analysis<|message|>...<|end|>                          reasoning
//   <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>
//   <|start|>assistant<|channel|>final<|message|>...<|return|>        content
// The recipient (`to=functions.NAME`) may also stand before <|channel|>. A body ends at <|end|>,
// <|return|> or <|call|>, or where the next header starts. Headers are dropped; a commentary
// message without a recipient is content (a preamble); a recipient outside `functions.` (the
// built-in browser and python tools) is not a function call, so its body is content too.
// Text outside any message is content.
#include "agent/family.hpp"
#include "agent/json_scan.hpp"

namespace overhead::agent::detail {

namespace gpt_oss_family {

constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kEnd = "<|end|>";
constexpr std::string_view kReturn = "<|return|>";
constexpr std::string_view kCall = "<|call|>";
constexpr std::string_view kFunctions = "functions.";
constexpr std::size_t kMaxHeader = 1024;

// The word after `key` in a header, up to whitespace or the next special token.
std::string_view header_word(std::string_view header, std::string_view key) {
  const std::size_t at = header.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view rest = header.substr(at + key.size());
  std::size_t n = 0;
  while (n < rest.size() && !is_space(rest[n]) && rest[n] != '<') ++n;
  return rest.substr(0, n);
}

class GptOss final : public Family {
 public:
  bool step(Stream& s) override {
    bool progress = false;
    switch (state_) {
      case State::outside: {
        const std::size_t which = content_until(s, {kStart, kChannel, kEnd, kReturn, kCall}, progress);
        if (which == MarkerScan::kNone) return progress;
        if (which <= 1) {
          s.open_region();
          header_.clear();
          state_ = State::header;
        } else {
          s.consume(which == 2 ? kEnd.size() : which == 3 ? kReturn.size() : kCall.size());
        }
        return true;
      }
      case State::header: {
        const std::string_view text = s.pending();
        const MarkerScan scan = scan_markers(text, {kMessage});
        const std::size_t room = kMaxHeader - header_.size();
        if (scan.safe > room) {  // too long for a header: rejected at the same byte however cut
          s.consume(room);
          s.reject_region();
          state_ = State::outside;
          return true;
        }
        header_.append(text.substr(0, scan.safe));
        s.consume(scan.safe);
        if (!scan.found()) return scan.safe > 0;
        s.consume(kMessage.size());
        open_body(s);
        return true;
      }
      case State::body: {
        const std::size_t which = text_until(s, kind_, {kEnd, kReturn, kCall, kStart, kChannel}, progress);
        if (which == MarkerScan::kNone) return progress;
        if (which <= 2) s.consume(which == 0 ? kEnd.size() : which == 1 ? kReturn.size() : kCall.size());
        boundary(s);
        state_ = State::outside;
        return true;
      }
      case State::call: {
        bool fed = false;
        const std::optional<bool> kept = arguments_.step(s, fed);
        if (!kept) return fed;
        state_ = *kept ? State::after_call : State::outside;
        return true;
      }
      case State::after_call: {
        const std::size_t w = after_space(s, {kCall, kEnd});
        if (w == kWait) return false;
        if (w != MarkerScan::kNone) s.consume(w == 0 ? kCall.size() : kEnd.size());
        state_ = State::outside;
        return true;
      }
    }
    return progress;
  }

  void finish(Stream& s) override {
    if (state_ == State::body && kind_ == Delta::Kind::reasoning) {
      s.reasoning(s.pending());
      s.consume(s.pending().size());
      return;
    }
    Family::finish(s);
  }

 private:
  void open_body(Stream& s) {
    const std::string_view recipient = header_word(header_, "to=");
    if (recipient.substr(0, kFunctions.size()) == kFunctions && recipient.size() > kFunctions.size()) {
      s.begin_call(recipient.substr(kFunctions.size()));
      arguments_.reset();
      state_ = State::call;
      return;
    }
    s.drop_region();
    kind_ = header_word(header_, kChannel) == "analysis" && recipient.empty() ? Delta::Kind::reasoning
                                                                              : Delta::Kind::content;
    boundary(s);
    state_ = State::body;
  }
  void boundary(Stream& s) const {
    if (kind_ == Delta::Kind::reasoning) {
      s.reasoning_boundary();
    } else {
      s.content_boundary();
    }
  }

  enum class State { outside, header, body, call, after_call };
  State state_ = State::outside;
  Delta::Kind kind_ = Delta::Kind::content;
  std::string header_;
  CallArguments arguments_;  // a call's arguments as they arrive
};

}  // namespace gpt_oss_family

std::unique_ptr<Family> make_gpt_oss() { return std::make_unique<gpt_oss_family::GptOss>(); }

}  // namespace overhead::agent::detail
