#include "serve/answer_shape.hpp"

#include <exception>
#include <stdexcept>

#include "chat/chat_template.hpp"
#include "serve/api_error.hpp"
#include "serve/request_json.hpp"

namespace overhead::serve {
namespace {

using Json = nlohmann::ordered_json;

// Whether the prompt the worker will render ends inside an opened <think> block (DeepSeek-R1's
// template ends the generation prompt with it): the answer then starts as reasoning. The gateway
// renders the prompt once more for this, only for templates that write <think> at all.
bool prompt_opens_think(const binding::ChatBinding& b, const ChatRequest& r) {
  if (b.chat_template().source().find("<think>") == std::string::npos) return false;
  Json messages = r.messages;
  for (auto& m : messages)
    if (!m.contains("content")) m["content"] = nullptr;  // as the work item carries them
  Json extra = r.template_kwargs;  // enable_thinking and the like decide whether it opens one
  if (!r.tools.is_null()) extra["tools"] = r.tools;
  chat::RenderOptions options;
  options.add_generation_prompt = true;
  try {
    return agent::prompt_opens_reasoning(b.chat_template().render(messages, options, extra));
  } catch (const std::exception&) {
    return false;  // the worker's render refuses it too, and answers with the template's error
  }
}

}  // namespace

std::string parser_names(bool reasoning) {
  std::string out = "none";
  for (const auto name : reasoning ? agent::reasoning_parser_names() : agent::tool_parser_names()) {
    out += ", ";
    out += name;
  }
  return out;
}

void check_parser_overrides(const ParserOverrides& o) {
  if (o.tool_parser && *o.tool_parser != "none" && !agent::is_tool_parser(*o.tool_parser))
    throw std::invalid_argument("unknown tool parser '" + *o.tool_parser + "'; the names are " + parser_names(false));
  if (o.reasoning_parser && *o.reasoning_parser != "none" && !agent::is_reasoning_parser(*o.reasoning_parser))
    throw std::invalid_argument("unknown reasoning parser '" + *o.reasoning_parser + "'; the names are " + parser_names(true));
  if (o.tool_parser && o.reasoning_parser) {
    agent::ParserOptions p;
    p.tool_parser = *o.tool_parser == "none" ? "" : *o.tool_parser;
    p.reasoning_parser = *o.reasoning_parser == "none" ? "" : *o.reasoning_parser;
    agent::AnswerParser check(p);  // throws on a pair it cannot read together
  }
}

agent::DetectedParsers AnswerShapes::detected(const binding::ChatBinding& b) {
  std::lock_guard lock(mutex_);
  auto it = detected_.find(b.name());
  if (it == detected_.end()) it = detected_.emplace(b.name(), agent::detect_parsers(b.chat_template().source())).first;
  return it->second;
}

std::shared_ptr<const AnswerShape> AnswerShapes::shape(const binding::ChatBinding* b, const ChatRequest& r, const std::string& id) {
  agent::DetectedParsers found = b ? detected(*b) : agent::DetectedParsers{};
  if (overrides_.tool_parser) found.tool_parser = *overrides_.tool_parser == "none" ? "" : *overrides_.tool_parser;
  if (overrides_.reasoning_parser) found.reasoning_parser = *overrides_.reasoning_parser == "none" ? "" : *overrides_.reasoning_parser;
  // Calls are read only when the request gave tools and did not say none. (The harmony format's
  // channels are read by the gpt_oss family whatever the request says: a call there is never text.)
  if (r.tool_choice == ToolChoice::none) found.tool_parser.clear();
  if (r.constraint) {
    // The engine writes the constrained document only: no markers, no reasoning block to read.
    auto s = std::make_shared<AnswerShape>();
    s->options.call_id_prefix = "call_" + id + "_";
    s->first_call_only = !r.parallel_tool_calls;
    s->constraint = r.constraint;
    return s;
  }
  if (found.tool_parser.empty() && found.reasoning_parser.empty()) return nullptr;
  auto s = std::make_shared<AnswerShape>();
  s->options.tool_parser = found.tool_parser;
  s->options.reasoning_parser = found.reasoning_parser;
  s->options.call_id_prefix = "call_" + id + "_";
  s->options.starts_in_reasoning = b && found.reasoning_parser == "think" && prompt_opens_think(*b, r);
  s->first_call_only = !r.parallel_tool_calls;
  try {
    agent::AnswerParser check(s->options);
  } catch (const std::invalid_argument& e) {
    throw RequestError{{500, std::string("The answer parsers of this model do not go together (--tool-parser, --reasoning-parser): ") + e.what(),
                        "server_error", "", "parser_mismatch"}};
  }
  return s;
}

agent::ParsedAnswer parse_answer(const AnswerShape* shape, std::string text) {
  if (!shape) return agent::ParsedAnswer{std::move(text), {}, {}};
  agent::ParsedAnswer a = agent::parse_whole(shape->options, text);
  if (shape->first_call_only && a.calls.size() > 1) a.calls.resize(1);
  return a;
}

std::string answer_finish_reason(const std::string& engine_reason, std::size_t calls) {
  return calls > 0 && engine_reason == "stop" ? "tool_calls" : engine_reason;
}

}  // namespace overhead::serve
