// llama3_json (Llama 3.1-3.3): a JSON call at the start of the answer, or after <|python_tag|>,
// several separated by `;`. Case classes from vLLM's tests/tool_parsers/test_llama3_json_tool_parser.py
// (python_tag, several calls with `;`, text before) and SGLang's test/srt/test_function_call_parser.py
// (Llama32 detector: JSON with and without the tag, "parameters" and "arguments", a JSON answer that
// is no call).
#include "agent_cases.hpp"

namespace overhead::agent {
namespace {

using testing::answer;
using testing::Case;

std::vector<Case> llama3_cases() {
  return {
      {"no call", "Hello! How can I help you today?", answer("Hello! How can I help you today?")},
      {"bare JSON call", R"({"name": "get_weather", "parameters": {"city": "Rome", "days": 3}})",
       answer("", {{"get_weather", R"({"city":"Rome","days":3})"}})},
      {"after python_tag", R"(<|python_tag|>{"name": "search", "arguments": {"query": "llama 3.3"}})",
       answer("", {{"search", R"({"query":"llama 3.3"})"}})},
      {"two calls separated by ;",
       R"({"name": "get_weather", "parameters": {"city": "Rome"}}; {"name": "get_weather", "parameters": {"city": "Milan"}})",
       answer("", {{"get_weather", R"({"city":"Rome"})"}, {"get_weather", R"({"city":"Milan"})"}})},
      {"python_tag, three calls",
       "<|python_tag|>{\"name\": \"a\", \"parameters\": {}};{\"name\": \"b\", \"parameters\": {\"x\": [1]}} ; "
       "{\"name\": \"c\", \"parameters\": {\"y\": null}}",
       answer("", {{"a", "{}"}, {"b", R"({"x":[1]})"}, {"c", R"({"y":null})"}})},
      {"a ; inside a string", R"({"name": "sql", "parameters": {"q": "SELECT 1; SELECT 2"}}; {"name": "ping", "parameters": {}})",
       answer("", {{"sql", R"({"q":"SELECT 1; SELECT 2"})"}, {"ping", "{}"}})},
      {"leading whitespace", "\n\n  {\"name\": \"ping\", \"parameters\": {}}", answer("", {{"ping", "{}"}})},
      {"a type key before the name", R"({"type": "function", "name": "ping", "parameters": {"host": "h"}})",
       answer("", {{"ping", R"({"host":"h"})"}})},
      {"a JSON answer that is no call", R"({"answer": 42, "unit": "m"})", answer(R"({"answer": 42, "unit": "m"})")},
      {"a JSON answer with a name key is no call", R"({"name": "Alice", "age": 3})", answer(R"({"name": "Alice", "age": 3})")},
      {"text before python_tag", "Let me check.<|python_tag|>{\"name\": \"check\", \"parameters\": {}}",
       answer("Let me check.", {{"check", "{}"}})},
      {"JSON after text is text", R"(Here it is: {"name": "x", "parameters": {}})",
       answer(R"(Here it is: {"name": "x", "parameters": {}})")},
      {"unicode in arguments", R"({"name": "say", "parameters": {"text": "¡Olá! Привет 👋"}})",
       answer("", {{"say", R"({"text":"¡Olá! Привет 👋"})"}})},
      {"text after the calls", R"({"name": "ping", "parameters": {}} and then some)",
       answer(" and then some", {{"ping", "{}"}})},
      {"cut inside the arguments", R"({"name": "get_weather", "parameters": {"city": "Ro)",
       answer(R"({"name": "get_weather", "parameters": {"city": "Ro)"), false},
      {"cut inside the tag", "<|python_t", answer("<|python_t")},
      {"python_tag before no JSON", "<|python_tag|>brave_search.call(query=\"x\")",
       answer("<|python_tag|>brave_search.call(query=\"x\")")},
  };
}

TEST(Llama3Json, CasesAndEverySplit) { testing::check_cases(testing::options("llama3_json"), llama3_cases()); }

}  // namespace
}  // namespace overhead::agent
