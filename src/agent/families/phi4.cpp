// phi4: Phi-4-mini's function calling. The template lists the tools between <|tool|> and
// <|/tool|> in the system turn; the model answers with a JSON array of calls between
//   <|tool_call|>[{"name": "f", "arguments": {...}}, ...]<|/tool_call|>
// and some checkpoints write `functools[...]` instead (the form vLLM's phi4_mini_json reads).
#include "agent/call_object.hpp"
#include "agent/family.hpp"

namespace overhead::agent::detail {

namespace phi4_family {

constexpr std::string_view kOpen = "<|tool_call|>";
constexpr std::string_view kFunctools = "functools";
constexpr std::string_view kClose = "<|/tool_call|>";

class Phi4 final : public Family {
 public:
  bool step(Stream& s) override {
    bool progress = false;
    switch (state_) {
      case State::content: {
        const std::size_t which = content_until(s, {kOpen, kFunctools}, progress);
        if (which == MarkerScan::kNone) return progress;
        s.open_region();
        s.consume(which == 0 ? kOpen.size() : kFunctools.size());
        section_ = CallSection({.array = true, .object = which == 0, .separator = '\0'});
        state_ = State::section;
        return true;
      }
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
  CallSection section_{{}};
};

}  // namespace phi4_family

std::unique_ptr<Family> make_phi4() { return std::make_unique<phi4_family::Phi4>(); }

}  // namespace overhead::agent::detail
