// Folding deltas into an answer (answer.hpp).
#include "agent/answer.hpp"

namespace overhead::agent {

std::string call_id(std::string_view prefix, std::size_t index) {
  std::string id(prefix);
  id += std::to_string(index);
  return id;
}

void apply(ParsedAnswer& answer, const Delta& delta) {
  switch (delta.kind) {
    case Delta::Kind::content:
      answer.content += delta.text;
      return;
    case Delta::Kind::reasoning:
      answer.reasoning += delta.text;
      return;
    case Delta::Kind::tool_call:
      if (delta.index >= answer.calls.size()) answer.calls.resize(delta.index + 1);
      ToolCall& call = answer.calls[delta.index];
      if (!delta.id.empty()) call.id = delta.id;
      if (!delta.name.empty()) call.name = delta.name;
      call.arguments += delta.text;
      return;
  }
}

ParsedAnswer accumulate(std::span<const Delta> deltas) {
  ParsedAnswer answer;
  for (const Delta& d : deltas) apply(answer, d);
  return answer;
}

}  // namespace overhead::agent
