// hermes: Hermes 2 Pro, Qwen2.5 and Qwen3 templates. A call is a JSON object between tags:
//   text <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>
// several calls are several blocks. The call completes with its object; the closing tag is then
// consumed when it comes (Qwen models sometimes stop before it).
#include "agent/call_object.hpp"
#include "agent/family.hpp"

namespace overhead::agent::detail {

namespace hermes_family {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

class Hermes final : public Family {
 public:
  bool step(Stream& s) override {
    bool progress = false;
    switch (state_) {
      case State::content:
        if (content_until(s, {kOpen}, progress) == MarkerScan::kNone) return progress;
        s.open_region();
        s.consume(kOpen.size());
        section_.reset();
        state_ = State::section;
        return true;
      case State::section:
        progress = section_.step(s);
        if (section_.status() == CallSection::Status::running) return progress;
        state_ = section_.status() == CallSection::Status::done ? State::close : State::content;
        return true;
      case State::close: {
        const std::size_t w = after_space(s, {kClose});
        if (w == kWait) return false;
        if (w == 0) s.consume(kClose.size());
        state_ = State::content;
        return true;
      }
    }
    return progress;
  }

 private:
  enum class State { content, section, close };
  State state_ = State::content;
  CallSection section_{{.array = true, .object = true, .separator = '\0'}};
};

}  // namespace hermes_family

std::unique_ptr<Family> make_hermes() { return std::make_unique<hermes_family::Hermes>(); }

}  // namespace overhead::agent::detail
