// llama3_json: Llama 3.1, 3.2 and 3.3 with JSON tool calling. The answer is a call when it
// starts (after whitespace) with a JSON object {"name": ..., "parameters"|"arguments": ...},
// or with <|python_tag|> before it; several calls are separated by `;`. <|python_tag|> later in
// the text opens calls too. An object that turns out to be no call (no "name", or no
// "parameters"/"arguments": an answer that is JSON) is content.
#include "agent/call_object.hpp"
#include "agent/family.hpp"

namespace overhead::agent::detail {

namespace llama3_family {

constexpr std::string_view kPythonTag = "<|python_tag|>";

class Llama3Json final : public Family {
 public:
  bool step(Stream& s) override {
    bool progress = false;
    switch (state_) {
      case State::start: {
        const std::string_view text = s.pending();
        const std::size_t n = space_prefix(text);
        if (n == text.size()) return false;  // only whitespace yet
        const std::string_view rest = text.substr(n);
        if (rest.front() == '{') {
          open_section(s, n);
          return true;
        }
        const Prefix p = match_prefix(rest, kPythonTag);
        if (p == Prefix::partial) return false;
        if (p == Prefix::full) {
          open_section(s, n + kPythonTag.size());
          return true;
        }
        state_ = State::content;
        return true;
      }
      case State::content:
        if (content_until(s, {kPythonTag}, progress) == MarkerScan::kNone) return progress;
        open_section(s, kPythonTag.size());
        return true;
      case State::section:
        progress = section_.step(s);
        if (section_.status() == CallSection::Status::running) return progress;
        state_ = State::content;
        return true;
    }
    return progress;
  }

 private:
  void open_section(Stream& s, std::size_t skip) {
    s.open_region();
    s.consume(skip);
    section_.reset();
    state_ = State::section;
  }
  enum class State { start, content, section };
  State state_ = State::start;
  CallSection section_{{.array = false, .object = true, .separator = ';', .require_arguments = true}};
};

}  // namespace llama3_family

std::unique_ptr<Family> make_llama3_json() { return std::make_unique<llama3_family::Llama3Json>(); }

}  // namespace overhead::agent::detail
