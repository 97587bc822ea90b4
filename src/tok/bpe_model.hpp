// The BPE model of tokenizer.json: vocabulary, ranked merges, and the merge loop that turns one
// pre-tokenized piece into ids exactly as HF tokenizers' `Word::merge_all` does (lowest merge
// rank first, leftmost on ties), with `ignore_merges`, `byte_fallback`, `unk_token`/`fuse_unk`.
//
// Two symbol alphabets:
//  - byte-level (GPT-2 family, the input passed through a ByteLevel pre-tokenizer): the initial
//    symbols are the piece's bytes. The vocabulary is re-keyed at load from GPT-2's byte-to-char
//    form back to raw bytes, so encoding never maps bytes to chars and back.
//  - character-level (SentencePiece family): the initial symbols are the piece's UTF-8 characters,
//    falling back to <0xXX> byte tokens or the unknown token.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tok/chunk_memo.hpp"
#include "tok/flat_maps.hpp"
#include "tok/merge_boundaries.hpp"
#include "tok/pair_cache.hpp"
#include "tok/piece_cache.hpp"

namespace overhead::tok {

struct BpeConfig {
  bool byte_level = false;
  bool ignore_merges = false;
  bool byte_fallback = false;
  bool fuse_unk = false;
  std::optional<std::string> unk_token;
};

class BpeModel {
 public:
  // Per-thread, per-model memo tables (see piece_cache.hpp and pair_cache.hpp).
  struct ThreadState {
    PieceCache pieces;
    PairCache pairs;
    ChunkMemo chunks;
  };

  // `vocab` maps every token string (as written in tokenizer.json) to its id; `merges` are pairs
  // of token strings in rank order. Throws std::invalid_argument with the merge index when a
  // merge names a token that is not in the vocabulary.
  BpeModel(std::vector<std::pair<std::string, std::uint32_t>> vocab,
           const std::vector<std::pair<std::string, std::string>>& merges, BpeConfig config);

  // Appends the ids of one piece (raw bytes when byte-level, UTF-8 text otherwise).
  void encode_piece(std::string_view piece, std::vector<std::uint32_t>& out) const;

  std::optional<std::uint32_t> token_to_id(std::string_view token) const;  // tokenizer.json form
  const std::string* id_to_token(std::uint32_t id) const;                   // tokenizer.json form
  std::size_t size() const { return id_bound_; }
  const BpeConfig& config() const { return config_; }

 private:
  struct Symbol {
    std::uint32_t id;
    std::int32_t prev;
    std::int32_t next;
    std::uint32_t length;     // bytes of the piece this symbol covers; 0 once merged away
    std::uint32_t pair_rank;  // rank of the merge (this, next), or ~0u when none
    std::uint32_t pair_id;    // the id that merge produces
  };

  void initial_symbols(std::string_view piece, std::vector<Symbol>& symbols) const;
  void build_boundaries(const std::vector<std::pair<std::string, std::string>>& merges);
  void merge_chunk(std::string_view chunk, ThreadState& state, std::vector<std::uint32_t>& out) const;
  void merge_symbols(std::string_view chunk, PairCache& pairs, std::vector<std::uint32_t>& out) const;
  bool has_char_id(std::string_view ch) const;
  void merge_small(std::vector<Symbol>& symbols, PairCache& pairs) const;
  void merge_large(std::vector<Symbol>& symbols, PairCache& pairs) const;

  BpeConfig config_;
  StringIdMap encode_vocab_;                // raw bytes (byte-level) or text -> id
  StringIdMap source_vocab_;                // tokenizer.json token string -> id
  // id -> tokenizer.json token string. Dense ("" for gaps) when the ids are compact; a file with
  // sparse ids (largest id far above the token count) goes to sparse_id_to_token_ instead, so
  // memory stays bounded by the vocabulary's size and not by its largest id.
  std::vector<std::string> id_to_token_;
  std::vector<bool> id_present_;
  std::unordered_map<std::uint32_t, std::string> sparse_id_to_token_;
  std::size_t id_bound_ = 0;  // largest id + 1 (0 for an empty vocabulary)
  PairMap merges_;
  std::array<std::uint32_t, 256> byte_ids_{};   // byte-level: id of each byte; else <0xXX> ids
  bool all_byte_ids_ = false;
  std::vector<std::uint32_t> bmp_char_ids_;     // char-level: id of each BMP char, or kNone
  std::optional<std::uint32_t> unk_id_;
  MergeBoundaries boundaries_;  // where pieces may be cut (see merge_boundaries.hpp)
  bool chunking_ = false;
  std::uint64_t serial_;     // identifies this model's per-thread piece caches
  bool use_cache_ = true;
};

}  // namespace overhead::tok
