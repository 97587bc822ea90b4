// The engine dialects of `--decoder openai:URL,dialect=NAME`: what each serving engine's
// OpenAI-compatible /v1/completions route takes beyond OpenAI's own fields, in one table, so a
// request is spelled for its engine in one place. Today: whether the engine takes the prompt as
// token ids (and so whether `prompt=ids` is its default). The structured-output constraint
// (json_schema, grammar) and the streamed token ids are further columns of the same table.
//
//   dialect    prompt as ids                 default prompt=
//   openai     yes (OpenAI's legacy arrays)  text  (any OpenAI-compatible server; the default dialect)
//   vllm       yes                           ids
//   sglang     yes                           ids
//   llamacpp   yes                           ids
//   tgi        no: text only                 text
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
};

[[nodiscard]] const DialectTraits& dialect_traits(EngineDialect d);
// The dialect named `name` (as written after dialect=), or nullopt.
[[nodiscard]] std::optional<EngineDialect> parse_dialect(std::string_view name);
// "openai|vllm|sglang|llamacpp|tgi", for messages.
[[nodiscard]] std::string_view dialect_names();

}  // namespace overhead::backends
