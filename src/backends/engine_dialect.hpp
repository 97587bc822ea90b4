// The engine dialects of `--decoder openai:URL,dialect=NAME`: what each serving engine's
// OpenAI-compatible /v1/completions route takes beyond OpenAI's own fields, in one table, so a
// request is spelled for its engine in one place: whether the engine takes the prompt as token ids
// (and so whether `prompt=ids` is its default), whether it streams the answer's token ids
// (`output=ids`) and how it is asked to, and how a structured-output constraint (a JSON Schema,
// ports::DecodeRequest::json_schema) is spelled.
//
//   dialect    prompt as ids                 default prompt=   answer's ids streamed (output=ids)
//   openai     yes (OpenAI's legacy arrays)  text              no
//   vllm       yes                           ids               "return_token_ids": true -> choices[].token_ids (vLLM 0.10.2+)
//   sglang     yes                           ids               no (its ids come on its native /generate route)
//   llamacpp   yes                           ids               no (return_tokens: only on its native /completion route)
//   tgi        no: text only                 text              no
//
//   dialect    the JSON Schema constraint on /v1/completions
//   openai     none: OpenAI's /v1/completions has no constraint field; a constrained request is refused
//   vllm       "structured_outputs": {"json": SCHEMA}   (vLLM 0.10.2+; the older "guided_json": SCHEMA
//                                                        was deprecated then and removed in 0.12)
//   sglang     "json_schema": "SCHEMA as a JSON string" (its CompletionRequest.json_schema is a str)
//   llamacpp   "json_schema": SCHEMA                    (the server converts it to a GBNF grammar)
//   tgi        none: TGI's /v1/completions takes no grammar (only /generate and chat's
//              response_format do); a constrained request is refused
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ports/decoder.hpp"

namespace overhead::backends {

enum class EngineDialect { openai, vllm, sglang, llamacpp, tgi };

enum class ConstraintSpelling {
  none,                // no constraint field
  structured_outputs,  // "structured_outputs": {"json": SCHEMA} (vLLM)
  json_schema_string,  // "json_schema": "<SCHEMA as text>" (SGLang)
  json_schema_object,  // "json_schema": SCHEMA (llama.cpp's server)
};

struct DialectTraits {
  std::string_view name;
  bool takes_prompt_ids = false;  // a list of token ids as /v1/completions' `prompt`
  ports::PromptForm default_prompt = ports::PromptForm::text;
  // The request field that makes its /v1/completions stream carry choices[].token_ids; empty: none.
  std::string_view token_ids_field;
  // How a JSON Schema constraint is spelled in the request body; none: the engine cannot be
  // constrained through /v1/completions (the request is refused, never sent unconstrained).
  ConstraintSpelling constraint = ConstraintSpelling::none;
};

// Puts the constraint `schema` (compact JSON text) into `body` as the dialect spells it. Throws
// std::invalid_argument when the dialect has no spelling (the message says which to use).
void add_constraint(nlohmann::json& body, const DialectTraits& traits, std::string_view schema);

[[nodiscard]] const DialectTraits& dialect_traits(EngineDialect d);
// The dialect named `name` (as written after dialect=), or nullopt.
[[nodiscard]] std::optional<EngineDialect> parse_dialect(std::string_view name);
// "openai|vllm|sglang|llamacpp|tgi", for messages.
[[nodiscard]] std::string_view dialect_names();

}  // namespace overhead::backends
