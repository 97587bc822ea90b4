// Turns what a user types after --tokenizer into a folder holding tokenizer.json:
//   - a short name of a fetched set: llama-3.3-70b-instruct, gemma-2-27b-it, phi-4, gemma-3,
//     llama-3, cl100k, o200k, or a raw asset name (llama3, llama3_1, gemma3, gemini, gpt35turbo,
//     gpt4o), looked up in $OVERHEAD_MODELS or the build's models folder;
//   - a folder holding tokenizer.json, or a tokenizer.json file;
//   - an HF model id ("org/name") found in the local HF cache ($HF_HOME/hub or
//     ~/.cache/huggingface/hub), newest snapshot first.
#pragma once

#include <string>
#include <vector>

namespace overhead::tok {

// Returns the folder; throws LoadError listing what was tried when nothing matches.
std::string resolve_tokenizer_dir(const std::string& name_or_path);
// The short names resolve_tokenizer_dir accepts.
const std::vector<std::string>& known_tokenizer_names();
// The seed's three tokenizers, in the seed's order.
const std::vector<std::string>& seed_tokenizer_names();

}  // namespace overhead::tok
