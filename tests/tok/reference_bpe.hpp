// A naive reference BPE, written from the textbook description and sharing nothing with
// src/tok/bpe_model.cpp but the file format: read vocab and merges from tokenizer.json, split a
// piece into its initial symbols (GPT-2 byte characters for byte-level models; characters, else
// <0xXX> byte tokens, else the unknown token for the others), then repeatedly merge the adjacent
// pair with the lowest merge rank (leftmost on ties) until no pair has a merge, and look every
// symbol up in the vocabulary. Strings everywhere, no caches, no cuts, no heap: slow and obvious.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace overhead::tok::reference {

class NaiveBpe {
 public:
  // Reads model.vocab, model.merges and the flags that change the merge (byte_fallback,
  // unk_token, fuse_unk, ignore_merges) from `tokenizer_json`; `byte_level` says whether the
  // pre-tokenizer is ByteLevel (the symbols are then GPT-2's byte characters).
  NaiveBpe(const std::string& tokenizer_json, bool byte_level);

  // The ids of one pre-tokenized piece (raw bytes for byte-level models, text otherwise).
  std::vector<std::uint32_t> encode_piece(std::string_view piece) const;

 private:
  std::vector<std::string> initial_symbols(std::string_view piece) const;
  std::uint32_t rank_of(const std::string& left, const std::string& right) const;

  bool byte_level_;
  bool byte_fallback_ = false;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;
  std::string unk_token_;
  std::unordered_map<std::string, std::uint32_t> vocab_;
  std::unordered_map<std::string, std::uint32_t> ranks_;  // left + '\xFF' + right -> rank
};

}  // namespace overhead::tok::reference
