// The `think` reasoning parser (family.hpp: make_think_stage): Qwen3's and DeepSeek-R1's
// <think>...</think> block at the start of the answer is reasoning; the text after </think> goes
// to the tool family. A <think> later in the answer is the family's text. With
// starts_in_reasoning (the prompt opened the block) the answer starts inside it.
#include "agent/family.hpp"

namespace overhead::agent::detail {

namespace think {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

class ThinkStage final : public Family {
 public:
  ThinkStage(std::unique_ptr<Family> inner, bool starts_in_reasoning)
      : inner_(std::move(inner)), starts_in_reasoning_(starts_in_reasoning) {}

  bool step(Stream& s) override {
    bool progress = false;
    switch (state_) {
      case State::start: {
        const std::string_view text = s.pending();
        const std::size_t n = space_prefix(text);
        const Prefix p = match_prefix(text.substr(n), kOpen);
        if (p == Prefix::partial) return false;  // still whitespace, or a part of <think>
        if (p == Prefix::full) s.consume(n + kOpen.size());
        enter(s, p == Prefix::full || starts_in_reasoning_);
        return true;
      }
      case State::reasoning:
        if (text_until(s, Delta::Kind::reasoning, {kClose}, progress) == MarkerScan::kNone) return progress;
        s.consume(kClose.size());
        s.reasoning_boundary();
        s.content_boundary();
        state_ = State::inner;
        return true;
      case State::inner:
        return inner_->step(s);
    }
    return progress;
  }

  void finish(Stream& s) override {
    if (state_ == State::start) enter(s, starts_in_reasoning_);
    if (state_ == State::reasoning) {
      s.reasoning(s.pending());
      s.consume(s.pending().size());
      return;
    }
    while (inner_->step(s)) {
    }
    inner_->finish(s);
  }

 private:
  void enter(Stream& s, bool reasoning) {
    if (reasoning) s.reasoning_boundary();
    state_ = reasoning ? State::reasoning : State::inner;
  }
  enum class State { start, reasoning, inner };
  std::unique_ptr<Family> inner_;
  bool starts_in_reasoning_;
  State state_ = State::start;
};

}  // namespace think

std::unique_ptr<Family> make_think_stage(std::unique_ptr<Family> inner, bool starts_in_reasoning) {
  return std::make_unique<think::ThinkStage>(std::move(inner), starts_in_reasoning);
}

}  // namespace overhead::agent::detail
