#include "serve/chat_request.hpp"

#include <array>
#include <sstream>
#include <algorithm>
#include <cstdint>
#include <string_view>

namespace overhead::serve {
namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void fail(const std::string& param, const std::string& what, const char* code = "invalid_type") {
  throw RequestError{{400, "'" + param + "' " + what, "invalid_request_error", param, code}};
}

constexpr std::array<std::string_view, 5> kRoles = {"system", "developer", "user", "assistant", "tool"};

// content: a string, or a list of parts each {"type":"text","text":string}; an assistant turn
// that carries tool_calls may leave it null.
void check_content(const Json& m, const std::string& param, std::string_view role) {
  const auto it = m.find("content");
  if (it == m.end() || it->is_null()) {
    if (role == "assistant" && m.contains("tool_calls")) return;
    throw RequestError{{400, "Missing required parameter: '" + param + ".content'", "invalid_request_error",
                        param + ".content", "missing_required_parameter"}};
  }
  if (it->is_string()) return;
  if (!it->is_array()) fail(param + ".content", "must be a string or an array of content parts");
  for (std::size_t i = 0; i < it->size(); ++i) {
    const Json& part = (*it)[i];
    const std::string p = param + ".content[" + std::to_string(i) + "]";
    if (!part.is_object()) fail(p, "must be an object");
    const auto type = part.find("type");
    if (type == part.end() || !type->is_string()) fail(p + ".type", "must be a string");
    if (*type != "text") fail(p + ".type", "must be 'text' (other content parts are not supported)", "unsupported_value");
    const auto text = part.find("text");
    if (text == part.end() || !text->is_string()) fail(p + ".text", "must be a string");
  }
}

std::optional<std::int64_t> optional_positive(const Json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || it->get<std::int64_t>() < 1) fail(name, "must be a positive integer");
  return it->get<std::int64_t>();
}

std::optional<double> optional_number(const Json& body, const char* name, double low, double high) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_number() || it->get<double>() < low || it->get<double>() > high) {
    const auto bound = [](double v) {
      std::ostringstream out;
      out << v;
      return out.str();
    };
    fail(name, "must be a number from " + bound(low) + " to " + bound(high));
  }
  return it->get<double>();
}

// The sampling fields the engine gets as sent (OpenAI's ranges); null when none is set.
std::shared_ptr<const ports::SamplingParams> parse_sampling(const Json& body) {
  ports::SamplingParams s;
  s.temperature = optional_number(body, "temperature", 0, 2);
  s.top_p = optional_number(body, "top_p", 0, 1);
  s.presence_penalty = optional_number(body, "presence_penalty", -2, 2);
  s.frequency_penalty = optional_number(body, "frequency_penalty", -2, 2);
  if (const auto it = body.find("seed"); it != body.end() && !it->is_null()) {
    if (!it->is_number_integer()) fail("seed", "must be an integer");
    if (it->is_number_unsigned() && it->get<std::uint64_t>() > std::uint64_t(INT64_MAX)) fail("seed", "must fit a signed 64-bit integer");
    s.seed = it->get<std::int64_t>();
  }
  if (const auto it = body.find("stop"); it != body.end() && !it->is_null()) {
    if (it->is_string()) {
      s.stop.push_back(it->get<std::string>());
    } else if (it->is_array()) {
      if (it->size() > 4) fail("stop", "holds " + std::to_string(it->size()) + " sequences; the limit is 4", "invalid_value");
      for (std::size_t i = 0; i < it->size(); ++i) {
        if (!(*it)[i].is_string()) fail("stop[" + std::to_string(i) + "]", "must be a string");
        s.stop.push_back((*it)[i].get<std::string>());
      }
    } else {
      fail("stop", "must be a string or an array of up to 4 strings");
    }
    for (std::size_t i = 0; i < s.stop.size(); ++i)
      if (s.stop[i].empty()) fail(it->is_string() ? "stop" : "stop[" + std::to_string(i) + "]", "must not be empty", "invalid_value");
  }
  if (const auto it = body.find("user"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) fail("user", "must be a string");
    s.user = it->get<std::string>();
  }
  const bool any = s.temperature || s.top_p || s.presence_penalty || s.frequency_penalty || s.seed || !s.stop.empty() || !s.user.empty();
  return any ? std::make_shared<const ports::SamplingParams>(std::move(s)) : nullptr;
}

// Parameters that change what an answer is made of, which this gateway cannot honour: refused by
// name rather than ignored, so a client never takes one answer for n, or text for JSON.
void refuse_unsupported(const Json& body) {
  if (const auto n = body.find("n"); n != body.end() && !n->is_null()) {
    if (!n->is_number_integer() || n->get<std::int64_t>() < 1) fail("n", "must be a positive integer");
    if (n->get<std::int64_t>() > 1) fail("n", "must be 1: one choice per request is supported", "unsupported_value");
  }
  if (const auto l = body.find("logprobs"); l != body.end() && !l->is_null()) {
    if (!l->is_boolean()) fail("logprobs", "must be a boolean");
    if (l->get<bool>()) fail("logprobs", "is not supported (no log probabilities are computed)", "unsupported_value");
  }
  if (const auto t = body.find("top_logprobs"); t != body.end() && !t->is_null())
    fail("top_logprobs", "is not supported (no log probabilities are computed)", "unsupported_value");
  // What the engine is not asked for: honouring these is not possible through /v1/completions.
  if (const auto b = body.find("logit_bias"); b != body.end() && !b->is_null()) {
    if (!b->is_object()) fail("logit_bias", "must be an object");
    if (!b->empty()) fail("logit_bias", "is not supported (token biases are not passed to the engine)", "unsupported_value");
  }
  for (const char* name : {"audio", "prediction", "web_search_options", "functions", "function_call"})
    if (const auto f = body.find(name); f != body.end() && !f->is_null())
      fail(name, "is not supported by this gateway", "unsupported_value");
  if (const auto m = body.find("modalities"); m != body.end() && !m->is_null()) {
    if (*m != Json::array({"text"})) fail("modalities", "must be [\"text\"]: only text answers are supported", "unsupported_value");
  }
}

// stream and stream_options.include_usage.
void parse_stream(const Json& body, ChatRequest& r) {
  r.stream = optional_bool(body, "stream", false);
  if (const auto so = body.find("stream_options"); so != body.end() && !so->is_null()) {
    if (!so->is_object()) fail("stream_options", "must be an object");
    if (!r.stream) fail("stream_options", "is only allowed when 'stream' is true", "invalid_value");
    const auto iu = so->find("include_usage");
    if (iu != so->end() && !iu->is_null()) {
      if (!iu->is_boolean()) fail("stream_options.include_usage", "must be a boolean");
      r.include_usage = iu->get<bool>();
    }
  }
}

// The structured-output constraint: response_format, or tool_choice required / a named function
// (not both: one answer cannot be a JSON document of the client's schema and calls at once).
void parse_constraint(const Json& body, ChatRequest& r) {
  const auto f = body.find("response_format");
  r.constraint = response_format_constraint(f == body.end() ? nullptr : &*f);
  if (r.tool_choice != ToolChoice::required && r.tool_choice != ToolChoice::named) {
    if (r.tools.is_array() && !r.tools.empty()) check_tool_parameters(r.tools);  // the constrained path checks them itself
    return;
  }
  if (r.constraint)
    fail("response_format", "cannot be combined with tool_choice 'required' or a named function: the answer is either calls or one JSON document",
         "invalid_value");
  r.constraint = tool_choice_constraint(r.tools, r.tool_choice == ToolChoice::named ? r.tool_choice_name : "", r.parallel_tool_calls);
}

// tool_choice: "none", "auto", "required", or {"type":"function","function":{"name":NAME}} naming
// one of `tools`. Anything else is refused by name before anything is queued.
void parse_tool_choice(const Json& body, ChatRequest& r) {
  const bool has_tools = r.tools.is_array() && !r.tools.empty();
  r.tool_choice = has_tools ? ToolChoice::automatic : ToolChoice::none;
  if (const auto p = body.find("parallel_tool_calls"); p != body.end() && !p->is_null()) {
    if (!p->is_boolean()) fail("parallel_tool_calls", "must be a boolean");
    r.parallel_tool_calls = p->get<bool>();
  }
  const auto it = body.find("tool_choice");
  if (it == body.end() || it->is_null()) return;
  if (it->is_string()) {
    const std::string v = it->get<std::string>();
    if (v == "none") {
      r.tool_choice = ToolChoice::none;
    } else if (v == "auto" || v == "required") {
      if (!has_tools && v == "required") fail("tool_choice", "is 'required' but no 'tools' are given", "invalid_value");
      if (has_tools) r.tool_choice = v == "auto" ? ToolChoice::automatic : ToolChoice::required;
    } else {
      fail("tool_choice", "must be 'none', 'auto', 'required' or {\"type\": \"function\", \"function\": {\"name\": ...}} (got '" + v + "')",
           "invalid_value");
    }
    return;
  }
  if (!it->is_object()) fail("tool_choice", "must be a string or an object naming a function");
  const auto type = it->find("type");
  if (type == it->end() || !type->is_string() || *type != "function") fail("tool_choice.type", "must be 'function'", "invalid_value");
  const auto fn = it->find("function");
  if (fn == it->end() || !fn->is_object()) fail("tool_choice.function", "must be an object");
  const auto name = fn->find("name");
  if (name == fn->end() || !name->is_string()) fail("tool_choice.function.name", "must be a string");
  const std::string wanted = name->get<std::string>();
  if (has_tools)
    for (const Json& t : r.tools)
      if (t["function"]["name"] == wanted) {
        r.tool_choice = ToolChoice::named;
        r.tool_choice_name = wanted;
        return;
      }
  fail("tool_choice.function.name", "names '" + wanted + "', which is not among 'tools'", "invalid_value");
}

// The template's own variables (chat/chat_template.cpp binds them), which a kwarg must not replace.
constexpr std::array<std::string_view, 13> kTemplateVariables = {
    "messages",  "tools",     "documents", "add_generation_prompt", "bos_token",      "eos_token",    "unk_token",
    "sep_token", "pad_token", "cls_token", "mask_token",            "raise_exception", "strftime_now"};

// chat_template_kwargs: further variables for the chat template (enable_thinking,
// reasoning_effort, ...), carried by the work item to the worker that renders.
void parse_template_kwargs(const Json& body, ChatRequest& r) {
  const auto it = body.find("chat_template_kwargs");
  if (it == body.end() || it->is_null()) return;
  if (!it->is_object()) fail("chat_template_kwargs", "must be an object");
  for (auto kv = it->begin(); kv != it->end(); ++kv)
    if (std::find(kTemplateVariables.begin(), kTemplateVariables.end(), kv.key()) != kTemplateVariables.end())
      fail("chat_template_kwargs." + kv.key(), "is a variable the gateway sets itself (messages, tools, add_generation_prompt, special tokens): use the request's own field",
           "invalid_value");
  r.template_kwargs = *it;
}

}  // namespace

// tools: a list of {"type":"function","function":{"name":string,...}}, as OpenAI's schema has it.
nlohmann::ordered_json checked_tools(const Json& body) {
  const auto it = body.find("tools");
  if (it == body.end() || it->is_null()) return nullptr;
  if (!it->is_array()) fail("tools", "must be an array of tool definitions");
  for (std::size_t i = 0; i < it->size(); ++i) {
    const Json& t = (*it)[i];
    const std::string p = "tools[" + std::to_string(i) + "]";
    if (!t.is_object()) fail(p, "must be an object");
    const auto type = t.find("type");
    if (type == t.end() || !type->is_string()) fail(p + ".type", "must be a string");
    if (*type != "function") fail(p + ".type", "must be 'function' (other tool types are not supported)", "unsupported_value");
    const auto fn = t.find("function");
    if (fn == t.end() || !fn->is_object()) fail(p + ".function", "must be an object");
    const auto name = fn->find("name");
    if (name == fn->end() || !name->is_string()) fail(p + ".function.name", "must be a string");
  }
  return *it;
}

ChatRequest parse_chat_request(const Json& body, std::size_t max_messages) {
  ChatRequest r;
  r.model = required_string(body, "model");
  const auto it = body.find("messages");
  if (it == body.end())
    throw RequestError{{400, "Missing required parameter: 'messages'", "invalid_request_error", "messages", "missing_required_parameter"}};
  if (!it->is_array() || it->empty()) fail("messages", "must be a non-empty array");
  if (it->size() > max_messages)
    fail("messages", "holds " + std::to_string(it->size()) + " messages; the limit is " + std::to_string(max_messages), "too_many_messages");
  for (std::size_t i = 0; i < it->size(); ++i) {
    const Json& m = (*it)[i];
    const std::string param = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) fail(param, "must be an object");
    const auto role = m.find("role");
    if (role == m.end() || !role->is_string()) fail(param + ".role", "must be a string");
    const std::string role_name = role->get<std::string>();
    if (std::find(kRoles.begin(), kRoles.end(), role_name) == kRoles.end())
      fail(param + ".role", "must be one of system, developer, user, assistant, tool (got '" + role_name + "')", "invalid_value");
    check_content(m, param, role_name);
  }
  r.messages = *it;
  parse_stream(body, r);
  r.max_tokens = optional_positive(body, "max_completion_tokens");
  if (!r.max_tokens) r.max_tokens = optional_positive(body, "max_tokens");
  r.sampling = parse_sampling(body);
  refuse_unsupported(body);
  r.tools = checked_tools(body);
  parse_tool_choice(body, r);
  parse_constraint(body, r);
  parse_template_kwargs(body, r);
  return r;
}

ChatRequest parse_completion_request(const Json& body) {
  ChatRequest r;
  r.model = required_string(body, "model");
  const auto it = body.find("prompt");
  if (it == body.end() || it->is_null())
    throw RequestError{{400, "Missing required parameter: 'prompt'", "invalid_request_error", "prompt", "missing_required_parameter"}};
  const Json* text = &*it;
  if (it->is_array()) {
    if (it->size() == 1 && (*it)[0].is_string()) {
      text = &(*it)[0];
    } else if (!it->empty() && ((*it)[0].is_number_integer() || (*it)[0].is_array())) {
      fail("prompt", "token-id prompts are not served: send the prompt as text", "unsupported_value");
    } else {
      fail("prompt", "must be one text (or a list of one): one prompt per request is supported", "unsupported_value");
    }
  }
  if (!text->is_string()) fail("prompt", "must be a string");
  if (text->get_ref<const std::string&>().empty()) fail("prompt", "must not be empty", "invalid_value");
  r.prompt_text = text->get<std::string>();
  r.messages = Json::array();
  parse_stream(body, r);
  r.max_tokens = optional_positive(body, "max_tokens");
  if (!r.max_tokens) r.max_tokens = 16;  // OpenAI's default for completions
  r.sampling = parse_sampling(body);
  r.tool_choice = ToolChoice::none;
  if (const auto n = body.find("n"); n != body.end() && !n->is_null()) {
    if (!n->is_number_integer() || n->get<std::int64_t>() < 1) fail("n", "must be a positive integer");
    if (n->get<std::int64_t>() > 1) fail("n", "must be 1: one choice per request is supported", "unsupported_value");
  }
  if (const auto b = body.find("best_of"); b != body.end() && !b->is_null()) {
    if (!b->is_number_integer() || b->get<std::int64_t>() < 1) fail("best_of", "must be a positive integer");
    if (b->get<std::int64_t>() > 1) fail("best_of", "must be 1: one generation per request is supported", "unsupported_value");
  }
  if (optional_bool(body, "echo", false)) fail("echo", "is not supported (the answer is the generated text only)", "unsupported_value");
  if (const auto l = body.find("logprobs"); l != body.end() && !l->is_null()) {
    if (!l->is_number_integer() || l->get<std::int64_t>() < 0 || l->get<std::int64_t>() > 5) fail("logprobs", "must be an integer from 0 to 5");
    if (l->get<std::int64_t>() > 0) fail("logprobs", "is not supported (no log probabilities are computed)", "unsupported_value");
  }
  if (const auto s = body.find("suffix"); s != body.end() && !s->is_null())
    fail("suffix", "is not supported (no insertion: the engine continues the prompt)", "unsupported_value");
  if (const auto b = body.find("logit_bias"); b != body.end() && !b->is_null()) {
    if (!b->is_object()) fail("logit_bias", "must be an object");
    if (!b->empty()) fail("logit_bias", "is not supported (token biases are not passed to the engine)", "unsupported_value");
  }
  return r;
}

}  // namespace overhead::serve
