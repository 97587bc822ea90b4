#include "backends/engine_dialect.hpp"

#include <array>

namespace overhead::backends {

namespace {

using ports::PromptForm;

// In EngineDialect's order. Sources: vLLM's and SGLang's CompletionRequest take `prompt` as a
// string or a list of token ids; llama.cpp's server tokenizes a `prompt` that is a list of
// integers as those ids; TGI's /v1/completions takes strings only. vLLM (0.10.2 and later) adds
// choices[].token_ids to its completion chunks when the request says return_token_ids.
constexpr std::array<DialectTraits, 5> kDialects = {{
    {"openai", true, PromptForm::text, ""},
    {"vllm", true, PromptForm::ids, "return_token_ids"},
    {"sglang", true, PromptForm::ids, ""},
    {"llamacpp", true, PromptForm::ids, ""},
    {"tgi", false, PromptForm::text, ""},
}};

}  // namespace

const DialectTraits& dialect_traits(EngineDialect d) { return kDialects[static_cast<std::size_t>(d)]; }

std::optional<EngineDialect> parse_dialect(std::string_view name) {
  for (std::size_t i = 0; i < kDialects.size(); ++i)
    if (kDialects[i].name == name) return static_cast<EngineDialect>(i);
  return std::nullopt;
}

std::string_view dialect_names() { return "openai|vllm|sglang|llamacpp|tgi"; }

}  // namespace overhead::backends
