// The engine dialects of `--decoder openai:URL,dialect=NAME`: what each serving engine's
// OpenAI-compatible /v1/completions route takes beyond OpenAI's own fields, in one table, so a
// request is spelled for its engine in one place. Today: whether the engine takes the prompt as
// token ids (and so whether `prompt=ids` is its default), and whether it streams the answer's
// token ids (`output=ids`) and how it is asked to. The structured-output constraint (json_schema,
// grammar) is a further column of the same table.
//
//   dialect    prompt as ids                 default prompt=   answer's ids streamed (output=ids)
//   openai     yes (OpenAI's legacy arrays)  text              no
//   vllm       yes                           ids               "return_token_ids": true -> choices[].token_ids (vLLM 0.10.2+)
//   sglang     yes                           ids               no (its ids come on its native /generate route)
//   llamacpp   yes                           ids               no (return_tokens: only on its native /completion route)
//   tgi        no: text only                 text              no
#pragma once

#include <optional>
#include <string_view>

#include "ports/decoder.hpp"

namespace overhead::backends {

enum class EngineDialect { openai, vllm, sglang, llamacpp, tgi };

struct DialectTraits {
  std::string_view name;
  bool takes_prompt_ids = false;  // a list of token ids as /v1/completions' `prompt`
  ports::PromptForm default_prompt = ports::PromptForm::text;
  // The request field that makes its /v1/completions stream carry choices[].token_ids; empty: none.
  std::string_view token_ids_field;
};

[[nodiscard]] const DialectTraits& dialect_traits(EngineDialect d);
// The dialect named `name` (as written after dialect=), or nullopt.
[[nodiscard]] std::optional<EngineDialect> parse_dialect(std::string_view name);
// "openai|vllm|sglang|llamacpp|tgi", for messages.
[[nodiscard]] std::string_view dialect_names();

}  // namespace overhead::backends
