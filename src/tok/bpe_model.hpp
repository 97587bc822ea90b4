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
//
// Every table is flat (flat_maps.hpp, flat_array.hpp), so a built model can be written to a
// compiled cache and read back as views of the mapped file (tokenizer_cache.hpp).
#pragma once

#include <array>
#include <memory>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tok/boundary_memo.hpp"
#include "tok/cache_format.hpp"
#include "tok/chunk_memo.hpp"
#include "tok/flat_array.hpp"
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
  // Per-thread, per-model memo tables (see piece_cache.hpp, pair_cache.hpp, chunk_memo.hpp and
  // boundary_memo.hpp).
  struct ThreadState {
    // Whole pieces of up to ChunkMemo::kMaxBytes (most words with their leading space): their ids
    // in one probe of a packed key, no hash over the bytes and no compare of stored keys. Apart
    // from `chunks`, which holds merges of cut chunks: with ignore_merges a whole piece may encode
    // differently from the same bytes as a chunk. 128 K entries (4 MB of zero pages, touched as
    // used): the English benchmark texts have more distinct short pieces than 64 K entries hold.
    ChunkMemo short_pieces{std::size_t{1} << 17};
    PieceCache pieces;
    PairCache pairs;
    ChunkMemo chunks;
    // Chunks of a cut piece too long for `chunks` (up to kMaxLongChunk bytes). A SentencePiece
    // model with no pre-tokenizer cuts whole messages into chunks, and a few in ten are longer
    // than 15 bytes (six CJK characters and up); they repeat as much as the short ones, and each
    // costs a merge loop whose pair look-ups miss the CPU caches. 1.3 MB of zero pages and 2 MB
    // of keys and ids at most, touched as used.
    static constexpr std::size_t kMaxLongChunk = 256;
    PieceCache long_chunks{std::size_t{1} << 16, std::size_t{2} << 20};
    // A character-level model with no pre-tokenizer asks about every boundary of a message: 128 K
    // entries (512 KB; gemma-2 meets about 66 K distinct pairs in the MT-Bench texts, and 16 K
    // entries missed one query in six). A byte-level model asks only inside long pieces: 32 K
    // entries (128 KB), leaving the CPU's cache to its other tables.
    explicit ThreadState(bool character_level) : boundaries(character_level ? 17 : 15) {}
    // Ids gathered by a loop over many pieces before they are appended to the caller's vector.
    static constexpr std::size_t kGatheredIds = 4096;
    std::array<std::uint32_t, kGatheredIds> gathered;
    BoundaryMemo boundaries;
  };

  // `vocab` maps every token string (as written in tokenizer.json) to its id; `merges` are pairs
  // of token strings in rank order. Throws std::invalid_argument with the merge index when a
  // merge names a token that is not in the vocabulary.
  BpeModel(const std::vector<std::pair<std::string_view, std::uint32_t>>& vocab,
           const std::vector<std::pair<std::string_view, std::string_view>>& merges, BpeConfig config);

  // The compiled form: every table, in an order read() walks back.
  void write(CacheWriter& w) const;
  // A model viewing the tables in `r` (bounds-checked; throws CacheFormatError). `config` must be
  // the one the written model was built with; `backing` keeps the mapped bytes alive.
  static std::unique_ptr<BpeModel> read(CacheReader& r, BpeConfig config, std::shared_ptr<const void> backing);
  // Changes whenever a table's hashing or layout does (part of the cache's validity check).
  static std::uint64_t layout_fingerprint();

  // Appends the ids of one piece (raw bytes when byte-level, UTF-8 text otherwise). Inline: the
  // common cases (a one-byte piece of a byte-level model, a short piece this thread has seen) are
  // a few instructions in the caller's loop; the rest is encode_piece_slow.
  void encode_piece(std::string_view piece, std::vector<std::uint32_t>& out) const {
    if (!piece.empty()) encode_piece(piece, thread_state(), out);
  }
  // The same with this thread's state (thread_state()) in hand: a loop over many pieces fetches it
  // once (in a shared library every thread_local access is a call to __tls_get_addr).
  void encode_piece(std::string_view piece, ThreadState& state, std::vector<std::uint32_t>& out) const {
    const std::size_t n = piece.size();
    if (n == 0) return;
    if (n <= ChunkMemo::kMaxBytes && use_cache_) {
      // A one-byte piece of a byte-level model is that byte's token, merged or looked up whole.
      if (n == 1 && single_byte_ids_) {
        out.push_back(byte_ids_[static_cast<unsigned char>(piece[0])]);
        return;
      }
      if (state.short_pieces.lookup(piece, out)) return;
    }
    encode_piece_slow(piece, state, out);
  }
  // The fast cases of encode_piece alone, for a loop over many pieces: what they read, fetched
  // once (the compiler cannot keep the model's fields in registers across the loop's calls out),
  // writing a piece's ids into a buffer in one copy with no capacity check per id.
  class PieceMemo {
   public:
    // A non-empty piece's ids written at dst (room for ChunkMemo::kMaxIds needed, whatever the
    // count) and counted in `count`; false when the piece needs encode_piece_missed.
    [[gnu::always_inline]] bool lookup(const char* p, std::size_t n, std::uint32_t* dst, std::size_t& count) const {
      if (n > ChunkMemo::kMaxBytes || memo_ == nullptr) return false;
      if (n == 1 && byte_ids_ != nullptr) {
        *dst = byte_ids_[static_cast<unsigned char>(*p)];
        count = 1;
        return true;
      }
      return memo_->lookup_to(std::string_view(p, n), dst, count);
    }

   private:
    friend class BpeModel;
    const std::uint32_t* byte_ids_ = nullptr;  // set when a one-byte piece is its byte's token
    const ChunkMemo* memo_ = nullptr;          // null when memoising is off
  };
  PieceMemo piece_memo(ThreadState& state) const {
    PieceMemo m;
    if (!use_cache_) return m;
    m.memo_ = &state.short_pieces;
    if (single_byte_ids_) m.byte_ids_ = byte_ids_.data();
    return m;
  }
  // A non-empty piece PieceMemo::lookup declined: encoded (and memoised) by the merge loop.
  void encode_piece_missed(std::string_view piece, ThreadState& state, std::vector<std::uint32_t>& out) const {
    encode_piece_slow(piece, state, out);
  }
  // This thread's memo tables for this model (created on its first use on the thread).
  ThreadState& thread_state() const {
    thread_local std::uint64_t last_serial = 0;
    thread_local ThreadState* last_state = nullptr;
    if (last_serial != serial_) [[unlikely]] last_state = &thread_state_slow(), last_serial = serial_;
    return *last_state;
  }

  std::optional<std::uint32_t> token_to_id(std::string_view token) const;  // tokenizer.json form
  std::optional<std::string_view> id_to_token(std::uint32_t id) const;     // tokenizer.json form
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

  explicit BpeModel(BpeConfig config);
  ThreadState& thread_state_slow() const;
  void encode_piece_slow(std::string_view piece, ThreadState& state, std::vector<std::uint32_t>& out) const;
  void initial_symbols(std::string_view piece, std::vector<Symbol>& symbols) const;
  void build_boundaries(const std::vector<std::pair<std::string_view, std::string_view>>& merges);
  void encode_uncached(std::string_view piece, ThreadState& state, bool cacheable, std::uint64_t hash,
                       std::vector<std::uint32_t>& out) const;
  void merge_chunk(std::string_view chunk, ThreadState& state, std::vector<std::uint32_t>& out) const;
  void merge_long_chunk(std::string_view chunk, ThreadState& state, std::vector<std::uint32_t>& out) const;
  void encode_chunked(std::string_view piece, ThreadState& state, std::vector<std::uint32_t>& out) const;
  void merge_symbols(std::string_view chunk, PairCache& pairs, std::vector<std::uint32_t>& out) const;
  void merge_small(std::vector<Symbol>& symbols, PairCache& pairs) const;
  void merge_large(std::vector<Symbol>& symbols, PairCache& pairs) const;

  BpeConfig config_;
  // The map encoding looks symbols up in: raw bytes -> id for byte-level models; for the others
  // the token text is what they match, so it is source_vocab_ itself (one table, not two).
  const StringIdMap& encode_vocab() const { return config_.byte_level ? encode_vocab_ : source_vocab_; }
  StringIdMap encode_vocab_;                // byte-level only: raw bytes -> id
  StringIdMap source_vocab_;                // tokenizer.json token string -> id
  // id -> tokenizer.json token string: token k (in id order) has id token_ids_[k] and spells
  // token_text_[token_offsets_[k], token_offsets_[k + 1]). When the ids are compact, dense_index_
  // maps an id straight to k (kNone for gaps); a file with sparse ids (largest id far above the
  // token count) is searched in token_ids_ instead, so memory stays bounded by the vocabulary's
  // size and not by its largest id.
  FlatArray<std::uint32_t> token_ids_;
  FlatArray<std::uint32_t> token_offsets_;
  FlatArray<char> token_text_;
  FlatArray<std::uint32_t> dense_index_;
  std::size_t id_bound_ = 0;  // largest id + 1 (0 for an empty vocabulary)
  PairMap merges_;
  std::array<std::uint32_t, 256> byte_ids_{};   // byte-level: id of each byte; else <0xXX> ids
  bool all_byte_ids_ = false;
  bool single_byte_ids_ = false;  // byte-level with every byte's token: a one-byte piece is byte_ids_[b]
  FlatArray<std::uint32_t> bmp_char_ids_;       // char-level: id of each BMP char, or kNone
  std::optional<std::uint32_t> unk_id_;
  MergeBoundaries boundaries_;  // where pieces may be cut (see merge_boundaries.hpp)
  bool chunking_ = false;
  std::uint64_t serial_;     // identifies this model's per-thread piece caches
  bool use_cache_ = true;
  std::shared_ptr<const void> backing_;  // the mapped cache file the tables view, if any
};

}  // namespace overhead::tok
