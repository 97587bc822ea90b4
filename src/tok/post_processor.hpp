// Post-processors of tokenizer.json, reduced to what they do to ids of a single sequence when
// add_special_tokens is set: TemplateProcessing's "single" template (e.g. Llama's BOS, Gemma's
// <bos>), Bert/Roberta's [CLS] A [SEP], ByteLevel (no change to ids), and Sequence of these.
#pragma once

#include <cstdint>
#include <vector>

namespace overhead::tok {

struct PostProcessor {
  std::vector<std::uint32_t> prefix;  // ids before the sequence
  std::vector<std::uint32_t> suffix;  // ids after it
};

}  // namespace overhead::tok
