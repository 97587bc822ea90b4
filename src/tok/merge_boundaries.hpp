// Where BPE can never merge across: a cut between two adjacent characters x|y is safe when no
// token of the vocabulary spans it, because every symbol BPE ever forms is a vocabulary token. The
// piece then splits into chunks that merge independently, with the same result as merging the
// whole -- and a long piece (a Japanese clause under a \p{L}+ pattern, or a whole SentencePiece
// segment) becomes many short ones, each a few operations or a cache hit.
//
// A token spans x|y if it holds the end of x followed by the start of y. Byte-level tokens may
// begin or end inside a character, so four kinds of evidence are recorded from the vocabulary:
//   both characters complete      (x, y)            e.g. "です" spans で|す
//   token ends inside y           (x, first byte of y)
//   token starts inside x         (last byte of x, y)
//   token starts inside x and ends inside y (last byte of x, first byte of y)
// A boundary with none of them cannot be crossed. The check is conservative: a recorded pair only
// means a merge might cross there.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tok/cache_format.hpp"
#include "tok/flat_array.hpp"

namespace overhead::tok {

class MergeBoundaries {
 public:
  MergeBoundaries() = default;
  // `tokens` are the vocabulary entries as the model matches them (raw bytes for byte-level).
  void add_token(std::string_view token);
  // True if no token spans the boundary between the valid UTF-8 characters `left` and `right`.
  bool cuttable(std::string_view left, std::string_view right) const;
  // The same for decoded characters: code points x and y, x's byte length and last byte, y's
  // byte length and first byte (what the encoding loop already has in hand).
  bool cuttable(std::uint32_t x, std::size_t x_length, unsigned char x_last, std::uint32_t y, std::size_t y_length,
                unsigned char y_first) const;
  // The same for a character-level model, whose symbols are always whole characters: a token
  // that spans x|y holds both complete, so one probe answers (the other three kinds of evidence
  // come from tokens beginning or ending inside a character, which no merge of whole characters
  // forms). Each probe is a likely cache miss into a table of megabytes.
  bool cuttable_whole_chars(std::uint32_t x, std::uint32_t y) const { return !contains(key(kChars, x, y)); }
  bool empty() const { return size_ == 0; }

  void write(CacheWriter& w) const;
  // Views the table in `r` after checking that probing ends (a power of two with an empty slot).
  void read(CacheReader& r);
  static std::uint64_t layout_fingerprint();

 private:
  enum Kind : std::uint64_t { kChars = 1, kCharByte = 2, kByteChar = 3, kBytes = 4 };
  static std::uint64_t key(Kind kind, std::uint32_t a, std::uint32_t b) {
    return (std::uint64_t{kind} << 60) | (std::uint64_t{a} << 28) | b;
  }
  void insert(std::uint64_t k);
  bool contains(std::uint64_t k) const;

  FlatArray<std::uint64_t> slots_;  // 0 = empty (every key has a non-zero kind)
  std::size_t size_ = 0;
};

}  // namespace overhead::tok
