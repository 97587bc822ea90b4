// The assembled pipeline behind Tokenizer: added-token extraction -> normalizer -> pre-tokenizer
// -> BPE model -> post-processor, and the detokenizer (tokenizer.json's "decoder"). Built by the loader, immutable afterwards.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tok/added_vocabulary.hpp"
#include "tok/bpe_model.hpp"
#include "tok/detokenizer.hpp"
#include "tok/normalizer.hpp"
#include "tok/post_processor.hpp"
#include "tok/pre_tokenizer.hpp"

namespace simdjson {
struct padded_string;
}

namespace overhead::tok {

class TokenizerImpl {
 public:
  std::string name;
  std::string dir;
  std::string file;  // path of tokenizer.json

  // tokenizer_config.json (an empty object when there is none).
  const nlohmann::json& config() const;
  void set_config(nlohmann::json parsed) { config_ = std::move(parsed); }
  // Keeps the text of a tokenizer_config.json already known to parse to an object (a compiled
  // cache keyed by its checksum was written only after it did) and parses it on first use:
  // a command that never asks for it (most: tokenize, count) never pays the parse.
  void defer_config(std::string text, std::string path);

  std::unique_ptr<Normalizer> normalizer;      // may be null
  std::unique_ptr<PreTokenizer> pre_tokenizer; // may be null
  std::unique_ptr<BpeModel> model;
  std::unique_ptr<AddedVocabulary> added;
  PostProcessor post;
  std::unique_ptr<Detokenizer> detokenizer;  // may be null (tokenizer.json has no "decoder")

  // Segments at least this long are pre-tokenized in batches (PreTokenizer::apply_in_batches).
  static constexpr std::size_t kBatchedBytes = std::size_t{1} << 20;
  // Spans per scan when the pre-tokenizer is a lone scanner (encode_normalized).
  static constexpr std::size_t kScanBatch = 1024;

  // Encodes valid UTF-8 `text`, appending ids to `out`.
  void encode(std::string_view text, std::vector<std::uint32_t>& out, bool add_special) const;
  // Ids back to text (Tokenizer::decode, HF's name for it).
  std::string detokenize(const std::vector<std::uint32_t>& ids, bool skip_special) const;

 private:
  void encode_segment(std::string_view text, std::size_t begin, std::size_t end, std::vector<std::uint32_t>& out) const;
  void encode_normalized(std::string& buffer, std::size_t begin, std::size_t end, bool at_origin,
                         std::vector<std::uint32_t>& out) const;
  // text[begin, end) through the pre-tokenizer's batches (PreTokenizer::apply_in_batches).
  void encode_batched(std::string_view text, std::size_t begin, std::size_t end, bool at_origin,
                      std::vector<std::uint32_t>& out) const;

  mutable nlohmann::json config_ = nlohmann::json::object();
  mutable std::once_flag config_parsed_;
  std::string deferred_config_;       // empty: config_ is final
  std::string deferred_config_path_;
};

// Parses tokenizer.json at `file` (and tokenizer_config.json beside it, when present).
std::unique_ptr<TokenizerImpl> load_tokenizer_files(const std::string& dir, const std::string& file);

// Gives the BPE model for the configuration read from the JSON (the compiled cache's tables).
using ModelSource = std::function<std::unique_ptr<BpeModel>(const BpeConfig&)>;

// The same from tokenizer.json's bytes already in memory (`json`, padded for simdjson). With
// `model` set, the BPE model comes from it and `json` needs no model.vocab or model.merges.
// `config_json` is tokenizer_config.json's text (nullopt: read it from `dir` when present); with
// `config_known_valid` it is parsed on first use instead of now (see TokenizerImpl::defer_config).
// `skeleton`, when given, receives the document without model.vocab and model.merges.
std::unique_ptr<TokenizerImpl> load_tokenizer_json(const std::string& dir, const std::string& file,
                                                   const simdjson::padded_string& json, ModelSource model,
                                                   std::optional<std::string_view> config_json, std::string* skeleton,
                                                   bool config_known_valid = false);

}  // namespace overhead::tok
