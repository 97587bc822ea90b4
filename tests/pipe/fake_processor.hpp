// A Processor for the pipeline tests that needs no tokenizer: the token count is the prompt's
// byte count; "gemma" rejects a system message as Gemma-2's template does; only the tokenizers
// it was given are known.
#pragma once

#include <set>

#include "ports/clock.hpp"
#include "ports/errors.hpp"
#include "pipe/processor.hpp"

namespace overhead::pipe::testing {

inline FunctionProcessor fake_processor(std::set<std::string> known = {"llama", "gemma", "phi"}) {
  return FunctionProcessor([known](const SourceRecord& src, const std::string& tokenizer) {
    if (!known.count(tokenizer)) throw ports::ItemError("unknown_tokenizer", "unknown tokenizer \"" + tokenizer + "\"");
    if (tokenizer == "gemma")
      for (const auto& m : src.prompt)
        if (m.at("role") == "system") throw ports::ItemError("template_error", "System role not supported");
    ProcessResult r;
    r.render_end = ports::monotonic_ns();
    r.token_count = src.prompt_bytes;
    return r;
  });
}

// A JSONL line of the seed's shape.
inline std::string source_line(const std::string& id, const std::string& content = "hello",
                               const std::string& role = "user") {
  return "{\"id\":\"" + id + "\",\"model\":\"m\",\"prompt\":[{\"role\":\"" + role + "\",\"content\":\"" + content +
         "\"}],\"answer\":\"a\",\"usage\":{\"input\":3,\"output\":4}}";
}

}  // namespace overhead::pipe::testing
