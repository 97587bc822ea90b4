// mistral: Mistral's [TOOL_CALLS] token, in its two forms:
//   [TOOL_CALLS][{"name": "f", "arguments": {...}}, ...]      (tokenizer v3 to v7: a JSON array)
//   [TOOL_CALLS]f[ARGS]{...}[TOOL_CALLS]g[ARGS]{...}           (v11 and later: name, then arguments)
//   [TOOL_CALLS]f[CALL_ID]a1b2c3d4e[ARGS]{...}                 (tokenizers with call-id tokens)
// Text before [TOOL_CALLS] is content. A name is [A-Za-z0-9_.-]{1,128}, a model's call id
// [A-Za-z0-9]{1,64} (dropped: ids are ours, answer.hpp); anything else makes the text content.
#include <cctype>

#include "agent/call_object.hpp"
#include "agent/family.hpp"
#include "agent/json_scan.hpp"

namespace overhead::agent::detail {

namespace mistral_family {

constexpr std::string_view kCalls = "[TOOL_CALLS]";
constexpr std::string_view kArgs = "[ARGS]";
constexpr std::string_view kCallId = "[CALL_ID]";
constexpr std::size_t kMaxCallId = 64;
constexpr std::size_t kMaxName = 128;

bool name_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '-';
}

class Mistral final : public Family {
 public:
  bool step(Stream& s) override {
    bool progress = false;
    switch (state_) {
      case State::content:
        if (content_until(s, {kCalls}, progress) == MarkerScan::kNone) return progress;
        open_call(s);
        return true;
      case State::after_marker: {
        if (!skip_space(s, progress)) return progress;
        const char c = s.pending().front();
        if (c == '[' || c == '{') {
          section_.reset();
          state_ = State::section;
        } else {
          name_.clear();
          state_ = State::name;
        }
        return true;
      }
      case State::section:
        progress = section_.step(s);
        if (section_.status() == CallSection::Status::running) return progress;
        state_ = State::content;
        return true;
      case State::name:
        return read_name(s);
      case State::call_id:
        return read_call_id(s);
      case State::args: {
        bool fed = false;
        const std::optional<bool> kept = arguments_.step(s, fed);
        if (!kept) return fed;
        state_ = *kept ? State::after_call : State::content;
        return true;
      }
      case State::after_call: {
        const std::size_t w = after_space(s, {kCalls});
        if (w == kWait) return false;
        if (w == 0) {
          open_call(s);
        } else {
          state_ = State::content;
        }
        return true;
      }
    }
    return progress;
  }

 private:
  void open_call(Stream& s) {
    s.open_region();
    s.consume(kCalls.size());
    state_ = State::after_marker;
  }

  bool read_name(Stream& s) {
    const std::string_view text = s.pending();
    // Stop at the byte that makes the name too long, so the rejection falls on the same byte
    // wherever the text was cut.
    const std::size_t room = kMaxName - name_.size();
    std::size_t i = 0;
    while (i < text.size() && i <= room && name_byte(text[i])) ++i;
    if (i > room) {
      s.consume(room);
      return reject(s);
    }
    name_.append(text.substr(0, i));
    s.consume(i);
    if (i == text.size()) return i > 0;
    const std::string_view rest = text.substr(i);
    const Prefix id = match_prefix(rest, kCallId);
    if (id == Prefix::full && !name_.empty()) {
      s.consume(kCallId.size());
      id_length_ = 0;
      state_ = State::call_id;
      return true;
    }
    return after_word(s, rest, id == Prefix::partial, i > 0);
  }

  bool read_call_id(Stream& s) {
    const std::string_view text = s.pending();
    const std::size_t room = kMaxCallId - id_length_;
    std::size_t i = 0;
    while (i < text.size() && i <= room && std::isalnum(static_cast<unsigned char>(text[i])) != 0) ++i;
    if (i > room) {
      s.consume(room);
      return reject(s);
    }
    id_length_ += i;
    s.consume(i);
    if (i == text.size()) return i > 0;
    if (id_length_ == 0) return reject(s);
    return after_word(s, text.substr(i), false, i > 0);
  }

  // After a name or call id: [ARGS] starts the arguments; `maybe_other` when `rest` may still
  // become another token.
  bool after_word(Stream& s, std::string_view rest, bool maybe_other, bool progress) {
    const Prefix p = match_prefix(rest, kArgs);
    if (p == Prefix::partial || (p == Prefix::no && maybe_other)) return progress;
    if (p == Prefix::no || name_.empty()) return reject(s);
    s.consume(kArgs.size());
    s.begin_call(name_);
    arguments_.reset();
    state_ = State::args;
    return true;
  }

  bool reject(Stream& s) {
    s.reject_region();
    state_ = State::content;
    return true;
  }

  enum class State { content, after_marker, section, name, call_id, args, after_call };
  State state_ = State::content;
  CallSection section_{{.array = true, .object = true, .separator = '\0'}};
  CallArguments arguments_;  // a call's arguments as they arrive
  std::string name_;
  std::size_t id_length_ = 0;
};

}  // namespace mistral_family

std::unique_ptr<Family> make_mistral() { return std::make_unique<mistral_family::Mistral>(); }

}  // namespace overhead::agent::detail
