#include "backends/engine_dialect.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace overhead::backends {

namespace {

using ports::PromptForm;

// In EngineDialect's order. Sources: vLLM's and SGLang's CompletionRequest take `prompt` as a
// string or a list of token ids; llama.cpp's server tokenizes a `prompt` that is a list of
// integers as those ids; TGI's /v1/completions takes strings only. vLLM (0.10.2 and later) adds
// choices[].token_ids to its completion chunks when the request says return_token_ids.
// The constraint: vLLM's CompletionRequest.structured_outputs (StructuredOutputsParams, whose
// `json` is the schema); SGLang's CompletionRequest.json_schema (Optional[str]); llama.cpp's
// server reads `json_schema` (an object) from every completion body, its OpenAI route included.
constexpr std::array<DialectTraits, 5> kDialects = {{
    {"openai", true, PromptForm::text, "", ConstraintSpelling::none},
    {"vllm", true, PromptForm::ids, "return_token_ids", ConstraintSpelling::structured_outputs},
    {"sglang", true, PromptForm::ids, "", ConstraintSpelling::json_schema_string},
    {"llamacpp", true, PromptForm::ids, "", ConstraintSpelling::json_schema_object},
    {"tgi", false, PromptForm::text, "", ConstraintSpelling::none},
}};

}  // namespace

const DialectTraits& dialect_traits(EngineDialect d) { return kDialects[static_cast<std::size_t>(d)]; }

std::optional<EngineDialect> parse_dialect(std::string_view name) {
  for (std::size_t i = 0; i < kDialects.size(); ++i)
    if (kDialects[i].name == name) return static_cast<EngineDialect>(i);
  return std::nullopt;
}

std::string_view dialect_names() { return "openai|vllm|sglang|llamacpp|tgi"; }

void add_constraint(nlohmann::json& body, const DialectTraits& traits, std::string_view schema) {
  switch (traits.constraint) {
    case ConstraintSpelling::none:
      throw std::invalid_argument(
          "dialect=" + std::string(traits.name) +
          " cannot constrain the answer to a JSON Schema (its /v1/completions has no constraint field): the request asks for "
          "structured output (response_format json_object/json_schema, or tool_choice required or a named function); serve it "
          "with --decoder openai:URL,dialect=vllm|sglang|llamacpp");
    case ConstraintSpelling::structured_outputs:
      body["structured_outputs"] = {{"json", nlohmann::json::parse(schema)}};
      return;
    case ConstraintSpelling::json_schema_string:
      body["json_schema"] = std::string(schema);
      return;
    case ConstraintSpelling::json_schema_object:
      body["json_schema"] = nlohmann::json::parse(schema);
      return;
  }
}

}  // namespace overhead::backends
